"""docs/conformance/engine-views-1.jsonl (docs/conformance.md) is what bench/conformance_file.py
writes from the engine records, and bench/conformance_run.py scores planners on it: kvfit
passes every point it is run on, a planner that answers nothing passes none."""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_file_is_current_and_holds_every_recorded_point():
    import engine_record_cases as vrec
    import sglang_record_cases as srec

    mod = _module("conformance_file")
    text = mod.render()
    assert mod.FILE.read_text(encoding="utf-8") == text, \
        "docs/conformance/engine-views-1.jsonl is stale: run uv run python bench/conformance_file.py"
    lines = [json.loads(x) for x in text.splitlines()]
    head, points = lines[0], lines[1:]
    assert head["format"] == "kvfit-engine-conformance" and head["version"] == 1
    # one point per recorded engine decision: vLLM 4,524 on the H100 and 144 on each emulated
    # Blackwell GPU, SGLang 2,292 (the records' counts)
    by_engine = {e: [p for p in points if p["engine"] == e] for e in ("vllm", "sglang")}
    blackwell = {gpu: vrec.points(vrec.gpu_record(gpu)) for gpu in vrec.GPU_RECORDS}
    assert len(vrec.points()) == 4524 and [len(x) for x in blackwell.values()] == [144, 144]
    assert len(by_engine["vllm"]) == 4524 + 288
    assert len(by_engine["sglang"]) == len(srec.points()) == 2292
    assert len({p["id"] for p in points}) == len(points)
    # the expected values are the engine's: spot one against the record by hand
    first = vrec.points()[0]
    p = by_engine["vllm"][0]
    assert p["expected"]["num_gpu_blocks"] == first.vllm["num_blocks"]
    assert p["settings"]["kv_cache_memory_bytes"] == first.avail
    # a B200 point carries its GPU: gemma-4-26B-A4B, TP 1, bf16, 4,096 tokens, 40 GiB gets
    # 64-token blocks, 16,384 of them, 187,980 tokens (worked by hand in
    # tests/test_vllm_gemma4_blackwell.py::test_b200_bf16_by_hand)
    b200 = next(x for x in points if x["id"] == "vllm-0.33.0/google--gemma-4-26B-A4B-tp1-auto-4096-40g@b200")
    assert b200["gpu"] == {"name": "NVIDIA B200", "compute_capability": "10.0"}
    assert (b200["expected"]["block_size"], b200["expected"]["num_gpu_blocks"],
            b200["expected"]["kv_cache_tokens"]) == (64, 16_384, 187_980)


def test_agrees_uses_the_file_tolerances():
    run = _module("conformance_run")
    head = {"relative_tolerance": {"kv_cache_tokens": 0.005},
            "absolute_tolerance": {"default_mem_fraction_static": 0.002}}
    assert run.agrees("kv_cache_tokens", 1000, 1004, head)
    assert not run.agrees("kv_cache_tokens", 1000, 1006, head)
    assert run.agrees("default_mem_fraction_static", 0.83, 0.8319, head)
    assert not run.agrees("num_gpu_blocks", 100, 101, head)          # exact key
    assert run.agrees("attention_bytes_per_token", [81920, 1], [163840, 2], head)
    assert not run.agrees("refused", False, 0, head)                 # a boolean is not 0
    assert not run.agrees("block_size", 16, None, head)


def test_kvfit_passes_and_an_empty_planner_fails(capsys):
    run = _module("conformance_run")
    # every 60th point of the file, through the real protocol (a subprocess reading stdin);
    # the record tests (test_vllm_kv_record.py, test_sglang_kv_record.py) check every point
    assert run.main(["--every", "60"]) == 0
    out = capsys.readouterr().out
    assert "vllm: 81/81 points pass" in out and "sglang: 38/38 points pass" in out
    silent = f"{shlex.quote(sys.executable)} -c 'import sys; sys.stdin.read()'"
    assert run.main(["--every", "600", "--planner", silent]) == 1
    out = capsys.readouterr().out
    assert "vllm: 0/9 points pass" in out and "sglang: 0/3 points pass" in out
