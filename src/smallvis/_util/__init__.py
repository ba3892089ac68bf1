"""Private helpers every layer may use: files and folder locks, logging, names, random generators,
threads and memory, numba compilation, reproducible sums. Nothing here imports the rest of smallvis."""
