"""The local GPUs through NVML, when the `nvidia-ml-py` package (module `pynvml`) is installed.

NVML is the library nvidia-smi itself reads; asking it directly needs no subprocess and no
output parsing. It is optional (`uv sync --extra detect`): without the package, or when NVML
cannot start (no driver, a container without GPU access), `query()` returns None and
kvfit.hardware.detect asks nvidia-smi instead. A field NVML does not support on a device (GB10's
unified memory has no dedicated total) is reported as unknown, as nvidia-smi's [N/A] is.
"""

from __future__ import annotations

MIB = 2**20


def load():
    """The pynvml module, or None when nvidia-ml-py is not installed."""
    try:
        import pynvml
    except ImportError:
        return None
    return pynvml


def _memory(nvml, handle) -> tuple[int | None, int | None]:
    try:
        info = nvml.nvmlDeviceGetMemoryInfo(handle)
    except nvml.NVMLError:              # e.g. NotSupported on unified-memory devices
        return None, None
    total, free = getattr(info, "total", None), getattr(info, "free", None)
    ok = [isinstance(v, int) and v >= 0 for v in (total, free)]
    return (total // MIB if ok[0] else None), (free // MIB if ok[1] else None)


def _name(nvml, handle) -> str:
    name = nvml.nvmlDeviceGetName(handle)
    return (name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)).strip()


def query():
    """[(index, name, total MiB, free MiB), ...] as NVML reports them, or None when NVML is
    unavailable (use nvidia-smi)."""
    nvml = load()
    if nvml is None:
        return None
    try:
        nvml.nvmlInit()
    except nvml.NVMLError:
        return None
    try:
        count = nvml.nvmlDeviceGetCount()
        gpus = []
        for i in range(count if isinstance(count, int) and 0 <= count <= 1024 else 0):
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
            gpus.append((i, _name(nvml, handle), *_memory(nvml, handle)))
        return gpus or None
    except nvml.NVMLError:
        return None
    finally:
        try:
            nvml.nvmlShutdown()
        except nvml.NVMLError:
            pass
