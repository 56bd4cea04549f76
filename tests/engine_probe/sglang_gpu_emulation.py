"""Let the SGLang 0.5.23 wheel size its KV pools on a CPU-only host, as an H100 (SM90) would.

Imported first by sglang_kv_probe.py, under the SGLang interpreter (see there). Nothing here
computes a KV figure: it only supplies the facts SGLang's own code asks a GPU host for.
Paths are under python/sglang/ of the 0.5.23 wheel.

- CUDA is "available": torch.cuda.is_available() True and torch.version.cuda "12.9", which
  srt/utils/common.py:158-159 is_cuda() and srt/platforms/__init__.py:37-38 read, so the CUDA
  platform and the CUDA code paths are selected; device count 8, compute capability 9.0,
  name "NVIDIA H100 80GB HBM3" and torch total memory 81,089 MiB (the H100's own
  torch.cuda.get_device_properties, specs/hardware/h100-80.yaml) for
  common.py:756-766 get_device_sm and common.py:1170-1173 get_device_capability.
- `nvidia-smi` is a stand-in on PATH answering the two queries SGLang makes:
  memory.total 81,559 MiB per GPU (common.py:802-836 get_nvgpu_memory_capacity, read by
  get_device_memory_capacity, common.py:990-998, for the default mem_fraction_static and
  the graph / chunked-prefill tiers) and compute_cap 9.0 (common.py:1335-1347).
- Free GPU memory: KVCacheConfigurator._profile_available_bytes reads it with
  get_available_gpu_memory (mem_cache/kv_cache_configurator.py:3002-3006, imported at :121);
  the probe states it (set_free_gib) instead of asking the driver.
- The WORLD process group (read for the distributed free-memory minimum, same lines) is a
  stand-in with no CPU group: the free memory is stated, so no collective runs.
- Modules a GPU image ships that the CPU venv lacks are permissive placeholders, each only
  imported, never run on the sizing path: torchvision (multimodal processors,
  srt/multimodal/internvl_utils.py:5), tvm_ffi (kernels/ops/communication/all_reduce.py:7),
  sgl_kernel (compiled CUDA kernels, e.g. layers/quantization/compressed_tensors/schemes/
  compressed_tensors_w8a8_int8.py:30), gguf (layers/quantization/gguf.py) and
  compressed_tensors (its quantization scheme classes; a compressed-tensors checkpoint's KV
  scheme is read from config.json by SGLang's own parser). transformers decides torchvision
  is absent before the placeholder exists, so its version checks keep their CPU answer.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import tempfile
import types

MIB = 1 << 20
DEVICE = "NVIDIA H100 80GB HBM3"
VISIBLE_MIB = 81559          # nvidia-smi memory.total (specs/hardware/h100-80.yaml visible_mib)
TORCH_TOTAL_MIB = 81089      # torch total_memory (specs/hardware/h100-80.yaml cuda_total_mib)
PLACEHOLDERS = {"torchvision", "tvm_ffi", "sgl_kernel", "gguf", "compressed_tensors"}
_FREE = {"gib": None}


class _Meta(type):
    """A placeholder class: any attribute is another placeholder; used as a decorator it
    returns what it decorates; called otherwise it returns itself."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Meta(name, (), {})

    def __call__(cls, *a, **k):
        if len(a) == 1 and not k and callable(a[0]):
            return a[0]
        return cls


class _Module(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Meta(name, (), {})


class _Placeholders(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in PLACEHOLDERS:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _Module(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        return None


_SMI = """#!/bin/sh
case "$*" in
  *memory.total*) i=0; while [ $i -lt 8 ]; do echo {mib}; i=$((i+1)); done ;;
  *compute_cap*) i=0; while [ $i -lt 8 ]; do echo 9.0; i=$((i+1)); done ;;
  *) echo "nvidia-smi stand-in: unsupported query $*" >&2; exit 1 ;;
esac
"""


def _nvidia_smi() -> None:
    d = tempfile.mkdtemp(prefix="kvfit-sglang-smi-")
    path = os.path.join(d, "nvidia-smi")
    with open(path, "w") as fh:
        fh.write(_SMI.replace("{mib}", str(VISIBLE_MIB)))
    os.chmod(path, 0o755)
    os.environ["PATH"] = d + os.pathsep + os.environ.get("PATH", "")


def install() -> None:
    """Before any sglang import."""
    import torch
    import transformers.utils.import_utils  # noqa: F401  (torchvision absent, as on this host)

    props = types.SimpleNamespace(name=DEVICE, major=9, minor=0, total_memory=TORCH_TOTAL_MIB * MIB,
                                  multi_processor_count=132)
    torch.cuda.is_available = lambda: True
    torch.version.cuda = "12.9"
    torch.cuda.device_count = lambda: 8
    torch.cuda.get_device_capability = lambda device=None: (9, 0)
    torch.cuda.get_device_name = lambda device=None: DEVICE
    torch.cuda.get_device_properties = lambda device=None: props
    torch.cuda.is_initialized = lambda: False
    torch.cuda.current_device = lambda: 0
    sys.meta_path.insert(0, _Placeholders())
    _nvidia_smi()


def set_free_gib(gib: float) -> None:
    """State the free GPU memory _profile_available_bytes measures (GiB, as SGLang's)."""
    from sglang.srt.mem_cache import kv_cache_configurator as kvm
    from sglang.srt.runtime_context import get_parallel
    _FREE["gib"] = gib
    kvm.get_available_gpu_memory = lambda *a, **k: _FREE["gib"]
    get_parallel().override_permanently(world_group=types.SimpleNamespace(cpu_group=None))
