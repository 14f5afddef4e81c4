"""The oracle: evaluates a plan over finite streams exactly as the papers define it.

The oracle is literal and slow on purpose; the engine (``rsep.engine``) must agree with it.
It owns time and leaves SPARQL over one RDF graph to pyoxigraph (DESIGN.md). The modules
follow the papers' nouns:

- :mod:`~rsep.semantics.graph`: static and time-varying graphs (RSP-QL Def. 10, RSEP-QL
  Def. 2) and the TriG file format of a time-varying graph;
- :mod:`~rsep.semantics.window`: the content ``W(S, t)`` of a window function, its snapshot
  graph, and the window-close and periodic conditions (RSP-QL Def. 12-13, 23; RSEP-QL
  Def. 3, Sect. 3.2, 4.1);
- :mod:`~rsep.semantics.dataset`: the RSP-QL dataset bound to data, and its instantaneous
  dataset as a pyoxigraph store (RSP-QL Def. 14, 18; RSEP-QL Def. 4);
- :mod:`~rsep.semantics.report`: the evaluation instants ET from the report policies
  (RSP-QL Def. 23);
- :mod:`~rsep.semantics.evaluate`: the continuous evaluation (RSP-QL Def. 17-24).

Public API: :func:`evaluate` (results in time order) and :class:`ContinuousQuery` (each
step on its own: ``eval`` at an instant, ``evaluation_instants``, ``answers``).
"""

from __future__ import annotations

from rsep.semantics.dataset import UNNAMED_WINDOW, StreamingDataset, unnamed_window
from rsep.semantics.evaluate import Answer, ContinuousQuery, evaluate
from rsep.semantics.graph import (
    Graph,
    Snapshot,
    TimeVaryingGraph,
    read_graph,
    read_time_varying_graph,
)
from rsep.semantics.report import TimeRange, evaluation_instants, time_range

__all__ = [
    "UNNAMED_WINDOW",
    "Answer",
    "ContinuousQuery",
    "Graph",
    "Snapshot",
    "StreamingDataset",
    "TimeRange",
    "TimeVaryingGraph",
    "evaluate",
    "evaluation_instants",
    "read_graph",
    "read_time_varying_graph",
    "time_range",
    "unnamed_window",
]
