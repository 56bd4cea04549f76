"""Non-KV memory as modelled estimates: total memory, loaded weights, activation peak,
non-torch growth and CUDA graphs. Each returns a number with its basis; a user override
(GiB) replaces the estimate and is labelled "user".

The constants are fitted to public start-up logs (specs/engines/*.yaml `estimates`, each
naming the logs); bench/engine_accuracy.py --fit recomputes them.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..model.base import freeze
from ..model.engine import FittedRegime, Quantity
from .common import GIB, MIB, Inputs, num
from .vllm_activation import profile_peak


def torch_total(rules, inp: Inputs) -> Quantity:
    """Memory the engine sees as the GPU total (torch), bytes."""
    if inp.total_bytes is not None:
        return num(inp.total_bytes, inp.total_basis or "hardware spec: CUDA total")
    if not inp.visible_bytes:
        return num(None, "GPU memory unknown (pass --hardware)")
    off = int(rules.est("torch_total_offset_mib") * MIB)
    return num(inp.visible_bytes - off, rules.est_basis("torch_total_offset_mib") +
               ": driver-visible memory minus the torch offset")


def context_overhead(rules, tp: int) -> Quantity:
    """Memory gone before the engine's budget starts (CUDA context, communicators), bytes."""
    name = "cuda_context_gib" if tp == 1 else "cuda_context_tp_gib"
    return num(int(rules.est(name) * GIB), rules.est_basis(name))


def positive_gib(flag: str, value: float) -> float:
    """`value` when it is a positive, finite number of GiB, else a UsageError naming `flag`."""
    if not 0 < value < math.inf:
        from ..errors import UsageError
        raise UsageError(f"{flag} {value:g}: give a positive, finite number of GiB.")
    return value


def free_before_load(rules, inp: Inputs, log_basis: str | None = None) -> Quantity:
    """Free memory per GPU the engine sees before it loads weights, bytes: the user's
    --free-before-load-gib (at most the GPU's total), else a log's figure (when `log_basis`
    names where the log shows it), else the total minus the fitted CUDA-context estimate."""
    total = torch_total(rules, inp)
    stated = inp.overrides.get("free_before_load")
    if stated is not None:
        from ..errors import UsageError
        value = int(positive_gib("--free-before-load-gib", stated) * GIB)
        if total.value is not None and value > total.value:
            raise UsageError(f"--free-before-load-gib {stated:g} is more than the GPU's total "
                             f"memory as the engine sees it ({total.value / GIB:.2f} GiB: "
                             f"{total.basis}).", hint="State the free memory per GPU "
                             "before the engine starts (nvidia-smi, or torch.cuda.mem_get_info"
                             "()), at most the total.")
        return num(value, "user")
    if inp.free_before_load_bytes is not None and log_basis:
        return num(inp.free_before_load_bytes, log_basis)
    if total.value is None:
        return total
    ctx = context_overhead(rules, inp.tp)
    return num(total.value - ctx.value, f"{total.basis}; minus {ctx.basis}")


def loaded_weights(rules, inp: Inputs) -> Quantity:
    """Weight bytes one rank holds after loading, with the engine's packing estimate."""
    w = inp.weights_bytes_per_rank
    if w is None:
        why = inp.weights_basis if inp.weights_basis.startswith("unknown") else \
            "unknown: no weight files, index or --weight-gib"
        return num(None, why)
    algo = (inp.quant or {}).get("weight_algorithm")
    name = f"weight_packing_{algo}"
    if inp.weights_packed and name in rules.estimates:
        return num(int(w * rules.est(name)), rules.est_basis(name) +
                   f": checkpoint bytes x {rules.est(name)}")
    return num(w, inp.weights_basis)


def activation_peak(rules, inp: Inputs, max_num_seqs: int, mnbt: int,
                    flags: dict | None = None) -> Quantity:
    """vLLM's profiling-run activation peak (bytes): the largest phase of the profile run as
    the engine's code allocates it (kvfit.engines.vllm_activation) plus the fitted residual
    activation_base_gib."""
    if "activation" in inp.overrides:
        return num(int(inp.overrides["activation"] * GIB), "user")
    names = ["activation_base_gib"]
    if not inp.vocab and inp.sampler:
        inp = replace(inp, vocab=int(rules.est("activation_vocab_fallback")))
        names.append("activation_vocab_fallback")
    peak, phases, basis = profile_peak(rules, inp, flags or {}, max_num_seqs, mnbt,
                                       (inp.quant or {}).get("weight_algorithm"))
    value = peak + rules.est("activation_base_gib") * GIB
    fitted = rules.est_basis(*names)
    basis = (f"{basis}; plus {fitted}" if basis else f"{fitted} only: the config has no "
             "hidden_size, so no profile-run phase is derived") + (
        "" if inp.sampler else "; no sampler on this pipeline stage (vllm/v1/worker/"
        "gpu_model_runner.py:6139: only the last PP rank samples)")
    return num(int(value), basis, phases_gib=phases,
               note=rules.estimates["activation_base_gib"].get("note"))


