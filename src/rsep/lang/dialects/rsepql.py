"""RSEP-QL: RSP-QL with event patterns (``grammar/rsepql.lark``, on top of RSP-QL's).

Paper: A Query Model to Capture Event Pattern Matching in RDF Stream Processing Query
Languages (seed 000). The paper gives an algebra, not a concrete syntax; rsep's syntax is
documented in docs/languages.md and ``rsepql.lark``: ``MATCH [SELECTION s CONSUMPTION c] (E)``
is a graph pattern (the event graph pattern, Sect. 3.3) over basic event patterns ``EVENT
w { BGP }``, ``FIRST E``, ``LAST E`` and ``E1 SEQ E2``; landmark and interval windows (Sect.
3.1) are written ``[LANDMARK T0 t]`` and ``[FROM t1 TO t2]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rsep.lang.dialects import Cues, Default, keyword_cue
from rsep.lang.dialects.rspql import RspQl

_RSPQL = RspQl.defaults.items()


class RsepQl(RspQl):
    """RSP-QL plus ``MATCH [...] ( EVENT <w1> {...} SEQ FIRST EVENT <w2> {...} )``."""

    name = "rsepql"
    title = "RSEP-QL"
    grammar = "rsepql.lark"
    keywords = RspQl.keywords | frozenset(
        {"MATCH", "EVENT", "FIRST", "LAST", "SEQ", "SELECTION", "CONSUMPTION", "LANDMARK"}
    )
    cues: ClassVar[Cues] = (
        keyword_cue("MATCH", then=r" ?[\[(]"),
        keyword_cue("EVENT", then=r" ?(?:<>|[?$]\w|[\w.-]*:)"),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        **{name: (value, f"as RSP-QL (seed 003): {why}") for name, (value, why) in _RSPQL},
        "window.report": (
            "window_close,non_empty",
            "ET is left to report policies (Def. 5 and the text after it); rsep keeps "
            "RSP-QL's, on which RSEP-QL builds (Sect. 3)",
        ),
        "strategy": (
            "skip_till_any",
            "E1 SEQ E2 pairs a match of E2 with every compatible earlier match of E1, "
            "whatever lies between them (Eq. (7), Sect. 4.2)",
        ),
        "selection": (
            "unrestricted",
            "plain SEQ takes all possible matches, EP-SPARQL's unrestricted setting "
            "(Sect. 4.3, first paragraph; Table 1)",
        ),
        "consumption": (
            "none",
            "the unrestricted policy P^u returns the full input at every evaluation "
            "(Sect. 4.4, Def. 10)",
        ),
        "timestamps": (
            "point",
            "a stream item is a timestamped graph (G, t) (Def. 1); event mappings (μ, t1, t2) "
            "are derived, not input",
        ),
    }


DIALECT = RsepQl()
