"""The acceptance examples of the oracle issues, taken from the tests that already run them
on the in-process engine (tests/engine, tests/examples/test_spaseq_use_cases.py), so that
Spark's batch replay and live queries get exactly the same plans, events and graphs.

Those tests build their examples inline (a plan per call), so no table can be imported:
:func:`collect` runs each acceptance test with its engine runner (``run_engine``,
``engine``, ``run_both``) replaced by a recorder that notes what the engine is given and
answers with the oracle's results, so the tests' own assertions check the oracle against
the papers' numbers on the way, and an engine bug cannot stop the recording (the engine
tests report it). Every example is a plan alone: RSEP-QL's input unit is the plan's
parameter ``input_unit``, and the CONSTRUCT rules of other EP-SPARQL queries are the plan's
``rules``.
"""

from __future__ import annotations

import inspect
import itertools
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import NamedNode, Triple

from rsep.algebra.plan import Plan
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.formats import write_events
from rsep.rdf.results import Result
from rsep.semantics import ContinuousQuery, evaluate

TESTS = Path(__file__).resolve().parents[1]
for _folder in ("engine", "semantics", "examples"):
    if str(TESTS / _folder) not in sys.path:
        sys.path.insert(0, str(TESTS / _folder))

from driving import canonical  # noqa: E402

CLOCK = "http://example.org/acceptance/clock"
"""The stream of the clock event that moves a live query's watermark past the last event
(a stream no window reads)."""

LANGUAGES = ("rsepql", "epsparql", "cqelscep", "spaseq")

ACCEPTANCE: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "rsepql": (
        "test_engine_rsepql",
        "run_engine",
        (
            "test_examples_8_and_9_seq_is_a_bag",
            "test_example_10_selection_policies",
            "test_example_11_chronological_consumption",
            "test_figure_1_selection_policies",
            "test_figure_1_consumption_across_instants",
            "test_consumption_of_triples_that_arrive_again",
            "test_csparql_window_and_table_1",
            "test_first_and_last",
            "test_selection_from_the_parameters",
            "test_match_joined_with_a_graph_pattern",
            "test_event_pattern_over_two_streams",
            "test_compiled_example_4",
            "test_query_forms",
        ),
    ),
    "epsparql": (
        "test_engine_epsparql",
        "engine",
        (
            "test_paper_queries",
            "test_query_1_with_the_condition_of_rule_13",
            "test_query_2_over_the_closure_of_query_4",
            "test_query_5_running_count_and_sum",
            "test_query_6_over_the_closure_of_query_5",
            "test_etalis",
            "test_etalis_ep_sparql_07_recursion_through_the_stream",
            "test_etalis_ep_sparql_12_and_consumption_policies",
        ),
    ),
    "cqelscep": (
        "test_engine_cqelscep",
        "engine",
        (
            "test_example_9_the_vienna_query_returns_m_at_16",
            "test_an_arrival_between_delay_and_now_cancels_the_report",
            "test_the_vienna_query_under_rstream_repeats_until_the_window_forgets",
            "test_nested_path_filter_in_the_background",
            "test_cases_3_to_8_sequences_of_window_specifications",
            "test_cases_10_to_15_sequences_of_graph_patterns",
            "test_case_2_a_seq_window_joined_with_another_window",
            "test_case_17_and_case_1_background_join_and_projection",
            "test_interval_items_as_input",
            "test_or_and_join_nodes_of_the_plan",
        ),
    ),
    "spaseq": (
        "test_sequence_oracle",
        "engine",
        (
            "test_shipped_folders",
            "test_folder_external_knowledge_base",
            "test_folder_credit_card_repaired",
            "test_folder_conjunction_repaired",
            "test_paper_examples",
            "test_figure_1_strategies",
            "test_oracle_choices",
            "test_sets_of_mappings_and_later_bindings",
            "test_partition_by_keys_contiguity",
            "test_query_forms_and_streaming_operators",
            "test_literals_compare_as_the_oracle_substitutes_them",
        ),
    ),
}
"""Per language: the engine test module, the runner its acceptance tests call, and those
tests (their docstrings name the paper's examples; the differential and contract tests are
not examples). tests/engine/test_sequence_oracle.py's ``test_partition_found_late_is_not_causal``
is left out: it pins a documented difference from the oracle (SPAseq choice 9)."""

USE_CASES = (
    "test_uc1_smart_grid",
    "test_uc3_credit_card_big_after_small",
    "test_uc4_stock_v_shape",
    "test_uc4_stock_head_and_shoulders",
    "test_uc5_traffic_congestion_propagation",
)
"""SPAseq's use cases (tests/examples/test_spaseq_use_cases.py), through ``run_both``."""

SLOW_ORACLE = {
    "test_etalis_ep_sparql_07_recursion_through_the_stream": (
        "the oracle takes half a minute; its engine test pins the closure (prices 2 … 999)"
    )
}
"""Examples whose reference is the in-process engine's results, which their test compares
with results derived by hand, instead of the oracle's."""


