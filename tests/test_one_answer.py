"""One question, one answer: the headline, table, recommendation, inverse questions,
suggestions and launch command all come from the plan's one capacity model.

Every expected value below is derived by hand (arithmetic in the comments) or checked by
re-planning with the change a suggestion names; none is copied from kvfit's own output.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from conftest import run_cli, run_json, validate

GLM = ("zai-org/GLM-5.3", "--system", "dgx-b300", "--context", "128k", "--kv-dtype", "fp8",
       "--mtp", "--utilization", "0.8", "--offline")
GLM_SHA = "aca966e4e02791568aa6a4ced368624b3d897f42"   # the catalog entry's pinned commit


def _args(cmd: str) -> dict:
    """--flag value pairs of a command line (a bare flag maps to True)."""
    words, out, i = shlex.split(cmd), {}, 0
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            nxt = words[i + 1] if i + 1 < len(words) else None
            if nxt is None or nxt.startswith("--"):
                out[w] = True
                i += 1
            else:
                out[w] = nxt
                i += 2
        else:
            i += 1
    return out


def test_sglang_command_is_the_recommended_dpa_layout():
    code, r = run_json(*GLM, "--parallelism", "sglang-dpa", "--print-command", "sglang")
    assert code == 0
    rec = r["recommended"]
    assert (rec["attention_dp"], rec["attention_tp"], rec["ep"]) == (8, 1, 8)
    assert r["capacity_model"]["name"] == "sglang"        # --print-command selects the engine
    cmd = r["engine_command"]
    assert cmd["layout_id"] == rec["id"]
    a = _args(cmd["launch"])
    # SGLang 0.5.23 spells attention-DP --attn-dp-size (fields/parallel.py:81-90).
    assert (a["--tp-size"], a["--attn-dp-size"], a["--ep-size"]) == ("8", "8", "8")
    assert a["--revision"] == GLM_SHA
    assert a["--context-length"] == "131072" and a["--kv-cache-dtype"] == "fp8_e4m3"
    # MTP: 1 declared next-n layer -> 1 speculative step, top-k 1, 2 draft tokens.
    assert (a["--speculative-algorithm"], a["--speculative-num-steps"],
            a["--speculative-eagle-topk"], a["--speculative-num-draft-tokens"]) == (
        "EAGLE", "1", "1", "2")
    # --utilization 0.8 of the B300's CUDA total (274,125 MiB) as a fraction of the memory
    # free before loading (total - 1.77 GiB context at TP > 1 = 272,312.52 MiB):
    # 0.8 x 274,125 / 272,312.52 = 0.80532 -> 0.805.
    assert a["--mem-fraction-static"] == "0.805"
    # The older spelling of the same layout is named beside it (0.5.23 still accepts it).
    assert any("--enable-dp-attention --dp-size 8" in n for n in cmd["notes"])


def test_older_sglang_spells_attention_dp_with_enable_dp_attention():
    code, r = run_json(*GLM, "--parallelism", "sglang-dpa", "--engine", "sglang@0.5.21",
                       "--print-command", "sglang")
    a = _args(r["engine_command"]["launch"])
    assert code == 0 and a["--enable-dp-attention"] is True and a["--dp-size"] == "8"
    assert a["--ep-size"] == "8"


def test_vllm_command_is_the_recommended_dp_ep_layout():
    code, r = run_json(*GLM, "--parallelism", "vllm-dp-ep", "--print-command", "vllm")
    assert code == 0
    rec = r["recommended"]
    a = _args(r["engine_command"]["launch"])
    assert rec["parallelism"] == "vllm-dp-ep"
    assert a["--enable-expert-parallel"] is True
    assert a["--data-parallel-size"] == str(rec["attention_dp"]) == "8"
    assert a["--tensor-parallel-size"] == str(rec["attention_tp"]) == "1"
    assert a["--gpu-memory-utilization"] == "0.8" and a["--kv-cache-dtype"] == "fp8"
    assert a["--max-model-len"] == "131072" and a["--revision"] == GLM_SHA
    assert a["--speculative-config"] == '{"method": "mtp", "num_speculative_tokens": 1}'


def test_plain_tp_command_carries_the_utilization():
    code, r = run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--gpus", "2", "--context",
                       "32k", "--offline", "--utilization", "0.85", "--print-command", "vllm")
    a = _args(r["engine_command"]["launch"])
    rec = r["recommended"]
    assert a["--gpu-memory-utilization"] == "0.85"
    assert (a["--tensor-parallel-size"], a["--data-parallel-size"]) == (str(rec["tp"]),
                                                                      str(rec["dp"]))


QWEN = ("Qwen/Qwen3-32B", "--hardware", "h100-80", "--offline", "--engine", "vllm")


def test_engine_spellings_are_the_same_knobs():
    _, a = run_json(*QWEN, "--gpu-memory-utilization", "0.95", "--kv-cache-dtype", "fp8",
                    "--max-model-len", "32768")
    _, b = run_json(*QWEN, "--utilization", "0.95", "--kv-dtype", "fp8", "--context", "32768")
    assert a == b
    assert a["hardware"]["utilization"] == 0.95 and a["context_tokens"] == 32768
    assert a["kv_dtype"] == "fp8" and a["dtypes"]["kv"]["bytes_per_value"] == "1"


def test_two_spellings_with_different_values_exit_2_naming_both():
    code, out, err = run_cli(*QWEN, "--kv-dtype", "fp8", "--kv-cache-dtype", "bfloat16")
    assert code == 2 and "--kv-dtype" in err and "--kv-cache-dtype" in err and not out
    code, _, err = run_cli(*QWEN, "--context", "8k", "--max-model-len", "16384")
    assert code == 2 and "--context" in err and "--max-model-len" in err


def test_engine_spelled_knobs_work_without_engine():
    code, r = run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--offline",
                       "--gpu-memory-utilization", "0.95", "--max-model-len", "32768")
    assert code == 0 and r["context_tokens"] == 32768 and r["hardware"]["utilization"] == 0.95
    assert r["capacity_model"]["name"] == "static"


def test_engine_only_flag_selects_that_engine_and_says_so():
    code, r = run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--offline", "--context",
                       "8k", "--max-num-seqs", "64")
    assert r["capacity_model"]["name"] == "vllm"
    assert "--max-num-seqs" in r["capacity_model"]["selected_by"]
    assert any("--max-num-seqs" in w for w in r["warnings"])
    code, _, err = run_cli("Qwen/Qwen3-32B", "--hardware", "h100-80", "--offline",
                           "--max-num-seqs", "64", "--mem-fraction-static", "0.8")
    assert code == 2 and "--max-num-seqs" in err and "--mem-fraction-static" in err
    code, _, err = run_cli(*QWEN, "--mem-fraction-static", "0.8")
    assert code == 2 and "--engine vllm" in err


def test_verdict_and_engine_block_agree():
    code, r = run_json(*QWEN, "--kv-cache-dtype", "fp8", "--context", "32k")
    lay = next(x for x in r["layouts"] if x["id"] == r["recommended"]["id"])
    e = lay["engine"]
    # The layout's sequences are the engine's: blocks // blocks per request, per instance.
    assert lay["max_sequences"] == e["num_gpu_blocks"]["value"] // e["blocks_per_request"][
        "value"] * lay["dp"]
    assert r["kv_dtype"] == "fp8" and lay["static"]["max_sequences"] is not None
    _, _, text = run_cli(*QWEN, "--kv-cache-dtype", "fp8", "--context", "32k")
    code, text, _ = run_cli(*QWEN, "--kv-cache-dtype", "fp8", "--context", "32k")
    head = text.splitlines()
    assert "KV fp8" in head[0] and "vLLM 0.33.0 prediction" in head[1]


def test_max_context_with_engine_is_the_engines_boundary():
    code, r = run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--concurrent-users", "4",
                       "--max-context", "--engine", "vllm", "--offline")
    ctx = r["inverse"]["max_context_tokens"]
    assert code == 0 and ctx
    at = run_json(*QWEN, "--context", str(ctx))[1]
    e = next(x for x in at["layouts"] if x["tp"] == 1)["engine"]
    assert e["max_concurrency"]["value"] >= 4
    # One 16-token block further (the next page) no longer holds 4 requests.
    nxt = run_json(*QWEN, "--context", str(ctx + 16))[1]
    assert next(x for x in nxt["layouts"] if x["tp"] == 1)["engine"]["max_concurrency"][
        "value"] < 4


LLAMA = ("meta-llama/Llama-3.1-70B-Instruct", "--hardware", "h100-80", "--gpus", "2",
         "--context", "128k", "--concurrent-users", "8", "--offline")


def test_near_miss_is_recommended_and_suggestions_replan():
    code, r = run_json(*LLAMA)
    assert code == 1 and r["fits"] is False
    # TP=1 x DP=2 would need the whole 140 GB checkpoint on each 80 GB GPU: TP=2 holds the
    # weights (65.7 GiB of a 71.7 GiB budget) and is the nearer miss.
    assert r["recommended"]["tp"] == 2
    by = {s["change"]: s for s in r["suggestions"]}
    assert {"gpus", "context", "kv_dtype"} <= set(by)
    assert by["gpus"]["value"] > 2
    for s in r["suggestions"]:
        base = [a for a in LLAMA]
        extra = s["flags"].split()
        if s["change"] == "gpus":
            base[base.index("--gpus") + 1] = str(s["value"])
            extra = []
        if "--context" in extra:
            base[base.index("--context"):base.index("--context") + 2] = []
        code, again = run_json(*base, *extra)
        assert again["fits"] is True, s
    # The context is the boundary: one token more no longer holds 8 sequences.
    ctx = by["context"]["value"]
    base = [a for a in LLAMA]
    base[base.index("--context") + 1] = str(ctx + 1)
    assert run_json(*base)[1]["fits"] is False


def test_unjudged_plans_exit_5(tmp_path):
    from conftest import config_without_weights
    src = Path(__file__).parent / "architectures" / "qwen3"
    cfg = next(p.parent for p in src.rglob("config.json"))
    folder = config_without_weights(cfg, tmp_path)
    code, r = run_json(folder, "--hardware", "h100-80", "--context", "8k")
    assert code == 5 and r["fits"] is None and r["weights"]["bytes"] is None
    code, r = run_json(folder, "--context", "8k")          # state only: no hardware
    assert code == 5 and r["layouts"] == []


def test_hypothetical_is_on_the_verdict_line_and_in_json():
    args = ("Qwen/Qwen3-32B", "--hardware", "h100-80", "--context", "64k",
            "--allow-context-overflow", "--offline")
    code, r = run_json(*args)
    assert r["hypothetical"] is True
    _, text, _ = run_cli(*args)
    assert text.splitlines()[1].startswith("HYPOTHETICAL")
    assert run_json("Qwen/Qwen3-32B", "--hardware", "h100-80", "--context", "8k",
                    "--offline")[1]["hypothetical"] is False


def test_copy_notes_agree_with_their_rows():
    code, r = run_json("openai/gpt-oss-120b", "--system", "dgx-h100", "--nodes", "2",
                       "--context", "32k", "--offline")
    row = next(x for x in r["layouts"] if x["tp"] == 16)
    kv = next(c for c in row["copies"] if c["components"] == ["kv"] or "kv" in c["components"])
    # gpt-oss-120b: 8 KV heads at TP=16 -> each rank keeps 1 head, 16 // 8 = 2 copies.
    assert kv["copies"] == 2
    assert all("hold 16 copies" not in n for n in row["replication"] if n.startswith("kv"))
    for note in r["placement_notes"]:
        assert "kv: 16 copies" not in note


def test_engines_never_read_the_report():
    root = Path(__file__).resolve().parents[1] / "kvfit" / "engines"
    for path in root.glob("*.py"):
        text = path.read_text()
        assert not re.search(r"\breport\s*(\[|\.get\()", text), path.name


SNAPSHOTS = sorted((Path(__file__).parent / "__snapshots__").rglob("*.json"))
HEADS = re.compile(r"^(\S+): (\d+) heads < TP=(\d+), each rank keeps 1 head, so the (\d+) ranks "
                   r"of a group hold (\d+) copies")
SHARED = re.compile(r": one shared head, replicated on every TP rank, so the (\d+) ranks of a "
                    r"group hold (\d+) copies")
PLACED = re.compile(r"under TP=(\d+) the ranks of a group keep copies of each sequence's state "
                    r"instead of splitting it \((.*)\);")
GROUP = re.compile(r"lives on (\d+) ranks? of its attention group only, where under "
                   r"TP=(\d+) all (\d+) ranks keep a copy .* held (\d+) times? per sequence "
                   r"instead of (\d+)\.$")
SPLIT = re.compile(r"^(\S+ / attention TP(\d+) / EP(\d+)) \(TP\+EP\) holds ([\d,]+) sequences? "
                   r"and (\S+ / attention TP1 / EP\d+) \(DP\+EP\) ([\d,]+)\.")


def _heads(report: dict) -> dict:
    """Component -> KV heads, read from the report's own state table ('split by N heads')."""
    return {c["name"]: int(c["shard"].split()[2]) for c in report["state"]["components"]
            if c["shard"].startswith("split by")}


