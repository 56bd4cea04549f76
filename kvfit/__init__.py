"""kvfit: architecture-exact LLM memory planning.

The Python API (kvfit.api) is re-exported here on first use, so `import kvfit` stays light:
kvfit.plan, kvfit.sweep, kvfit.fit, kvfit.explain_log, kvfit.list_hardware,
kvfit.list_systems, kvfit.catalog_search, kvfit.command_line, kvfit.plan_options_schema,
kvfit.exit_code and the exceptions KvfitError, BadInput, Unsupported, HubError, SpecError.
"""
__version__ = "0.1.0"

_API = ("plan", "sweep", "fit", "explain_log", "list_hardware", "list_systems",
        "catalog_search", "command_line", "plan_options_schema", "exit_code", "KvfitError",
        "BadInput", "Unsupported", "HubError", "SpecError")


def __getattr__(name: str):
    """The API's names (kvfit.api), imported when first asked for. By name, through
    importlib: kvfit's modules read __version__ from this package, and a static import here
    would make each of them look like it imports the API above it."""
    if name in _API:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_API])
