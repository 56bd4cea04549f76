"""SGLang's recurrent-state slots per running request, and what disabling the radix cache buys.

SGLang 0.5.23 caps max_running_requests at max_mamba_cache_size // ratio, where the ratio is
1 with --disable-radix-cache and otherwise MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO (3) plus
the extra-buffer tracking slots (2 with overlap scheduling)
(sglang/srt/mem_cache/kv_cache_configurator.py:227-229, 3062-3088, 3132-3150;
mem_cache/allocation_sizing.py:11-19). So a hybrid model's running cap is slots // 5 with the
radix cache and slots // 1 without it, and the plan suggests the flag when that meets the target.

Pinned config: tests/architectures/qwen3_next/configs/Qwen--Qwen3-Next-80B-A3B-Thinking (GDN +
full attention hybrid). Weights stated (--weight-gib 149) so the engine section exists.
"""

from __future__ import annotations

from pathlib import Path

from conftest import run_json

Q = str(Path(__file__).parent / "architectures/qwen3_next/configs/Qwen--Qwen3-Next-80B-A3B-Thinking")
BASE = (Q, "--hardware", "h100-80", "--gpus", "4", "--tp", "4", "--context", "4k",
        "--engine", "sglang", "--weight-gib", "149")


def _engine(r: dict) -> dict:
    return r["layouts"][0]["engine"]


def test_radix_cache_keeps_five_slots_per_request():
    code, r = run_json(*BASE, "--concurrent-users", "200")
    e = _engine(r)
    slots = e["mamba_cache_size"]["value"]
    assert e["max_running_requests"]["value"] == slots // 5 < 200
    assert "capped by" in e["max_running_requests"]["basis"]
    assert code == 1 and r["fits"] is False


def test_without_the_radix_cache_one_slot_per_request():
    code, r = run_json(*BASE, "--concurrent-users", "200", "--disable-radix-cache")
    e = _engine(r)
    assert e["max_running_requests"]["value"] <= e["mamba_cache_size"]["value"]   # slots // 1
    assert e["max_running_requests"]["value"] >= 200 and code == 0


def test_the_suggestion_is_the_plan_with_the_flag():
    _, r = run_json(*BASE, "--concurrent-users", "200")
    s = next(x for x in r["suggestions"] if x["change"] == "disable_radix_cache")
    assert s["flags"] == "--disable-radix-cache" and "1 recurrent-state slot" in s["description"]
    assert "of 5" in s["description"] and "kv_cache_configurator.py" in s["description"]
    _, again = run_json(*BASE, "--concurrent-users", "200", "--disable-radix-cache")
    assert s["max_sequences"] == again["layouts"][0]["max_sequences"]
    # smallest change first: a setting comes before fewer users or more GPUs
    assert r["suggestions"][0]["change"] == "disable_radix_cache"


def test_no_suggestion_when_the_flag_would_not_meet_the_target():
    _, r = run_json(*BASE, "--concurrent-users", "5000")
    assert not [x for x in r["suggestions"] if x["change"] == "disable_radix_cache"]


def test_every_sglang_suggestion_is_the_single_plan_with_its_flags():
    # The plan resolves its utilization once; re-plans start from the question as asked, so
    # with no --utilization SGLang keeps its own memory fraction in both (they once differed:
    # 382 sequences suggested where the plan with the flag holds 293).
    _, r = run_json(*BASE, "--concurrent-users", "200")
    assert len(r["suggestions"]) >= 2
    for s in r["suggestions"]:
        flags = s["flags"].split()
        args = [a for a in BASE]
        if flags[0] == "--gpus":
            args[args.index("--gpus") + 1] = flags[1]
            args[args.index("--tp"):args.index("--tp") + 2] = []
            flags = []
        _, again = run_json(*args, "--concurrent-users", "200", *flags)
        best = next(x for x in again["layouts"] if x["label"] == s["layout"])
        assert best["max_sequences"] == s["max_sequences"], s
