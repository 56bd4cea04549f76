"""Shared helpers of the engine probe scripts (standard library only; never imports kvfit).

A probe runs inside the serving engine's own interpreter:

    ENGINE_PYTHON probe_vllm.py --mode config --config-dir DIR --kv-dtype bf16 --context N --tp N

and prints exactly one JSON object on stdout. Everything the engine itself prints (vLLM logs
to stdout) is redirected to stderr, so stdout carries only the result. The probe scripts load
this file by path, so the kvfit package is never imported into the engine's interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

PROTOCOL = 1
FOUR_BIT_INDEX = ("mxfp4", "nvfp4")


class Unsupported(Exception):
    """The installed engine does not expose an API the probe needs (moved in this version)."""


class Refused(Exception):
    """The probe will not run in this environment (load without an accelerator)."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The probe's arguments (kvfit builds them; see kvfit/preflight/inputs.py)."""
    p = argparse.ArgumentParser(description="kvfit installed-engine probe")
    p.add_argument("--mode", choices=["registry", "config", "load"], required=True)
    p.add_argument("--config-dir", required=True, help="directory holding config.json")
    p.add_argument("--model", help="what load mode serves (Hub id or directory)")
    p.add_argument("--revision", help="Hub commit for load mode")
    p.add_argument("--kv-dtype", required=True, help="kvfit's portable KV dtype name")
    p.add_argument("--kv-auto", action="store_true", help="the user asked --kv-dtype auto")
    p.add_argument("--index-dtype", help="the model's sparse-index cache dtype, when 4-bit")
    p.add_argument("--context", type=int, required=True)
    p.add_argument("--tp", type=int, required=True)
    return p.parse_args(argv)


def reason(exc: BaseException) -> str:
    """One paragraph from an exception: its type and message, whitespace folded, capped."""
    text = " ".join(str(exc).split()) or "(no message)"
    if len(text) > 600:
        text = text[:597] + "..."
    return f"{type(exc).__name__}: {text}"


def resolve_implementation(p, engine: str, resolve) -> tuple | None:
    """Run `resolve()` -> (class, architecture) and record the implementation check.

    Returns (class, architecture, "module.Class") or None when the engine refused."""
    try:
        cls, arch = resolve()
    except Exception as exc:
        p.check("implementation", "fail", f"{engine} could not resolve the model class: "
                f"{reason(exc)}")
        return None
    impl = f"{cls.__module__}.{cls.__qualname__}"
    p.facts["implementation"] = impl
    p.check("implementation", "pass", f"{arch} -> {impl} (class resolved; nothing allocated).")
    return cls, arch, impl


