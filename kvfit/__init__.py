"""kvfit: architecture-exact LLM memory planning."""
__version__ = "0.1.0"
