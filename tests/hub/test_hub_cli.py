"""The kvfit command line against the local test hub: revisions, weights, errors, catalog."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hubserver import Fault
from hubserver.repos import sharded

from conftest import run_cli

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "hub" / "cli"
QWEN = (FIX / "Qwen--Qwen3-32B.config.json").read_bytes()
SHA = re.compile(r"^[0-9a-f]{40}$")


def _add_qwen(hub) -> tuple[str, dict[str, bytes]]:
    files = {"config.json": QWEN, **sharded(64, 2)}
    return hub.state.add_commit("Qwen/Qwen3-32B", files), files


def _json(*args) -> tuple[int, dict, str]:
    code, out, err = run_cli(*args, "--json")
    return code, json.loads(out), err


def test_branch_and_sha_both_record_the_full_sha(hub):
    sha, files = _add_qwen(hub)
    code, by_branch, _ = _json("Qwen/Qwen3-32B", "--context", "32k", "--kv-dtype", "bf16")
    assert code == 5 and by_branch["model"]["revision"] == sha and SHA.match(sha)  # state only
    assert by_branch["model"]["revision_requested"] is None
    code, by_sha, _ = _json(f"Qwen/Qwen3-32B@{sha}", "--context", "32k", "--kv-dtype", "bf16")
    assert by_sha["model"]["revision"] == sha and by_sha["model"]["revision_requested"] == sha
    # 64 layers x 2 x 8 KV heads x 128 x 2 B x 32,768 tokens
    assert by_sha["state"]["bytes_per_sequence"] == 8589934592
    # weights: the two served shards, byte for byte
    shards = [v for k, v in files.items() if k.endswith(".safetensors")]
    assert by_sha["weights"]["bytes"] == sum(len(b) for b in shards)


def test_a_moved_branch_is_read_at_its_new_sha(hub):
    first, _ = _add_qwen(hub)
    moved = json.loads(QWEN) | {"num_hidden_layers": 32}
    second = hub.state.add_commit("Qwen/Qwen3-32B", {"config.json": json.dumps(moved).encode(),
                                                     **sharded(32, 1)}, salt="moved")
    code, report, _ = _json("Qwen/Qwen3-32B", "--context", "32k", "--kv-dtype", "bf16")
    assert report["model"]["revision"] == second != first
    assert report["state"]["bytes_per_sequence"] == 8589934592 // 2      # 32 layers now


def test_modelopt_nvfp4_with_fp8_kv_declaration(hub):
    hub.state.add_commit("nvidia/Qwen3-32B-NVFP4", {
        "config.json": (FIX / "nvidia--Qwen3-32B-NVFP4.config.json").read_bytes(),
        "hf_quant_config.json": (FIX / "nvidia--Qwen3-32B-NVFP4.hf_quant_config.json").read_bytes(),
        **sharded(64, 1)})
    code, report, _ = _json("nvidia/Qwen3-32B-NVFP4", "--context", "32k")
    q = report["quantization"]
    # the declared FP8 applies, under vLLM's name for it (utils/torch_utils.py:78-81)
    assert report["kv_dtype"] == "fp8_e4m3" and q["kv_cache"] == "fp8"
    assert q["weight_algorithm"] == "nvfp4" and q["mixed"] is True and q["excluded_modules"] >= 1
    # fp8 cache: 64 x 2 x 8 x 128 x 1 B x 32,768
    assert report["state"]["bytes_per_sequence"] == 4294967296
    code, text, _ = run_cli("nvidia/Qwen3-32B-NVFP4", "--context", "32k", "--verbose")
    assert "Quantization: weights nvfp4; mixed" in text and "KV-cache declaration: fp8" in text


def _refused(hub, fault, needle, *extra):
    _add_qwen(hub)
    hub.state.faults.append(fault)
    code, out, err = run_cli("Qwen/Qwen3-32B", "--context", "1k", *extra)
    assert code == 2, err
    assert needle in err and "Traceback" not in err and err.count("\n") == 1
    return err


def test_http_errors_exit_2_with_their_own_message(hub):
    _refused(hub, Fault(status=401, error_code="RepoNotFound", kind="api"), "HTTP 401")


def test_missing_repo_exits_2(hub):
    code, _, err = run_cli("kvfit-test/no-such-repo", "--context", "1k")
    assert code == 2 and "404" in err and "Traceback" not in err


def test_rate_limit_exits_2(hub):
    _refused(hub, Fault(status=429, retry_after=3600, kind="api"), "429")


def test_timeout_exits_2(hub):
    _refused(hub, Fault(delay=2.0, kind="api"), "did not answer within 0.3 s", "--timeout", "0.3")


def test_unreachable_hub_answers_from_the_catalog(dead_endpoint):
    code, report, err = _json("Qwen/Qwen3-32B", "--context", "32k", "--kv-dtype", "bf16")
    assert code == 5 and report["model"]["origin"] == "catalog"
    assert any("catalog" in n for n in report["model"]["notes"])
    assert report["state"]["bytes_per_sequence"] == 8589934592


def test_local_gguf_file_plans_and_truncated_gguf_is_refused(tmp_path, hub_env):
    from hubserver.files import gguf_bytes
    from hubserver.repos import gguf_kv, gguf_tensors

    path = tmp_path / "tiny-Q8_0.gguf"
    path.write_bytes(gguf_bytes("qwen3", gguf_kv("qwen3"), gguf_tensors()))
    code, report, err = _json(path, "--context", "256", "--allow-context-overflow")
    assert code == 5, err   # state only
    assert report["model"]["origin"] == "gguf" and report["weights"]["bytes"] == path.stat().st_size
    (tmp_path / "cut.gguf").write_bytes(path.read_bytes()[:40])
    code, out, err = run_cli(tmp_path / "cut.gguf", "--context", "256")
    assert code == 2 and "Traceback" not in err and err.startswith("kvfit: ")


def test_suggestions_replan_the_commit_already_read(hub):
    # A target that is not met (75 GiB of weights on one 80 GB GPU) gets suggestions, each a
    # re-plan; they read the commit the plan resolved, so a warm run asks the Hub nothing more
    # than the plan's own branch resolution.
    _add_qwen(hub)
    args = ("Qwen/Qwen3-32B", "--context", "32k", "--hardware", "h100-80", "--weight-gib", "75")
    _json(*args)                                   # warm the cache
    hub.state.reset()
    code, r, _ = _json(*args)
    assert code == 1 and r["suggestions"]
    with_suggestions = hub.state.count()
    fits = ("Qwen/Qwen3-32B", "--context", "32k", "--hardware", "h100-80", "--weight-gib", "30")
    _json(*fits)
    hub.state.reset()
    code, r, _ = _json(*fits)                      # the same plan, fitting: no suggestions
    assert code == 0 and not r["suggestions"]
    assert with_suggestions == hub.state.count()


def test_hub_reads_show_progress_on_a_terminal_only(hub, monkeypatch, tmp_path):
    """Each Hub request is one progress step on a terminal's stderr; --json and a pipe get
    none, and stdout is the same report either way."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from kvfit.cli.main import main

    class FakeTTY(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("CI", raising=False)
    _add_qwen(hub)
    runs = {}
    for name, flags in (("tty", ()), ("json", ("--json",))):
        out, err = io.StringIO(), FakeTTY()
        monkeypatch.setenv("KVFIT_CACHE_DIR", str(tmp_path / name))   # each run asks the Hub
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["Qwen/Qwen3-32B", "--context", "32k", *flags])
        runs[name] = (code, out.getvalue(), err.getvalue())
    code, out, err = runs["tty"]
    frames = [f.strip() for f in err.split("\r") if f.strip()]
    assert frames[0].startswith("kvfit hub [1] reading ") and frames[-1] == "kvfit hub: done"
    assert any("config.json" in f for f in frames), frames
    assert "kvfit hub" not in out and code == runs["json"][0]
    assert runs["json"][2] == ""
