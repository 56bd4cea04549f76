"""`--tune`: the engine settings that hold the target with the most headroom, what each costs in
resident sequences, and the launch command that carries them (issue 24).

Expected figures are derived by hand from the pinned configs and the engines' own rules (cited
file:line); the one number that rests on kvfit's fitted start-up estimates (the KV memory left
after weights) is read from a plain plan at the same settings, and the sequences are computed
from it here by the engine's rule, not copied from --tune's output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
V4 = ROOT / "tests/architectures/deepseek_v4/configs/deepseek-ai--DeepSeek-V4-Flash"
QWEN36 = ROOT / "tests/architectures/qwen3_5/configs/Qwen--Qwen3.6-35B-A3B"
V4_RUN = (V4, "--hardware", "h100-80", "--gpus", "8", "--context", "32k", "--engine", "vllm")
QWEN_RUN = (QWEN36, "--hardware", "h100-80", "--gpus", "2", "--context", "32k", "--engine",
            "sglang")


def _json(*args) -> dict:
    code, out, err = run_cli(*args, "--json")
    assert code == 0, err
    return json.loads(out)


def _layout(report: dict, lay_id: str) -> dict:
    return next(x for x in report["layouts"] if x["id"] == lay_id)


def _setting(tune: dict, flag: str) -> dict:
    return next(s for s in tune["settings"] if s["flag"] == flag)


def _value(row: dict, value) -> int:
    return next(v["max_sequences"] for v in row["values"] if v["value"] == value)


def v4_blocks(mnbt: int) -> int:
    """Blocks one 32,768-token DeepSeek-V4-Flash request pins in vLLM 0.33 at
    max_num_batched_tokens `mnbt` (config.json: sliding_window 128, compress_ratios 4 / 128).

    A sliding group holds ceil(min(W - 1 + in_flight, L) / block) + 1 blocks
    (vllm/v1/kv_cache_interface.py:918-955), in_flight = 2 x mnbt with async scheduling
    (vllm/config/vllm.py:588-609); the compressed KV group ceil(L / 256) (block 256, 62 layers).
    Groups (vllm/v1/core/kv_cache_planning.py:914-1041): two SWA groups (W 128, block 64), the
    C4 compressor states (W 8, block 4), the C128 compressor state (W 128, block 8).
    mnbt 2,048: in_flight 4,096 -> SWA 2 x (ceil(4,223 / 64) + 1 = 67) = 134; compressed 128;
      C4 states ceil(4,103 / 4) + 1 = 1,027; C128 state ceil(4,223 / 8) + 1 = 529 -> 1,818.
    mnbt 8,192: in_flight 16,384 -> SWA 2 x (ceil(16,511 / 64) + 1 = 259) = 518; 128;
      C4 ceil(16,391 / 4) + 1 = 4,099; C128 ceil(16,511 / 8) + 1 = 2,065 -> 6,810.
    """
    L, f = 32_768, 2 * mnbt

    def ceil(a, b):
        return -(-a // b)
    return (2 * (ceil(min(127 + f, L), 64) + 1) + ceil(L, 256) + ceil(min(7 + f, L), 4) + 1
            + ceil(min(127 + f, L), 8) + 1)


def test_v4_block_arithmetic_matches_the_hand_figures():
    assert (v4_blocks(2048), v4_blocks(8192)) == (1818, 6810)


def _v4_sequences(mnbt: int, seqs: int) -> int:
    """TP=4 x DP=2: two engine instances, each num_gpu_blocks // blocks per request
    (vllm/v1/core/kv_cache_utils.py:1061-1093); num_gpu_blocks from a plain plan there."""
    plain = _json(*V4_RUN, "--max-num-batched-tokens", str(mnbt), "--max-num-seqs", str(seqs))
    n = _layout(plain, "tp4")["engine"]["num_gpu_blocks"]["value"]
    return 2 * (n // v4_blocks(mnbt))


def test_must_show_v4_flash_vllm_tune_recommends_2048_batched_tokens():
    r = _json(*V4_RUN, "--tune")
    t = r["tune"]
    row = _setting(t, "--max-num-batched-tokens")
    # the default: H100's 79.2 GiB CUDA total is in the >= 70 GiB tier -> 8,192
    # (vllm/engine/arg_utils.py:2940-3039, specs/engines/vllm.yaml batch_default_tiers); the
    # candidates halve it down to the smallest tier's 2,048
    assert row["default"] == 8192 and [v["value"] for v in row["values"]] == [8192, 4096, 2048]
    assert row["recommended"] == 2048 and row["changed"] and row["tradeoff"]
    assert t["layout_id"] == "tp4" and t["holds"] is True
    seqs = _setting(t, "--max-num-seqs")["recommended"]
    assert t["max_sequences"] == _v4_sequences(2048, seqs)
    # the 8,192 default beside it, every other setting as recommended
    assert row["max_sequences_at_default"] == _value(row, 8192) == _v4_sequences(8192, seqs)
    # with every setting at vLLM's default (8,192 / 1,024): the plan's own figure
    assert t["default_max_sequences"] == _v4_sequences(8192, 1024) == r["recommended"][
        "max_sequences"]
    # and the figures the issue states, from the same rule: 2,048 -> 36, 8,192 -> 8 at 1,024
    assert (_v4_sequences(2048, 1024), _v4_sequences(8192, 1024)) == (36, 8)
    assert t["max_sequences"] > 4 * t["default_max_sequences"]
    launch = t["command"]["launch"]
    for piece in ("--tensor-parallel-size 4 --data-parallel-size 2", "--max-model-len 32768",
                  "--max-num-batched-tokens 2048", f"--max-num-seqs {seqs}"):
        assert piece in launch, launch
    # never raised silently: the memory fraction stays vLLM's 0.92 (vllm/config/cache.py:215-224)
    mem = _setting(t, "--gpu-memory-utilization")
    assert (mem["default"], mem["recommended"], mem["changed"]) == (0.92, 0.92, False)
    assert "--gpu-memory-utilization 0.92" in launch
    assert not any(s["flag"] == "--num-speculative-tokens" for s in t["settings"])


def _qwen_rest(extra: tuple) -> tuple[int, int, int]:
    """(KV memory left after weights, full-attention bytes per token, recurrent slot bytes) of
    Qwen3.6-35B-A3B's TP=2 rank under SGLang, from a plain plan at the tuned settings.

    Hand check of the two per-rank cells (config.json): 10 full-attention layers (every 4th of
    40) x 2 KV heads / TP 2 x 256 x (K + V) x 2 B = 10,240 B per token; 30 linear-attention
    layers x (conv (16 x 128 x 2 + 32 x 128) / 2 x (4 - 1) x 2 B = 24,576 + SSM 32 / 2 heads
    x 128 x 128 x 4 B = 1,048,576) = 32,194,560 B per slot."""
    plain = _json(*QWEN_RUN, *extra)
    e = _layout(plain, "tp2")["engine"]
    full = e["cells"]["full_bytes_per_token"]["value"]
    slot = e["cells"]["recurrent_bytes_per_slot"]["value"]
    assert (full, slot) == (10 * 1 * 256 * 2 * 2, 30 * (8192 // 2 * 3 * 2 + 16 * 128 * 128 * 4))
    return e["rest_bytes"]["value"], full, slot


@pytest.mark.parametrize("radix", [True, False], ids=["radix-cache", "no-radix-cache"])
def test_must_show_qwen36_sglang_tune_with_and_without_radix_cache(radix):
    t = _json(*QWEN_RUN, "--tune", *(() if radix else ("--disable-radix-cache",)))["tune"]
    chunk = _setting(t, "--chunked-prefill-size")
    running = _setting(t, "--max-running-requests")
    # the tier: 81,559 MiB visible is below 90 GiB -> chunked prefill 8,192, decode batch 256
    # (sglang/srt/arg_groups/memory_hook.py:89-180, specs/engines/sglang.yaml capacity_tiers)
    assert chunk["default"] == 8192 and [v["value"] for v in chunk["values"]] == [8192, 4096, 2048]
    assert [v["value"] for v in running["values"]] == [None, 256, 128, 64, 32]
    rec_chunk, rec_running = chunk["recommended"], running["recommended"]
    assert rec_running is not None
    flags = ("--chunked-prefill-size", str(rec_chunk), "--max-running-requests", str(rec_running))
    rest, full, slot = _qwen_rest(flags + ("--disable-radix-cache",))
    # no radix cache: one recurrent slot per running request (+1 padding slot,
    # kv_cache_configurator.py:3325-3348); the rest / 10,240 B tokens; 32,768 per sequence
    no_radix = min(rec_running, (rest - (rec_running + 1) * slot) // full // 32_768)
    # the radix cache: r / (1 + r) of the rest, r = 0.9, for slots (schedule.py:216-228), 5
    # slots per running request (kv_cache_configurator.py:3062-3088)
    slots = int((rest * 0.9 / 1.9 - slot) // slot)
    with_radix = min(rec_running, (rest - (slots + 1) * slot) // full // 32_768, slots // 5)
    assert t["max_sequences"] == no_radix > with_radix
    assert t["holds"] is True and t["layout_id"] == "tp2"
    launch = t["command"]["launch"]
    assert "--disable-radix-cache" in launch and f"--max-running-requests {rec_running}" in launch
    assert f"--chunked-prefill-size {rec_chunk}" in launch and "--tp-size 2" in launch
    if radix:                          # searched: off wins, named as a trade-off
        row = _setting(t, "--disable-radix-cache")
        assert (row["default_text"], row["recommended_text"]) == ("on", "off")
        assert row["max_sequences_at_default"] == _value(row, False) == with_radix
        assert any("radix cache" in w for w in t["warnings"])
    else:                              # the user's --disable-radix-cache is held, not searched
        assert not any(s["flag"] == "--disable-radix-cache" for s in t["settings"])
    # the memory fraction is SGLang's own rule: no cap given, nothing raised
    assert _setting(t, "--mem-fraction-static")["values"] == [{"value": None,
                                                               "max_sequences": no_radix}]


def test_must_show_snapshots(snap_text):
    code, v4, _ = run_cli(*V4_RUN, "--tune")
    assert code == 0
    code, qwen, _ = run_cli(*QWEN_RUN, "--tune")
    assert code == 0
    tune = [line for text in (v4, qwen) for line in
            text.split("\n\nState per sequence")[0].split("\n\nTuned settings")[1:]]
    assert len(tune) == 2
    text = "\n\n".join("Tuned settings" + t for t in tune) + "\n"
    assert text.replace(str(ROOT), "<repo>") == snap_text


def test_tune_without_an_engine_is_one_usage_paragraph():
    code, out, err = run_cli(QWEN36, "--hardware", "h100-80", "--gpus", "2", "--tune")
    assert code == 2 and out == ""
    assert "--tune searches an engine's own settings" in err and "Traceback" not in err
    code, _, err = run_cli(*QWEN_RUN, "--tune-max-utilization", "0.95")
    assert code == 2 and "it needs --tune" in err
    code, _, err = run_cli(*QWEN_RUN, "--tune", "--tune-max-utilization", "1.5")
    assert code == 2 and "--tune-max-utilization" in err


def test_a_cap_above_the_default_is_tried_and_speculation_is_never_added():
    t = _json(*V4_RUN, "--tune", "--tune-max-utilization", "0.95")["tune"]
    mem = _setting(t, "--gpu-memory-utilization")
    assert [v["value"] for v in mem["values"]] == [0.92, 0.95]
    assert mem["recommended"] == 0.95 and "--gpu-memory-utilization 0.95" in t["command"]["launch"]
    assert _value(mem, 0.95) >= _value(mem, 0.92)
    assert "speculative" not in t["command"]["launch"]


def test_a_stated_setting_is_held():
    t = _json(*V4_RUN, "--tune", "--max-num-batched-tokens", "4096")["tune"]
    assert not any(s["flag"] == "--max-num-batched-tokens" for s in t["settings"])
    assert "--max-num-batched-tokens 4096" in t["command"]["launch"]


def test_tune_is_opt_in():
    r = _json(*V4_RUN)
    assert "tune" not in r


def test_the_declared_maximum_is_refused_where_one_request_of_it_does_not_fit():
    # Qwen3-32B (tests/architectures/qwen3/configs/Qwen--Qwen3-32B/config.json): 64 layers x
    # 8 KV heads x 128 x (K + V) x 2 B = 262,144 B per token; vLLM's default max_model_len is
    # the declared 40,960, one request of which needs 40,960 x 262,144 B = 10.00 GiB: more
    # than the pool beside a stated 64 GiB of weights on one H100 (0.92 x 79.19 GiB = 72.9 GiB
    # requested), so vLLM refuses to start (vllm/v1/core/kv_cache_planning.py:50-87); at the
    # 8k the target needs it starts.
    qwen = ROOT / "tests/architectures/qwen3/configs/Qwen--Qwen3-32B"
    t = _json(qwen, "--hardware", "h100-80", "--gpus", "1", "--context", "8k", "--engine",
              "vllm", "--weight-gib", "64", "--tune")["tune"]
    row = _setting(t, "--max-model-len")
    assert (row["default"], row["recommended"], row["max_sequences_at_default"]) == (40960, 8192, 0)
    assert "max seq len (40960)" in row["default_refusal"] and "10.00 GiB" in row["default_refusal"]
    assert t["max_sequences"] > 0 and "--max-model-len 8192" in t["command"]["launch"]


def test_fit_tune_gives_each_checkpoint_its_tuned_row():
    import jsonschema

    from conftest import validate

    code, out, err = run_cli("fit", "--hardware", "h100-80", "--gpus", "8", "--context", "32k",
                             "--engine", "vllm", "--tune", "--family", "deepseek_v4", "--json")
    assert code == 0, err
    result = json.loads(out)
    schema = json.loads((ROOT / "schemas" / "fit.schema.json").read_text())
    validate(result, schema, cls=jsonschema.Draft202012Validator)
    assert result["plan_flags"][-1] == "--tune"
    row = next(r for r in result["rows"]["fits"] if r["model"] == "deepseek-ai/DeepSeek-V4-Flash")
    # the single plan with the same flags (kvfit fit's own promise) gives the same tuned answer
    single = _json("deepseek-ai/DeepSeek-V4-Flash", *result["plan_flags"])["tune"]
    assert (row["max_sequences"], row["recommended"]["id"]) == (single["max_sequences"],
                                                                single["layout_id"])
    assert row["tune"]["default_max_sequences"] == single["default_max_sequences"]
    assert {"flag": "--max-num-batched-tokens", "value": 2048, "text": "2,048"} in \
        row["tune"]["changed"]
    assert "--max-num-batched-tokens 2048" in row["tune"]["launch"]
    code, _, err = run_cli("fit", "--hardware", "h100-80", "--context", "32k", "--tune")
    assert code == 2 and "needs the engine" in err


def test_an_engine_that_names_no_settings_is_tuned_to_its_defaults(monkeypatch):
    """The search asks the engine (Engine.tunable_settings); the toy engine names none, so its
    defaults are the answer and its launch command is printed as is."""
    from kvfit import engines

    toy = ROOT / "tests" / "fixtures" / "toy_engine"
    monkeypatch.syspath_prepend(str(toy))
    name = engines.register(toy / "toy.yaml")
    try:
        qwen = ROOT / "tests/architectures/qwen3/configs/Qwen--Qwen3-32B"
        code, out, err = run_cli(qwen, "--engine", name, "--context", "32768", "--hardware",
                                 "h100-80", "--device-memory-gib", "80", "--gpus", "2",
                                 "--weight-gib", "20", "--tune", "--json")
    finally:
        engines.unregister(name)
    assert code == 0, err
    r = json.loads(out)
    t = r["tune"]
    assert t["settings"] == [] and t["combinations"] == 1
    assert t["max_sequences"] == t["default_max_sequences"] == r["recommended"]["max_sequences"]
    assert t["summary"].startswith("the engine's defaults already hold the most")


def test_speculation_is_only_lowered_from_what_was_asked_on_a_checkpoint_with_a_draft():
    # Qwen3.6-35B-A3B declares mtp_num_hidden_layers 1: its draft's state is counted, and each
    # speculative token holds one more recurrent block per request in vLLM (kv_cache_utils:
    # state blocks + spec), so fewer tokens hold at least as many sequences
    t = _json(QWEN36, "--hardware", "h100-80", "--gpus", "2", "--context", "32k", "--engine",
              "vllm", "--num-speculative-tokens", "2", "--tune")["tune"]
    row = _setting(t, "--num-speculative-tokens")
    assert [v["value"] for v in row["values"]] == [2, 1] and row["default"] == 2
    assert _value(row, 1) >= _value(row, 2)
    spec = f'"num_speculative_tokens": {row["recommended"]}'
    assert spec in t["command"]["launch"]
    # Qwen3-32B has no draft layers: nothing to search, and nothing added without asking
    qwen3 = ROOT / "tests/architectures/qwen3/configs/Qwen--Qwen3-32B"
    for extra in (("--mtp",), ()):
        t = _json(qwen3, "--hardware", "h100-80", "--gpus", "8", "--context", "32k", "--engine",
                  "vllm", "--tune", *extra)["tune"]
        assert not any(s["flag"] == "--num-speculative-tokens" for s in t["settings"])
    assert "speculative" not in t["command"]["launch"]


def test_many_combinations_are_searched_two_settings_at_a_time(monkeypatch):
    """Past MAX_COMBINATIONS the settings are improved two at a time from the defaults, in
    rounds; on the Qwen3.6 SGLang plan, where the radix cache pays only together with a
    running-request cap (one at a time finds no gain), that reaches the joint search's answer."""
    from kvfit.planner import tune

    joint = _json(*QWEN_RUN, "--tune")["tune"]
    monkeypatch.setattr(tune, "MAX_COMBINATIONS", 1)
    rounds = _json(*QWEN_RUN, "--tune")["tune"]
    assert rounds["max_sequences"] == joint["max_sequences"]
    assert rounds["combinations"] < joint["combinations"]
