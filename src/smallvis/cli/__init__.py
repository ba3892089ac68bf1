"""The ``smallvis`` command line: :mod:`.main` (the parser, the entry point, error and warning
display) and one module per subcommand (:mod:`.embed`, :mod:`.compare`, :mod:`.sweep`, :mod:`.idp`,
:mod:`.report`; :mod:`.listing` for ``methods`` and ``datasets``); :mod:`.options` holds what they
share."""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
