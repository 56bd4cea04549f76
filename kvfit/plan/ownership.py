"""Which checkpoint bytes are routed experts, for expert-parallel placements.

Ownership is established from, in order: per-tensor sizes read from safetensors headers
(Hub headers in Metadata.tensor_bytes, or *.safetensors files in a local directory),
classified by the architecture spec's `experts.routed_tensors` pattern; or a pinned
`checkpoint-tensor-split.json` summary in the checkpoint folder (or kvfit's offline
catalog) giving routed_expert_bytes, non_expert_bytes and routed_experts. When none of
these exists, expert-parallel placements are refused (exit 2): kvfit never guesses the split.

Experts are owned in contiguous blocks: with EP=e and E experts, rank r owns experts
[r*E/e, (r+1)*E/e) (the default placement of SGLang and vLLM without EPLB).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, UsageError
from ..metadata import Metadata
from ..source.jsonfile import parse_json

SUMMARY = "checkpoint-tensor-split.json"
MAX_SUMMARY_BYTES = 1_000_000


@dataclass(frozen=True)
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

    def problem(self, ep: int) -> str | None:
        """Why EP=`ep` cannot split the experts evenly, or None."""
        if self.experts % ep:
            return f"EP={ep} does not divide the {self.experts} routed experts"
        return None

    def rank_bytes(self, ep: int) -> int:
        """Routed-expert bytes on the fullest EP rank (contiguous blocks of experts)."""
        if self.expert_bytes is None:
            return -(-self.routed_bytes // ep)
        per = self.experts // ep
        return max(sum(self.expert_bytes[r * per:(r + 1) * per]) for r in range(ep))

    def section(self) -> dict:
        return {"source": self.source, "detail": self.detail, "routed_experts": self.experts,
                "routed_expert_bytes": self.routed_bytes,
                "non_expert_bytes": self.non_expert_bytes, "total_bytes": self.total_bytes,
                "per_tensor": self.expert_bytes is not None,
                "assumption": "routed experts are distributed across the EP group; every other "
                              "tensor (attention, dense and shared-expert MLPs, embeddings, "
                              "norms, the MTP head) is counted replicated on every GPU"}


def establish(meta: Metadata, arch, values: dict, model_path: str | None) -> Ownership:
    """Ownership for this checkpoint, or a UsageError saying why it cannot be established."""
    declared = _declared_count(arch, values)
    local = Path(model_path) if model_path and Path(model_path).exists() else None
    local = local.parent if local is not None and local.is_file() else local
    tensors = meta.tensor_bytes or (_local_headers(meta, local) if local else None)
    if tensors and arch.experts is not None:
        return _from_tensors(tensors, arch, declared)
    summary, where = _find_summary(meta, local)
    if summary is not None:
        return _from_summary(summary, where, meta, declared)
    why = (f"the {arch.id} spec declares no routed-expert tensors (`experts:`; a dense model "
           "has none)" if arch.experts is None
           else "no safetensors headers were read")
    raise UsageError(f"expert-parallel placement needs per-tensor ownership of the checkpoint, "
                     f"and it cannot be established for {meta.source}: {why}, and there is no "
                     f"pinned {SUMMARY}.", hint="Plan with the default --parallelism tp, give a "
                     "checkpoint directory with its *.safetensors files (or a Hub id, whose "
                     f"headers are read), or add a {SUMMARY} summary to the directory.")


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


def _from_tensors(tensors: dict[str, int], arch, declared: int) -> Ownership:
    per = [0] * declared
    routed = 0
    for name, nbytes in tensors.items():
        m = arch.experts.pattern.search(name)
        if m is None:
            continue
        index = int(m.group("expert"))
        if index >= declared:
            raise ConfigError(f"tensor {name} names expert {index}, but the config declares "
                              f"{declared} routed experts.")
        per[index] += nbytes
        routed += 1
    missing = [i for i, b in enumerate(per) if b == 0]
    if missing:
        raise UsageError(f"expert ownership cannot be established: the safetensors headers "
                         f"hold no tensors for {len(missing)} of {declared} routed experts "
                         f"(first: {missing[0]}), so the checkpoint is incomplete or its "
                         f"expert tensors are not named as the {arch.id} spec expects.")
    total = sum(per)
    return Ownership("safetensors headers", f"{routed:,} routed-expert tensors of "
                     f"{len(tensors):,} in the headers, classified by the {arch.id} spec's "
                     "experts.routed_tensors pattern", declared, total,
                     sum(tensors.values()) - total, tuple(per))


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