def read_config(config_dir: str) -> tuple[dict, dict | None]:
    """(config.json, hf_quant_config.json or None) of the directory kvfit passed."""
    with open(os.path.join(config_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    quant_path = os.path.join(config_dir, "hf_quant_config.json")
    quant = None
    if os.path.isfile(quant_path):
        with open(quant_path, encoding="utf-8") as f:
            quant = json.load(f)
    return config, quant


def quant_block(config: dict, hf_quant: dict | None) -> dict | None:
    """The quantization declaration an engine reads: quantization_config (or compression_config,
    or the text_config's), else a standalone hf_quant_config.json."""
    for holder in (config, config.get("text_config") or {}):
        for key in ("quantization_config", "compression_config"):
            if isinstance(holder.get(key), dict):
                return holder[key]
    return hf_quant if isinstance(hf_quant, dict) else None


def modelopt_algo(block: dict) -> str | None:
    """ModelOpt's quant_algo (upper case) when the block was written by ModelOpt."""
    inner = block.get("quantization") if isinstance(block.get("quantization"), dict) else {}
    producer = (block.get("producer") or {}).get("name") if isinstance(block.get("producer"),
                                                                      dict) else None
    if producer == "modelopt" or "modelopt_quant_config" in inner or "quant_algo" in inner:
        algo = inner.get("quant_algo") or block.get("quant_algo")
        return str(algo).upper() if algo else None
    return None


def is_deepseek_v4(config: dict) -> bool:
    """DeepSeek V4 by its architecture class (the engines key their V4 paths on it)."""
    return any(str(a).startswith("DeepseekV4") for a in config.get("architectures") or [])


def index_unknown(p, why: str) -> None:
    """A 4-bit sparse-index cache the probe cannot map to an engine option: unknown."""
    want = p.args.index_dtype
    p.facts["index_cache"] = {"requested": want, "option": None, "value": None, "choices": []}
    p.check("index cache dtype", "unknown", f"{want} index cache: {why}; check the engine's "
            "options for it by hand.")


def map_kv(requested: str, auto: bool, spellings: dict, choices: list) -> dict:
    """The engine spelling of kvfit's KV dtype: 'auto' when the user asked auto, else the first
    of the engine's candidate spellings it offers. Generic fp4 is never mapped."""
    names = [str(c) for c in choices]
    explicit = next((n for n in spellings.get(requested, ()) if n in names), None)
    out = {"requested": requested, "requested_as": "auto" if auto else "explicit",
           "engine": explicit, "engine_explicit": explicit, "offered": explicit is not None,
           "choices": names}
    if auto:
        out["engine"], out["offered"] = "auto", "auto" in names
    return out


class Probe:
    """Checks and facts collected by a probe; `result()` is the JSON object printed."""

    def __init__(self, engine: str, args: argparse.Namespace):
        self.engine, self.args = engine, args
        self.checks: list[dict] = []
        self.facts = {"version": None, "backend": None, "implementation": None,
                      "kv_cache_dtype": None, "index_cache": None, "engine_flags": []}
        self.smoke: tuple[str, str] | None = None

    def check(self, name: str, status: str, detail: str) -> None:
        """Record (or replace) one check: status pass | fail | unknown."""
        self.checks = [c for c in self.checks if c["name"] != name]
        self.checks.append({"name": name, "status": status, "detail": detail})

    def failed(self) -> bool:
        return any(c["status"] == "fail" for c in self.checks)

    def status(self) -> tuple[str, str]:
        """(status, reason) from the checks (and the smoke test, when one ran)."""
        if self.smoke:
            return self.smoke
        fails = [c["detail"] for c in self.checks if c["status"] == "fail"]
        unknown = [c["detail"] for c in self.checks if c["status"] == "unknown"]
        if fails:
            return "preflight-fail", " ".join(fails)
        if unknown:
            return "unknown", " ".join(unknown)
        return "preflight-pass", "every check passed"

    def result(self) -> dict:
        status, why = self.status()
        return {"protocol": PROTOCOL, "engine": self.engine, "mode": self.args.mode,
                "status": status, "reason": why, "checks": self.checks,
                "python": sys.version.split()[0], **self.facts}


def _emit(fd: int, obj: dict) -> None:
    os.write(fd, (json.dumps(obj, sort_keys=True) + "\n").encode("utf-8"))


def main(engine: str, body) -> None:
    """Run `body(probe)` with stdout redirected to stderr; print the one JSON result."""
    real_stdout = os.dup(1)
    os.dup2(2, 1)
    args = parse_args(sys.argv[1:])
    probe = Probe(engine, args)
    base = {"protocol": PROTOCOL, "engine": engine, "mode": args.mode, "checks": [],
            "python": sys.version.split()[0]}
    try:
        body(probe)
        out = probe.result()
    except ModuleNotFoundError as exc:
        status = "missing" if exc.name == engine else "error"
        why = (f"{engine} is not installed in {sys.executable}." if status == "missing"
               else f"{engine} failed to import: {reason(exc)}")
        out = {**base, "status": status, "reason": why}
    except Unsupported as exc:
        out = {**base, **probe.facts, "status": "unsupported", "reason": str(exc)}
    except Refused as exc:
        out = {**base, **probe.facts, "status": "refused", "reason": str(exc)}
    except Exception as exc:  # the engine raised something the probe did not expect
        out = {**base, **probe.facts, "status": "error", "reason": reason(exc)}
    sys.stdout.flush()
    sys.stderr.flush()
    _emit(real_stdout, out)


def locate(what: str, fn):
    """Call `fn()` that reaches into the engine; an ImportError/AttributeError inside the
    engine's own package means this version keeps `what` elsewhere (Unsupported). A missing
    third-party dependency is re-raised (a broken install: error)."""
    try:
        return fn()
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("vllm", "sglang"):
            raise
        raise Unsupported(f"this version does not expose {what} where the probe looks "
                          f"({reason(exc)}).") from None
    except (ImportError, AttributeError) as exc:
        raise Unsupported(f"this version does not expose {what} where the probe looks "
                          f"({reason(exc)}).") from None


def cuda_devices() -> int:
    """Accelerators torch can see in this interpreter (0 without torch or CUDA/ROCm)."""
    try:
        import torch
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:
        return 0


def refuse_without_cuda(engine_name: str, tp: int) -> None:
    """Load mode needs `tp` visible accelerators; otherwise refuse (kvfit exits 2)."""
    n = cuda_devices()
    if n == 0:
        raise Refused(f"--engine-probe load starts {engine_name} and generates a token, which "
                      f"needs a CUDA accelerator visible to {sys.executable}; none is "
                      "(torch.cuda.is_available() is False). Run it on the GPU host, or use "
                      "--engine-probe config.")
    if n < tp:
        raise Refused(f"--engine-probe load at TP {tp} needs {tp} accelerators; {sys.executable} "
                      f"sees {n}. Pass --engine-tp {n} or run on a larger host.")
