"""Accelerator and system presets, and detection of the local GPUs (NVML, nvidia-smi)."""
