"""Summarise a checkpoint's quantization declarations: weights and KV cache, separately.

Reads declarations only, never model names: config.json ``quantization_config`` (top level,
else ``text_config.quantization_config``) and ModelOpt's hf_quant_config.json. When both
declare weights, hf_quant_config.json wins and a disagreement becomes a warning.

``weight_algorithm`` vocabulary (``WEIGHT_ALGORITHMS``; None = no weight quantization):
  fp8 / fp8-block: 8-bit float, per-tensor or per-channel / 2-D block scales; fbgemm-fp8;
  int8-block: 8-bit integer with 2-D block scales (SGLang blockwise_int8);
  mxfp8 / mxfp4: OCP MX float, one shared exponent per 32 elements; nvfp4: 4-bit float, an
  FP8 scale per 16 elements; int8; int4-pack / int8-pack (compressed-tensors pack-quantized);
  awq / gptq (width in weight_bits); bitsandbytes-8bit / bitsandbytes-4bit;
  mixed-precision: quantized modules carry several of these; unknown: see ``warnings``.
``kv_cache`` is None or one of ``KV_CACHE_DTYPES``. An unknown KV spelling is a ConfigError,
not "unknown", because it changes the bytes of every cached token.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvfit.checkpoint.metadata import Metadata, once
from kvfit.checkpoint.quant_floors import _FLOORS, runtime_floor
from kvfit.errors import ConfigError

# Nominal bits per stored weight element, scales excluded. AWQ kernels are 4-bit (a declared
# `bits` overrides); GPTQ has no default width.
_BITS = {"fp8": 8, "fp8-block": 8, "int8-block": 8, "fbgemm-fp8": 8, "mxfp8": 8, "int8": 8, "int8-pack": 8,
         "bitsandbytes-8bit": 8, "nvfp4": 4, "mxfp4": 4, "int4-pack": 4, "awq": 4,
         "bitsandbytes-4bit": 4}
# ModelOpt quant_algo spellings (modelopt export constants; vLLM modelopt.py QUANT_ALGOS).
_MODELOPT = {"FP8": "fp8", "FP8_PER_CHANNEL_PER_TOKEN": "fp8", "FP8_PC_PT": "fp8",
             "FP8_PB_WO": "fp8-block", "FP8_PB_REAL": "fp8-block", "MXFP8": "mxfp8",
             "NVFP4": "nvfp4", "W4A16_NVFP4": "nvfp4", "NVFP4_AWQ": "nvfp4",
             "NVFP4_SVDQUANT": "nvfp4", "W4A8_NVFP4_FP8": "nvfp4", "MXFP4": "mxfp4",
             "W4A8_MXFP4_FP8": "mxfp4", "INT8_SQ": "int8", "INT4_AWQ": "awq", "W4A8_AWQ": "awq"}
# KV spellings, lower-cased: ModelOpt kv_cache_quant_algo values and engine dtype names.
_KV = {"fp8": "fp8", "fp8_e4m3": "fp8_e4m3", "fp8_e5m2": "fp8_e5m2", "int8": "int8",
       "nvfp4": "nvfp4", "nvfp4_affine": "nvfp4", "fp8_k_nvfp4_v": "fp8_k_nvfp4_v",
       "none": None, "": None}
# quant_method -> format for single-format methods (fp8 and bitsandbytes are refined later).
_SINGLE = {"fp8": "fp8", "fbgemm_fp8": "fbgemm-fp8", "mxfp4": "mxfp4", "awq": "awq",
           "gptq": "gptq", "bitsandbytes": "unknown", "blockwise_int8": "int8-block"}
WEIGHT_ALGORITHMS = frozenset(_BITS) | {"gptq", "mixed-precision", "unknown"}
KV_CACHE_DTYPES = frozenset(v for v in _KV.values() if v)
_HF = "hf_quant_config.json: quantization"


@dataclass(frozen=True, slots=True)
class QuantSummary:
    """What a checkpoint declares about its quantization.

    weight_bits: nominal bits per quantized weight element, scales excluded (None if mixed).
    group_size: elements per scale of group-quantized modules, when one size is declared.
    block_size: 2-D weight block (rows, cols) in elements, when one is declared.
    mixed: modules carry different storage formats, counting "left at the model dtype by an
      exclusion list" as a format. formats: the distinct quantized formats (sorted).
    excluded_modules: entries (names or patterns) in the declared exclusion list.
    method / declared: the producer's quant_method and its raw algorithm or format string.
    kv_cache_source: the field that decided kv_cache; set with kv_cache None when the
      checkpoint explicitly declares no KV quantization.
    runtime_floor_gib: a published planning floor in GiB (specs/quant/runtime_floors.yaml).
    """

    weight_algorithm: str | None = None
    weight_bits: int | None = None
    group_size: int | None = None
    block_size: tuple[int, ...] | None = None
    mixed: bool = False
    formats: tuple[str, ...] = ()
    scope: str | None = None
    excluded_modules: int = 0
    method: str | None = None
    declared: str | None = None
    kv_cache: str | None = None
    kv_cache_source: str | None = None
    sources: tuple[str, ...] = ()
    runtime_floor_gib: float | None = None
    runtime_floor_basis: str | None = None
    warnings: tuple[str, ...] = ()
    # For weight estimates only (not in to_json): (format, target modules) per quantized
    # group, and the exclusion list's entries, exactly as declared.
    module_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    excluded_names: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """Plain JSON-ready dict with a fixed key order; unordered lists come sorted."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__
               if name not in ("module_groups", "excluded_names")}
        out["block_size"] = list(self.block_size) if self.block_size else None
        return out | {k: sorted(out[k]) for k in ("formats", "sources", "warnings")}


