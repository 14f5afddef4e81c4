"""Terms in N-Triples syntax (rsep.rdf.terms)."""

from __future__ import annotations

import pytest

from rsep.rdf.terms import parse_term, parse_terms


def test_parse_terms_reads_many_terms_in_order() -> None:
    """``parse_terms`` is ``parse_term`` over a list, read as one document."""
    texts = ["<http://a>", '"1"^^<http://www.w3.org/2001/XMLSchema#integer>', '"x"@en', "_:b"]
    assert [str(t) for t in parse_terms(texts)] == [str(parse_term(t)) for t in texts]
    assert parse_terms([]) == []


def test_parse_terms_refuses_what_is_not_one_term() -> None:
    with pytest.raises(SyntaxError):
        parse_terms(["<http://a>", "not a term"])
