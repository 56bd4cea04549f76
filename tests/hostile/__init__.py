"""Builders of tiny hostile inputs (raw GGUF and safetensors bytes) for bad-input tests and the
fuzz harness. Every count and length is whatever the caller declares, genuine or not."""
