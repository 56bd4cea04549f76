"""Regression cases found by the config_json, preset_toml, model_ref and spec_yaml fuzz kinds
(tests/fuzz): each input used to end in a traceback (exit 70) or a wrong answer; now each is
one paragraph and exit 2, or a correct answer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import run_cli

ARCH = Path(__file__).parent / "architectures"
QWEN = ARCH / "qwen3" / "configs" / "Qwen--Qwen3-32B"
GLM = ARCH / "glm_moe_dsa" / "configs" / "zai-org--GLM-5.1"


def _one_paragraph(code: int, out: str, err: str, needle: str) -> None:
    assert code == 2, (code, out, err)
    assert needle in err and err.startswith("kvfit: ") and err.count("\n") == 1, err
    assert "internal error" not in err and "Traceback" not in err


def _config(src: Path, folder: Path, **changes) -> Path:
    cfg = json.loads((src / "config.json").read_text())
    cfg.update(changes)
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


def test_tp_divisor_past_the_sandbox_bound_is_a_config_error(tmp_path):
    # num_attention_heads 1e308 is a whole float, so q_heads = 10**308 > 2**96: the spec's
    # tensor_parallel.divides expression `q_heads` left the sandbox uncaught (fuzz config_json #94)
    folder = _config(GLM, tmp_path, num_attention_heads=1e308)
    code, out, err = run_cli(folder, "--context", "32k", "--hardware", "h100-80", "--gpus", "8")
    _one_paragraph(code, out, err, "cannot be computed")


def test_weight_gib_below_one_byte_is_refused(tmp_path):
    # 1e-300 GiB * 2**30 rounds to 0 bytes: the plan counted no weights at all
    code, out, err = run_cli(_config(QWEN, tmp_path), "--context", "1k", "--hardware",
                             "h100-80", "--weight-gib", "1e-300")
    _one_paragraph(code, out, err, "less than one byte")


def test_a_config_architectures_of_infinity_is_not_echoed(tmp_path):
    # `"architectures": 1e999` parses as inf; the report echoed it, so --json could not be
    # written and the report broke its schema (an array of class names or null)
    (tmp_path / "config.json").write_text(
        (QWEN / "config.json").read_text().replace('"architectures": [\n    "Qwen3ForCausalLM"\n  ]',
                                                   '"architectures": 1e999'))
    assert "1e999" in (tmp_path / "config.json").read_text()
    code, out, _ = run_cli(tmp_path, "--context", "1k", "--hardware", "h100-80", "--json")
    assert code == 0 and json.loads(out)["model"]["architectures"] is None


def test_home_as_the_model_is_a_local_path_not_an_internal_error(tmp_path, monkeypatch):
    # `~` expanded to an existing directory in the reference parser but not in the plan's
    # local check, so the Hub resolver got a local reference (NotImplementedError, exit 70)
    monkeypatch.setenv("HOME", str(tmp_path))
    code, out, err = run_cli("~", "--context", "1k")
    _one_paragraph(code, out, err, "has no config.json")
    _config(QWEN, tmp_path)
    code, out, err = run_cli("~", "--context", "1k", "--hardware", "h100-80")
    assert code == 0, err


def test_a_preset_nested_past_the_stack_is_a_usage_error(tmp_path):
    # tomllib recurses once per nested array: 3,000 levels raised RecursionError
    path = tmp_path / "deep.toml"
    path.write_text("context = \"1k\"\ndeep = " + "[" * 3000 + "]" * 3000 + "\n")
    code, out, err = run_cli(path)
    _one_paragraph(code, out, err, "nests arrays or tables too deeply")


def test_an_audit_file_nested_past_the_stack_or_endless_is_a_usage_error(tmp_path):
    path = tmp_path / "audit.toml"
    path.write_text("[audit]\nname = " + "[" * 3000 + "]" * 3000 + "\n")
    code, out, err = run_cli("audit", path)
    _one_paragraph(code, out, err, "nests arrays or tables too deeply")
    code, out, err = run_cli("audit", "/dev/zero")       # read whole before: never ended
    _one_paragraph(code, out, err, "is not a regular file of at most 1,048,576 bytes")


def test_an_audit_model_name_the_file_system_refuses_is_not_a_crash(tmp_path):
    # a model part over 255 bytes: Path.exists() raised ENAMETOOLONG in the audit loader
    path = tmp_path / "audit.toml"
    path.write_text(f'[[models]]\nfamily = "x"\nmodel = "{"m" * 300}"\ncontexts = ["1k"]\n'
                    '[[hardware]]\npreset = "h100-80"\ncounts = [1]\n')
    code, out, err = run_cli("audit", path)
    assert code != 70 and "internal error" not in err, err


def _calibrate_dry_run(tmp_path, line: str) -> tuple[int, str, str]:
    """`kvfit calibrate --dry-run` on an attach-mode preset for the pinned Qwen3 config,
    with one [calibration] line of the test's."""
    shutil.copytree(QWEN, tmp_path / "model")
    path = tmp_path / "cal.toml"
    path.write_text('model = "model"\ncontext = "32k"\nhardware = "h100-80"\nweight_gib = 60\n'
                    '[calibration]\nengine = "vllm"\nmode = "attach"\n'
                    f'base_url = "http://127.0.0.1:8000"\n{line}\n')
    return run_cli("calibrate", path, "--dry-run")


