"""The expression sandbox: arithmetic over spec fields, on simpleeval.

Expressions are parsed once when a spec loads, every name is checked against the names
the spec may use, and only a small AST subset is allowed: numbers, names, arithmetic,
comparisons, boolean logic, conditional expressions and calls to a short whitelist of
functions. No attribute access, subscripts, strings, comprehensions or lambdas. Every
intermediate number is bounded, so a hostile spec cannot hang or exhaust memory.
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass
from fractions import Fraction

import simpleeval

# threading.local is _thread._local; importing threading (11 classes, 70 KB of bytecode)
# only for it was more than a hundredth of a plan.
try:
    from _thread import _local as thread_local
except ImportError:
    from threading import local as thread_local

MAX_MAGNITUDE = 2**96          # no spec quantity (bytes, tokens, heads) comes near this
MAX_EXPONENT = 64
MAX_LENGTH = 500               # characters in one expression


class ExprError(Exception):
    """An expression problem; `col` is the 0-based column inside the expression text."""

    def __init__(self, message: str, col: int = 0, width: int = 1, help: str | None = None):
        super().__init__(message)
        self.message, self.col, self.width, self.help = message, col, width, help


def _bounded(value):
    """Numbers within the sandbox bounds: finite, |x| <= 2**96, fraction denominators below
    2**96 (so repeated powers of 1/3 stop at once); other values pass (checked by callers)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExprError("the result is not a finite number")
        if abs(value) > MAX_MAGNITUDE:
            raise ExprError(f"a number exceeds the sandbox bound of 2**96 ({value:.3g})")
    elif isinstance(value, int | Fraction):
        if abs(value) > MAX_MAGNITUDE:
            bits = abs(math.floor(value)).bit_length()
            raise ExprError(f"a number exceeds the sandbox bound of 2**96 (about 2**{bits})")
        if isinstance(value, Fraction) and value.denominator > MAX_MAGNITUDE:
            raise ExprError("a fraction's denominator exceeds the sandbox bound of 2**96 "
                            f"(about 2**{value.denominator.bit_length()})")
    return value


def _number(value):
    """An arithmetic operand: int, float, Fraction or bool; anything else (a string or list
    field) is refused before the operation runs, so `text * 10**9` allocates nothing."""
    if not isinstance(value, int | float | Fraction):
        raise ExprError(f"arithmetic needs numbers, not a {type(value).__name__}")
    return _bounded(value)


def _checked(fn):
    def wrapper(*args):
        for a in args:
            _number(a)
        return _bounded(fn(*args))
    return wrapper


def _pow(a, b):
    if not isinstance(b, int) or isinstance(b, bool) or not 0 <= b <= MAX_EXPONENT:
        raise ExprError(f"exponents must be whole numbers from 0 to {MAX_EXPONENT}")
    return a**b


def _div(a, b):
    if b == 0:
        raise ExprError("division by zero")
    return Fraction(a) / Fraction(b) if not isinstance(a, float) else a / b


def _floordiv(a, b):
    if b == 0:
        raise ExprError("division by zero")
    return a // b


def ceil_div(a, b):
    """ceil(a / b) for positive b, exact on integers and fractions."""
    if b == 0:
        raise ExprError("ceil_div by zero")
    return -((-a) // b)


def _len(x):
    if not isinstance(x, (list, tuple, str)):
        raise ExprError("len() takes a list field")
    return len(x)


def _prod(x):
    """The product of a list field's numbers (e.g. a [height, width] merge kernel), bounded
    after every factor."""
    if not isinstance(x, (list, tuple)):
        raise ExprError("prod() takes a list field")
    out = 1
    for v in x:
        out = _bounded(out * _number(v))
    return out


FUNCTIONS = {"min": min, "max": max, "ceil_div": ceil_div, "abs": abs, "len": _len,
             "prod": _prod}
OPERATORS = {
    ast.Add: _checked(operator.add), ast.Sub: _checked(operator.sub),
    ast.Mult: _checked(operator.mul), ast.Div: _checked(_div),
    ast.FloorDiv: _checked(_floordiv), ast.Mod: _checked(operator.mod),
    ast.Pow: _checked(_pow), ast.USub: _checked(operator.neg), ast.UAdd: _checked(operator.pos),
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Gt: operator.gt, ast.Lt: operator.lt,
    ast.GtE: operator.ge, ast.LtE: operator.le, ast.Not: operator.not_,
}
_SPELLING = {ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
             ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
             ast.RShift: ">>", ast.MatMult: "@", ast.Invert: "~"}
_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
            ast.Call, ast.Name, ast.Constant, ast.Load, ast.operator, ast.unaryop,
            ast.boolop, ast.cmpop)


@dataclass(frozen=True, slots=True)
class Expr:
    """A compiled expression: its text, parsed tree and the names it reads."""

    text: str
    tree: ast.Expression
    names: frozenset[str]

    def evaluate(self, names: dict):
        """Evaluate with the given name values; raises ExprError on any failure."""
        evaluator = _evaluator(names)
        try:
            return _bounded(evaluator.eval(self.text, previously_parsed=self.tree.body))
        except ExprError:
            raise
        except (simpleeval.NumberTooHigh, OverflowError, RecursionError) as exc:
            raise ExprError(f"number out of bounds: {exc}") from None
        except (TypeError, ValueError, ZeroDivisionError, simpleeval.InvalidExpression) as exc:
            raise ExprError(f"cannot evaluate: {exc}") from None


