"""Checkpoint weight bytes and where the number came from."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, replace

from ..errors import ConfigError, UsageError
from .metadata import Metadata

GIB = 1024**3


def rank_share(total: int, replicated: int, tp: int) -> int:
    """Bytes one of `tp` ranks holds of `total` weight bytes: the sharded part / TP (rounded
    up) plus the `replicated` part whole. The one per-rank weight formula of kvfit."""
    return -(-(total - replicated) // tp) + replicated


@dataclass(frozen=True, slots=True)
class Weights:
    """Total checkpoint weight bytes (None if unknown), with provenance; `replicated_rows`:
    the spec rows every rank holds whole at any TP, as (bytes, decoder layer indices; empty
    for a row outside the layers), counted from config shapes, and why."""

    bytes: int | None
    source: str
    detail: str
    replicated_rows: tuple[tuple[int, tuple[int, ...]], ...] = ()
    replicated_detail: str | None = None

    @property
    def replicated(self) -> int:
        """Bytes every rank holds whole."""
        return sum(b for b, _ in self.replicated_rows)

    def rank_bytes(self, tp: int) -> int | None:
        """Bytes per rank at TP=`tp` (rank_share), None when unknown."""
        return None if self.bytes is None else rank_share(self.bytes, self.replicated, tp)

    def replicated_on(self, start: int, end: int, first: bool) -> int:
        """Replicated bytes of the decoder layers [start, end): each row's bytes spread evenly
        over its layers (cumulative, so the stages add up to the row). A row outside the
        layers (no shipped spec has one) counts on the first stage, where the embedding
        goes."""
        out = 0
        for b, layers in self.replicated_rows:
            if not layers:
                out += b if first else 0
                continue
            lo, hi = bisect_left(layers, start), bisect_left(layers, end)
            out += b * hi // len(layers) - b * lo // len(layers)
        return out


def with_replicated(weights: Weights, parameters, estimate) -> Weights:
    """`weights` with the bytes of the spec's `replicated` tensor rows (held whole on every
    rank), counted from config shapes, whatever gave the total (files, index, estimate).
    `parameters`: the architecture spec's parameters block (None: the spec has none);
    `estimate()`: the (WeightEstimate | None, why) to count them from, called only when a row
    is marked."""
    if weights.bytes is None or parameters is None or \
            not any(t.replicated for t in parameters.tensors):
        return weights
    est, _ = estimate()
    rep = est.replicated if est is not None else None
    if rep is None or rep[0] >= weights.bytes:
        return weights
    return replace(weights, replicated_rows=est.replicated_rows, replicated_detail=(
        f"{rep[0]:,} B held whole on every rank (config shapes; {rep[1]}); the other "
        f"{weights.bytes - rep[0]:,} B divided over TP"))


def _index_total(index: dict) -> int:
    meta = index.get("metadata")
    total = meta.get("total_size") if isinstance(meta, dict) else None
    if isinstance(total, bool) or not isinstance(total, int) or total <= 0:
        raise ConfigError("model.safetensors.index.json has no positive integer "
                          "metadata.total_size.", fields=("metadata.total_size",))
    return total


def _counted(meta: Metadata) -> Weights:
    from .artifacts import choose_weight_files

    chosen, why = choose_weight_files(meta.files, meta.selected_artifact,
                                      index=meta.safetensors_index)
    if chosen and all(f.size is not None for f in chosen):
        return Weights(sum(f.size for f in chosen), "checkpoint files", why)
    if meta.safetensors_index is not None:
        return Weights(_index_total(meta.safetensors_index), "safetensors index",
                       "model.safetensors.index.json metadata.total_size (tensor bytes, "
                       "excludes file headers)")
    return Weights(None, "unknown", "no weight files, no safetensors index, no --weight-gib")


def config_estimate(meta: Metadata, res, model_bytes, mtp: bool = False, quant=None
                    ) -> tuple[object | None, str]:
    """(WeightEstimate or None, basis or why not): weights from the spec's config shapes;
    `mtp` adds the MTP / draft layers the spec lists (loaded by a speculative run); `quant`
    (a QuantSummary) replaces the checkpoint's declaration, for weights the engine quantizes
    while loading."""
    from .estimate import estimate_weights
    from .quant import summarize

    return estimate_weights(res, quant if quant is not None else summarize(meta), model_bytes,
                            mtp)


def count_weights(meta: Metadata, weight_gib: float | None, floor_gib: float | None = None,
                  floor_basis: str | None = None, estimate=None) -> Weights:
    """Weight bytes: --weight-gib, else the served files (or the index), else `estimate` (a
    labelled WeightEstimate from config shapes), raised to a published runtime floor when the
    checkpoint has one (e.g. gpt-oss MXFP4)."""
    if weight_gib is not None:
        if not 0 < weight_gib < 1e6:
            raise UsageError(f"--weight-gib {weight_gib} must be a positive size in GiB.")
        if round(weight_gib * GIB) < 1:           # 1e-300 GiB would plan as zero weights
            raise UsageError(f"--weight-gib {weight_gib:g} is less than one byte; give the "
                             "checkpoint's size in GiB (e.g. --weight-gib 60).")
        return Weights(round(weight_gib * GIB), "user", f"--weight-gib {weight_gib:g}")
    counted = _counted(meta)
    if counted.bytes is None and estimate is not None:
        counted = Weights(estimate.total_bytes, "config estimate", estimate.detail)
    floor = None if floor_gib is None else round(floor_gib * GIB)
    if floor is not None and (counted.bytes is None or counted.bytes < floor):
        was = ("unknown" if counted.bytes is None
               else f"{counted.bytes / GIB:.3f} GiB of files ({counted.detail})")
        return Weights(floor, "runtime floor", f"{floor_gib:g} GiB planning floor ({floor_basis}); "
                       f"the checkpoint itself: {was}")
    return counted