@dataclass(slots=True)
class _Decl:
    """One parsed declaration: (format, targets) per quantized group, plus exclusions."""

    method: str | None
    declared: str | None
    excluded: list[str] = field(default_factory=list)
    groups: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    group_sizes: set[int] = field(default_factory=set)
    block_sizes: set[tuple[int, ...]] = field(default_factory=set)
    bits: int | None = None
    warnings: list[str] = field(default_factory=list)


def _fail(where: str, want: str, value: object) -> ConfigError:
    shown = "null" if value is None else f"{type(value).__name__} {value!r}"[:80]
    return ConfigError(f"{where} must be {want}, but it is {shown}.", fields=(where,),
                       hint="Fix or remove the declaration; kvfit will not guess its meaning.")


def _dict(value: object, where: str) -> dict:
    if isinstance(value, dict):
        return value
    raise _fail(where, "a JSON object", value)


def _names(value: object, where: str) -> list[str]:
    if value is None or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return value or []
    raise _fail(where, "a list of module names or null", value)


def _opt(value: object, where: str, kind: type) -> object:
    """value if it is None or a `kind` (a bool is not an int); else a ConfigError."""
    if value is None or (isinstance(value, kind) and (kind is bool) == isinstance(value, bool)):
        return value
    raise _fail(where, f"{kind.__name__} or null", value)


def _sizes(decl: _Decl, where: str, group: object = None, block: object = None,
           block_key: str = "block_structure") -> bool:
    """Record a group size (elements per scale; -1 = per-channel) and/or a weight block."""
    if (_opt(group, f"{where}.group_size", int) or 0) > 0:
        decl.group_sizes.add(group)
    if block is not None:
        if not (isinstance(block, list) and 1 <= len(block) <= 2
                and all(type(v) is int and v > 0 for v in block)):
            raise _fail(f"{where}.{block_key}", "a list of one or two positive integers", block)
        decl.block_sizes.add(tuple(block))
    return block is not None


def _modelopt_format(value: object, where: str, decl: _Decl) -> str:
    fmt = _MODELOPT.get((_opt(value, where, str) or "").upper())
    if fmt is None:
        decl.warnings.append(f"{where} {value!r} is not a ModelOpt algorithm kvfit knows.")
    return fmt or "unknown"


