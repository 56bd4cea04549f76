"""Renderers: the report dict to text or JSON. Renderers never compute."""
