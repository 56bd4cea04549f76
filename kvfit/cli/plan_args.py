"""The `kvfit MODEL ...` parser as the CLI shows it: kvfit.api.flags with the help's epilog
(exit codes, capacity model, examples: kvfit/cli/helptext.py, also the man page)."""

from __future__ import annotations

import argparse

from ..api.flags import Formatter, Parser, add_offline

__all__ = ["Formatter", "Parser", "add_offline", "build_parser"]


def __getattr__(name: str):
    """EPILOG, composed on first use."""
    if name == "EPILOG":
        return _epilog()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _epilog() -> str:
    from .helptext import epilog

    return epilog()


def build_parser() -> argparse.ArgumentParser:
    """The plan parser (also used to build the man page); its epilog is composed when help
    is shown."""
    from ..api.flags import build_parser as options

    return options(epilog=_epilog)