def _parse_modelopt(q: dict, where: str, method: str | None = "modelopt") -> _Decl:
    """ModelOpt: hf_quant_config.json `quantization`, or config.json in ModelOpt form."""
    algo = _opt(q.get("quant_algo"), f"{where}.quant_algo", str)
    key = "exclude_modules" if "exclude_modules" in q else "ignore"
    decl = _Decl(method, algo, excluded=_names(q.get(key), f"{where}.{key}"))
    _sizes(decl, where, group=q.get("group_size"))
    groups = _dict(q.get("config_groups") or {}, f"{where}.config_groups")
    for name, group in sorted(groups.items()):  # the config.json form puts group sizes here
        at = f"{where}.config_groups.{name}"
        weights = _dict(_dict(group, at).get("weights") or {}, f"{at}.weights")
        _sizes(decl, f"{at}.weights", group=weights.get("group_size"))
    if algo is not None and algo.upper() != "MIXED_PRECISION":
        decl.groups.append((_modelopt_format(algo, f"{where}.quant_algo", decl), ("Linear",)))
    elif algo is not None:
        layers = _dict(q.get("quantized_layers"), f"{where}.quantized_layers")
        for name, spec in sorted(layers.items()):
            # the usual entry, {"quant_algo": a known name[, "group_size": int]}, taken at
            # once (a per-module declaration lists thousands); anything else is checked below
            if type(spec) is dict and type(algo_of := spec.get("quant_algo")) is str and \
                    (fmt := _MODELOPT.get(algo_of.upper())) is not None and \
                    type(size := spec.get("group_size")) in (int, type(None)):
                decl.groups.append((fmt, (name,)))
                if size is not None and size > 0:
                    decl.group_sizes.add(size)
                continue
            at = f"{where}.quantized_layers.{name}"
            layer_algo = _opt(_dict(spec, at).get("quant_algo"), f"{at}.quant_algo", str)
            fmt = _modelopt_format(layer_algo, f"{where}.quantized_layers.*.quant_algo", decl)
            decl.groups.append((fmt, (name,)))
            _sizes(decl, at, group=spec.get("group_size"))
    return decl


def _tensors_format(w: dict, hint: str | None, where: str, decl: _Decl) -> str:
    """Map compressed-tensors weight args (num_bits, type, strategy) to the vocabulary."""
    bits = _opt(w.get("num_bits"), f"{where}.num_bits", int)
    kind = _opt(w.get("type"), f"{where}.type", str)
    size = w.get("group_size")
    if kind == "float" and bits == 8:
        return "fp8-block" if w.get("strategy") == "block" or w.get("block_structure") else "fp8"
    if kind == "float" and bits == 4 and (hint == "mxfp4-pack-quantized" or size == 32):
        return "mxfp4"
    if kind == "float" and bits == 4 and (hint == "nvfp4-pack-quantized" or size == 16):
        return "nvfp4"
    if kind == "int" and bits in (4, 8) and hint == "pack-quantized":
        return f"int{bits}-pack"
    if kind == "int" and bits == 8 and hint in ("int-quantized", "naive-quantized"):
        return "int8"
    decl.warnings.append(f"{where}: {bits}-bit {kind} weights in format {hint!r} are not a "
                         "combination kvfit knows.")
    return "unknown"


def _parse_tensors(q: dict, where: str) -> _Decl:
    """compressed-tensors (llm-compressor): one format per config group."""
    top = _opt(q.get("format"), f"{where}.format", str)
    decl = _Decl("compressed-tensors", top, excluded=_names(q.get("ignore"), f"{where}.ignore"))
    if q.get("config_groups") is None:
        decl.warnings.append(f"{where} declares no config_groups; weights not summarised.")
        decl.groups.append(("unknown", ("Linear",)))
    groups = _dict(q.get("config_groups") or {}, f"{where}.config_groups")
    for name, group in sorted(groups.items()):
        at = f"{where}.config_groups.{name}"
        if _dict(group, at).get("weights") is None:
            continue  # an activation-only group leaves the weights alone
        w = _dict(group["weights"], f"{at}.weights")
        hint = _opt(group.get("format"), f"{at}.format", str) or top
        fmt = _tensors_format(w, hint, f"{at}.weights", decl)
        decl.groups.append((fmt, tuple(_names(group.get("targets"), f"{at}.targets"))))
        _sizes(decl, f"{at}.weights", group=w.get("group_size"), block=w.get("block_structure"))
    return decl


