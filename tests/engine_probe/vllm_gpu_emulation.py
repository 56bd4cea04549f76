"""Let a CUDA vLLM wheel plan KV caches on a CPU-only host, as an H100 (SM90) would.

Imported first by vllm_kv_probe.py, under the vLLM interpreter. Nothing here computes a KV
figure: it only supplies the platform facts vLLM's own code asks for.

- Compiled extensions (vllm/*.abi3.so) need libcuda / libtorch_cuda and cannot load on a
  CPU torch; they are replaced by empty modules. Their torch.ops namespaces answer the three
  capability queries vLLM makes at import time (vllm/_custom_ops.py:750, 777, 781:
  cutlass_scaled_mm_supports_fp4/fp8/block_fp8) with the SM90 answers (fp4 no, fp8 yes,
  block fp8 yes), and the grouped-GEMM query FP8 MoE layers make at build time
  (_custom_ops.py:863-871, capability 90: yes, the CUTLASS MoE kernels are built for SM90);
  any other op is absent at import time (so `hasattr` guards such as register_fake skip it)
  and, while the model is being built, a placeholder that raises if called (layers look ops
  up in __init__, nothing runs on the meta device). The one op that answers while building
  is a kernel's scratch-size query, `get_workspace_size` (FlashKDA:
  models/kimi_k3/nvidia/kda.py:844, models/glm5next/common/kda.py:361): it sizes a layer's
  own scratch buffer, not the KV cache, and answers 0.
- The platform is vLLM's own CUDA platform class (vllm/platforms/cuda.py NonNvmlCudaPlatform)
  with compute capability 9.0, device name, total memory and device count of 8 x H100 80GB
  stated instead of read from NVML: backend choice (CudaPlatformBase.get_attn_backend_cls,
  cuda.py:420) and block sizes then follow the GPU code path.
- Tensor parallelism without a process group: vllm.distributed.parallel_state's group
  globals (_TP, _PP, _DP, _EP, _DCP, _PCP, ...) are set to stand-in coordinators with
  world_size = the TP size (PP/DP/DCP/PCP 1) and rank 0, which is what
  get_tensor_model_parallel_world_size() / _rank() read (parallel_state.py:2472-2480), so
  every layer shards its heads as rank 0 of a TP group would.
- While the model is built (building()), a torch function mode moves tensors a layer puts on
  the platform device ("cuda") to the meta device, and torch.cuda.Stream / Event are inert
  stand-ins (DSA top-k buffers, DeepSeek-V4 layer events): none of them is KV cache.
- has_deep_gemm() answers True (vllm/utils/import_utils.py:512): the DSA indexer refuses to
  build without DeepGEMM on CUDA (model_executor/layers/sparse_attn_indexer.py:1060), and an
  H100 serving DeepSeek-V3.2 / GLM-5 has it; the KV specs do not depend on its kernels.
- Kernel libraries the GPU image ships but the CPU host lacks: has_tilelang() answers True and
  `tilelang` / `cutlass` (CuTe DSL) are permissive stand-ins (DeepSeek-V4's mHC and
  compressor kernels are defined at import,
  vllm/tilelang_utils/__init__.py:14-19); has_flashinfer_sm90_nope_mla() answers True
  (vllm/utils/flashinfer.py:442), so sparse MLA with an fp8_e4m3 cache selects
  FLASHINFER_MLA_SPARSE_SM90 as on an H100 with FlashInfer >= 0.6.18
  (v1/attention/backends/mla/flashinfer_mla_sparse_sm90.py:189-223). The KV specs are
  built by vLLM's own layer code either way; no kernel runs.
- `quack` (quack-kernels, a vLLM 0.33 requirement of CuTe DSL kernels) is a permissive
  stand-in like `cutlass`, and a stand-in is subscriptable (cutlass.Constexpr[int]
  annotations, vllm/cute_utils/cvt.py:170). The CUDA Python driver bindings are the real
  package, not a stand-in: cuda-bindings 13.5.0 (with cuda-pathfinder 1.9.1) installed in the
  vLLM interpreter; `from cuda.bindings.driver import CUstream` imports without a driver
  (deepseek_v4/nvidia/ops/dequant_gather_k_cutedsl.py:10, minimax_rms_norm/lamport_workspace.py:17)
  and only a driver call (cuInit) would fail; none is made while the model is built.
- torch.accelerator.empty_cache is a no-op: there is no caching allocator on the host; the
  workspace manager calls it when sparse-MLA layers reserve their scratch at build time
  (v1/worker/workspace.py:261, flashmla_sparse.py:832); no KV spec depends on it.
- VLLM_DISABLE_SHARED_EXPERTS_STREAM=1: MoE layers would create a CUDA stream for shared
  experts (fused_moe/runner/shared_experts.py:70-80); the stream has no bearing on KV memory.
- torchvision is not installed with the CPU torch; multimodal processors import it at module
  load, so it is a placeholder package (the text tower's KV layers never touch it).
- Lazily registered model classes are inspected in this process, not a fresh interpreter
  (models/registry.py:1122-1125 does that only to avoid initialising CUDA), so the
  inspection sees the same emulation.
- No Triton on the host: vLLM's Triton placeholder stays, but its `Config` becomes a record
  with kwargs / num_warps / num_stages, because the Mamba SSD kernels filter their autotune
  list on SM90 at import time (mamba/ops/ssd_chunk_scan.py:21-38).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import os
import sys
import types

import torch

H100_TOTAL_BYTES = 85_520_809_984      # torch total_memory of an H100 80GB HBM3 (79.65 GiB)
# KVFIT_VLLM_GPU picks the emulated GPU: (capability, device name, total bytes). h100 is the
# default and what vllm-0.33.0-kv.jsonl was recorded on. The Blackwell totals are the hardware
# presets' figures (specs/hardware/b200-180.yaml cuda_total_mib 182,631; rtx-pro-6000-96.yaml
# has no CUDA total, so its visible 97,887 MiB): only vLLM's batch-default tier reads the
# total (>= 160 GiB and >= 70 GiB), and each figure sits well inside its tier.
GPUS = {"h100": ((9, 0), "NVIDIA H100 80GB HBM3", H100_TOTAL_BYTES),
        "b200": ((10, 0), "NVIDIA B200", 182_631 << 20),
        "rtx-pro-6000": ((12, 0), "NVIDIA RTX PRO 6000 Blackwell Server Edition", 97_887 << 20)}
GPU = os.environ.get("KVFIT_VLLM_GPU", "h100")
CAPABILITY, DEVICE_NAME, TOTAL_BYTES = GPUS[GPU]
LENIENT = [False]
_KERNEL_LIBRARIES = ("tilelang", "cutlass", "quack")    # GPU-image kernel DSLs, absent on this host
_SM90_ANSWERS = {"cutlass_scaled_mm_supports_fp4": CAPABILITY[0] >= 10,
                 "cutlass_scaled_mm_supports_fp8": True,
                 "cutlass_scaled_mm_supports_block_fp8": True, "cutlass_group_gemm_supported": True}
_NAMESPACES = ("_C", "_moe_C", "_C_cache_ops", "_C_custom_ar", "_vllm_fa2_C", "_vllm_fa3_C",
               "_flashmla_C", "_flashmla_extension_C", "_qutlass_C", "_deepselect_C", "_flashkda_C")


class _AnyModule(types.ModuleType):
    """torchvision stand-in: every name is a placeholder (image processors import it)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StubOp(f"{self.__name__}.{name}")


