"""Feed one case to the code that reads its kind; return a short answer summary or raise.

Each target also checks the answer's invariants (Wrong is raised when one breaks): sizes
and counts are whole numbers >= 0 and within the input, values are finite and in range.
"""

from __future__ import annotations

import math
import random
import tempfile
from pathlib import Path

from . import generators as gen
from .checks import Wrong, _check, _whole  # noqa: F401 - Wrong is the runner's finding class

LOG_FIXTURE = (Path(__file__).resolve().parents[1] / "fixtures" / "engine_logs"
               / "vllm-0.19.0-llama-3.1-8b-instruct-h100-tp1.log")


def gguf(data: bytes) -> str:
    from kvfit.hub.gguf_config import synthesize_config
    from kvfit.hub.gguf_header import read_remote_gguf

    header = read_remote_gguf(lambda s, n: data[s:s + n], "fuzz.gguf", len(data))
    _check(header.data_end <= len(data), "tensor data past the end of the file")
    _check(all(_whole(n) for _, n in header.tensors.values()), "a tensor size that is not >= 0")
    config, _ = synthesize_config(header)
    layers = config["num_hidden_layers"]
    _check(_whole(layers) and 1 <= layers <= 10_000, f"layer count {layers!r} accepted")
    _check(len(config.get("layer_types", [])) in (0, layers), "layer_types of the wrong length")
    return "config"


def safetensors(data: bytes) -> str:
    from kvfit.checkpoint.metadata import FileEntry
    from kvfit.hub.safetensors_header import read_one_header

    tensors = read_one_header(FileEntry("fuzz.safetensors", len(data)),
                              lambda _p, s, n: data[s:s + n])
    total = sum(t.nbytes for t in tensors.values())
    _check(all(_whole(t.nbytes) for t in tensors.values()), "a negative tensor size")
    _check(total <= len(data), "tensors larger than the file")
    return f"{len(tensors)} tensors"


def expr(case: tuple[str, dict]) -> str:
    from kvfit.expr import MAX_MAGNITUDE, compile_expr

    text, values = case
    result = compile_expr(text, frozenset(gen.NAMES)).evaluate(values)
    if isinstance(result, int | float) and not isinstance(result, bool):
        _check(math.isfinite(result) and abs(result) <= MAX_MAGNITUDE, f"result {result!r:.40}")
    return type(result).__name__


def explain_log(text: str) -> str:
    from kvfit.engines.logparse import parse

    facts = parse(text)
    for name, value in facts.printed.items():
        _check(isinstance(value, int | float) and math.isfinite(value) and value >= 0,
               f"printed {name} = {value!r}")
    gmu = facts.flags.get("gpu_memory_utilization")
    _check(gmu is None or 0 < gmu <= 1, f"gpu_memory_utilization {gmu!r} accepted")
    _check(facts.tp is None or facts.tp >= 1, f"tp {facts.tp!r}")
    return facts.engine


def metrics(text: str) -> str:
    from kvfit.calibrate.metrics import parse, plausible, read

    got = read(parse(text), {"running": [gen.GAUGES[0]], "waiting": [gen.GAUGES[1]],
                             "kv_usage": [gen.GAUGES[2]]})
    for kind in ("running", "waiting", "kv_usage"):
        _check(got[kind] is None or plausible(kind, got[kind]), f"{kind} = {got[kind]!r}")
    return "rejected" if any(got[f"{k}_bad"] for k in ("running", "waiting", "kv_usage")) \
        else "read"


def cache(text: str) -> str:
    from kvfit.hub.cache import MetadataCache
    from kvfit.hub.snapshot import load_snapshot

    with tempfile.TemporaryDirectory() as root:
        entry = Path(root) / "a--b" / ("0" * 40) / "snapshot.json"
        entry.parent.mkdir(parents=True)
        entry.write_text(text)
        snap = load_snapshot(MetadataCache(Path(root)), "a/b", "0" * 40)
        if snap is None:
            _check(not entry.exists(), "a rejected entry was left in the cache")
            return "discarded"
        _check(all(isinstance(f.path, str) and (f.size is None or _whole(f.size))
                   for f in snap.files), "a file entry with a bad size")
        _check(snap.config is None or isinstance(snap.config, dict), "config not an object")
        return "loaded"


_HUB: dict = {}


def _hub():
    """A test hub on 127.0.0.1, started once per worker process; HF_ENDPOINT points at it."""
    if "server" not in _HUB:
        import os

        from hubserver import HubServer

        server = HubServer().start()
        os.environ.update(HF_ENDPOINT=server.url, HF_HUB_DISABLE_TELEMETRY="1")
        os.environ.pop("HF_HUB_OFFLINE", None)
        _HUB["server"] = server
    return _HUB["server"]


def hub_info(case: tuple[bytes, dict]) -> str:
    from hubserver import Fault

    from kvfit.hub.transport import MAX_FILE_BYTES, HubClient

    body, headers = case
    server = _hub()
    server.state.faults[:] = [Fault(kind="api", body=body, headers=headers)]
    info = HubClient(timeout=5.0).repo_info("a/b", None)
    for f in info.files:
        _check(isinstance(f.path, str) and f.path and not f.path.startswith("/")
               and ".." not in f.path.split("/"), f"file name {f.path!r} accepted")
        _check(f.size is None or (_whole(f.size) and f.size <= MAX_FILE_BYTES),
               f"size {f.size!r} accepted")
    return f"{len(info.files)} files"


def make_case(kind: str, rng: random.Random):
    from . import gen_api, gen_plan, gen_refs, gen_surfaces

    if kind == "explain_log":
        return gen.explain_log_case(rng, LOG_FIXTURE.read_text().splitlines())
    for module in (gen, gen_plan, gen_refs, gen_surfaces, gen_api):
        if hasattr(module, f"{kind}_case"):
            return getattr(module, f"{kind}_case")(rng)
    raise KeyError(kind)


def _targets() -> dict:
    from .targets_api import TARGETS as API_TARGETS
    from .targets_plan import TARGETS as PLAN_TARGETS
    from .targets_surfaces import TARGETS as SURFACE_TARGETS

    return {"gguf": gguf, "safetensors": safetensors, "expr": expr, "explain_log": explain_log,
            "metrics": metrics, "cache": cache, "hub_info": hub_info, **PLAN_TARGETS,
            **SURFACE_TARGETS, **API_TARGETS}


TARGETS = _targets()