def test_every_snapshot_note_states_its_rows_copies():
    checked = 0
    for path in SNAPSHOTS:
        r = json.loads(path.read_text())
        if "report_version" not in r:
            continue
        heads = _heads(r)
        for lay in r["layouts"]:
            tp = lay.get("attention_tp") or lay["tp"]
            for note in lay.get("replication", ()):
                if m := HEADS.match(note):
                    name, h, t, ranks, copies = m.group(1), *map(int, m.groups()[1:])
                    assert (t, ranks, h) == (tp, tp, heads[name]), (path.name, note)
                    assert copies == tp // h, (path.name, note)
                elif m := SHARED.search(note):
                    assert tuple(map(int, m.groups())) == (tp, tp), (path.name, note)
                else:
                    raise AssertionError(f"{path.name}: unrecognised note {note!r}")
                checked += 1
        for note in r.get("placement_notes") or ():
            if m := GROUP.search(note):      # attention-DP: the latent is per attention group
                t, g, ranks, held, instead = map(int, m.groups())
                rec = next(x for x in r["layouts"] if x["id"] == r["recommended"]["id"])
                assert (t, held) == (rec["attention_tp"], rec["attention_tp"]), (path.name, note)
                assert g == ranks == instead, (path.name, note)
                checked += 1
                continue
            if m := SPLIT.search(note):      # TP+EP against DP+EP of one expert group
                by = {x["label"]: x for x in r["layouts"]}
                got = (int(m.group(4).replace(",", "")), int(m.group(6).replace(",", "")))
                assert got == (by[m.group(1)]["max_sequences"], by[m.group(5)]["max_sequences"]), \
                    (path.name, note)
                checked += 1
                continue
            m = PLACED.search(note)
            assert m, (path.name, note)
            t = int(m.group(1))
            for part in m.group(2).split("; "):
                names, n = part.rsplit(": ", 1)
                n = int(n.split()[0])
                want = t if any(x not in heads for x in names.split(", ")) else \
                    t // heads[names.split(", ")[0]]
                assert n == want, (path.name, note)
                checked += 1
    assert checked > 20