def _parse_single(method: str, q: dict, where: str) -> _Decl:
    """Single-format methods: fp8, fbgemm_fp8, mxfp4, bitsandbytes, awq, gptq, blockwise_int8."""
    key = "llm_int8_skip_modules" if method == "bitsandbytes" else "modules_to_not_convert"
    decl = _Decl(method, None, excluded=_names(q.get(key), f"{where}.{key}"))
    fmt = _SINGLE[method]
    if method == "fp8" and _sizes(decl, where, block=q.get("weight_block_size"),
                                  block_key="weight_block_size"):
        fmt = "fp8-block"
    if method == "blockwise_int8" and not _sizes(decl, where, block=q.get("weight_block_size"),
                                                 block_key="weight_block_size"):
        # SGLang's BlockInt8Config requires a 2-D weight_block_size (blockwise_int8.py:60-72)
        decl.warnings.append(f"{where} declares blockwise_int8 without a weight_block_size.")
        fmt = "unknown"
    if method == "bitsandbytes":
        four, eight = (bool(_opt(q.get(k, q.get(f"_{k}")), f"{where}.{k}", bool))
                       for k in ("load_in_4bit", "load_in_8bit"))
        fmt = "bitsandbytes-4bit" if four else "bitsandbytes-8bit"
        if four == eight:
            fmt = "unknown"
            decl.warnings.append(f"{where} sets neither or both of load_in_4bit/load_in_8bit.")
    if method in ("awq", "gptq"):
        decl.bits = _opt(q.get("bits", q.get("w_bit")), f"{where}.bits", int)
        _sizes(decl, where, group=q.get("group_size", q.get("q_group_size")))
    decl.groups.append((fmt, ("Linear",)))
    return decl


def _parse_config(q: dict, where: str) -> _Decl:
    """Dispatch a config.json quantization_config on its quant_method."""
    method = _opt(q.get("quant_method"), f"{where}.quant_method", str)
    name = (method or "").lower()
    if method is None and "quant_algo" in q:
        decl = _parse_modelopt(q, where, method=None)
        decl.warnings.append(f"{where} has no quant_method; read as ModelOpt because it has "
                             "quant_algo (engines that dispatch on quant_method may not).")
    elif name in ("modelopt", "modelopt_fp4"):
        decl = _parse_modelopt(q, where, method)
    elif name in ("compressed-tensors", *_SINGLE):
        decl = (_parse_tensors(q, where) if name == "compressed-tensors"
                else _parse_single(name, q, where))
    else:
        decl = _Decl(method, None, groups=[("unknown", ("Linear",))])
        decl.warnings.append(f"{where}.quant_method {method!r} is not a method kvfit knows; "
                             "weights are reported as 'unknown'.")
    return decl


def _count(names: list[str] | tuple[str, ...], noun: str) -> str:
    """'3 modules' or '4 module patterns' (any glob or re: entry makes them patterns)."""
    if any("*" in n or n.startswith("re:") for n in names):
        noun += " pattern"
    return f"{len(names)} {noun}{'' if len(names) == 1 else 's'}"


def _scope(decl: _Decl) -> str:
    """Short text naming what the declaration quantizes, from its own module lists."""
    by_format: dict[str, list[str]] = {}
    for fmt, targets in decl.groups:
        by_format.setdefault(fmt, []).extend(targets)
    names = [t for targets in by_format.values() for t in targets]
    if all(t == "Linear" for t in names):
        base = "all linear layers"
    elif len(by_format) == 1 and all("experts" in t.split(".") for t in names):
        # "experts" as a whole path segment names routed experts ("shared_experts" does not)
        base = f"routed experts only ({_count(names, 'module')})"
    else:
        base = "; ".join(f"{fmt} on {', '.join(t) if len(t) <= 2 else _count(t, 'module')}"
                         for fmt, t in sorted(by_format.items()))
    if not decl.excluded:
        return base
    joiner = " except" if base == "all linear layers" else ";"
    return f"{base}{joiner} {_count(decl.excluded, 'excluded module')}"


def _weights(decl: _Decl) -> dict[str, object]:
    """The weight fields of a QuantSummary for one declaration."""
    formats = sorted({fmt for fmt, _ in decl.groups})
    if not formats:
        return {"method": decl.method, "declared": decl.declared}
    algo = formats[0] if len(formats) == 1 else "mixed-precision"
    group, block = (next(iter(s)) if len(s) == 1 else None
                    for s in (decl.group_sizes, decl.block_sizes))
    return {"weight_algorithm": algo, "formats": tuple(formats),
            "weight_bits": decl.bits if decl.bits is not None else _BITS.get(algo),
            "group_size": group, "block_size": block, "scope": _scope(decl),
            "mixed": len(formats) > 1 or bool(decl.excluded),
            "excluded_modules": len(decl.excluded), "method": decl.method,
            "declared": decl.declared, "module_groups": tuple(decl.groups),
            "excluded_names": tuple(decl.excluded)}


