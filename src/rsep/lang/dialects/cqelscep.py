"""CQELS-CEP (``grammar/cqelscep.lark``): CQELS-QL with sequences and nested paths.

Paper: Towards Enriching CQELS with Complex Event Processing and Path Navigation (seed
001). Its queries declare windows the RSP-QL way with CQELS durations (``FROM NAMED WINDOW
:W ON ex:s [RANGE 10m]``, ``WINDOW :W {...}``, Sect. 2.2, Example 4) and add, Sect. 3.1, the
sequence ``SEQ ({...}, {...}, !{...})`` of triples templates (or of window names) with at
most one negated element (SEQ WITHOUT, Sect. 2.4), and nSPARQL's nested regular expressions
in property paths (``elt ::= elt [elt]``, Sect. 2.3): ``?s (^:beg/[:means :subway]/:end)+
:c``, and the axes ``self``, ``next``, ``edge``, ``node`` with inverses ``next-1``.
Timestamps are intervals [t1, t2] (Sect. 3 and footnote 3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rsep.lang.dialects import Cues, Default, cue, keyword_cue
from rsep.lang.dialects.cqels import Cqels
from rsep.lang.dialects.rspql import RspQl

_CQELS = Cqels.defaults.items()


class CqelsCep(Cqels, RspQl):
    """CQELS-QL and RSP-QL window declarations, plus ``SEQ (...)`` and nested paths."""

    name = "cqelscep"
    title = "CQELS-CEP"
    grammar = "cqelscep.lark"
    keywords = Cqels.keywords | RspQl.keywords | frozenset({"SEQ", "self", "next", "edge", "node"})
    cues: ClassVar[Cues] = (
        keyword_cue("SEQ", then=r" ?\( ?!? ?\{"),
        keyword_cue("SEQ", then=r" ?\([^()]*, ?! ?[{<:?$\w]"),
        cue(r"/ ?\[|\] ?/"),
        cue(r"(?<![\w:?$-])(?:self|next|edge|node)(?:\^?-1)?::"),
        keyword_cue("FROM NAMED WINDOW", then=r"[^\[\]]*\[ ?RANGE \d+(?:\.\d+)?(?:ms|s|m|h|d)\b"),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        **{name: (value, f"as CQELS-QL: {why}") for name, (value, why) in _CQELS},
        "strategy": (
            "skip_till_any",
            "SEQ(A1, ..., An) holds if some t1 < ... < tn match, whatever lies between "
            "(Sect. 2.4, after SASE)",
        ),
        "selection": (
            "unrestricted",
            "SEQ on mappings with intervals joins every compatible ordered pair (Sect. 3.3, "
            "Eq. (1)-(17))",
        ),
        "consumption": ("none", "the paper defines no consumption; windows evict (Sect. 3.3)"),
        "timestamps": (
            "interval",
            "mappings carry intervals [t1, t2]; atomic events have [t, t] (Sect. 3, footnote 3)",
        ),
    }


DIALECT = CqelsCep()
