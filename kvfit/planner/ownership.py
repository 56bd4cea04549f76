"""Which checkpoint bytes are routed experts, for expert-parallel placements.

Ownership is established from, in order: per-tensor sizes read from safetensors headers
(Hub headers in Metadata.tensor_bytes, or *.safetensors files in a local directory),
classified by the architecture spec's `experts.routed_tensors` pattern or, without one, by
the module names of its routed-expert `parameters:` rows (kvfit.planner.expert_split); a
pinned `checkpoint-tensor-split.json` summary in the checkpoint folder (or kvfit's offline
catalog) giving routed_expert_bytes, non_expert_bytes and routed_experts; or the spec's
`parameters:` estimate, split into its routed-expert rows and the rest, labelled an
estimate (and scaled to the checkpoint's known total when there is one). When none of these
exists, expert-parallel placements are refused (exit 2).

Experts are owned in contiguous blocks: with EP=e and E experts, rank r owns experts
[r*E/e, (r+1)*E/e) (the default placement of SGLang and vLLM without EPLB).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..checkpoint.jsonfile import parse_json
from ..checkpoint.metadata import Metadata
from ..errors import ConfigError, UsageError

SUMMARY = "checkpoint-tensor-split.json"
MAX_SUMMARY_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class Ownership:
    """Routed-expert vs other bytes of the whole checkpoint (bytes), and where that came from.

    expert_bytes: bytes of each expert index summed over layers (headers only; None for a
    summary, which gives only the total and so assumes equal-sized experts).
    """

    source: str
    detail: str
    experts: int
    routed_bytes: int
    non_expert_bytes: int
    expert_bytes: tuple[int, ...] | None = None

    @property
    def total_bytes(self) -> int:
        return self.routed_bytes + self.non_expert_bytes

    def problem(self, ep: int, even: bool = True) -> str | None:
        """Why EP=`ep` cannot split the experts (evenly, when the engine requires it), or None."""
        if ep > self.experts or (even and self.experts % ep):
            return f"EP={ep} does not divide the {self.experts} routed experts"
        return None

    def blocks(self, ep: int) -> list[tuple[int, int]]:
        """[start, end) expert ranges of the EP ranks: contiguous, the first E mod ep ranks
        one expert more (vLLM's expert map; equal blocks when ep divides E)."""
        base, rem = divmod(self.experts, ep)
        out, start = [], 0
        for r in range(ep):
            n = base + (1 if r < rem else 0)
            out.append((start, start + n))
            start += n
        return out

    def rank_bytes(self, ep: int) -> int:
        """Routed-expert bytes on the fullest EP rank (contiguous blocks of experts)."""
        if self.expert_bytes is None:
            return -(-self.routed_bytes * -(-self.experts // ep) // self.experts)
        return max(sum(self.expert_bytes[a:b]) for a, b in self.blocks(ep))

    def section(self) -> dict:
        return {"source": self.source, "detail": self.detail, "routed_experts": self.experts,
                "routed_expert_bytes": self.routed_bytes,
                "non_expert_bytes": self.non_expert_bytes, "total_bytes": self.total_bytes,
                "per_tensor": self.expert_bytes is not None,
                "assumption": "routed experts are distributed across the EP group; every other "
                              "tensor (attention, dense and shared-expert MLPs, embeddings, "
                              "norms, the MTP head) is split over the attention-TP ranks of "
                              "each attention group (ideal sharding) and counted replicated "
                              "across attention groups"}


def establish(meta: Metadata, arch, values: dict, model_path: str | None, estimate=None,
              weights=None) -> Ownership:
    """Ownership for this checkpoint, or a UsageError saying why it cannot be established.

    estimate: a callable giving (WeightEstimate or None, why not), asked only when headers
    and a summary are both missing; weights: the plan's Weights (its total scales the
    estimate's split when the checkpoint's bytes are known)."""
    from .expert_split import header_patterns, split_of

    local = _local_dir(model_path)
    tensors = meta.tensor_bytes or (_local_headers(meta, local) if local else None)
    patterns = [arch.experts.pattern] if arch.experts is not None else header_patterns(arch)
    est, why_not = (None, "")
    if tensors and patterns:
        declared = _declared_count(arch, values)
        if declared is None:
            est, why_not = estimate() if estimate else (None, "")
            split = split_of(est) if est is not None else None
            declared = split.experts if split else None
        if declared is not None:
            return _from_tensors(tensors, arch, declared, patterns)
    summary, where = _find_summary(meta, local)
    if summary is not None:
        return _from_summary(summary, where, meta, _declared_count(arch, values))
    if est is None and estimate is not None and patterns:
        est, why_not = estimate()
    split = split_of(est) if est is not None else None
    if split is not None:
        return _from_estimate(split, est, arch, weights)
    if not patterns and arch.parameters is None:
        why = (f"the {arch.id} spec lists no tensor shapes (`parameters:`) to tag routed-expert "
               "tensors in, and no `experts:` block")
    elif not patterns:
        why = (f"the {arch.id} spec declares no routed-expert tensors (no `experts:` block and "
               "no `parameters:` row with `experts:` or `routed: true`; a dense model has none)")
    elif est is None and why_not:
        why = f"no safetensors headers were read, and the config-shape estimate is unavailable: " \
              f"{why_not}"
    else:
        why = "no safetensors headers were read"
    raise UsageError(f"expert-parallel placement needs per-tensor ownership of the checkpoint, "
                     f"and it cannot be established for {meta.source}: {why}, and there is no "
                     f"pinned {SUMMARY}.", hint="Plan with the default --parallelism tp, give a "
                     "checkpoint directory with its *.safetensors files (or a Hub id, whose "
                     f"headers are read), or add a {SUMMARY} summary to the directory.")


def pinned_split(meta: Metadata, arch, values: dict, model_path: str | None
                 ) -> Ownership | None:
    """The pinned checkpoint-tensor-split.json summary (checkpoint folder, else the catalog),
    or None when there is none: the checkpoint's tensor bytes for any parallelism."""
    summary, where = _find_summary(meta, _local_dir(model_path))
    if summary is None:
        return None
    return _from_summary(summary, where, meta, _declared_count(arch, values))


def pinned_weights(weights, meta: Metadata, res, model_path: str | None):
    """`weights`, or, when they are unknown (no files, no index), the pinned tensor split's
    (source "tensor split") if there is one: better evidence than the config-shape estimate."""
    from ..checkpoint.weights import Weights

    if weights.source != "unknown":
        return weights
    split = pinned_split(meta, res.arch, res.values, model_path)
    if split is None:
        return weights
    return Weights(split.total_bytes, "tensor split", f"{split.detail}; tensor bytes only (the "
                   "files are slightly larger: headers not counted)")


def _local_dir(model_path: str | None) -> Path | None:
    local = Path(model_path) if model_path and Path(model_path).exists() else None
    return local.parent if local is not None and local.is_file() else local


def _from_estimate(split, est, arch, weights) -> Ownership:
    """Ownership from the config-shape estimate's routed rows, scaled to a known total."""
    routed, other = split.routed_bytes, split.other_bytes
    detail = (f"ESTIMATE from config shapes: the {arch.id} spec's {split.routed_rows} "
              f"routed-expert tensor rows give {routed:,} B of routed experts and the other rows "
              f"{other:,} B ({est.detail})")
    total = getattr(weights, "bytes", None)
    if total is not None and weights.source not in ("config estimate", "expert ownership"):
        share = routed / (routed + other)
        routed = int(total * routed // (routed + other))
        other = total - routed
        detail += (f"; that routed share ({share:.2%}) is applied to the checkpoint's "
                   f"{total:,} B ({weights.source})")
    return Ownership("config estimate", detail, split.experts, routed, other)


def _declared_count(arch, values: dict) -> int | None:
    if arch.experts is None:
        return None
    from ..expr import ExprError

    try:
        n = arch.experts.count.evaluate(values)
    except ExprError as exc:
        raise ConfigError(f"spec '{arch.id}': experts.count '{arch.experts.count.text}' cannot "
                          f"be computed: {exc.message}.") from None
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise UsageError(f"spec '{arch.id}': experts.count '{arch.experts.count.text}' gave "
                         f"{n!r}; this config declares no routed experts to distribute.")
    return n


def _local_headers(meta: Metadata, local: Path) -> dict[str, int] | None:
    files = [f for f in meta.files if f.path.endswith(".safetensors")]
    if not files:
        return None
    from ..hub.safetensors_header import local_reader, read_safetensors_headers

    headers = read_safetensors_headers(files, local_reader(local))
    return {name: t.nbytes for name, t in headers.items()}


def _from_tensors(tensors: dict[str, int], arch, declared: int, patterns) -> Ownership:
    from .expert_split import classify

    per = [0] * declared
    routed = stacked = 0
    for name, nbytes in tensors.items():
        hit, index = classify(name, patterns)
        if not hit:
            continue
        routed += 1
        if index is None:                      # a stacked [experts, ...] tensor
            stacked += nbytes
            continue
        if index >= declared:
            raise ConfigError(f"tensor {name} names expert {index}, but the config declares "
                              f"{declared} routed experts.")
        per[index] += nbytes
    share, rest = divmod(stacked, declared)
    per = [b + share + (1 if i < rest else 0) for i, b in enumerate(per)]
    missing = [i for i, b in enumerate(per) if b == 0]
    if missing:
        raise UsageError(f"expert ownership cannot be established: the safetensors headers "
                         f"hold no tensors for {len(missing)} of {declared} routed experts "
                         f"(first: {missing[0]}), so the checkpoint is incomplete or its "
                         f"expert tensors are not named as the {arch.id} spec expects.")
    total = sum(per)
    how = ("experts.routed_tensors pattern" if arch.experts is not None
           else "routed-expert parameters rows")
    return Ownership("safetensors headers", f"{routed:,} routed-expert tensors of "
                     f"{len(tensors):,} in the headers, classified by the {arch.id} spec's "
                     f"{how}", declared, total, sum(tensors.values()) - total, tuple(per))


def _find_summary(meta: Metadata, local: Path | None) -> tuple[dict | None, str]:
    if local is not None and (local / SUMMARY).is_file():
        raw = (local / SUMMARY).read_bytes()[:MAX_SUMMARY_BYTES + 1]
        return _parse(raw), f"pinned summary {SUMMARY} in the checkpoint directory"
    if meta.origin in ("catalog", "hub"):
        from ..hub.catalog import catalog_file, load_entry

        entry = load_entry(meta.source)
        raw = catalog_file(meta.source, SUMMARY) if entry else None
        if raw is not None and entry.get("hf_revision") == meta.revision:
            return _parse(raw), f"pinned summary {SUMMARY} in kvfit's offline catalog"
    return None, ""


def _parse(raw: bytes) -> dict:
    if len(raw) > MAX_SUMMARY_BYTES:
        raise ConfigError(f"{SUMMARY} is larger than {MAX_SUMMARY_BYTES:,} bytes.")
    data = parse_json(raw, SUMMARY)
    if not isinstance(data, dict):
        raise ConfigError(f"{SUMMARY} must hold a JSON object.")
    return data


def _from_summary(data: dict, where: str, meta: Metadata, declared: int | None) -> Ownership:
    vals = {k: data.get(k) for k in ("routed_expert_bytes", "non_expert_bytes", "routed_experts")}
    for key, v in vals.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if key[0] == "n" else 1):
            raise ConfigError(f"{SUMMARY}: {key} must be a whole number (got {v!r}).",
                              fields=(key,))
    if declared is not None and vals["routed_experts"] != declared:
        raise ConfigError(f"{SUMMARY} counts {vals['routed_experts']} routed experts but the "
                          f"config declares {declared}.", fields=("routed_experts",))
    rev = data.get("revision")
    if rev and meta.revision and rev != meta.revision:
        raise ConfigError(f"{SUMMARY} describes revision {rev}, but the checkpoint read is "
                          f"{meta.revision}.")
    detail = f"{where}" + (f" (revision {rev})" if rev else "")
    if isinstance(data.get("what"), str):
        detail += f": {data['what'][:300]}"
    return Ownership("pinned summary", detail, vals["routed_experts"],
                     vals["routed_expert_bytes"], vals["non_expert_bytes"])
