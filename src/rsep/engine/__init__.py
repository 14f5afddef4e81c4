"""The engine: incremental operators in plain Python (no Spark import), fed one batch of
events at a time (DESIGN.md, ``rsep.engine``).

It runs inside Spark tasks (``rsep.spark``) and stand-alone in one process (``rsep run
--engine local``). It shares only the plan (``rsep.algebra``) and ``rsep.rdf`` with the
oracle (``rsep.semantics``), so that comparing the two is meaningful: every plan the engine
runs must give the oracle's answers (``tests/engine``, differential tests).

- :mod:`~rsep.engine.query`: :class:`IncrementalQuery`, what every incremental evaluator
  offers (``push`` events, ``advance`` the watermark, ``finish``), and
  :func:`incremental_query`, which picks the evaluator of a plan;
- :mod:`~rsep.engine.sequence` (``SequenceQuery``), :mod:`~rsep.engine.automaton`,
  :mod:`~rsep.engine.pattern` and :mod:`~rsep.engine.projection`: SPAseq sequences on the
  columnar engine (GPMs as joins over batches, the NFA as a compiled kernel), and the query
  form and streaming operator of their answers;
- :mod:`~rsep.engine.window`, :mod:`~rsep.engine.report`, :mod:`~rsep.engine.continuous`
  (``ContinuousWindowQuery``): RSP-QL graph patterns over incremental window state;
- :mod:`~rsep.engine.rsepql` (``RsepqlQuery``): RSEP-QL MATCH, its selection and
  consumption policies, on the window state;
- :mod:`~rsep.engine.event_operators`: event mappings in columns and the operators event
  patterns are evaluated with (compatible joins, the order ``≺``, sets of mappings);
- :mod:`~rsep.engine.epsparql` (``EpsparqlQuery``): EP-SPARQL's interval operators over
  triple occurrences in columns, and the Q-closure of CONSTRUCT rules (results fed back as
  input);
- :mod:`~rsep.engine.cqelscep` (``CqelscepQuery``): CQELS-CEP windows on interval streams
  and its sequence operators on the event operators, nested paths over the background
  graph.
"""

from __future__ import annotations

from rsep.engine.query import IncrementalQuery, incremental_query

__all__ = ["IncrementalQuery", "incremental_query"]
