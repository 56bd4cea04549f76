"""What the offline catalog holds, read for `kvfit catalog`, `kvfit fit` and offline misses: the
nearest ids to a miss, ids known to be missing (kvfit/hub/catalog_missing.yaml), the
`--family` keys and the quantized siblings of an entry (other entries of the same base model).
An entry's row with its planned weights is built by the command (kvfit.cli.catalog_cmd)."""

from __future__ import annotations

import difflib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from .catalog import catalog_file, catalog_repo_ids

# Name suffixes that mark a quantized or re-typed copy of a base model (Qwen3-32B-FP8,
# DeepSeek-V4-Flash-NVFP4-FP8, Llama-4-Scout-17B-16E-Instruct-FP8-dynamic, ...-BF16).
_QUANT_SUFFIX = re.compile(r"(-(fp8|nvfp4|mxfp4|fp4|bf16|fp16|int4|int8|awq|gptq|dynamic|static"
                           r"|pertensor|fp8kv))+$", re.IGNORECASE)


def base_name(repo_id: str) -> str:
    """The base model a repo id (or an org--name folder) names, without its organisation or
    quantization suffixes."""
    return _QUANT_SUFFIX.sub("", repo_id.rpartition("/")[2].rpartition("--")[2]).casefold()


@cache
def _by_base() -> dict[str, tuple[str, ...]]:
    groups: dict[str, list[str]] = {}
    for rid in catalog_repo_ids():
        groups.setdefault(base_name(rid), []).append(rid)
    return {k: tuple(v) for k, v in groups.items()}


def siblings(repo_id: str) -> list[str]:
    """Other catalog entries of the same base model (Qwen/Qwen3-32B: Qwen3-32B-FP8, ...)."""
    return [r for r in _by_base().get(base_name(repo_id), ()) if r.casefold() != repo_id.casefold()]


def nearest_ids(typed: str, n: int = 5) -> list[str]:
    """Catalog ids closest to `typed`: the same name under another organisation, names that
    start with it, then difflib's close matches of the name and of the whole id."""
    ids = catalog_repo_ids()
    want = typed.strip().casefold()
    name = want.rpartition("/")[2]
    names = {r.rpartition("/")[2].casefold(): r for r in ids}
    found = [r for r in ids if r.rpartition("/")[2].casefold() == name]
    found += [r for r in ids if name and r.rpartition("/")[2].casefold().startswith(name)]
    found += [r for r in ids if base_name(r) == base_name(want)]
    found += [names[k] for k in difflib.get_close_matches(name, list(names), n=n, cutoff=0.6)]
    folded = {r.casefold(): r for r in ids}
    found += [folded[k] for k in difflib.get_close_matches(want, list(folded), n=n, cutoff=0.6)]
    return [r for r in dict.fromkeys(found) if r.casefold() != want][:n]


@cache
def _missing() -> dict[str, dict[str, str]]:
    from ruamel.yaml import YAML

    text = (Path(__file__).resolve().parent / "catalog_missing.yaml").read_text("utf-8")
    rows = YAML(typ="safe").load(text)["missing"]
    return {r["id"].casefold(): {k: str(v) for k, v in r.items()} for r in rows}


def known_missing(repo_id: str) -> dict[str, str] | None:
    """{id, named_by, reason} when `repo_id` is a checkpoint known to have no pinned source."""
    return _missing().get(repo_id.strip().casefold())


def missing_ids() -> list[dict[str, str]]:
    """Every known-missing checkpoint, as listed in catalog_missing.yaml."""
    return list(_missing().values())


def miss_hint(repo_id: str) -> str:
    """What an offline miss adds: why a known-missing id is absent, and the nearest ids."""
    parts = []
    gone = known_missing(repo_id)
    if gone is not None:
        parts.append(f"{gone['id']} is known to be missing from the catalog: {gone['reason']}.")
    close = nearest_ids(repo_id)
    if close:
        parts.append(f"Nearest catalog ids: {', '.join(close)} (`kvfit catalog list`).")
    return " ".join(parts)


def _config(repo_id: str) -> dict[str, Any]:
    return json.loads(catalog_file(repo_id, "config.json"))


def family_keys(repo_id: str) -> set[str]:
    """What `--family` matches, case-folded: the organisation, model_type, text model_type."""
    config = _config(repo_id)
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    keys = {repo_id.partition("/")[0], config.get("model_type"), text.get("model_type")}
    return {str(k).casefold() for k in keys if k}
