"""EP-SPARQL (``grammar/epsparql.lark``): temporal joins of graph patterns.

Paper: EP-SPARQL: A Unified Language for Event Processing and Stream Reasoning (seed 002).
Sect. 4.1: SPARQL with the binary operators SEQ, EQUALS, OPTIONALSEQ and EQUALSOPTIONAL
between group graph patterns (like UNION), the filter functions getDURATION(),
getSTARTTIME() and getENDTIME(), and CONSTRUCT rules whose output re-enters the stream.
Sect. 4.2: triples occur over intervals [t, t'], answers are reported as soon as detected
(timewise monotonicity). ETALIS's Prolog-flavoured forms (bare names, ``is``, ``DO (...)``,
``WITHIN n``, ``aggregate(...)``) are read as well (see ``epsparql.lark``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from lark import Token, Tree

from rsep.lang.dialects import Cues, Default, StreamingDialect, cue, keyword_cue
from rsep.lang.parser import QuerySyntaxError

_OPERATOR = r"(?:SEQ|EQUALS|OPTIONALSEQ|EQUALSOPTIONAL)(?![\w-])"
_PROJECTIONS = frozenset({"var", "select_expression", "bare_select_expression"})


class EpSparql(StreamingDialect):
    """``SELECT ?c WHERE { ?c :p ?x } SEQ { ?c :p ?y } FILTER (getDURATION() < "P30D"^^...)``."""

    name = "epsparql"
    title = "EP-SPARQL"
    grammar = "epsparql.lark"
    keywords = frozenset(
        {"SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL"}
        | {"getDURATION", "getSTARTTIME", "getENDTIME", "DO", "WITHIN", "IS", "AGGREGATE"}
    )
    cues: ClassVar[Cues] = (
        cue(rf"\}} ?{_OPERATOR} ?\{{"),
        # any other upper-case word between two groups reads as a temporal operator, so a
        # misspelt one (the paper's SEQUENTIONAL) is reported against EP-SPARQL's list
        cue(r"\} ?(?!(?:UNION|OPTIONAL|MINUS|GRAPH|SERVICE|WHERE|EXISTS)\b)[A-Z]{3,} ?\{", 0),
        keyword_cue("OPTIONALSEQ"),
        keyword_cue("EQUALSOPTIONAL"),
        keyword_cue("getDURATION", then=r" ?\("),
        keyword_cue("getSTARTTIME", then=r" ?\("),
        keyword_cue("getENDTIME", then=r" ?\("),
        # ETALIS forms: CONSTRUCT without braces, DO (...), a trailing WITHIN n, and a
        # triple pattern whose predicate is a bare Prolog atom
        keyword_cue("CONSTRUCT", then=r" (?!WHERE\b)[?$]"),
        cue(r"\} ?DO ?\("),
        cue(r"\} ?WITHIN \d+ ?$"),
        cue(r"[{.] ?[?$]\w+ (?!a )[a-z]\w* [?$\w]", 0),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        "window.t0": (
            "0",
            "EP-SPARQL has no windows: patterns range over the whole stream, a landmark "
            "window from the start (RSEP-QL paper, Table 1: W^λ)",
        ),
        "window.present": (
            "latest",
            "the landmark window (t0, now] is the only window (RSEP-QL paper, Sect. 3.1)",
        ),
        "window.report": (
            "content_change",
            "results are output as soon as detected (Sect. 4.2, timewise monotonicity); "
            "RSEP-QL paper, Sect. 3.4: EP-SPARQL is regulated by content change",
        ),
        "r2s": (
            "istream",
            "each answer is reported once, when it is detected, and never invalidated "
            "(Sect. 4.2, timewise monotonicity)",
        ),
        "time_unit": (
            "s",
            "the paper fixes no unit; ETALIS stamps events with datime terms whose finest "
            "field is the second, and reads WITHIN n (etalis ep_sparql_12) in it",
        ),
        "lateness": ("PT0S", "triples enter in the order of their time stamps (Sect. 4.2)"),
        "strategy": (
            "skip_till_any",
            "SeqJoin joins every compatible pair with t_ω < t'_α, whatever lies between "
            "(Sect. 4.2)",
        ),
        "selection": (
            "unrestricted",
            "the formal semantics (Sect. 4.2) is EP-SPARQL's unrestricted setting (RSEP-QL "
            "paper, Sect. 4.3 and Table 1)",
        ),
        "consumption": (
            "none",
            "unrestricted: no input is consumed (RSEP-QL paper, Sect. 4.4, P^u)",
        ),
        "timestamps": (
            "interval",
            "a triple occurrence is <<s, p, o>, t, t'> with an interval [t, t'] (Sect. 4.2)",
        ),
        "profile": (
            "cqels",
            "content change with Istream is the CQELS engine profile "
            "(csrbench/config/cqels.properties)",
        ),
    }

    def validate(self, tree: Tree[Token], text: str) -> None:
        """A projection is a variable or ``expression AS ?var``, with or without parentheses
        (Sect. 4.1 and the SPARQL 1.1 SELECT clause): the grammar reads any expression there
        to stay LALR(1), so a bare expression without AS is rejected here."""
        for clause in tree.find_data("select_clause"):
            for item in clause.children:
                if isinstance(item, Tree) and item.data not in _PROJECTIONS:
                    raise _missing_as(item, text)


def _missing_as(item: Tree[Token], text: str) -> QuerySyntaxError:
    """The error for a projected expression without ``AS ?var``, pointing at its end."""
    meta = item.meta
    found = text[meta.start_pos : meta.end_pos]
    found = repr(found if len(found) <= 30 else found[:29] + "…")
    lines = text.split("\n")
    line = lines[meta.end_line - 1] if meta.end_line <= len(lines) else ""
    return QuerySyntaxError(meta.end_line, meta.end_column, found, ["AS"], line.rstrip("\r"))


DIALECT = EpSparql()
