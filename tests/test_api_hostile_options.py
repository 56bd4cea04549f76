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
