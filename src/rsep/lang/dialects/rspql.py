"""RSP-QL as the W3C RSP Community Group and RSP4J write it (``grammar/rspql.lark``).

Paper: RSP-QL Semantics, a Unifying Query Model to Explain Heterogeneity of RDF Stream
Processing Systems (seed 003). The query is (SE, SDS, ET, QF): named time-based sliding
windows (w, W(S)) with width α, slide β and origin t0 (Definitions 13 and 14), the WINDOW
graph pattern over a window's content, report policies that fix the evaluation times ET
("Evaluation time instants"), and the R2S operators RStream, IStream, DStream (Definitions
20-22) named after REGISTER.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rsep.lang.dialects import Cues, Default, StreamingDialect, keyword_cue


class RspQl(StreamingDialect):
    """``REGISTER RSTREAM <out> AS SELECT ... FROM NAMED WINDOW <w> ON <s> [RANGE PT10S STEP
    PT2S] WHERE { WINDOW <w> { ... } }``."""

    name = "rspql"
    title = "RSP-QL"
    grammar = "rspql.lark"
    keywords = frozenset(
        {"REGISTER", "RSTREAM", "ISTREAM", "DSTREAM", "STREAM", "WINDOW", "ON", "RANGE", "STEP"}
        | {"ELEMENTS", "ITEM"}
    )
    cues: ClassVar[Cues] = (
        keyword_cue("REGISTER", then=" ?(?:RSTREAM|ISTREAM|DSTREAM)(?![\\w-])"),
        keyword_cue("REGISTER STREAM", then=" ?(?:<>|[?$]|[\\w.-]*:)"),
        keyword_cue("FROM NAMED WINDOW"),
        keyword_cue("WINDOW", then=" ?(?:<>|[?$][\\w]+|[\\w.-]*:[\\w.-]*) ?\\{"),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        "window.t0": (
            "0",
            "Def. 13 makes t0 a window parameter; CSR-Bench runs every query with "
            "window.firstt0 = 0 (csrbench/config/srbench-queries.properties)",
        ),
        "window.present": (
            "latest",
            "the present window is the one with the most recent opening time, read up to "
            "now (section 'Time-based sliding window', after Def. 13)",
        ),
        "window.report": (
            "window_close,non_empty",
            "the policy of the paper's query Q^ex, P = WC ∧ NC (Example 10), also RSP4J's "
            "default (csrbench/aligned/csparqlsetup.properties)",
        ),
        "r2s": ("rstream", "Q^ex streams its answers out with Rstream (Example 10)"),
        "time_unit": (
            "ms",
            "the paper's instants are unit-less; ISO 8601 durations are exact and rsep's "
            "clock counts milliseconds (DESIGN.md, Data model)",
        ),
        "lateness": (
            "PT0S",
            "an RDF stream is in non-decreasing time order (Def. 9): no item arrives late",
        ),
        "strategy": (
            "skip_till_any",
            "a BGP is evaluated over the window's graph (Def. 18), so it joins any items "
            "of the window, adjacent or not",
        ),
        "selection": (
            "unrestricted",
            "every solution mapping over the window is kept (Def. 16 and 19, JOIN)",
        ),
        "consumption": (
            "none",
            "each evaluation reads the whole present window; nothing is consumed (Def. 24)",
        ),
        "timestamps": ("point", "a timestamped RDF statement carries one time instant (Def. 9)"),
        "profile": (
            "csparql",
            "window close and non-empty content with Rstream is the C-SPARQL engine profile "
            "(csrbench/config/csparql.properties)",
        ),
    }


DIALECT = RspQl()