def _kv_value(value: object, where: str) -> str | None:
    """Normalise one KV-cache declaration: a spelling, a compressed-tensors scheme, or null."""
    if isinstance(value, str) and value.strip().lower() not in _KV:
        raise _fail(where, f"one of {sorted(filter(None, _KV))} or null", value)
    if value is None or isinstance(value, str):
        return _KV[value.strip().lower()] if value else None
    if not isinstance(value, dict):
        raise _fail(where, "a KV-cache algorithm name, a quantization scheme or null", value)
    bits = _opt(value.get("num_bits"), f"{where}.num_bits", int)
    kind = _opt(value.get("type"), f"{where}.type", str)
    found = {(8, "float"): "fp8", (8, "int"): "int8"}.get((bits, kind))
    if (bits, kind, value.get("group_size")) == (4, "float", 16):
        found = "nvfp4"
    if found is None:
        raise _fail(where, "an 8-bit float/int or 4-bit float group-16 scheme", value)
    return found


def _kv_cache(hf: dict | None, qc: dict | None, where: str | None) -> tuple:
    """(kv dtype, deciding field, warnings). The first non-null declaration decides."""
    fields = [(f"{_HF}.kv_cache_quant_algo", hf, "kv_cache_quant_algo")]
    fields += [(f"{where}.{key}", qc, key) for key in ("kv_cache_scheme", "kv_cache_quant_algo")]
    found = [(label, _kv_value(holder[key], label))
             for label, holder, key in fields if holder is not None and key in holder]
    clash = len({value for _, value in found}) > 1
    warnings = ["KV-cache declarations disagree: " + ", ".join(
        f"{label} -> {value}" for label, value in found) + "; the first non-null is used."] * clash
    chosen = next((f for f in found if f[1] is not None), found[0] if found else (None, None))
    return chosen[1], chosen[0], warnings


def _config_qc(config: dict) -> tuple[dict | None, str | None]:
    """config.json's quantization_config: top level first, else inside text_config."""
    for path, holder in (("quantization_config", config),
                         ("text_config.quantization_config", config.get("text_config"))):
        if isinstance(holder, dict) and holder.get("quantization_config") is not None:
            where = f"config.json: {path}"
            return _dict(holder["quantization_config"], where), where
    return None, None


def summarize(meta: Metadata) -> QuantSummary:
    """Summarise meta's quantization declarations (weights, KV cache, runtime floor in GiB);
    ConfigError when a declaration is malformed (wrong types, unknown KV spelling).

    Computed once per checkpoint read (kvfit.checkpoint.metadata.once: a plan asks several times; an
    NVFP4 checkpoint's exclusion list can hold thousands of module names)."""
    return once(meta, ("quant summary",), lambda: _summarize(meta))


def _summarize(meta: Metadata) -> QuantSummary:
    config, hf, decls = _dict(meta.config, "config.json"), None, []
    if meta.quant_config is not None:
        hf = _dict(_dict(meta.quant_config, "hf_quant_config.json").get("quantization"), _HF)
        decls.append(_parse_modelopt(hf, _HF))
    qc, where = _config_qc(config)
    if qc is not None:
        decls.append(_parse_config(qc, where))
    weighted = [_weights(d) for d in decls if d.groups]
    fields = weighted[0] if weighted else _weights(decls[0] if decls else _Decl(None, None))
    warnings = list(dict.fromkeys(w for d in decls for w in d.warnings))
    if len({w["weight_algorithm"] for w in weighted}) > 1:
        warnings.append(f"{where} declares {weighted[1]['weight_algorithm']} but {_HF} "
                        f"declares {fields['weight_algorithm']}; the summary follows {_HF}.")
    kv, kv_source, kv_warnings = _kv_cache(hf, qc, where)
    floor, basis = runtime_floor(config, qc, quantized=bool(weighted))
    sources = [s for s, present in ((_HF, hf), (where, qc)) if present is not None]
    return QuantSummary(
        **fields, kv_cache=kv, kv_cache_source=kv_source,
        sources=tuple(sorted(sources + ([_FLOORS.as_posix()] if floor is not None else []))),
        runtime_floor_gib=floor, runtime_floor_basis=basis,
        warnings=tuple(warnings + kv_warnings))