def non_torch(rules, inp: Inputs) -> Quantity:
    """Non-torch memory growth during profiling (communicator buffers), bytes."""
    if "non_torch" in inp.overrides:
        return num(int(inp.overrides["non_torch"] * GIB), "user")
    name = "non_torch_tp1_gib" if inp.tp == 1 else "non_torch_tp_gib"
    return num(int(rules.est(name) * GIB), rules.est_basis(name))


def capture_sizes(largest: int) -> int:
    """How many CUDA graphs vLLM captures up to `largest` tokens: 1, 2, 4, then every 8 up
    to 248, then every 16 (51 graphs at 512, 83 at 1024, 35 at 256; fixture logs; 5 at 16,
    6 at 24: noonghunna/club-3090 #104, #747)."""
    small = [s for s in (1, 2, 4) if s <= largest]
    mid = len(range(8, min(largest, 248) + 1, 8))
    big = len(range(256, largest + 1, 16)) if largest >= 256 else 0
    return len(small) + mid + big


def _capture_max(rules, inp: Inputs) -> int:
    """The platform's default largest CUDA-graph capture size (rule
    cudagraph_capture_max_by_capability by the GPU's major capability, else
    cudagraph_capture_max)."""
    rows = (rules.values.get("cudagraph_capture_max_by_capability") or {}).get("value") or ()
    if inp.capability:
        major = int(str(inp.capability).split(".")[0])
        for row in rows:
            if row["cc_major"] == major:
                return row["max"]
    return rules["cudagraph_capture_max"]


def cudagraph(rules, inp: Inputs, max_num_seqs: int, eager: bool, spec: int = 0,
              mnbt: int | None = None) -> Quantity:
    """vLLM's CUDA-graph memory estimate (bytes) for PIECEWISE + FULL decode graphs. The
    largest capture size is 2 x max_num_seqs x the uniform decode query length (1 + `spec`
    speculative tokens), at most the platform default and `mnbt` (max_num_batched_tokens)
    (vllm/config/vllm.py:1689-1694 in 0.24.0;
    :2463-2470 and :695-713 in 0.33.0; the 0.2x MTP logs of noonghunna/club-3090 #104 and #747 print
    'PIECEWISE=5 (largest=16)' for 2 sequences x 4 and 'PIECEWISE=6 (largest=24)' for 2 x 6).
    Not modelled: FlashInfer drops the FULL graphs under speculative decoding (those logs:
    'setting cudagraph_mode=PIECEWISE'), and 0.33 appends the uniform decode sizes."""
    if "cudagraph" in inp.overrides:
        return num(int(inp.overrides["cudagraph"] * GIB), "user")
    if eager:
        return num(0, "user: --enforce-eager (no graphs)")
    largest = min(_capture_max(rules, inp), 2 * max_num_seqs * (1 + spec), mnbt or 1 << 62)
    n_piece, n_full = capture_sizes(largest), capture_sizes(min(largest, max_num_seqs))
    if inp.graph_counts:
        n_piece, n_full = inp.graph_counts
    graphs = max(0, n_piece - 1) + max(0, n_full - 1)
    mib = rules.est("cudagraph_first_mib") + rules.est("cudagraph_per_graph_mib") * graphs
    return num(int(mib * MIB), rules.est_basis("cudagraph_first_mib", "cudagraph_per_graph_mib"),
               graphs=n_piece + n_full)


def regime_check(rules, inp: Inputs, names: list[str], settings: dict | None = None
                 ) -> FittedRegime:
    """Whether this prediction lies inside the regime the fitted constants `names` were fitted
    in (engine version, GPU, TP size and, where a constant records them, the engine settings
    it depends on: specs/engines/*.yaml `regime`), and if not, where not. `settings`: the
    values this prediction runs (e.g. max_num_seqs)."""
    reg = rules.regime(*names)
    outside = []
    here = f"{rules.engine} {rules.version}"
    if reg["engines"] and here not in reg["engines"]:
        outside.append(f"{here} (fitted on {', '.join(reg['engines'])})")
    if reg["hardware"] and inp.device and inp.device not in reg["hardware"]:
        outside.append(f"GPU {inp.device} (fitted on {', '.join(reg['hardware'])})")
    if reg["tp"] and inp.tp not in reg["tp"]:
        outside.append(f"TP {inp.tp} (fitted at TP {'/'.join(map(str, reg['tp']))})")
    for key, fitted in reg.get("settings", {}).items():
        value = (settings or {}).get(key)
        if value is not None and value not in fitted:
            outside.append(f"{key} {value} (fitted at {'/'.join(map(str, fitted))})")
    note = ("inside the fitted regime" if not outside else "outside the fitted regime: " +
            "; ".join(outside) + ": the non-KV terms are extrapolated")
    return FittedRegime(inside=not outside, outside=tuple(outside), regime=freeze(reg),
                        note=note, constants=tuple(names))


def ceil_bytes(x: float) -> int:
    """Whole bytes, rounded up."""
    return int(math.ceil(x))
