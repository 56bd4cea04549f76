"""`python -m kvfit`."""

from kvfit.cli.main import entry

entry()