def test_calibrate_output_tokens_past_the_context_is_a_usage_error(tmp_path):
    # output_tokens 4,000,000 at a 32k context made input_tokens negative; the result
    # failed its own schema (jsonschema ValidationError, exit 70)
    code, out, err = _calibrate_dry_run(tmp_path, "output_tokens = 4000000")
    _one_paragraph(code, out, err, "leaves no input tokens at a context of 32,768")


def test_a_yaml_syntax_problem_is_one_line(tmp_path):
    # ruamel's reader message ends in a newline: the problem was two lines
    spec = tmp_path / "qwen3.yaml"
    spec.write_text("id: qwen3\nsummary: '\x1b'\n")
    code, out, err = run_cli("specs", "check", spec)
    assert code == 2 and "characters are not allowed" in err + out   # ruamel: "special" or
    text = (err + out).splitlines()                                  # "control" characters
    line = next(ln for ln in text if "characters are not allowed" in ln)
    assert line.rstrip().endswith("characters are not allowed"), line
    assert any(ln.strip().endswith(":2:11") for ln in text), text   # where the \x1b is


def test_a_device_as_the_model_is_named_as_such():
    # `kvfit /dev/zero` said "no such file or directory: /dev/zero"
    code, out, err = run_cli("/dev/zero", "--context", "1k")
    _one_paragraph(code, out, err, "'/dev/zero' is not a regular file or a directory")


def test_an_engine_timeout_past_a_week_is_refused(tmp_path):
    # [engine] timeout = 65970697666560 reached Popen.communicate(): OverflowError (exit 70)
    folder = _config(QWEN, tmp_path)
    code, out, err = run_cli(folder, "--context", "1k", "--hardware", "h100-80",
                             "--check-engine", "vllm", "--engine-timeout", "65970697666560")
    _one_paragraph(code, out, err, "--engine-timeout must be a number in (0, 604,800]")
    code, out, err = run_cli(folder, "--context", "1k", "--check-engine", "vllm",
                             "--engine-timeout", "inf")
    _one_paragraph(code, out, err, "--engine-timeout must be a number in (0, 604,800] (got 'inf')")


def test_a_calibrate_timeout_past_a_week_is_refused(tmp_path):
    code, out, err = _calibrate_dry_run(tmp_path, "request_timeout = inf")
    _one_paragraph(code, out, err, "'calibration.request_timeout' must be at most 604,800")


def test_a_reference_the_parser_reads_as_local_is_loaded_as_local(tmp_path, monkeypatch):
    # "..\n": the plan's own check saw no file named "..\n", the parser stripped it to ".."
    # (a local directory) and the Hub resolver got a local reference (NotImplementedError)
    (tmp_path / "sub").mkdir()
    _config(QWEN, tmp_path)
    monkeypatch.chdir(tmp_path / "sub")
    code, out, err = run_cli("..\n", "--context", "1k", "--hardware", "h100-80")
    assert code == 0, err