_LOCAL = thread_local()


def _evaluator(names: dict) -> simpleeval.SimpleEval:
    """This thread's evaluator with `names` set: one SimpleEval is made per thread and reused
    (making one sets up its node table and warning filters, the larger part of evaluating a
    spec expression; evaluation keeps no other state between calls)."""
    evaluator = getattr(_LOCAL, "evaluator", None)
    if evaluator is None:
        evaluator = _LOCAL.evaluator = simpleeval.SimpleEval(operators=OPERATORS,
                                                            functions=FUNCTIONS)
    evaluator.names = names
    return evaluator


_COMPILED: dict[tuple[str, frozenset[str]], Expr] = {}
_COMPILED_MAX = 8192         # distinct (text, names) pairs kept; an audit compiles ~350


def compile_expr(text, known: set[str] | frozenset[str]) -> Expr:
    """Parse `text` (str or number) and check every name against `known`. An Expr is
    immutable and depends only on the text and the known names, so a pair compiled before
    (the same spec read for another plan of an audit or search) is answered from a table;
    a failing one is not kept and fails again."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ExprError("an expression must be a string or a number")
    key = (str(text), frozenset(known))
    expr = _COMPILED.get(key)
    if expr is None:
        expr = _compile(key[0], known)
        if len(_COMPILED) < _COMPILED_MAX:
            _COMPILED[key] = expr
    return expr


def _compile(source: str, known) -> Expr:
    if len(source) > MAX_LENGTH:
        raise ExprError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"syntax error: {exc.msg}", col=max(0, (exc.offset or 1) - 1)) from None
    names: set[str] = set()
    for node in ast.walk(tree):
        _check_node(node, known)
        if isinstance(node, ast.Name):
            names.add(node.id)
    expr = Expr(source.strip(), tree, frozenset(names))
    if not names:          # a constant: evaluate it now, so a bad one is a load-time error
        expr.evaluate({})
    return expr


def non_number(expr: Expr, texts) -> tuple[str, int] | None:
    """(name, column) of a field among `texts` (string and list fields) that `expr` can
    return as its value, not only use (`len(x)` and `x == y` are numbers; `max(x, x)`,
    `x or 1` and `x if c else 1` can be x); None when every result is a number or a bool."""
    def result(node):
        if isinstance(node, ast.Name):
            return node if node.id in texts else None
        if isinstance(node, ast.IfExp):
            return result(node.body) or result(node.orelse)
        if isinstance(node, ast.BoolOp):
            return next(filter(None, map(result, node.values)), None)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("min", "max"):
            return next(filter(None, map(result, node.args)), None)
        return None
    found = result(expr.tree.body)
    return None if found is None else (found.id, found.col_offset)


def _check_node(node: ast.AST, known) -> None:
    col = getattr(node, "col_offset", 0)
    if not isinstance(node, _ALLOWED):
        what = type(node).__name__
        raise ExprError(f"'{what}' is not allowed in spec expressions", col=col,
                        help="use numbers, field names, + - * / // % **, comparisons, "
                             "and/or/not, 'a if c else b' and " + ", ".join(sorted(FUNCTIONS)))
    if isinstance(node, ast.Constant) and (
            isinstance(node.value, (str, bytes, complex)) or node.value is None):
        raise ExprError("strings and None are not allowed in expressions", col=col)
    if isinstance(node, ast.Constant) and not isinstance(node.value, int | float):
        shown = "..." if node.value is Ellipsis else repr(node.value)
        raise ExprError(f"the constant {shown} is not allowed in expressions", col=col)
    ops = node.ops if isinstance(node, ast.Compare) else (
        [node.op] if isinstance(node, ast.BinOp | ast.UnaryOp) else [])
    for op in ops:
        if type(op) not in OPERATORS:
            raise ExprError(f"the operator '{_SPELLING.get(type(op), type(op).__name__)}' is "
                            "not allowed in spec expressions", col=col,
                            help="use + - * / // % **, comparisons (== != < <= > >=) and "
                                 "and/or/not")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        exp = node.right
        if not (isinstance(exp, ast.Constant) and type(exp.value) is int
                and 0 <= exp.value <= MAX_EXPONENT):
            raise ExprError(f"an exponent must be a literal whole number from 0 to {MAX_EXPONENT}",
                            col=getattr(exp, "col_offset", col))
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name):
            raise ExprError("only the whitelisted functions may be called, by name", col=col,
                            help="allowed: " + ", ".join(sorted(FUNCTIONS)))
        if node.func.id not in FUNCTIONS or node.keywords:
            name = node.func.id
            raise ExprError(f"unknown function '{name}'", col=col, width=len(name),
                            help=_suggest(name, FUNCTIONS))
    elif isinstance(node, ast.Name) and node.id not in known and node.id not in FUNCTIONS:
        raise ExprError(f"unknown name '{node.id}' in expression", col=col,
                        width=len(node.id), help=_suggest(node.id, known))


def _suggest(name: str, known) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    listed = ", ".join(sorted(known)[:12])
    lead = f"did you mean '{close[0]}'? " if close else ""
    return f"{lead}known names: {listed}"
