"""The engine section of the text report: readable without --verbose, whole with it.

Groups alike are said once: vLLM 0.33 splits DeepSeek-V4-Flash's 43 sliding-window layers into
two KV groups of the same spec, so the prediction carries two `swa` groups with the same
per-request demand. The text names them once, with the count, not the same line twice.
"""

import json

from conftest import run_cli

ARGS = ("deepseek-ai/DeepSeek-V4-Flash", "--hardware", "h100-80", "--gpus", "8",
        "--context", "32k", "--engine", "vllm")


def test_alike_sliding_groups_are_said_once():
    code, out, _ = run_cli(*ARGS, "--json")
    assert code == 0
    groups = json.loads(out)["layouts"][0]["engine"]["request_blocks_by_group"]
    swa = [g for g in groups if g["components"] == "swa"]
    # sliding_window 128, 2 x 8,192 in flight, 64-token blocks (vLLM kv_cache_interface.py:918-955):
    # ceil((128 - 1 + 16,384) / 64) + 1 = ceil(16,511 / 64) + 1 = 258 + 1 = 259 blocks each
    assert [g["blocks"] for g in swa] == [259, 259]

    code, text, _ = run_cli(*ARGS)
    assert code == 0
    swa_lines = [line for line in text.splitlines() if line.lstrip().startswith("swa")
                 and "per request" in line]
    assert len(swa_lines) == 1
    assert swa_lines[0].startswith("  swa (2 groups, each): 259 blocks per request = ")


def test_long_memory_basis_is_brief_unless_verbose():
    """The activation peak's basis names every tensor's engine source (about 1,000 characters);
    the short report keeps its head, --verbose and --json keep all of it."""
    code, text, _ = run_cli(*ARGS)
    assert code == 0
    line = next(x for x in text.splitlines() if x.startswith("  activation peak: "))
    assert line.endswith("(largest: sampler) ... (--verbose shows the whole basis))")
    assert len(line) < 200

    code, text, _ = run_cli(*ARGS, "--verbose")
    line = next(x for x in text.splitlines() if x.startswith("  activation peak: "))
    assert "topk_topp_triton.py" in line and "--verbose shows" not in line

    code, out, _ = run_cli(*ARGS, "--json")
    basis = json.loads(out)["layouts"][0]["engine"]["memory"]["activation_peak_bytes"]["basis"]
    assert "topk_topp_triton.py" in basis