@dataclass(frozen=True)
class Example:
    """One acceptance example: the plan, its events and graphs as the engine test gives
    them; ``pinned`` are the results its test pins when the oracle is too slow to run
    here."""

    language: str
    source: str
    plan: Plan
    events: tuple[Event, ...]
    graphs: Mapping[str, frozenset[Triple]] = field(default_factory=dict)
    pinned: tuple[str, ...] | None = None

    def streams(self) -> StreamSet:
        """The events as the oracle reads them: every stream a window reads (empty ones
        too), each ordered by start."""
        names = {w.stream for w in self.plan.dataset.windows} | {e.stream for e in self.events}
        return StreamSet(
            Stream(s, tuple(sorted((e for e in self.events if e.stream == s), key=_start)))
            for s in sorted(names)
        )

    def expected(self, until: int | None = None) -> list[str]:
        """The oracle's results up to ``until`` (default: the end of its time range),
        canonical; the pinned ones for a slow oracle."""
        if self.pinned is not None:
            return list(self.pinned)
        return canonical(evaluate(self.plan, self.streams(), dict(self.graphs), until))

    def end(self) -> int:
        """The last instant the oracle evaluates by default (every answer is at or
        before it)."""
        if self.pinned is not None:
            return max((e.t_end for e in self.events), default=0)
        instants = ContinuousQuery(self.plan, self.streams(), dict(self.graphs))
        found = instants.evaluation_instants()
        return max([*found, *(e.t_end for e in self.events)], default=0)

    def key(self) -> tuple[Any, ...]:
        """What makes two recorded examples one."""
        graphs = tuple(sorted((k, frozenset(v)) for k, v in self.graphs.items()))
        return repr(self.plan), self.events, graphs


def _start(event: Event) -> int:
    return event.t_start


# Recording the engine tests ---------------------------------------------------------------


