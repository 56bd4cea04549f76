"""An engine version newer than every range kvfit has rules for is planned with the newest
rules, labelled extrapolated (an installed vLLM upgrade must not make every `--engine vllm`
plan exit 2); `--engine-strict` refuses instead; an unknown older version is refused.

The extrapolated answer is, by construction, the answer of the newest known version: the
same rules on the same inputs. vLLM's newest range in specs/engines/vllm.yaml is 0.33
(default_version 0.33.0); SGLang's default_version is read from its spec the same way.
"""

from __future__ import annotations

from conftest import run_cli, run_json

Q = ("Qwen/Qwen3-8B", "--offline", "--hardware", "h100-80", "--context", "32k")


def _answer(r: dict) -> list:
    return [(x["label"], x["max_sequences"], x["engine"]["blocks_per_request"]["value"])
            for x in r["layouts"]]


def test_a_newer_vllm_uses_the_newest_rules_labelled_extrapolated():
    code, new = run_json(*Q, "--engine", "vllm@0.40.0")
    _, known = run_json(*Q, "--engine", "vllm@0.33.0")
    assert code == 0 and _answer(new) == _answer(known)
    cm = new["capacity_model"]
    assert cm["version"] == "0.40.0" and "extrapolated" in cm["label"] and "0.33.0" in cm["label"]
    assert "extrapolated" in cm["version_basis"]
    assert "extrapolated" in new["layouts"][0]["engine"]["version_basis"]
    assert any("newer than every version kvfit has rules for" in w for w in new["warnings"])


def test_engine_strict_refuses_a_newer_version():
    code, _, err = run_cli(*Q, "--engine", "vllm@0.40.0", "--engine-strict")
    assert code == 2 and "--engine-strict refuses to extrapolate" in err
    code, _, _ = run_cli(*Q, "--engine", "vllm@0.33.0", "--engine-strict")
    assert code == 0                                   # a known version is unaffected


def test_an_older_unknown_version_is_refused():
    code, _, err = run_cli(*Q, "--engine", "vllm@0.5.0")
    assert code == 2 and "no rules for this version" in err and "Known ranges" in err


def test_a_newer_sglang_too():
    code, r = run_json(*Q, "--engine", "sglang@9.0.0")
    assert code == 0 and "extrapolated" in r["capacity_model"]["label"]
