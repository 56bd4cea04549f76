raise ImportError("NVML is off in this test: nvidia-smi answers")