def collect(
    language: str,
    fixtures: Mapping[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    only: Collection[str] | None = None,
) -> list[Example]:
    """Every example ``language``'s acceptance tests give the engine (only the tests named
    in ``only``, if given), once each, in the order met (module docstring); ``fixtures``
    are the values of the pytest fixtures the tests take (``shared_data``, ``tmp_path``,
    ``spark``)."""
    module_name, runner, names = ACCEPTANCE[language]
    names = tuple(n for n in names if only is None or n in only)
    module = __import__(module_name)
    found: list[Example] = []
    original = getattr(module, runner)
    current = {"source": ""}

    def recorder(*args: Any, **kwargs: Any) -> Any:
        source = current["source"]
        bound = _bind(language, args, kwargs)
        if source.split("[")[0] in SLOW_ORACLE:
            out = original(*args, **kwargs)
            found.append(_recorded(language, source, bound, tuple(out)))
            return out
        found.append(_recorded(language, source, bound, None))
        return _oracle_answer(module, language, bound)

    with monkeypatch.context() as patch:
        patch.setattr(module, runner, recorder)
        for name in names:
            for label, kwargs in calls(getattr(module, name), fixtures):
                current["source"] = label
                getattr(module, name)(**kwargs)
    if language == "spaseq":
        found += use_cases(fixtures, monkeypatch, only)
    return unique(found)


def _recorded(
    language: str, source: str, bound: Mapping[str, Any], pinned: tuple[str, ...] | None
) -> Example:
    """The example of one runner call (``bound``: its arguments by name)."""
    plan: Plan = bound["plan"]
    graphs = dict(bound.get("graphs") or {})
    if language == "rsepql":
        events = tuple(StreamSet(bound["streams"]).events())
    else:
        events = tuple(bound["events"])
    return Example(language, source, plan, events, graphs, pinned)


def _oracle_answer(module: Any, language: str, bound: Mapping[str, Any]) -> Any:
    """What the runner returns, from the oracle instead of the engine (the test then
    checks the oracle against the paper's numbers, and an engine bug cannot stop the
    recording): each runner's return type, as its module computes the oracle's."""
    plan, graphs = bound["plan"], bound.get("graphs")
    if language == "rsepql":
        options = {k: bound[k] for k in ("start", "until") if k in bound}
        return module.run_oracle(plan, bound["streams"], graphs, **options), None
    if language == "epsparql":
        return module.oracle(plan, bound["events"])
    if language == "cqelscep":
        return list(evaluate(plan, module.streamset(plan, bound["events"]), graphs))
    return list(evaluate(plan, StreamSet.from_events(bound["events"]), graphs))


_SIGNATURES = {
    "rsepql": ("plan", "streams", "graphs", "driver"),
    "epsparql": ("plan", "events", "driver"),
    "cqelscep": ("plan", "events", "graphs", "driver"),
    "spaseq": ("plan", "events", "graphs", "driver"),
}


def _bind(language: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """A runner's arguments by name."""
    bound = dict(zip(_SIGNATURES[language], args, strict=False))
    bound.update(kwargs)
    return bound


def calls(
    function: Callable[..., Any], fixtures: Mapping[str, Any]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each call pytest makes of ``function``: the product of its ``parametrize`` marks,
    with the fixtures it takes; labelled as pytest's ids would be, by position."""
    marks = [m for m in getattr(function, "pytestmark", []) if m.name == "parametrize"]
    axes: list[list[tuple[str, dict[str, Any]]]] = []
    for mark in marks:
        names = mark.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        axis = []
        for index, value in enumerate(mark.args[1]):
            values = value.values if _is_set(value) else value if len(names) > 1 else (value,)
            label = "-".join(_label(v, n, index) for n, v in zip(names, values, strict=True))
            axis.append((label, dict(zip(names, values, strict=True))))
        axes.append(axis)
    wanted = inspect.signature(function).parameters
    for combination in itertools.product(*axes):
        kwargs = {k: v for k, v in fixtures.items() if k in wanted}
        for _, values in combination:
            kwargs.update(values)
        label = "-".join(index for index, _ in combination)
        yield (f"{function.__name__}[{label}]" if label else function.__name__), kwargs


def _label(value: Any, name: str, index: int) -> str:
    """A parameter's part of a test id, as pytest writes it: the value when it is a plain
    string, number or enum, else the parameter's name and position."""
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, str | int | float | bool):
        return str(value)
    return f"{name}{index}"


def _is_set(value: Any) -> bool:
    return hasattr(value, "values") and hasattr(value, "marks")


def unique(examples: Iterable[Example]) -> list[Example]:
    """Each example once (the tests run one example under several drivers); a test that
    gives several numbers them: ``test_first_and_last #2``."""
    seen: set[Any] = set()
    out = []
    for example in examples:
        key = example.key()
        if key not in seen:
            seen.add(key)
            out.append(example)
    counts = Counter(e.source for e in out)
    number: Counter[str] = Counter()
    for index, example in enumerate(out):
        if counts[example.source] > 1:
            number[example.source] += 1
            out[index] = replace(example, source=f"{example.source} #{number[example.source]}")
    return out


def use_cases(
    fixtures: Mapping[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    only: Collection[str] | None = None,
) -> list[Example]:
    """SPAseq's use cases: each test converts its data slice (``rsep convert``) and calls
    ``run_both``; the recorder reads the same arguments as ``rsep run`` and answers with
    the oracle's results, which the test then compares with the detections found by
    reading the data."""
    import test_spaseq_use_cases as module

    from rsep.api import engine_graphs, read_graphs, read_streams
    from rsep.cli.main import build_parser
    from rsep.cli.run import graph_files, query_of

    found: list[Example] = []
    current = {"source": ""}

    def recorder(args: list[str], capsys: Any) -> list[dict[str, object]]:
        namespace = build_parser().parse_args(["run", *args])
        plan = query_of(namespace).plan
        streams = read_streams(namespace.streams, plan.parameters.time_unit)
        graphs = engine_graphs(read_graphs(graph_files(namespace.graphs)))
        events = tuple(sorted(streams.events(), key=lambda e: (e.t_end, e.t_start)))
        example = Example("spaseq", current["source"], plan, events, graphs)
        found.append(example)
        return [r.to_json() for r in evaluate(plan, example.streams(), dict(graphs))]

    with monkeypatch.context() as patch:
        patch.setattr(module, "run_both", recorder)
        for name in USE_CASES:
            if only is not None and name not in only:
                continue
            function = getattr(module, name)
            for label, kwargs in calls(function, {**fixtures, "capsys": None}):
                current["source"] = label
                folder = Path(fixtures["tmp_path"]) / name
                folder.mkdir(parents=True, exist_ok=True)
                function(**{**kwargs, "tmp_path": folder} if "tmp_path" in kwargs else kwargs)
    return found


# Files --------------------------------------------------------------------------------------


def clock_event(t: int) -> Event:
    """An event of :data:`CLOCK` at ``t``: it moves a live query's watermark."""
    node = NamedNode(CLOCK)
    return Event.point(CLOCK, t, [Triple(node, node, node)])


def write_parts(events: Sequence[Event], folder: Path, parts: int) -> list[Path]:
    """``events`` as up to ``parts`` N-Quads files that each name their events' streams
    (``rsep.rdf.formats.write_events``; each file in order of start, as the writer wants),
    cut where the end time moves on: a file never ends at an instant the next one continues
    (a live query's watermark would drop the rest as late)."""
    ordered = sorted(events, key=lambda e: (e.t_end, e.t_start))
    cuts = [i for i in range(1, len(ordered)) if ordered[i].t_end > ordered[i - 1].t_end]
    chosen = [cuts[(k * len(cuts)) // parts] for k in range(1, parts) if cuts]
    bounds = [0, *sorted(set(chosen)), len(ordered)]
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for index, (a, b) in enumerate(itertools.pairwise(bounds)):
        path = folder / f"part-{index:04d}.nq"
        write_events(sorted(ordered[a:b], key=_start), path, "nquads", with_stream=True)
        out.append(path)
    return out


def results_of(found: Iterable[Result]) -> list[str]:
    """Results in the canonical form the oracle's are compared in."""
    return canonical(found)
