"""Planning: contexts, layouts over accelerators, and the report they make."""
