"""Installed-engine preflight (--check-engine) against fake engines, plus an opt-in live run.

The fakes are tiny `vllm`, `sglang` and `torch` packages written into tmp_path; the real probe
scripts (kvfit/preflight/probe_*.py) run against them with this interpreter and PYTHONPATH
pointing at them, exactly as they would run in a serving environment. They expose only the
attribute paths the probes read; environment variables switch their behaviour.

The live test (marker `engine`) runs the probe in KVFIT_VLLM_PYTHON's real vLLM.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from conftest import run_cli, validate

ROOT = Path(__file__).resolve().parents[1]
ARCH = ROOT / "tests" / "architectures"
QWEN = ARCH / "qwen3" / "configs" / "Qwen--Qwen3-8B"
DSV4 = ARCH / "deepseek_v4" / "configs" / "deepseek-ai--DeepSeek-V4-Flash"
SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
SWITCHES = ("FAKE_VLLM_ARCHS", "FAKE_VLLM_QUANTS", "FAKE_VLLM_SLEEP", "FAKE_VLLM_CRASH",
            "FAKE_SGLANG_ARCHS")

FAKE = {
    "vllm/__init__.py": """
        import os
        import time

        __version__ = "0.33.0+fake"
        if os.environ.get("FAKE_VLLM_SLEEP"):
            time.sleep(float(os.environ["FAKE_VLLM_SLEEP"]))
        if os.environ.get("FAKE_VLLM_CRASH"):
            os._exit(int(os.environ["FAKE_VLLM_CRASH"]))
        print("INFO fake vllm logs on stdout; kvfit must not parse this", flush=True)
        """,
    "vllm/platforms/__init__.py": """
        class FakePlatform:
            device_type = "cpu"
            supported_quantization = []

            def is_cuda_alike(self):
                return False

        current_platform = FakePlatform()
        """,
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/layers/__init__.py": "",
    "vllm/model_executor/layers/quantization/__init__.py": """
        import os

        QUANTIZATION_METHODS = os.environ.get("FAKE_VLLM_QUANTS", "fp8,awq").split(",")
        DEPRECATED_QUANTIZATION_METHODS = ["fbgemm_fp8"]
        """,
    "vllm/model_executor/models/__init__.py": """
        import os

        def archs():
            default = "Qwen3ForCausalLM,DeepseekV4ForCausalLM"
            return set(os.environ.get("FAKE_VLLM_ARCHS", default).split(","))

        class _Registry:
            def get_supported_archs(self):
                return archs()

            def resolve_model_cls(self, architectures, model_config):
                for arch in architectures:
                    if arch in archs():
                        return type(arch, (), {"__module__": "vllm.fake_models"}), arch
                raise ValueError(f"Model architectures {architectures} are not supported for now.")

        ModelRegistry = _Registry()
        """,
    "vllm/config/cache.py": """
        KV_CACHE_DTYPES = ["auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4"]
        """,
    "vllm/config/attention.py": """
        from dataclasses import dataclass
        from typing import Literal

        IndexerKVDType = Literal["auto", "bf16", "fp8", "mxfp4", "nvfp4"]

        @dataclass
        class AttentionConfig:
            indexer_kv_dtype: str = "auto"
        """,
    "vllm/config/__init__.py": """
        import json
        import os

        from .attention import AttentionConfig
        from .cache import KV_CACHE_DTYPES

        class ModelConfig:
            def __init__(self, model, tokenizer=None, skip_tokenizer_init=False,
                         trust_remote_code=True, max_model_len=None):
                assert trust_remote_code is False, "kvfit must never enable remote code"
                with open(os.path.join(model, "config.json")) as f:
                    cfg = json.load(f)
                from vllm.model_executor.models import ModelRegistry
                self.architectures = cfg["architectures"]
                ModelRegistry.resolve_model_cls(self.architectures, self)
                self.architecture = self.architectures[0]
                quant = cfg.get("quantization_config")
                self.quantization = quant["quant_method"] if quant else None
                self.dtype = "torch.bfloat16"
                limit = cfg["max_position_embeddings"]
                if max_model_len > limit:
                    raise ValueError(f"User-specified max_model_len ({max_model_len}) is greater "
                                     f"than the derived max_model_len ({limit}).")
                self.max_model_len = max_model_len
                self.heads = cfg["num_attention_heads"]

            def verify_with_parallel_config(self, parallel):
                tp = parallel.tensor_parallel_size
                if self.heads % tp:
                    raise ValueError(f"Total number of attention heads ({self.heads}) must be "
                                     f"divisible by tensor parallel size ({tp}).")

        class ParallelConfig:
            def __init__(self, tensor_parallel_size=1):
                self.tensor_parallel_size = tensor_parallel_size

        class CacheConfig:
            def __init__(self, cache_dtype="auto"):
                if cache_dtype not in KV_CACHE_DTYPES:
                    raise ValueError(f"Invalid kv_cache_dtype: {cache_dtype!r}")
        """,
    "sglang/__init__.py": '__version__ = "0.5.23+fake"\n',
    "sglang/srt/__init__.py": "",
    "sglang/srt/layers/__init__.py": "",
    "sglang/srt/layers/quantization/__init__.py": 'QUANTIZATION_METHODS = ["fp8", "awq"]\n',
    "sglang/srt/server_args.py": """
        class ServerArgs:
            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--kv-cache-dtype", default="auto", choices=[
                    "auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16", "nvfp4", "fp4_e2m1"])
        """,
    "sglang/srt/models/__init__.py": "",
    "sglang/srt/models/registry.py": """
        import os

        def archs():
            return set(os.environ.get("FAKE_SGLANG_ARCHS", "Qwen3ForCausalLM").split(","))

        class _Registry:
            def get_supported_archs(self):
                return archs()

            def resolve_model_cls(self, architectures):
                for arch in architectures:
                    if arch in archs():
                        return type(arch, (), {"__module__": "sglang.fake_models"}), arch
                raise ValueError(f"Model architectures {architectures} are not supported.")

        ModelRegistry = _Registry()
        """,
    "sglang/srt/configs/__init__.py": "",
    "sglang/srt/configs/model_config.py": """
        import json
        import os

        class _HF:
            def __init__(self, cfg):
                self.architectures = cfg["architectures"]

        class ModelConfig:
            def __init__(self, model_path, trust_remote_code=True, context_length=None):
                assert trust_remote_code is False, "kvfit must never enable remote code"
                with open(os.path.join(model_path, "config.json")) as f:
                    self.hf_config = _HF(json.load(f))
                self.context_len = context_length
        """,
    "torch/__init__.py": """
        class cuda:
            @staticmethod
            def is_available():
                return False

            @staticmethod
            def device_count():
                return 0
        """,
}


def _write(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """Fake engines on PYTHONPATH (vllm, sglang, torch); returns their folder."""
    root = _write(tmp_path / "site", FAKE)
    monkeypatch.setenv("PYTHONPATH", str(root))
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    return root


@pytest.fixture
def vllm_only(fake):
    """Only the fake vLLM (SGLang absent)."""
    import shutil
    shutil.rmtree(fake / "sglang")
    return fake


def check(*args: str) -> tuple[int, dict, str]:
    """Run kvfit --json; (exit code, report, stderr). The report always validates."""
    code, out, err = run_cli(*args, "--json")
    report = json.loads(out)
    if "error" not in report:
        validate(report, SCHEMA)
    return code, report, err


def result(report: dict, engine: str = "vllm") -> dict:
    return next(r for r in report["engine_check"]["results"] if r["engine"] == engine)


def statuses(r: dict) -> dict:
    return {c["name"]: c["status"] for c in r["checks"]}


# ----- pass --------------------------------------------------------------------------------


def test_config_pass_without_hardware(vllm_only):
    code, report, err = check(QWEN, "--context", "32k", "--check-engine", "vllm")
    assert code == 5, err
    sec = report["engine_check"]
    assert sec["probe"] == "config" and sec["python"] == sys.executable
    assert sec["tp"] == 1 and sec["tp_source"] == "default" and sec["context_tokens"] == 32768
    assert sec["config_source"] == "the local checkpoint directory" and sec["passed"] is True
    r = result(report)
    assert r["status"] == "preflight-pass" and r["version"] == "0.33.0+fake"
    assert r["backend"] == "FakePlatform (cpu)"
    assert r["implementation"] == "vllm.fake_models.Qwen3ForCausalLM"
    assert set(statuses(r).values()) == {"pass"}
    assert {"architecture", "quantization", "kv cache dtype", "engine config", "implementation",
            "tensor parallel"} <= set(statuses(r))
    kv = r["kv_cache_dtype"]
    assert (kv["requested"], kv["requested_as"], kv["engine"], kv["engine_explicit"]) == (
        "bf16", "auto", "auto", "bfloat16")
    assert report["layouts"] == [] and report["fits"] is None   # engine-only: no --hardware


def test_text_block_says_not_load_tested(vllm_only):
    code, out, _ = run_cli(QWEN, "--context", "32k", "--check-engine", "vllm", "--kv-dtype", "bf16",
                           "--hardware", "h100-80", "--weight-gib", "16")
    assert code == 0
    block = out[out.index("Installed engine check"):out.index("State per sequence")]
    assert "--engine-probe config" in block and "TP 1 (default)" in block
    assert "vllm 0.33.0+fake on FakePlatform (cpu): PREFLIGHT-PASS" in block
    assert "not load-tested" in block
    assert "kvfit bf16 is vLLM --kv-cache-dtype bfloat16." in block
    assert "engine flags: --kv-cache-dtype bfloat16" in block
    assert out.index("Layouts on") < out.index("Installed engine check")   # both in one report


def test_engine_spellings_and_generic_fp4_refused(vllm_only):
    _, report, _ = check(QWEN, "--context", "4k", "--check-engine", "all", "--kv-dtype", "fp8_e4m3")
    assert result(report)["kv_cache_dtype"]["engine"] == "fp8_e4m3"
    code, _, err = run_cli(QWEN, "--context", "4k", "--check-engine", "vllm", "--kv-dtype", "fp4")
    assert code == 2 and "ambiguous" in err


def test_deepseek_v4_fp4_index_gets_the_attention_config_flag(vllm_only):
    _, report, _ = check(DSV4, "--context", "64k", "--kv-dtype", "fp8", "--index-dtype", "mxfp4",
                         "--check-engine", "vllm", "--engine-probe", "registry")
    r = result(report)
    assert r["status"] == "preflight-pass"
    assert r["index_cache"] == {"requested": "mxfp4", "option": "indexer_kv_dtype",
                                "value": "mxfp4", "choices": ["auto", "bf16", "fp8", "mxfp4",
                                                              "nvfp4"]}
    assert "--attention-config '{\"indexer_kv_dtype\": \"mxfp4\"}'" in r["engine_flags"]


def test_other_four_bit_index_caches_are_unknown(vllm_only, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_ARCHS", "DeepseekV32ForCausalLM")
    v32 = ARCH / "deepseek_v32" / "configs" / "deepseek-ai--DeepSeek-V3.2"
    code, report, _ = check(v32, "--context", "4k", "--index-dtype", "mxfp4", "--check-engine",
                            "vllm", "--require-engine-pass")
    r = result(report)
    assert code == 3 and r["status"] == "unknown"
    assert statuses(r)["index cache dtype"] == "unknown" and r["index_cache"]["option"] is None
    _, report, _ = check(QWEN, "--context", "4k", "--index-dtype", "mxfp4", "--check-engine",
                         "vllm")
    assert result(report)["index_cache"] is None          # no index cache in the state


def test_sglang_probe_maps_mxfp4_to_fp4_e2m1(fake):
    _, report, _ = check(QWEN, "--context", "4k", "--check-engine", "sglang", "--kv-dtype", "mxfp4")
    r = result(report, "sglang")
    assert r["status"] == "preflight-pass" and r["version"] == "0.5.23+fake"
    assert r["kv_cache_dtype"]["engine"] == "fp4_e2m1"
    assert r["implementation"] == "sglang.fake_models.Qwen3ForCausalLM"


# ----- fail ---------------------------------------------------------------------------------


def test_unknown_architecture_fails_with_the_engines_reason(vllm_only, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_ARCHS", "LlamaForCausalLM")
    code, report, _ = check(QWEN, "--context", "4k", "--check-engine", "vllm")
    r = result(report)
    assert code == 5 and r["status"] == "preflight-fail"
    assert statuses(r)["architecture"] in ("fail", "unknown")
    assert statuses(r)["engine config"] == "fail"
    assert "are not supported for now" in r["reason"]
    assert report["engine_check"]["passed"] is False


def test_unsupported_quantization_fails(vllm_only, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_QUANTS", "awq")
    _, report, _ = check("Qwen/Qwen3-8B-FP8", "--offline", "--context", "4k", "--check-engine",
                         "vllm", "--engine-probe", "registry")
    r = result(report)
    assert r["status"] == "preflight-fail" and statuses(r)["quantization"] == "fail"
    assert "has no quantization method 'fp8'" in r["reason"]
    assert report["engine_check"]["config_source"].startswith("the config.json kvfit resolved")


def test_kv_dtype_without_engine_equivalent_and_tp_refusal(vllm_only):
    _, report, _ = check(QWEN, "--context", "4k", "--check-engine", "vllm", "--kv-dtype", "mxfp4",
                         "--engine-tp", "3")
    r = result(report)
    assert r["kv_cache_dtype"]["engine"] is None and statuses(r)["kv cache dtype"] == "fail"
    assert statuses(r)["tensor parallel"] == "fail" and "divisible" in r["reason"]


def test_require_engine_pass_exits_3(vllm_only, monkeypatch):
    code, _, _ = check(QWEN, "--context", "4k", "--check-engine", "vllm", "--require-engine-pass")
    assert code == 5
    monkeypatch.setenv("FAKE_VLLM_ARCHS", "LlamaForCausalLM")
    code, _, err = check(QWEN, "--context", "4k", "--check-engine", "vllm", "--require-engine-pass")
    assert code == 3 and "vllm preflight-fail" in err


# ----- missing, timeout, crash, garbage, broken interpreter --------------------------------------


def test_missing_engine(vllm_only):
    code, report, _ = check(QWEN, "--context", "4k", "--check-engine", "all")
    assert code == 5                                   # ordinary reporting still succeeds
    assert result(report, "vllm")["status"] == "preflight-pass"
    missing = result(report, "sglang")
    assert missing["status"] == "missing" and "not installed" in missing["reason"]
    code, _, err = check(QWEN, "--context", "4k", "--check-engine", "all", "--require-engine-pass")
    assert code == 3 and "sglang missing" in err


def test_registry_moved_is_unsupported(vllm_only):
    import shutil
    shutil.rmtree(vllm_only / "vllm" / "model_executor" / "models")
    code, report, _ = check(QWEN, "--context", "4k", "--check-engine", "vllm")
    r = result(report)
    assert code == 5 and r["status"] == "unsupported" and r["version"] == "0.33.0+fake"
    assert "does not expose ModelRegistry.get_supported_archs()" in r["reason"]


def test_timeout_exits_2(vllm_only, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_SLEEP", "60")
    code, report, err = check(QWEN, "--context", "4k", "--check-engine", "vllm",
                              "--engine-timeout", "1")
    r = result(report)
    assert code == 2 and r["status"] == "error" and r["timed_out"] is True
    assert "within --engine-timeout 1 s" in r["reason"] and "--engine-timeout" in err


def test_crash_is_an_error_without_traceback(vllm_only, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_CRASH", "7")
    code, report, _ = check(QWEN, "--context", "4k", "--check-engine", "vllm")
    r = result(report)
    assert code == 5 and r["status"] == "error"
    assert "printed no result (exit status 7)" in r["reason"] and "Traceback" not in r["reason"]


@pytest.mark.parametrize(("printed", "needle"), [
    ("hello", "is not valid JSON"),
    ('{"protocol": 1, "engine": "vllm", "status": "banana", "reason": "x"}', "not understood"),
    ('{"protocol": 1, "engine": "vllm"}\n{"again": 1}', "is not valid JSON"),
])
def test_garbage_output_is_an_error(tmp_path, printed, needle):
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\ncat <<'EOF'\n{printed}\nEOF\n")
    python.chmod(0o755)
    code, report, _ = check(QWEN, "--context", "4k", "--check-engine", "vllm", "--engine-python",
                            python)
    r = result(report)
    assert code == 5 and r["status"] == "error" and needle in r["reason"]


def test_broken_interpreter_path_exits_2(tmp_path):
    code, _, err = run_cli(QWEN, "--check-engine", "vllm", "--engine-python", tmp_path / "nope")
    assert code == 2 and "no such file" in err
    plain = tmp_path / "python"
    plain.write_text("not a program")
    code, _, err = run_cli(QWEN, "--check-engine", "vllm", "--engine-python", plain)
    assert code == 2 and "not executable" in err


def test_load_without_cuda_refuses(vllm_only):
    code, _, err = run_cli(QWEN, "--context", "4k", "--check-engine", "vllm", "--engine-probe",
                           "load")
    assert code == 2 and "needs a CUDA accelerator" in err and "Traceback" not in err


def test_engine_options_need_check_engine():
    code, _, err = run_cli(QWEN, "--engine-probe", "registry", "--require-engine-pass")
    assert code == 2 and "only apply with --check-engine" in err


def test_nothing_left_behind(vllm_only, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    before = sorted(p.name for p in QWEN.iterdir())
    check("Qwen/Qwen3-8B", "--offline", "--context", "4k", "--check-engine", "vllm")
    check(QWEN, "--context", "4k", "--check-engine", "vllm")
    assert list(scratch.iterdir()) == [] and sorted(p.name for p in QWEN.iterdir()) == before


# ----- TOML [engine] ------------------------------------------------------------------------


def test_toml_engine_table(vllm_only, tmp_path):
    env = tmp_path / "env" / "bin"
    env.mkdir(parents=True)
    (env / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (env / "python").chmod(0o755)
    preset = tmp_path / "p.toml"
    preset.write_text(f"model = '{QWEN}'\ncontext = '4k'\n[engine]\ncheck = 'vllm'\n"
                      "python = 'env/bin/python'\nprobe = 'registry'\ntp = 2\ntimeout = 120\n"
                      "require_pass = true\n")
    code, report, _ = check(preset)
    sec = report["engine_check"]
    assert code == 5 and sec["probe"] == "registry" and sec["require_pass"] is True
    assert sec["python"] == str(env / "python") and (sec["tp"], sec["tp_source"]) == (
        2, f"preset key 'engine.tp' ({preset.resolve()}:7)")    # not a flag the user typed
    assert result(report)["status"] == "preflight-pass"
    code, report, _ = check(preset, "--engine-probe", "config")    # flags override the preset
    assert code == 5 and report["engine_check"]["probe"] == "config"


@pytest.mark.parametrize(("toml", "needle"), [
    ("[engine]\ncolour = 'red'", "unknown key 'engine.colour'"),
    ("[engine]\ntp = 'two'", "'engine.tp' should be int"),
    ("[engine]\ncheck = 'tgi'", "--check-engine 'tgi'"),
    ("[engine]\ncheck = 'vllm'\nprobe = 'deep'", "--engine-probe 'deep'"),
])
def test_toml_engine_table_errors(tmp_path, toml, needle):
    preset = tmp_path / "p.toml"
    preset.write_text(f"model = '{QWEN}'\ncontext = '4k'\n{toml}\n")
    code, _, err = run_cli(preset)
    assert code == 2 and needle in err


# ----- live vLLM (opt-in) ------------------------------------------------------------------

LIVE = os.environ.get("KVFIT_VLLM_PYTHON")
LIVE_CASES = [   # (config, kvfit flags, expected status, text in the result)
    ("qwen3/configs/Qwen--Qwen3-8B", ["--context", "32k", "--kv-dtype", "bf16"],
     "preflight-pass", "--kv-cache-dtype bfloat16"),
    ("gpt_oss/configs/openai--gpt-oss-20b", ["--context", "128k", "--engine-tp", "2"],
     "preflight-pass", "gpt_oss"),
    ("deepseek_v4/configs/deepseek-ai--DeepSeek-V4-Flash",
     ["--context", "64k", "--kv-dtype", "fp8", "--index-dtype", "mxfp4"],
     "preflight-pass", "--attention-config '{\"indexer_kv_dtype\": \"mxfp4\"}'"),
    ("qwen3/configs/Qwen--Qwen3-32B", ["--context", "32k", "--kv-dtype", "mxfp4"],
     "preflight-fail", "no KV-cache dtype equal to kvfit's mxfp4"),
]


@pytest.mark.engine
@pytest.mark.skipif(not LIVE, reason="set KVFIT_VLLM_PYTHON to a Python with vLLM installed")
@pytest.mark.parametrize(("config", "flags", "status", "needle"), LIVE_CASES,
                         ids=[c[0].split("/")[-1] for c in LIVE_CASES])
def test_live_vllm(config, flags, status, needle):
    code, report, err = check(ARCH / config, *flags, "--check-engine", "vllm", "--engine-python",
                              LIVE, "--engine-timeout", "900")
    r = result(report)
    assert r["status"] == status, (r["reason"], err)
    said = [r["reason"], r["implementation"] or "", *r["engine_flags"],
            *(c["detail"] for c in r["checks"])]
    assert any(needle in text for text in said), said
    assert r["version"] and not r["timed_out"] and code == 0
