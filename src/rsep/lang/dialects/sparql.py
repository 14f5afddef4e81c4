"""Plain SPARQL 1.1 Query, the fallback of detection (no streaming cue in the text).

rsep reads it with ``stream.lark`` too, so a plain query may carry ``PRAGMA`` clauses. Over a
stream it runs as an RSP-QL query whose default graph is the whole input (RSP-QL Semantics
(003): SPARQL operators keep their meaning over instantaneous graphs, "Time-varying
collections of solution mappings"); its defaults are therefore RSP-QL's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rsep.lang.dialects import Default, StreamingDialect
from rsep.lang.dialects.rspql import RspQl


class Sparql(StreamingDialect):
    """SPARQL 1.1 Query (the W3C grammar of ``sparql.lark``), plus ``PRAGMA``."""

    name = "sparql"
    title = "SPARQL 1.1"
    defaults: ClassVar[Mapping[str, Default]] = {
        name: (value, f"as RSP-QL: {why}") for name, (value, why) in RspQl.defaults.items()
    }


DIALECT = Sparql()
