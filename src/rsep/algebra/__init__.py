"""The logical plan: every query of every dialect compiles into one :class:`Plan`.

Layers (DESIGN.md): ``rsep.lang`` reads text into an AST, which
:func:`~rsep.algebra.compile.compile_query` compiles into this plan; ``rsep.semantics`` (the
oracle) and ``rsep.engine`` evaluate it. The modules are the papers' nouns:

- :mod:`~rsep.algebra.window`: window functions (S2R) and the present-window rule;
- :mod:`~rsep.algebra.report`: report policies (SECRET's conditions);
- :mod:`~rsep.algebra.r2s`: streaming operators RStream, IStream, DStream;
- :mod:`~rsep.algebra.events`: the event algebra of RSEP-QL, EP-SPARQL, CQELS-CEP, SPAseq;
- :mod:`~rsep.algebra.nfa`: SPAseq's automaton, with Flink CEP's TAKE/IGNORE/PROCEED edges;
- :mod:`~rsep.algebra.params`: the operational parameters, each value with its source;
- :mod:`~rsep.algebra.plan`: the plan and ``explain``;
- :mod:`~rsep.algebra.passes`: rewrites, pure functions from plan to plan;
- :mod:`~rsep.algebra.compile`: the AST of any dialect to the plan, parameters in layers.
"""

from __future__ import annotations

from rsep.algebra.nfa import Nfa, compile_nfa
from rsep.algebra.params import PARAMETERS, Param, ParameterError, Parameters, Source
from rsep.algebra.plan import Plan, explain
from rsep.algebra.r2s import R2S
from rsep.algebra.report import ReportPolicy

__all__ = [
    "PARAMETERS",
    "R2S",
    "Nfa",
    "Param",
    "ParameterError",
    "Parameters",
    "Plan",
    "ReportPolicy",
    "Source",
    "compile_nfa",
    "explain",
]
