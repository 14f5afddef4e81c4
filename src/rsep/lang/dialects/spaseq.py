"""SPAseq (``grammar/spaseq.lark``): sequences of graph-pattern matches over named streams.

Paper: A Query Language for Semantic Complex Event Processing: Syntax, Semantics and
Implementation (seed 004). Sect. 4.2, Definition 4 and Query 1: ``SELECT ... WITHIN 30
MINUTES FROM STREAM S1 <iri> WHERE { SEQ (A; B+, C) DEFINE GPM A ON S1 {...} ... }`` with
the selection strategies ',' (strict contiguity), ';' (skip till next) and ':' (skip till
any) written per operator, Kleene '+', conjunction '&', disjunction '|', and (Appendix B)
negation '!' and optional '?'; GPMs may enrich events with ``GRAPH <kb> {...}``. The engine
grammar (shared/data/spaseq/grammar) writes ``WHERE SEQ (...) { DEFINE GPM ... }`` and
``PARTITION BY (?x)``; both forms are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rsep.lang.dialects import Cues, Default, StreamingDialect, keyword_cue


class Spaseq(StreamingDialect):
    """``SELECT ... WITHIN 10 SECONDS FROM STREAM S1 <s> WHERE SEQ (A; B) { DEFINE GPM ... }``."""

    name = "spaseq"
    title = "SPAseq"
    grammar = "spaseq.lark"
    keywords = frozenset(
        {"WITHIN", "SECONDS", "MINUTES", "HOURS", "PARTITION", "BY", "STREAM", "SEQ"}
        | {"DEFINE", "GPM", "ON"}
    )
    cues: ClassVar[Cues] = (
        keyword_cue("DEFINE GPM"),
        keyword_cue("WITHIN", then=r" \d+ (?:SECONDS|MINUTES|HOURS)\b"),
        keyword_cue("FROM STREAM", then=r" [A-Za-z_]\w* ?<>"),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        "window.t0": (
            "0",
            "WITHIN bounds each match, not a window over the stream (Definition 4, ω); no "
            "origin is involved",
        ),
        "window.present": (
            "latest",
            "a match's events lie within ω of each other (Sect. 4.2.4, Definition 16); there "
            "is no window to choose",
        ),
        "window.report": (
            "content_change",
            "a match is output when its last event arrives (Sect. 6, the NFA's final state)",
        ),
        "r2s": ("istream", "each match is reported once, when it completes (Sect. 6)"),
        "time_unit": (
            "ms",
            "WITHIN counts SECONDS, MINUTES or HOURS; event timestamps are rsep's clock",
        ),
        "lateness": ("PT0S", "a graph event stream is read in timestamp order (Definition 2)"),
        "strategy": (
            "per_operator",
            "each operator names its own: ',' strict, ';' skip till next, ':' skip till any "
            "(Sect. 4.2.2 and 5.3)",
        ),
        "selection": (
            "unrestricted",
            "which events a match takes is fixed by the operators' strategies (Sect. 5.3)",
        ),
        "consumption": (
            "none",
            "an event may take part in several matches (Sect. 6, the NFA runs share events)",
        ),
        "timestamps": ("point", "an RDF graph event is a pair (τ, G) (Definition 1)"),
        "profile": (
            "cqels",
            "event-driven output with Istream is the CQELS engine profile "
            "(csrbench/config/cqels.properties)",
        ),
    }


DIALECT = Spaseq()
