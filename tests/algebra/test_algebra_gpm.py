"""rsep.algebra.gpm: a GPM's pattern read as triple patterns and FILTERs, and the GPMs that
have no solution on an event alone (SPAseq choice 9: they give no PARTITION BY key)."""

from __future__ import annotations

import pytest

from rsep.algebra.compile import compile_query
from rsep.algebra.events import Gpm
from rsep.algebra.gpm import event_part, group_of, never_true, no_key_alone
from rsep.lang import get_dialect, parse_query
from rsep.workloads.baselines import VShape, vshape_query

EX = "http://example.org/"


def gpm_of(body: str) -> Gpm:
    """The GPM ``body``, second step of a partitioned SPAseq query."""
    text = (
        f"PREFIX ex: <{EX}>\nSELECT * WITHIN 10 SECONDS PARTITION BY (?k)\n"
        f"FROM STREAM S1 <{EX}s1>\n"
        f"WHERE SEQ (A; B) {{\n  DEFINE GPM A ON S1 {{ ?k ex:price ?p0 . }}\n"
        f"  DEFINE GPM B ON S1 {{ {body} }}\n}}\n"
    )
    plan = compile_query(parse_query(text, "spaseq"), get_dialect("spaseq"))
    return next(n for n in plan.r2r.walk() if isinstance(n, Gpm) and n.name == "B")


def test_the_event_part_is_triple_patterns_and_filters() -> None:
    found = event_part(gpm_of("?k ex:price ?p . [] ex:volume ?k . FILTER (?p > 1)"))
    assert not isinstance(found, str)
    patterns, filters = found
    assert patterns == (
        ("?k", f"<{EX}price>", "?p"),
        ("?_:e:#0", f"<{EX}volume>", "?k"),
    )
    assert len(filters) == 1


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("?k ex:price ?p . ex:a ex:knows/ex:knows ?k .", "a property path"),
        ("?k ex:price ?p . OPTIONAL { ?k ex:name ?n }", "not a basic graph pattern"),
        ('?k ex:name "a" .', "an object that is not a variable or IRI"),
    ],
)
def test_what_is_not_a_basic_graph_pattern_says_why(body: str, why: str) -> None:
    found = event_part(gpm_of(body))
    assert isinstance(found, str) and found.startswith(why), found


@pytest.mark.parametrize(
    ("body", "alone"),
    [
        ("?k ex:price ?p .", True),
        ("?k ex:price ?p . FILTER (?p > 1)", True),
        ("?k ex:price ?p . FILTER (?p < ?q * 0.998)", False),  # V shape's B
        ("?k ex:price ?p . FILTER (!(?q = 1) && ?p > 0)", False),
        ("?k ex:price ?p . FILTER (-?q < 1 || ?q + ?p > 2)", False),
        ("?k ex:price ?p . FILTER (?p < ?q || ?p > 0)", True),  # true when ?p > 0
        ("?k ex:price ?p . FILTER (BOUND(?q) || ?p > 0)", True),
        ("?k ex:price ?p . FILTER (COALESCE(?q, 1) = 1)", True),
        # a FILTER outside a basic graph pattern is not judged: it may hold
        ("?k ex:price ?p . OPTIONAL { ?k ex:name ?q } FILTER (?q > 1)", True),
    ],
)
def test_no_key_alone_when_a_filter_needs_an_earlier_variable(body: str, alone: bool) -> None:
    """SPARQL 1.1 sec. 17.2: an unbound variable is an error, so is an operator over one;
    ``||`` is an error only when both sides are, ``&&`` false when either is."""
    found = no_key_alone(gpm_of(body))
    assert (found is None) is alone, found


def test_never_true_follows_the_error_rules() -> None:
    where = group_of("{ FILTER (?a > 1 && (?b || ?c)) }")
    assert where is not None
    (expr,) = [e.expr for e in where.elements]  # type: ignore[attr-defined]
    assert never_true(expr, frozenset({"a"}))
    assert not never_true(expr, frozenset({"b"}))
    assert never_true(expr, frozenset({"b", "c"}))


def test_only_the_first_step_of_the_vshape_gives_keys() -> None:
    """V shape (SPAseq UC4): B and C compare prices with A's, so alone they match nothing."""
    text = vshape_query(VShape(steps=4))
    plan = compile_query(parse_query(text, "spaseq"), get_dialect("spaseq"))
    gpms = {n.name: n for n in plan.r2r.walk() if isinstance(n, Gpm)}
    assert {name: no_key_alone(gpm) is None for name, gpm in gpms.items()} == {
        "A": True,
        "B": False,
        "C": False,
        "D": False,
    }
