"""--verify-headers: read the safetensors headers, sum tensor bytes, check layer coverage."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..checkpoint.metadata import Metadata
from ..errors import ConfigError, UsageError


def _local_tensors(meta: Metadata, folder: Path) -> tuple[dict[str, int], Counter, str]:
    from ..checkpoint.artifacts import choose_weight_files
    from ..hub.safetensors_header import local_reader, read_safetensors_headers

    chosen, _ = choose_weight_files(meta.files, meta.selected_artifact,
                                    index=meta.safetensors_index)
    shards = [f for f in chosen if f.path.endswith(".safetensors")]
    if not shards:
        raise UsageError("--verify-headers needs .safetensors files; this checkpoint folder "
                         "has none.")
    headers = read_safetensors_headers(shards, local_reader(folder))
    sizes = {name: h.nbytes for name, h in headers.items()}
    dtypes = Counter()
    for h in headers.values():
        dtypes[h.dtype] += h.nbytes
    return sizes, dtypes, f"headers of {len(shards)} local safetensors file(s)"


def verify(meta: Metadata, n_layers: int, folder: Path | None) -> dict:
    """The `headers` report section; raises when a declared layer has no tensors."""
    from ..checkpoint.artifacts import missing_layers

    if folder is not None and folder.is_dir():
        sizes, dtypes, source = _local_tensors(meta, folder)
    elif meta.tensor_bytes:
        sizes, dtypes, source = meta.tensor_bytes, Counter(), "safetensors headers read from the Hub"
    else:
        raise UsageError("--verify-headers needs safetensors files (local, or on the Hub).")
    missing = missing_layers(sizes, n_layers)
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        raise ConfigError(f"the checkpoint's tensors cover no weights for declared layer(s) "
                          f"{shown} of {n_layers}; the weights are incomplete or belong to "
                          "another architecture.")
    return {"source": source, "tensors": len(sizes), "tensor_bytes": sum(sizes.values()),
            "bytes_by_dtype": dict(sorted(dtypes.items())), "layers_covered": n_layers}


def index_coverage_warning(meta: Metadata, n_layers: int, warnings: list[str]) -> None:
    """Without --verify-headers: warn when the safetensors index misses declared layers."""
    index = meta.safetensors_index
    if not isinstance(index, dict) or not isinstance(index.get("weight_map"), dict):
        return
    from ..checkpoint.artifacts import check_index_covers_layers

    missing = check_index_covers_layers(index, n_layers)
    if missing:
        warnings.append(f"The safetensors index maps no tensors for declared layer(s) "
                        f"{', '.join(map(str, missing[:10]))}: the weight count may be "
                        "incomplete (run with --verify-headers to refuse such checkpoints).")
