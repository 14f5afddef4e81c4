"""FILTER expressions compiled to postfix programs that a numba kernel evaluates over term ids.

:func:`compile_filter` turns a FILTER's tree (:mod:`rsep.lang.ast`) into a :class:`Program`;
:func:`evaluate` (``njit``, callable from other kernels) runs it on one row of term ids
against the dictionary's side table of typed values, and :func:`evaluate_rows` on a table.
Its functions are calls, not inlined at numba's IR level (LLVM still inlines what pays):
IR inlining copied the evaluator into every caller and made a first compilation of the
kernels that call it take minutes.
The answer is :data:`TRUE`, :data:`FALSE` (false or an error: a FILTER keeps only true,
SPARQL 1.1 §17.2) or :data:`UNDECIDED`, where the side table cannot tell what
:mod:`rsep.rdf.values` (the exact reference) says; the caller then evaluates that row exactly.

Exactness: a boolean on the stack is the set of values it may have (true, false, error),
mapped by the §17.2 truth table; a number is an interval of doubles holding its exact value
and, for integers and decimals, one holding its cast to xsd:double (XPath 2.0 §B.1; rounding
is monotone, so disjoint intervals are ordered). Float and double arithmetic is IEEE as in
:mod:`rsep.rdf.values`; integer and decimal results are points only when provably exact.

The side table is :class:`rsep.engine.terms.TypedValues` (``kind``, ``numeric``,
``number`` cast to xsd:double and correctly rounded, ``exact``); id equality is RDF term
equality there (one id per term whatever its spelling), which ``=`` relies on (§17.4.1.7).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from numba import njit
from pyoxigraph import Literal, NamedNode

from rsep.engine.terms import KIND_LITERAL, NOT_NUMERIC, TypedValues
from rsep.lang import ast
from rsep.rdf.terms import XSD_BOOLEAN, XSD_STRING, to_nt
from rsep.rdf.values import NumericType, SparqlTypeError, effective_boolean_value

__all__ = [
    "FALSE",
    "OPCODES",
    "TRUE",
    "UNDECIDED",
    "Program",
    "compare_entries",
    "comparison_operands",
    "compile_filter",
    "entry_with",
    "evaluate",
    "evaluate_rows",
    "evaluate_with",
    "verdict_of",
]

TRUE = 1
FALSE = 0
UNDECIDED = 2


# Opcodes (``args`` holds the operand) -----------------------------------------------------
PUSH_VAR = 0  # the term bound to slot args[i]; unbound (id < 0) is an error (§17.2)
PUSH_TERM = 1  # the constant term id args[i] (IRI, number, other literal)
PUSH_STRING = 2  # the constant term id args[i], known to be a simple literal (xsd:string)
PUSH_BOOL = 3  # the boolean args[i] (0 or 1)
PUSH_ERROR = 4  # an error: a variable no slot holds, a constant without EBV (§17.2.2)
BOUND = 5  # BOUND(?x) for slot args[i]; args[i] < 0: a variable no slot holds
ADD = 10
SUB = 11
MUL = 12
DIV = 13
NEG = 14
PLUS = 15
EQ = 20
NE = 21
LT = 22
LE = 23
GT = 24
GE = 25
NOT = 30
AND = 31
OR = 32

OPCODES: dict[str, int] = {
    "+": ADD,
    "-": SUB,
    "*": MUL,
    "/": DIV,
    "=": EQ,
    "!=": NE,
    "<": LT,
    "<=": LE,
    ">": GT,
    ">=": GE,
    "&&": AND,
    "||": OR,
}
"""The binary operators by their SPARQL symbol (§17.3)."""
_UNARY = {"-": NEG, "+": PLUS, "!": NOT}


@dataclass(frozen=True, eq=False)
class Program:
    """A FILTER expression in postfix form over variable slots and constant terms."""

    ops: np.ndarray
    """int32 opcodes (``PUSH_VAR`` … ``OR``), run left to right on a stack."""
    args: np.ndarray
    """int64 operand per op: a slot index, a constant term id, or a boolean."""


# Compiling ---------------------------------------------------------------------------------


def comparison_operands(program: Program) -> tuple[int, frozenset[int], frozenset[int]] | None:
    """Where the left operand's subprogram ends, when ``program`` is one comparison (its last
    op ``EQ`` … ``GE``), and the slots each operand reads; ``None`` otherwise. Evaluating
    the two subprograms apart and comparing their values is the program (postfix order)."""
    ops = program.ops.tolist()
    if not ops or not EQ <= ops[-1] <= GE:
        return None
    depth = 0
    mid = -1
    for i, op in enumerate(ops[:-1]):
        if op <= BOUND:
            depth += 1
        elif op not in (NEG, PLUS, NOT):
            depth -= 1
        if depth == 1:
            mid = i + 1
    args = program.args.tolist()

    def reads(lo: int, hi: int) -> frozenset[int]:
        return frozenset(
            args[i] for i in range(lo, hi) if ops[i] in (PUSH_VAR, BOUND) and args[i] >= 0
        )

    return mid, reads(0, mid), reads(mid, len(ops) - 1)


def compile_filter(
    expr: ast.Expr, slots: Mapping[str, int], intern: Callable[[str], int]
) -> Program | str:
    """``expr`` as a :class:`Program` over the variables in ``slots`` (a variable outside them
    is unbound), constants interned by ``intern`` (N-Triples text to id); or why it cannot be
    compiled (a function call, ``IN``, ``EXISTS``…)."""
    ops: list[int] = []
    args: list[int] = []
    # Postorder with an explicit stack: deep || chains must not recurse.
    pending: list[tuple[ast.Expr, bool, bool]] = [(expr, True, False)]
    while pending:
        node, boolean, expanded = pending.pop()
        if isinstance(node, ast.Binary):
            if expanded:
                ops.append(OPCODES[node.op])
                args.append(0)
            else:
                logical = node.op in ("&&", "||")
                pending.append((node, boolean, True))
                pending.append((node.right, logical, False))
                pending.append((node.left, logical, False))
            continue
        if isinstance(node, ast.Unary):
            if expanded:
                ops.append(_UNARY[node.op])
                args.append(0)
            else:
                pending.append((node, boolean, True))
                pending.append((node.operand, node.op == "!", False))
            continue
        leaf = _leaf(node, boolean, slots, intern)
        if isinstance(leaf, str):
            return leaf
        ops.append(leaf[0])
        args.append(leaf[1])
    return Program(np.asarray(ops, dtype=np.int32), np.asarray(args, dtype=np.int64))


def _leaf(
    node: ast.Expr, boolean: bool, slots: Mapping[str, int], intern: Callable[[str], int]
) -> tuple[int, int] | str:
    """The opcode and operand of a variable, constant or ``BOUND``; a constant in a boolean
    context (operand of ``&&``, ``||``, ``!``, or the FILTER itself) is its EBV (§17.2.2)."""
    if isinstance(node, ast.Var):
        slot = slots.get(node.name)
        return (PUSH_ERROR, 0) if slot is None else (PUSH_VAR, slot)
    if isinstance(node, ast.BuiltIn) and node.name == "BOUND":
        (arg,) = node.args
        assert isinstance(arg, ast.Var)
        return BOUND, slots.get(arg.name, -1)
    if isinstance(node, ast.Iri):
        if boolean:
            return PUSH_ERROR, 0  # an IRI has no EBV
        return PUSH_TERM, intern(f"<{node.value}>")
    if isinstance(node, ast.Literal):
        term = (
            Literal(node.lexical, language=node.lang)
            if node.lang is not None
            else Literal(node.lexical, datatype=NamedNode(node.datatype))
        )
        if boolean:
            try:
                return PUSH_BOOL, int(effective_boolean_value(term))
            except SparqlTypeError:
                return PUSH_ERROR, 0
        if node.datatype == XSD_BOOLEAN and node.lexical in ("true", "false", "1", "0"):
            return PUSH_BOOL, int(node.lexical in ("true", "1"))
        if node.datatype == XSD_STRING:
            return PUSH_STRING, intern(to_nt(term))
        return PUSH_TERM, intern(to_nt(term))
    if isinstance(node, ast.BuiltIn):
        return f"the function {node.name} is not compiled to the kernel"
    if isinstance(node, ast.FunctionCall):
        return f"the function <{node.iri.value}> is not compiled to the kernel"
    return f"{type(node).__name__} is not compiled to the kernel"


# The kernel --------------------------------------------------------------------------------
# A stack entry: (tag, mask, numeric type, term id, lo, hi, plo, phi). A boolean is the mask
# of its possible values; a number holds its exact value in [lo, hi] and, for integers and
# decimals, its promotion to xsd:double in [plo, phi] (both a point when known exactly).

_T_BOOL = 0  # a boolean (or an error): ``mask``
_T_NUM = 1  # a valid number of type ``ntype`` (a NumericType value)
_T_TERM = 2  # a term that is not a valid number: ``id`` (IRI, blank node, triple, literal)
_T_STRING = 3  # a constant simple literal: ``id``
_T_UNKNOWN = 4  # any value, or an error

_M_TRUE = 1
_M_FALSE = 2
_M_ERROR = 4
_M_ANY = 7

_O_LT = 1
_O_EQ = 2
_O_GT = 4
_O_UNORDERED = 8  # NaN
_O_ERROR = 16
_O_ANY = 31

_N_INTEGER = int(NumericType.INTEGER)
_N_DECIMAL = int(NumericType.DECIMAL)
_N_FLOAT = int(NumericType.FLOAT)
_N_DOUBLE = int(NumericType.DOUBLE)

_TRUNCATION = 1.1e-18  # a decimal quotient is truncated after 18 digits (or more)
_SCALE_18 = 262144.0  # 2**18: a double with at most 18 binary fraction digits has <= 18 decimal


@njit(cache=True)
def _entry(tag, mask, ntype, term, lo, hi, plo, phi):  # type: ignore[no-untyped-def]
    return (np.int64(tag), np.int64(mask), np.int64(ntype), np.int64(term), lo, hi, plo, phi)


@njit(cache=True)
def _boolean(mask):  # type: ignore[no-untyped-def]
    return _entry(_T_BOOL, mask, NOT_NUMERIC, -1, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True)
def _unknown():  # type: ignore[no-untyped-def]
    return _entry(_T_UNKNOWN, _M_ANY, NOT_NUMERIC, -1, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True)
def _down(x):  # type: ignore[no-untyped-def]
    return np.nextafter(x, -np.inf)


@njit(cache=True)
def _up(x):  # type: ignore[no-untyped-def]
    return np.nextafter(x, np.inf)


@njit(cache=True)
def _single(x):  # type: ignore[no-untyped-def]
    """Round a double to single precision, nearest, ties to even (xsd:float)."""
    return np.float64(np.float32(x))


@njit(cache=True)
def _is_point(lo, hi):  # type: ignore[no-untyped-def]
    if math.isnan(lo) and math.isnan(hi):
        return True
    return lo == hi and math.copysign(1.0, lo) == math.copysign(1.0, hi)


@njit(cache=True)
def _split(a):  # type: ignore[no-untyped-def]
    c = 134217729.0 * a  # Veltkamp: 2**27 + 1
    high = c - (c - a)
    return high, a - high


@njit(cache=True)
def _exact_product(a, b, p):  # type: ignore[no-untyped-def]
    """Whether ``p == fl(a * b)`` is the exact product (Dekker's TwoProduct, error 0)."""
    if a == 0.0 or b == 0.0:
        return p == 0.0
    if not (abs(a) < 2.0**500 and abs(b) < 2.0**500 and abs(p) > 2.0**-900):
        return False
    ah, al = _split(a)
    bh, bl = _split(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl == 0.0


@njit(cache=True)
def _exact_sum(a, b, s):  # type: ignore[no-untyped-def]
    """Whether ``s == fl(a + b)`` is the exact sum (Knuth's TwoSum, error 0)."""
    if not math.isfinite(s):
        return False
    bb = s - a
    return (a - (s - bb)) + (b - bb) == 0.0


@njit(cache=True)
def _ieee(op, x, y):  # type: ignore[no-untyped-def]
    """IEEE arithmetic as :func:`rsep.rdf.values._ieee` (division by zero: ±INF or NaN)."""
    if op == ADD:
        return x + y
    if op == SUB:
        return x - y
    if op == MUL:
        return x * y
    if y != 0.0:
        return x / y
    if x == 0.0 or math.isnan(x):
        return np.nan
    return math.copysign(np.inf, x) * math.copysign(1.0, y)


@njit(cache=True)
def _load(term, kind, numeric, number, exact):  # type: ignore[no-untyped-def]
    """The entry of a bound term (an error when unbound, §17.2)."""
    if term < 0:
        return _boolean(_M_ERROR)
    code = numeric[term]
    if kind[term] != KIND_LITERAL or code == NOT_NUMERIC:
        return _entry(_T_TERM, 0, NOT_NUMERIC, term, 0.0, 0.0, 0.0, 0.0)
    x = float(number[term])
    if code >= _N_FLOAT:
        return _entry(_T_NUM, 0, code, term, x, x, x, x)
    lo = x
    hi = x
    if not exact[term]:
        lo = _down(x)
        hi = _up(x)
    return _entry(_T_NUM, 0, code, term, lo, hi, x, x)  # x: its cast, "-0.0" to -0.0


@njit(cache=True)
def _promoted(ntype, lo, hi, plo, phi, target):  # type: ignore[no-untyped-def]
    """The interval holding a number cast to ``target`` (XPath 2.0 §B.1)."""
    if target == _N_DOUBLE:
        return plo, phi
    if target == _N_FLOAT and ntype != _N_FLOAT:
        if lo == hi:
            if lo == 0.0:
                return 0.0, 0.0
            single = _single(lo)
            return single, single
        low = _single(lo)
        high = _single(hi)
        if low == 0.0:
            low = -0.0
        if high == 0.0:
            high = 0.0
        return low, high
    return lo, hi


@njit(cache=True)
def _hull(c1, c2, c3, c4, single):  # type: ignore[no-untyped-def]
    """The smallest interval holding four IEEE results (``nan`` if one is NaN); a zero whose
    sign differs between corners is not a point."""
    if single:
        c1 = _single(c1)
        c2 = _single(c2)
        c3 = _single(c3)
        c4 = _single(c4)
    if math.isnan(c1) or math.isnan(c2) or math.isnan(c3) or math.isnan(c4):
        return np.nan, np.nan
    lo = min(min(c1, c2), min(c3, c4))
    hi = max(max(c1, c2), max(c3, c4))
    if lo == 0.0 and hi == 0.0:
        negative = (
            math.copysign(1.0, c1) < 0
            or math.copysign(1.0, c2) < 0
            or math.copysign(1.0, c3) < 0
            or math.copysign(1.0, c4) < 0
        )
        positive = (
            math.copysign(1.0, c1) > 0
            or math.copysign(1.0, c2) > 0
            or math.copysign(1.0, c3) > 0
            or math.copysign(1.0, c4) > 0
        )
        if negative and positive:
            return -0.0, 0.0
        zero = -0.0 if negative else 0.0
        return zero, zero
    return lo, hi


@njit(cache=True)
def _arithmetic(op, a, b):  # type: ignore[no-untyped-def]
    """``a op b`` on two numbers (§17.3; F&O §6.2): IEEE for float and double, exact for
    integer and decimal (a point only when the double is provably the exact result)."""
    target = max(a[2], b[2])
    if target >= _N_FLOAT:
        a1, a2 = _promoted(a[2], a[4], a[5], a[6], a[7], target)
        b1, b2 = _promoted(b[2], b[4], b[5], b[6], b[7], target)
        single = target == _N_FLOAT
        if (_is_point(a1, a2) and _is_point(b1, b2)) or math.isnan(a1) or math.isnan(b1):
            r = _ieee(op, a1, b1)
            if math.isnan(a1) or math.isnan(b1):
                r = np.nan
            if single:
                r = _single(r)
            return _entry(_T_NUM, 0, target, -1, r, r, r, r)
        if op == DIV and b1 <= 0.0 <= b2:
            return _unknown()
        if op == MUL and (
            (a1 <= 0.0 <= a2 and (math.isinf(b1) or math.isinf(b2)))
            or (b1 <= 0.0 <= b2 and (math.isinf(a1) or math.isinf(a2)))
        ):
            return _unknown()
        lo, hi = _hull(
            _ieee(op, a1, b1), _ieee(op, a1, b2), _ieee(op, a2, b1), _ieee(op, a2, b2), single
        )
        if math.isnan(lo):
            return _unknown()
        return _entry(_T_NUM, 0, target, -1, lo, hi, lo, hi)
    a1 = a[4]
    a2 = a[5]
    b1 = b[4]
    b2 = b[5]
    kind = _N_DECIMAL if op == DIV else target
    if op == DIV:
        if b1 == 0.0 and b2 == 0.0:
            return _boolean(_M_ERROR)  # integer or decimal division by zero (F&O §6.2.4)
        if b1 <= 0.0 <= b2:
            return _unknown()
    if a1 == a2 and b1 == b2:
        r = _ieee(op, a1, b1)
        if op in (ADD, SUB):
            point = _exact_sum(a1, b1 if op == ADD else -b1, r)
        elif op == MUL:
            point = math.isfinite(r) and _exact_product(a1, b1, r)
        else:
            point = (
                math.isfinite(r)
                and r * b1 == a1
                and _exact_product(r, b1, a1)
                and math.floor(r * _SCALE_18) == r * _SCALE_18
            )
        if point:
            r = r + 0.0  # a computed zero is written "0": it casts to +0.0
            return _entry(_T_NUM, 0, kind, -1, r, r, r, r)
        lo = _down(r)
        hi = _up(r)
    elif op == ADD:
        lo = _down(a1 + b1)
        hi = _up(a2 + b2)
    elif op == SUB:
        lo = _down(a1 - b2)
        hi = _up(a2 - b1)
    else:
        c1 = _ieee(op, a1, b1)
        c2 = _ieee(op, a1, b2)
        c3 = _ieee(op, a2, b1)
        c4 = _ieee(op, a2, b2)
        lo = _down(min(min(c1, c2), min(c3, c4)))
        hi = _up(max(max(c1, c2), max(c3, c4)))
    if op == DIV:
        lo = _down(lo - _TRUNCATION)
        hi = _up(hi + _TRUNCATION)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return _unknown()  # beyond the doubles: overflow errors are possible
    return _entry(_T_NUM, 0, kind, -1, lo, hi, lo, hi)


@njit(cache=True)
def _negate(a, op):  # type: ignore[no-untyped-def]
    """``-a`` or ``+a`` (§17.3; F&O §6.2.7-8); a non-number is an error."""
    tag = a[0]
    if tag == _T_UNKNOWN:
        return _unknown()
    if tag != _T_NUM:
        return _boolean(_M_ERROR)
    ntype = a[2]
    lo = a[4]
    hi = a[5]
    plo = a[6]
    phi = a[7]
    if op == NEG:
        lo, hi, plo, phi = -hi, -lo, -phi, -plo
    if ntype <= _N_DECIMAL and lo == hi:
        plo = lo + 0.0
        phi = plo
    return _entry(_T_NUM, 0, ntype, a[3] if op == PLUS else -1, lo, hi, plo, phi)


@njit(cache=True)
def _numeric_order(a, b):  # type: ignore[no-untyped-def]
    """The possible outcomes of comparing two numbers after promotion (F&O §6.3)."""
    if a[3] >= 0 and a[3] == b[3]:
        return _O_UNORDERED if math.isnan(a[4]) else _O_EQ
    target = max(a[2], b[2])
    a1, a2 = _promoted(a[2], a[4], a[5], a[6], a[7], target)
    b1, b2 = _promoted(b[2], b[4], b[5], b[6], b[7], target)
    if math.isnan(a1) or math.isnan(b1):
        return _O_UNORDERED
    lt = a1 < b2
    gt = a2 > b1
    eq = a1 <= b2 and b1 <= a2
    if target <= _N_DECIMAL:  # casting to double is monotone: its order bounds the exact one
        lt = lt and a[6] <= b[7]
        gt = gt and a[7] >= b[6]
        eq = eq and a[6] <= b[7] and b[6] <= a[7]
    out = 0
    if lt:
        out |= _O_LT
    if eq:
        out |= _O_EQ
    if gt:
        out |= _O_GT
    return out


@njit(cache=True)
def _boolean_order(a, b):  # type: ignore[no-untyped-def]
    """The possible outcomes of ordering two booleans, false < true (F&O §9.2.2)."""
    out = 0
    for x in (_M_TRUE, _M_FALSE, _M_ERROR):
        for y in (_M_TRUE, _M_FALSE, _M_ERROR):
            if a & x and b & y:
                if x == _M_ERROR or y == _M_ERROR:
                    out |= _O_ERROR
                elif x == y:
                    out |= _O_EQ
                else:
                    out |= _O_LT if x == _M_FALSE else _O_GT
    return out


@njit(cache=True)
def _order(a, b, kind):  # type: ignore[no-untyped-def]
    """The possible outcomes of ``<`` and friends (§17.3): numbers, or else strings, booleans
    and dateTimes; anything else is an error."""
    ta = a[0]
    tb = b[0]
    if ta == _T_UNKNOWN or tb == _T_UNKNOWN:
        return _O_ANY
    if ta == _T_BOOL and tb == _T_BOOL:
        return _boolean_order(a[1], b[1])
    if ta == _T_BOOL or tb == _T_BOOL:
        mask = a[1] if ta == _T_BOOL else b[1]
        other = b if ta == _T_BOOL else a
        if mask != _M_ERROR and other[0] == _T_TERM and kind[other[3]] == KIND_LITERAL:
            return _O_ANY  # the literal may be a boolean
        return _O_ERROR
    if ta == _T_NUM and tb == _T_NUM:
        return _numeric_order(a, b)
    if ta == _T_NUM or tb == _T_NUM:
        return _O_ERROR
    if (ta == _T_TERM and kind[a[3]] != KIND_LITERAL) or (
        tb == _T_TERM and kind[b[3]] != KIND_LITERAL
    ):
        return _O_ERROR
    if a[3] == b[3]:
        return _O_EQ if ta == _T_STRING else _O_EQ | _O_ERROR
    return _O_LT | _O_EQ | _O_GT | _O_ERROR


@njit(cache=True)
def _equal(a, b, kind):  # type: ignore[no-untyped-def]
    """The possible values of ``a = b`` (§17.3, RDFterm-equal §17.4.1.7, as
    :func:`rsep.rdf.values.equal`)."""
    ta = a[0]
    tb = b[0]
    if ta == _T_UNKNOWN or tb == _T_UNKNOWN:
        return _M_ANY
    if ta == _T_BOOL and tb == _T_BOOL:
        return _outcome_mask(_boolean_order(a[1], b[1]), _O_EQ)
    if ta == _T_BOOL or tb == _T_BOOL:
        mask = a[1] if ta == _T_BOOL else b[1]
        other = b if ta == _T_BOOL else a
        out = mask & _M_ERROR
        if mask != _M_ERROR:
            if other[0] == _T_TERM and kind[other[3]] == KIND_LITERAL:
                out |= _M_ANY  # the literal may be a boolean, or unknown
            else:
                out |= _M_FALSE
        return out
    if ta == _T_NUM and tb == _T_NUM:
        return _outcome_mask(_numeric_order(a, b), _O_EQ)
    if a[3] == b[3]:
        return _M_TRUE  # the same term, not a NaN
    resource_a = ta == _T_TERM and kind[a[3]] != KIND_LITERAL
    resource_b = tb == _T_TERM and kind[b[3]] != KIND_LITERAL
    if resource_a or resource_b:
        return _M_FALSE  # IRIs, blank nodes and triple terms: identity
    # two different literals, none a boolean value on the stack
    if ta == _T_NUM or tb == _T_NUM:
        other = b if ta == _T_NUM else a
        return _M_FALSE if other[0] == _T_STRING else _M_FALSE | _M_ERROR
    if ta == _T_STRING and tb == _T_STRING:
        return _M_FALSE
    if ta == _T_STRING or tb == _T_STRING:
        return _M_FALSE | _M_ERROR  # a string never equals another term but an unknown literal
    return _M_ANY


@njit(cache=True)
def _ebv(a, kind):  # type: ignore[no-untyped-def]
    """The possible effective boolean values (§17.2.2) of an entry."""
    tag = a[0]
    if tag == _T_BOOL:
        return a[1]
    if tag == _T_NUM:
        lo = a[4]
        hi = a[5]
        if lo > 0.0 or hi < 0.0:
            return _M_TRUE
        if (lo == 0.0 and hi == 0.0) or math.isnan(lo):
            return _M_FALSE
        return _M_TRUE | _M_FALSE
    if tag == _T_STRING:
        return _M_TRUE | _M_FALSE
    if tag == _T_TERM and kind[a[3]] != KIND_LITERAL:
        return _M_ERROR
    return _M_ANY


@njit(cache=True)
def _comparison(op, a, b, kind):  # type: ignore[no-untyped-def]
    if op in (EQ, NE):
        mask = _equal(a, b, kind)
        if op == NE:
            mask = _not(mask)
        return mask
    if op == LT:
        yes = _O_LT
    elif op == LE:
        yes = _O_LT | _O_EQ
    elif op == GT:
        yes = _O_GT
    else:
        yes = _O_GT | _O_EQ
    return _outcome_mask(_order(a, b, kind), yes)


@njit(cache=True)
def _outcome_mask(order, yes):  # type: ignore[no-untyped-def]
    """The possible values of a comparison true on the outcomes ``yes``, false on the
    others (NaN's included), an error on an error."""
    mask = 0
    if order & yes:
        mask |= _M_TRUE
    if order & (_O_LT | _O_EQ | _O_GT | _O_UNORDERED) & ~yes:
        mask |= _M_FALSE
    if order & _O_ERROR:
        mask |= _M_ERROR
    return mask


@njit(cache=True)
def _not(mask):  # type: ignore[no-untyped-def]
    out = mask & _M_ERROR
    if mask & _M_TRUE:
        out |= _M_FALSE
    if mask & _M_FALSE:
        out |= _M_TRUE
    return out


@njit(cache=True)
def _logical(op, a, b):  # type: ignore[no-untyped-def]
    """``a && b`` or ``a || b`` over sets of values, by the truth table of §17.2."""
    win = _M_FALSE if op == AND else _M_TRUE
    lose = _M_TRUE if op == AND else _M_FALSE
    out = 0
    if a & win or b & win:
        out |= win
    if a & lose and b & lose:
        out |= lose
    if (a & lose and b & _M_ERROR) or (a & _M_ERROR and b & (lose | _M_ERROR)):
        out |= _M_ERROR
    return out


@njit(cache=True)
def _read(ints, floats, i):  # type: ignore[no-untyped-def]
    return _entry(
        ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3],
        floats[i, 0], floats[i, 1], floats[i, 2], floats[i, 3],
    )  # fmt: skip


@njit(cache=True)
def evaluate_with(ops, args, lo, hi, ids, kind, numeric, number, exact, ints, floats):  # type: ignore[no-untyped-def]
    """:func:`evaluate` of the program ``ops[lo:hi]`` (a kernel keeps many programs in
    one array and takes no view of it per row) with its stack given: ``ints``
    int64[hi - lo, 4] and ``floats`` float64[hi - lo, 4]."""
    return verdict_of(
        entry_with(ops, args, lo, hi, ids, kind, numeric, number, exact, ints, floats), kind
    )


@njit(cache=True)
def verdict_of(entry, kind):  # type: ignore[no-untyped-def]
    """A FILTER's answer on the value its program left (§17.2: only true keeps a row)."""
    mask = _ebv(entry, kind)
    if mask == _M_TRUE:
        return np.int8(TRUE)
    if mask & _M_TRUE:
        return np.int8(UNDECIDED)
    return np.int8(FALSE)


@njit(cache=True)
def compare_entries(op, a, b, kind):  # type: ignore[no-untyped-def]
    """The FILTER answer of comparison ``op`` (``EQ`` … ``GE``) on two values the
    subprograms of its operands left (§17.3's operator mapping, as the program's last op)."""
    return verdict_of(_boolean(_comparison(op, a, b, kind)), kind)


@njit(cache=True)
def entry_with(ops, args, lo, hi, ids, kind, numeric, number, exact, ints, floats):  # type: ignore[no-untyped-def]
    """The value (an 8-tuple entry: tag, mask, numeric type, term, two intervals) that the
    program or subprogram ``ops[lo:hi]`` leaves on its stack, for one row ``ids``."""
    top = 0
    for i in range(lo, hi):
        op = ops[i]
        if op <= BOUND:
            if op == PUSH_VAR:
                e = _load(np.int64(ids[args[i]]), kind, numeric, number, exact)
            elif op == PUSH_TERM:
                e = _load(np.int64(args[i]), kind, numeric, number, exact)
            elif op == PUSH_STRING:
                e = _entry(_T_STRING, 0, NOT_NUMERIC, args[i], 0.0, 0.0, 0.0, 0.0)
            elif op == PUSH_BOOL:
                e = _boolean(_M_TRUE if args[i] else _M_FALSE)
            elif op == PUSH_ERROR:
                e = _boolean(_M_ERROR)
            else:
                bound = args[i] >= 0 and ids[args[i]] >= 0
                e = _boolean(_M_TRUE if bound else _M_FALSE)
        elif op in (NEG, PLUS, NOT):
            top -= 1
            a = _read(ints, floats, top)
            e = _boolean(_not(_ebv(a, kind))) if op == NOT else _negate(a, op)
        else:
            top -= 2
            a = _read(ints, floats, top)
            b = _read(ints, floats, top + 1)
            if op in (AND, OR):
                e = _boolean(_logical(op, _ebv(a, kind), _ebv(b, kind)))
            elif op >= EQ:
                e = _boolean(_comparison(op, a, b, kind))
            elif a[0] == _T_UNKNOWN or b[0] == _T_UNKNOWN:
                e = _unknown()
            elif a[0] != _T_NUM or b[0] != _T_NUM:
                e = _boolean(_M_ERROR)  # arithmetic on a non-number (§17.3)
            else:
                e = _arithmetic(op, a, b)
        ints[top, 0] = e[0]
        ints[top, 1] = e[1]
        ints[top, 2] = e[2]
        ints[top, 3] = e[3]
        floats[top, 0] = e[4]
        floats[top, 1] = e[5]
        floats[top, 2] = e[6]
        floats[top, 3] = e[7]
        top += 1
    return _read(ints, floats, 0)


@njit(cache=True)
def evaluate(ops, args, ids, kind, numeric, number, exact):  # type: ignore[no-untyped-def]
    """The FILTER program ``ops``/``args`` on one row (``ids[slot]`` a term id, -1 unbound):
    :data:`TRUE`, :data:`FALSE` (false or an error, §17.2) or :data:`UNDECIDED`."""
    ints = np.empty((ops.shape[0], 4), dtype=np.int64)
    floats = np.empty((ops.shape[0], 4), dtype=np.float64)
    return evaluate_with(
        ops, args, 0, ops.shape[0], ids, kind, numeric, number, exact, ints, floats
    )


@njit(cache=True)
def _rows(ops, args, ids, kind, numeric, number, exact):  # type: ignore[no-untyped-def]
    out = np.empty(ids.shape[0], dtype=np.int8)
    ints = np.empty((ops.shape[0], 4), dtype=np.int64)
    floats = np.empty((ops.shape[0], 4), dtype=np.float64)
    for row in range(ids.shape[0]):
        out[row] = evaluate_with(
            ops, args, 0, ops.shape[0], ids[row], kind, numeric, number, exact, ints, floats
        )
    return out


def evaluate_rows(program: Program, ids: np.ndarray, values: TypedValues) -> np.ndarray:
    """:func:`evaluate` on each row of ``ids`` (int32[rows, slots]): int8 per row."""
    return _rows(  # type: ignore[no-any-return]
        program.ops,
        program.args,
        np.ascontiguousarray(ids, dtype=np.int32),
        values.kind,
        values.numeric,
        values.number,
        values.exact,
    )
