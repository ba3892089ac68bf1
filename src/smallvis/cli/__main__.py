"""``python -m smallvis.cli``: the same as ``smallvis`` and ``python -m smallvis``."""

from .main import main

raise SystemExit(main())