class _StubExtensions(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        root = name.split(".")[0]
        if root in _KERNEL_LIBRARIES:
            if importlib.machinery.PathFinder.find_spec(root) is None:
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None
        if name == "torchvision" or name.startswith("torchvision."):
            if importlib.machinery.PathFinder.find_spec("torchvision") is None:
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None
        if not name.startswith("vllm."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        if spec.name.split(".")[0] in _KERNEL_LIBRARIES:
            module = _Permissive(spec.name)
            module.__path__ = []
            return module
        if spec.name.startswith("torchvision"):
            module = _AnyModule(spec.name)
            module.__path__ = []
            return module
        return types.ModuleType(spec.name)

    def exec_module(self, module):
        return None


class _StubOp:
    def __init__(self, name: str):
        self._name = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"compiled op {self._name} called on the CPU probe")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self


class _Permissive(types.ModuleType):
    """A kernel-library stand-in: decorators return what they wrap, anything else is itself."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return self

    def __getitem__(self, item):      # type annotations such as cutlass.Constexpr[int]
        return self


class _OpsNamespace:
    def __init__(self, ns: str):
        self._ns = ns

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _SM90_ANSWERS:
            return lambda *a, **k: _SM90_ANSWERS[name]
        if not LENIENT[0]:
            raise AttributeError(f"torch.ops.{self._ns}.{name}: not loaded on the CPU probe")
        if name == "get_workspace_size":     # a kernel's scratch size, asked at build
            return lambda *a, **k: 0
        return _StubOp(f"torch.ops.{self._ns}.{name}")


class _TritonConfig:
    """A kernel config record (no Triton on the CPU host; nothing is compiled)."""

    def __init__(self, kwargs=None, num_warps=4, num_stages=3, **rest):
        self.kwargs, self.num_warps, self.num_stages = dict(kwargs or {}), num_warps, num_stages


class _CudaToMeta(torch.overrides.TorchFunctionMode):
    """Tensors a layer places on "cuda" (its platform device) go to the meta device."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if str(kwargs.get("device", "")).startswith("cuda"):
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


class _NoCuda:
    """Stand-in for torch.cuda.Stream / Event (created by layers, never used here)."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: None


@contextlib.contextmanager
def building():
    """While the model is built: compiled ops are placeholders, "cuda" tensors are meta."""
    LENIENT[0] = True
    try:
        with _CudaToMeta():
            yield
    finally:
        LENIENT[0] = False


class _FakeProcessGroup:
    def __init__(self, n: int):
        self._n = n

    def size(self) -> int:
        return self._n

    def rank(self) -> int:
        return 0


class _FakeGroup:
    """Rank 0 of an n-rank group, as far as layer construction asks."""

    def __init__(self, n: int, name: str):
        self.world_size, self.rank_in_group, self.rank, self.local_rank = n, 0, 0, 0
        self.ranks, self.unique_name, self.device = list(range(n)), name, torch.device("meta")
        self.is_first_rank = self.is_last_rank = True
        self.cpu_group = self.device_group = _FakeProcessGroup(n)
        self.device_communicator = None

    def __getattr__(self, name):
        raise AttributeError(f"stand-in {self.unique_name} group has no {name}")


def install() -> None:
    """Stub the extensions and emulate the SM90 CUDA platform (call before importing vLLM)."""
    os.environ["VLLM_DISABLE_SHARED_EXPERTS_STREAM"] = "1"   # no CUDA streams to create
    from transformers.utils import import_utils
    import_utils.is_torchvision_available()   # cached False before the placeholder exists
    sys.meta_path.insert(0, _StubExtensions())
    for ns in _NAMESPACES:
        setattr(torch.ops, ns, _OpsNamespace(ns))
    import vllm.platforms as platforms
    from vllm.platforms.cuda import NonNvmlCudaPlatform
    from vllm.platforms.interface import DeviceCapability

    class EmulatedH100(NonNvmlCudaPlatform):
        @classmethod
        def get_device_capability(cls, device_id=0):
            return DeviceCapability(*CAPABILITY)

        @classmethod
        def get_device_name(cls, device_id=0):
            return DEVICE_NAME

        @classmethod
        def get_device_total_memory(cls, device_id=0):
            return TOTAL_BYTES

        @classmethod
        def current_device(cls):
            return torch.device("meta")

        @classmethod
        def device_count(cls):
            return 8

        @classmethod
        def is_fully_connected(cls, device_ids):
            return True

    platforms.current_platform = EmulatedH100()
    torch.cuda.Stream = torch.cuda.Event = _NoCuda
    torch.accelerator.empty_cache = lambda: None    # no caching allocator to trim on the host
    torch.cuda.is_current_stream_capturing = lambda: False
    import vllm.utils.import_utils as iu
    iu.has_deep_gemm = lambda: True      # an H100 serving DSA has DeepGEMM installed
    iu.has_tilelang = lambda: True       # and TileLang (DeepSeek-V4 mHC kernels)
    import vllm.utils.flashinfer as fi
    fi.has_flashinfer_sm90_nope_mla = lambda: True   # FlashInfer >= 0.6.18 on the H100
    if CAPABILITY[0] >= 10:     # Blackwell: the GPU image's FlashInfer with its prebuilt cubins
        fi.has_flashinfer = fi.has_flashinfer_cubin = lambda: True
        import flashinfer.utils as fiu  # FlashInferImpl sizes a TRT-LLM counter scratch
        fiu.get_device_sm_count = lambda device: 1    # by SM count (flashinfer.py:2093-2101), no KV
    torch.cuda.is_current_stream_capturing = lambda: False
    import vllm.model_executor.models.registry as registry
    registry._run_in_subprocess = lambda fn: fn()    # inspected here, under this emulation
    import vllm.triton_utils as tu
    if not tu.HAS_TRITON:      # kernel autotune lists read Config fields at import on SM90
        tu.triton.Config = _TritonConfig


def set_tensor_parallel(tp: int) -> None:
    """Rank 0 of a TP group of `tp` ranks (PP, DP, DCP, PCP 1; EP spans the TP ranks)."""
    import vllm.distributed.parallel_state as ps
    for attr, n in (("_WORLD", tp), ("_TP", tp), ("_PP", 1), ("_DP", 1), ("_EP", tp),
                    ("_DCP", 1), ("_PCP", 1), ("_ETP", 1), ("_EPLB", 1), ("_INNER_DP_WORLD", tp)):
        setattr(ps, attr, _FakeGroup(n, attr.strip("_").lower()))
