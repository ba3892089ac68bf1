"""Many runs at once: :func:`~.compare.compare` (methods side by side), :func:`~.sweep.sweep`
(a parameter grid, locally or on Dask; :mod:`.sweep_grid`, :mod:`.sweep_exec`, :mod:`.sweep_plot`)
and the HTML report (:mod:`.report`)."""
