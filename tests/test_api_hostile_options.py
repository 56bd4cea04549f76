"""Regression tests for what tests/fuzz's api_options kind found: kvfit.plan given an int past
Python's int-string limit (4,300 digits), alone or inside a list or dict, raised ValueError
from str()/repr()/json.dumps instead of BadInput's paragraph."""

from __future__ import annotations

import pytest

import kvfit

HUGE = 10 ** 5000


@pytest.mark.parametrize("value", [HUGE, [HUGE], (HUGE,), {"a": HUGE}], ids=type)
@pytest.mark.parametrize("name", ["gpus", "hf_overrides", "systems"])
def test_a_number_too_long_to_print_is_refused_in_one_paragraph(name, value):
    with pytest.raises(kvfit.KvfitError) as caught:
        kvfit.plan("Qwen/Qwen3-32B", offline=True, hardware="h100-80", **{name: value})
    text = caught.value.render()
    assert "\n" not in text and "Traceback" not in text
    assert "thousands of digits" in text or "5,000 digits" in text, text


# found by the api_options kind (bench/fuzz.py, seed 0, cases 457, 559, 1348)
@pytest.mark.parametrize(("options", "needle"), [
    # json.loads' RecursionError
    ({"hf_overrides": "[" * 3000, "hardware": "h100-80"}, "not valid JSON"),
    ({"config": "\0", "hardware": "h100-80"}, "preset"),                          # Path.resolve's ValueError
    ({"systems": "32k\n"}, "unknown system"),                  # the name echoed with its newline
])
def test_hostile_option_values_are_one_paragraph(options, needle):
    with pytest.raises(kvfit.KvfitError) as caught:
        kvfit.plan("Qwen/Qwen3-32B", offline=True, **options)
    text = caught.value.render()
    assert needle in text and "\n" not in text, text


def test_a_fit_family_with_a_line_break_is_one_paragraph():
    # found by the mcp_arguments kind (seed 0, case 1453)
    with pytest.raises(kvfit.KvfitError) as caught:
        kvfit.fit(context="8k", hardware="h100-80", family="x\ny")
    assert "\n" not in caught.value.render()


def test_the_mcp_fit_answer_when_no_checkpoint_could_be_planned():
    # found by the mcp_arguments kind (seed 0, case 371): when every row is refused, the fit
    # JSON's target is null, and the tool's paragraph read target["hardware"]. The case's
    # kv_dtype "" is now refused before any row; a 1m context refuses every Qwen3 row (their
    # configs declare 40,960 tokens at most)
    from kvfit.mcp_server.server import EXIT_CODE, answer

    result = answer("fit", {"context": "1m", "hardware": "h100-80", "family": "qwen3"},
                    offline=True)
    assert result.meta[EXIT_CODE] != 70
    assert "could be planned" in result.content[0].text


def test_a_sweep_of_none_is_refused():
    # found by the api_options kind (seed 0, case 3693): an option given None is dropped as
    # not given, so sweep=None raised KeyError 'sweep'
    with pytest.raises(kvfit.BadInput) as caught:
        kvfit.sweep("Qwen/Qwen3-32B", None, offline=True, hardware="h100-80")
    assert "needs sweep" in caught.value.render()