def test_report_schema_is_closed_where_kvfit_owns_the_keys():
    schema = json.loads((Path(__file__).parents[1] / "schemas" / "report.schema.json").read_text())
    props = schema["properties"]
    assert schema["additionalProperties"] is False
    for node in (props["layouts"]["items"], props["capacity_model"], props["engine_command"],
                 props["suggestions"]["items"], props["layouts"]["items"]["properties"]["copies"][
                     "items"], props["layouts"]["items"]["properties"]["static"]):
        assert node["additionalProperties"] is False


@pytest.mark.parametrize("args", [
    ("zai-org/GLM-5.3", "--system", "dgx-b300", "--context", "128k", "--kv-dtype", "fp8",
     "--parallelism", "sglang-dpa", "--engine", "sglang", "--print-command", "sglang"),
    ("meta-llama/Llama-3.1-70B-Instruct", "--hardware", "h100-80", "--gpus", "2", "--context",
     "128k", "--concurrent-users", "8", "--engine", "vllm", "--print-command", "vllm"),
    ("Qwen/Qwen3-32B", "--hardware", "h100-80", "--concurrent-users", "40", "--context", "32k",
     "--min-gpus", "--engine", "vllm"),
    ("Qwen/Qwen3-32B", "--systems", "dgx-h100", "dgx-b200", "--concurrent-users", "40",
     "--context", "32k", "--engine", "vllm"),
])
def test_every_kind_of_report_validates(args):
    schema = json.loads((Path(__file__).parents[1] / "schemas" / "report.schema.json").read_text())
    code, r = run_json(*args, "--offline")
    assert code in (0, 1)
    validate(r, schema)


def test_min_gpus_and_search_answer_with_the_engine():
    base = ("Qwen/Qwen3-32B", "--hardware", "h100-80", "--concurrent-users", "40", "--context",
            "32k", "--offline", "--engine", "vllm")
    code, r = run_json(*base, "--min-gpus")
    n = r["inverse"]["min_gpus"]
    assert code == 0 and r["capacity_model"]["name"] == "vllm" and n
    # The engine's answer at n GPUs holds 40; at n - 1 no layout does (each re-planned).
    assert run_json(*base, "--gpus", str(n))[1]["fits"] is True
    assert run_json(*base, "--gpus", str(n - 1))[1]["fits"] is False
    code, s = run_json("Qwen/Qwen3-32B", "--systems", "dgx-h100", "--concurrent-users", "40",
                       "--context", "32k", "--offline", "--engine", "vllm")
    cand = s["search"]["candidates"][0]
    again = run_json("Qwen/Qwen3-32B", "--system", "dgx-h100", "--nodes", str(cand["nodes"]),
                     "--concurrent-users", "40", "--context", "32k", "--offline", "--engine",
                     "vllm")[1]
    assert again["recommended"]["max_sequences"] == cand["best_any_fabric"]["max_sequences"]