def test_a_lone_surrogate_in_a_reference_is_a_usage_error():
    # '~nobod\ud800y/x': os.path.expanduser() raised UnicodeEncodeError
    code, out, err = run_cli("~nobod\ud800y/x", "--context", "1k")
    _one_paragraph(code, out, err, "is not valid text (a lone surrogate)")


def test_a_non_finite_rope_scaling_value_is_refused(tmp_path):
    # a preset's [rope_scaling] beta_fast = -inf was echoed into the report (its JSON broke)
    # and would be passed on to the engine's --hf-overrides JSON
    _config(QWEN, tmp_path)
    path = tmp_path / "p.toml"
    path.write_text(f'model = "{tmp_path}"\ncontext = "64k"\nhardware = "h100-80"\n'
                    '[rope_scaling]\nrope_type = "yarn"\nfactor = 4.0\n'
                    'original_max_position_embeddings = 32768\nbeta_fast = -inf\n')
    code, out, err = run_cli(path)
    _one_paragraph(code, out, err, "beta_fast is not a finite number")


def test_a_home_of_an_unknown_user_is_a_path_that_does_not_exist(monkeypatch, tmp_path):
    # pathlib's Path.expanduser() raises RuntimeError for `~user` when no such user exists (and
    # for "~\n", fuzz model_ref seed 11 #1549); kvfit expands user paths with
    # os.path.expanduser, which leaves such a path as it is, so it is refused as a missing path
    code, out, err = run_cli("~kvfit-no-such-user/models/x", "--offline")
    _one_paragraph(code, out, err, "does not exist")
    code, out, err = run_cli("~\n", "--offline")
    assert code == 2 and "internal error" not in err and "Traceback" not in err, err
    # the same in the cache folder kvfit is told to use
    plain = run_cli(QWEN, "--context", "4k")
    monkeypatch.setenv("KVFIT_CACHE_DIR", "~kvfit-no-such-user/cache")
    monkeypatch.chdir(tmp_path)
    assert run_cli(QWEN, "--context", "4k") == plain


QWEN_MOE = Path(__file__).parent / "fixtures" / "model-configs" / "Qwen--Qwen3-30B-A3B"
GLM_NEXT = ARCH / "glm5_next" / "configs" / "zai-org--GLM-5.3-Flash"
ENGINE = ("--context", "32k", "--hardware", "h100-80", "--gpus", "8", "--engine", "vllm",
          "--weight-gib", "60")


def test_activation_keys_that_are_not_whole_numbers_are_config_errors(tmp_path):
    # vLLM's activation peak reads these keys outside the spec's fields; '' ended in
    # "invalid literal for int()" and an infinite value in OverflowError (fuzz config_json,
    # seed 12, #3917 and #1047)
    for n, (key, value) in enumerate((("num_experts_per_tok", ""),
                                      ("moe_intermediate_size", 2.5),
                                      ("num_experts_per_tok", -1))):
        folder = tmp_path / str(n)
        folder.mkdir()
        code, out, err = run_cli(_config(QWEN_MOE, folder, **{key: value}), *ENGINE)
        _one_paragraph(code, out, err, f"config key '{key}' = ")
        assert "activation peak" in err


def test_a_compression_ratio_past_the_kernel_block_is_a_config_error(tmp_path):
    # index_kpool 4,000,000: the pooled index keeps one entry per 4,000,000 tokens, so no
    # DeepGEMM kernel block holds one and the packed pool's stride alignment was 0
    # (ZeroDivisionError; fuzz config_json, seed 12, #5398)
    cfg = json.loads((GLM_NEXT / "config.json").read_text())
    cfg["text_config"]["index_kpool"] = 4_000_000
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    code, out, err = run_cli(tmp_path, *ENGINE)
    _one_paragraph(code, out, err, "the pooled-index cache keeps one entry per 4,000,000 tokens")
