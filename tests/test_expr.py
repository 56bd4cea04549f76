"""The expression sandbox: exact arithmetic, and refusal of anything else."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kvfit.expr import ExprError, ceil_div, compile_expr

NAMES = {"kv_heads", "head_dim", "kv_bytes", "layers", "window", "flags"}


def test_fractional_dtype_gives_exact_integer_bytes():
    # nvfp4: 9/16 byte per value; 2 x 8 heads x 128 values x 9/16 = 1,152 B exactly.
    e = compile_expr("2 * kv_heads * head_dim * kv_bytes", NAMES)
    assert e.evaluate({"kv_heads": 8, "head_dim": 128, "kv_bytes": Fraction(9, 16)}) == 1152


def test_ceil_div_and_conditionals():
    e = compile_expr("ceil_div(layers, 4) if window > 0 else 0", NAMES)
    assert e.evaluate({"layers": 61, "window": 1}) == 16
    assert e.evaluate({"layers": 61, "window": 0}) == 0
    assert ceil_div(7, 2) == 4 and ceil_div(8, 2) == 4


@pytest.mark.parametrize(("text", "message"), [
    ("kv_head * 2", "unknown name 'kv_head'"),
    ("__import__('os').system('id')", "only the whitelisted functions"),
    ("open('x')", "unknown function 'open'"),
    ("head_dim.real", "'Attribute' is not allowed"),
    ("flags[0]", "'Subscript' is not allowed"),
    ("'abc'", "strings and None are not allowed"),
    ("[x for x in flags]", "not allowed"),
    ("lambda: 1", "'Lambda' is not allowed"),
    ("9**9**9", "exponent must be a literal"),
    ("2 ** layers", "exponent must be a literal"),
    ("1; 2", "syntax error"),
    ("x = 1", "syntax error"),
    ("(" * 600, "longer than"),
])
def test_refused_at_compile_time(text, message):
    with pytest.raises(ExprError) as info:
        compile_expr(text, NAMES)
    assert message in info.value.message


def test_unknown_name_suggests_the_close_one():
    with pytest.raises(ExprError) as info:
        compile_expr("2 * kv_head", NAMES)
    assert "did you mean 'kv_heads'?" in info.value.help
    assert info.value.col == 4 and info.value.width == len("kv_head")


@pytest.mark.parametrize("text", ["(2**64) * (2**64) * (2**64)", "head_dim ** 64 * head_dim ** 64"])
def test_numbers_are_bounded_at_evaluation(text):
    # a constant expression is evaluated when it is compiled, so it fails there already
    with pytest.raises(ExprError) as info:
        compile_expr(text, NAMES).evaluate({"head_dim": 1024})
    assert "bound" in info.value.message


def test_division_by_zero_is_an_expr_error():
    with pytest.raises(ExprError):
        compile_expr("layers // window", NAMES).evaluate({"layers": 4, "window": 0})


def test_non_expression_values_rejected():
    with pytest.raises(ExprError):
        compile_expr(True, NAMES)
    assert compile_expr(576, NAMES).evaluate({}) == 576


@pytest.mark.parametrize(("text", "message"), [
    ("kv_heads in flags", "the operator 'in' is not allowed"),
    ("kv_heads not in flags", "the operator 'not in' is not allowed"),
    ("kv_heads is 1", "the operator 'is' is not allowed"),
    ("kv_heads is not 1", "the operator 'is not' is not allowed"),
    ("...", "the constant ... is not allowed"),
    ("2 * (layers & 1)", "the operator '&' is not allowed"),
    ("~layers", "the operator '~' is not allowed"),
])
def test_in_is_ellipsis_and_bit_operators_refused_at_compile_time(text, message):
    with pytest.raises(ExprError) as info:
        compile_expr(text, NAMES)
    assert message in info.value.message


def test_in_points_at_its_comparison():
    with pytest.raises(ExprError) as info:
        compile_expr("2 * (kv_heads in flags)", NAMES)
    assert info.value.col == len("2 * (")


def test_repeated_fraction_powers_stop_at_the_denominator_bound():
    # (1/3)**64 has denominator 3**64 = about 2**101.4, past the 2**96 bound: the first power
    # already fails, so the nest never reaches 3**(64**5).
    # (a constant, so compile_expr evaluates it and refuses it at spec load time)
    with pytest.raises(ExprError, match="denominator exceeds the sandbox bound"):
        compile_expr("(((((1/3)**64)**64)**64)**64)**64", NAMES)
    with pytest.raises(ExprError, match="denominator exceeds the sandbox bound"):
        compile_expr("((((kv_bytes/3)**64)**64)**64)**64", NAMES).evaluate({"kv_bytes": 1})
    # 3**60 = about 2**95.1 is within the bound
    assert compile_expr("(1/3)**60", NAMES).evaluate({}) == Fraction(1, 3**60)


def test_arithmetic_on_a_string_or_list_field_is_refused_before_it_runs():
    for text, value in (("flags * 10**9", "abc"), ("flags * 10**9", [1, 2]),
                        ("flags + flags", "x"), ("-flags", "x")):
        with pytest.raises(ExprError, match="arithmetic needs numbers"):
            compile_expr(text, NAMES).evaluate({"flags": value})
    assert compile_expr("len(flags) * 2", NAMES).evaluate({"flags": [1, 2, 3]}) == 6


def test_a_huge_intermediate_reports_its_size_not_its_digits():
    e = compile_expr("head_dim ** 64", NAMES)
    with pytest.raises(ExprError, match=r"about 2\*\*641"):
        e.evaluate({"head_dim": 2**10 + 1})


def test_prod_multiplies_a_list_field_and_stays_bounded():
    # A [height, width] merge kernel: 2 x 2 = 4 merged patches.
    assert compile_expr("1152 * prod(k)", {"k"}).evaluate({"k": [2, 2]}) == 4608
    assert compile_expr("prod(k)", {"k"}).evaluate({"k": []}) == 1
    with pytest.raises(ExprError, match="list field"):
        compile_expr("prod(n)", {"n"}).evaluate({"n": 4})
    with pytest.raises(ExprError, match="numbers"):
        compile_expr("prod(k)", {"k"}).evaluate({"k": ["a", 2]})
    with pytest.raises(ExprError, match="2\\*\\*96"):
        compile_expr("prod(k)", {"k"}).evaluate({"k": [2**60, 2**60]})


def test_a_pair_compiled_before_is_the_same_expression_and_a_bad_one_fails_again():
    a = compile_expr("layers * 2", {"layers"})
    assert compile_expr("layers * 2", frozenset({"layers"})) is a
    assert a.evaluate({"layers": 3}) == 6
    assert compile_expr("layers * 2", {"layers", "heads"}) is not a    # other names, own check
    for _ in range(2):
        with pytest.raises(ExprError, match="unknown name 'heads'|heads"):
            compile_expr("heads * 2", {"layers"})
