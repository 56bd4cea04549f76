"""`kvfit specs new MODEL_TYPE --from CONFIG`: a spec skeleton read off one real config.

Writes specs/architectures/<model_type>.yaml (matchers and fields from the config, each field
naming the config keys it saw), pins the config (kvfit.cli.specs_pin) and writes a cases.yaml
stub whose expected numbers are left for the contributor to derive by hand. The skeleton
models dense attention that keeps K and V of every token on every layer; anything else
(windows, latent caches, recurrent state) is for the contributor to write.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import UsageError
from ..paths import expand_user
from .specs_pin import pin, project_root

# Canonical field -> the config keys that commonly carry it, in the order they are tried.
ALIASES = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers"),
    "q_heads": ("num_attention_heads", "n_head", "num_heads", "n_heads"),
    "kv_heads": ("num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num"),
    "hidden": ("hidden_size", "n_embd", "d_model"),
    "head_dim": ("head_dim", "kv_channels"),
    "max_context": ("max_position_embeddings", "n_positions", "seq_length", "max_seq_len"),
}
DERIVED = {"kv_heads": "q_heads", "head_dim": "hidden // q_heads"}
TODO = "TODO"


def _field(name: str, root: dict, where: str) -> tuple[str, str]:
    """(comment, YAML line) for one field: the keys this config has, else a default to fill."""
    seen = [k for k in ALIASES[name] if k in root and root[k] is not None]
    if seen:
        parts = [f"from: [{', '.join(seen)}]"]
        if name in DERIVED:
            parts.append(f"default: {json.dumps(DERIVED[name])}" if " " in DERIVED[name]
                         else f"default: {DERIVED[name]}")
        parts.append("min: 1")
        note = f"  # seen in {where}: " + ", ".join(f"{k} = {root[k]}" for k in seen)
        return note, f"  {name}: {{{', '.join(parts)}}}"
    if name in DERIVED:
        value = json.dumps(DERIVED[name]) if " " in DERIVED[name] else DERIVED[name]
        return (f"  # not in {where}: derived (check the modelling code agrees)",
                f"  {name}: {{default: {value}, min: 1}}")
    return (f"  # not in {where} ({', '.join(ALIASES[name])} all absent): the config class's "
            "default applies. Write it with\n  # `default: N` and `default_source: \"<class> "
            "default <key>=N\"` from its configuration_*.py.",
            f"  {name}: {{from: [{ALIASES[name][0]}], min: 1}}")


def skeleton(model_type: str, config: dict, source: str) -> str:
    """The spec text for `config` (a config.json object)."""
    root, where, match_extra = config, "config.json", []
    text = config.get("text_config")
    if isinstance(text, dict):
        root, where = text, "config.json text_config"
        match_extra.append("  config_root: text_config")
        if text.get("model_type"):
            match_extra += ["  text_model_type:", f"    - {text['model_type']}"]
    archs = config.get("architectures") or []
    lines = ["# yaml-language-server: $schema=../../schemas/architecture.v1.schema.json",
             f"# Skeleton from `kvfit specs new {model_type} --from {source}`: check every "
             "line against the",
             "# model's configuration_*.py and modelling code, and cite them under sources.",
             "schema_version: 1", f"id: {model_type}",
             "summary: Decoder that keeps the keys and values of every token on every layer.",
             "match:", "  model_type:", f"    - {model_type}"]
    if archs:
        lines += ["  architectures:"] + [f"    - {a}" for a in sorted(archs)]
    lines += match_extra + ["fields:"]
    for name in ALIASES:
        note, line = _field(name, root, where)
        lines += [note, line]
    lines += ["requires:", '  - check: "q_heads % kv_heads == 0"',
              "    message: query heads must be a multiple of KV heads",
              "layer_count: layers", "layers:", "  all: {all: true}", "partition:", "  - all",
              "components:", "  - name: kv", "    summary: keys and values of every layer",
              "    kind: full", "    layers: all",
              "    # K and V: 2 x kv_heads x head_dim values per token per layer.",
              '    bytes_per_token_per_layer: "2 * kv_heads * head_dim * kv_bytes"',
              "    shard: {heads: kv_heads}", "tensor_parallel:", "  divides:", "    - q_heads",
              "sources:", f"  - config.json of {source} (pinned under tests/architectures/"
              f"{model_type}/configs)"]
    return "\n".join(lines) + "\n"


def _base_of(specs: Path, text_type: str | None) -> tuple[str, dict] | None:
    """(id, fields) of the spec in `specs` that matches a wrapper's text model_type."""
    if not text_type:
        return None
    from ruamel.yaml import YAML
    for path in sorted(specs.glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        try:
            data = YAML(typ="safe").load(path.read_text())
        except Exception:                       # a broken spec: `specs check` says why
            continue
        if isinstance(data, dict) and text_type in (data.get("match") or {}).get("model_type", ()):
            return data.get("id", path.stem), data.get("fields") or {}
    return None


def wrapper_skeleton(model_type: str, config: dict, source: str, base: str,
                     base_fields: dict) -> str:
    """A spec that extends the text model's spec (`extends: BASE`, `config_root:
    text_config`); the base's fields the text_config omits are left for the contributor."""
    text = config["text_config"]
    archs = config.get("architectures") or []
    lines = ["# yaml-language-server: $schema=../../schemas/architecture.v1.schema.json",
             f"# Skeleton from `kvfit specs new {model_type} --from {source}`: a wrapper over "
             f"the {base} spec.",
             "schema_version: 1", f"id: {model_type}", f"extends: {base}",
             f"summary: Wrapper over a {text.get('model_type')} text model; only the text "
             "decoder keeps per-token state.",
             "match:", "  model_type:", f"    - {model_type}"]
    if archs:
        lines += ["  architectures:"] + [f"    - {a}" for a in sorted(archs)]
    lines += ["  config_root: text_config", "  text_model_type:", f"    - {text['model_type']}"]
    missing = [(name, raw) for name, raw in base_fields.items() if isinstance(raw, dict)
               and raw.get("from") and "default" not in raw
               and not any(k in text for k in raw["from"])]
    if missing:
        lines.append("# text_config omits these; the text config class's defaults apply. Write "
                     "each as a field")
        lines.append("# with `default: N` and `default_source: \"<Class> default <key>=N\"`:")
        lines += [f"#   {name}: from {', '.join(raw['from'])}" for name, raw in missing]
    lines += ["sources:", f"  - config.json of {source} (pinned under tests/architectures/"
              f"{model_type}/configs)"]
    return "\n".join(lines) + "\n"


def cases_stub(model_type: str, folder: str, max_context: object = None) -> str:
    """A cases.yaml with one case whose numbers are left to derive by hand, at 4,096 tokens
    (or the config's declared maximum when that is shorter)."""
    ctx = max_context if isinstance(max_context, int) and 0 < max_context < 4096 else 4096
    name = folder.split("--")[-1].lower().replace("-", "_").replace(".", "_")
    desc = f"{folder.split('--')[-1]} keeps K and V of every layer at {ctx:,} tokens"
    return (f"# {model_type} cases. Derive every expected number by hand from the pinned config,\n"
            "# the arithmetic in a comment above it; `kvfit specs check --plan` plans each case\n"
            "# and flags a value or a comment that disagrees.\n"
            f"{name}_{ctx}:\n"
            f"  description: \"{desc[:70]}\"\n"
            f"  model: configs/{folder}\n"
            f"  args: {{context: {ctx}}}\n"
            "  expect:\n"
            "    # TODO: per token per layer: 2 (K,V) x kv_heads x head_dim x bytes = ? B\n"
            f"    state.components[name=kv].bytes_per_entry: {TODO}\n"
            f"    # TODO: layers x per-layer bytes x {ctx:,} tokens = ? B\n"
            f"    state.bytes_per_sequence: {TODO}\n")


def new_spec(model_type: str, source: str, root: Path | None = None, force: bool = False
             ) -> tuple[Path, Path, Path]:
    """Write the skeleton, pin the config and write the cases stub; their paths."""
    root = root or project_root()
    spec = root / "specs" / "architectures" / f"{model_type}.yaml"
    cases = root / "tests" / "architectures" / model_type / "cases.yaml"
    for path in (spec, cases):
        if path.exists() and not force:
            raise UsageError(f"{path} already exists (--force writes over it).")
    src = expand_user(source)
    cfg = src / "config.json" if src.is_dir() else src
    if not cfg.is_file():
        raise UsageError(f"--from {source}: no config.json there.")
    try:
        config = json.loads(cfg.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"--from {source}: config.json is not JSON ({exc}).") from None
    if not isinstance(config, dict):
        raise UsageError(f"--from {source}: config.json is not a JSON object.")
    if config.get("model_type") not in (None, model_type):
        raise UsageError(f"--from {source}: its model_type is {config['model_type']!r}, not "
                         f"{model_type!r}; a spec is named after the model_type it matches.")
    pinned = pin(model_type, source, root=root)
    text = config.get("text_config")
    base = _base_of(spec.parent, text.get("model_type")) if isinstance(text, dict) else None
    spec.write_text(wrapper_skeleton(model_type, config, pinned.name, *base) if base else
                    skeleton(model_type, config, pinned.name))
    cases.parent.mkdir(parents=True, exist_ok=True)
    root_cfg = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    declared = next((root_cfg[k] for k in ALIASES["max_context"] if k in root_cfg), None)
    cases.write_text(cases_stub(model_type, pinned.name, declared))
    return spec, pinned, cases
