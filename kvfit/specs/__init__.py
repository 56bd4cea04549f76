"""Spec loading: strict YAML with positions, JSON Schema validation, compilation."""
