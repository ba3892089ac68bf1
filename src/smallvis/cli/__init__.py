"""The ``smallvis`` command line: :mod:`.main` (the parser, ``embed``, ``methods``, ``datasets``)
and one module per further subcommand (:mod:`.compare`, :mod:`.sweep`, :mod:`.idp`, :mod:`.report`);
:mod:`.options` holds the options they share."""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
