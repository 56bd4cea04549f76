"""A checkpoint's metadata and what follows from it: weight bytes, the config-shape estimate,
quantization, the KV auto dtype, and local folders."""
