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

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from lark import Token, v_args
from lark.tree import Meta

from rsep.lang import ast
from rsep.lang.build import Builder, Children, _pos, _token_pos
from rsep.lang.dialects import Cues, Default, cue, keyword_cue
from rsep.lang.dialects.cqels import Cqels, CqelsBuilder, CqelsPrinter
from rsep.lang.dialects.rspql import RspQl, RspQlBuilder, RspQlPrinter
from rsep.lang.dialects.stream import semantic_error
from rsep.lang.printer import Printer

_CQELS = Cqels.defaults.items()

AXES = ("self", "next", "edge", "node")
"""nSPARQL's navigation axes (Sect. 2.3)."""
_AXIS = re.compile(r"(self|next|edge|node)(\^?-1)?(?:::)?")


# Nodes (Sect. 2.3, 2.4, 3.1) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class SeqElement(ast.Node):
    """An element of ``SEQ (…)``; ``negated`` for ``!`` (SEQ WITHOUT, Sect. 2.4)."""

    negated: bool = field(default=False, kw_only=True)


@dataclass(frozen=True, slots=True, eq=False)
class SeqTemplate(SeqElement):
    """A triples template ``{ … }``: one event type of a triple sequence pattern (Sect. 3.1)."""

    triples: tuple[ast.Triples, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class SeqWindow(SeqElement):
    """A window name: one element of an event clause ``SEQ (W1, …, !Wi, …)`` (Sect. 3.1)."""

    window: ast.Var | ast.Iri


@dataclass(frozen=True, slots=True, eq=False)
class SeqPattern(ast.Pattern):
    """``SEQ (e1, …, en)``: a triple sequence pattern or an event clause (Sect. 3.1), SEQ(A1,
    …, An) holding for t1 < … < tn (Sect. 2.4); at most one element is negated (checked by
    ``rsep.lang.stream_checks``)."""

    elements: tuple[SeqElement, ...]


@dataclass(frozen=True, slots=True, eq=False)
class NestedPath(ast.Path):
    """``[path term?]``: nSPARQL's nested expression (``elt ::= elt [elt]``, Sect. 2.3): the
    node has a ``path`` to some node, or to ``term`` (Example 6, ``[:means :subway]``)."""

    path: ast.Iri | ast.Path
    term: ast.GraphNode | None = None


@dataclass(frozen=True, slots=True, eq=False)
class AxisStep(ast.Path):
    """nSPARQL's axis step (Sect. 2.3): ``next``, ``next::label``, ``next::[path]`` or
    ``next::label[path]``; ``inverse`` for ``next-1`` (also written ``next^-1``)."""

    axis: str
    inverse: bool = False
    label: ast.Iri | None = None
    nested: ast.Iri | ast.Path | None = None

    def __post_init__(self) -> None:
        if self.axis not in AXES:
            raise ValueError(f"not an nSPARQL axis: {self.axis!r}")


@v_args(meta=True)
class CqelsCepBuilder(CqelsBuilder, RspQlBuilder):
    """The AST of ``cqelscep.lark``."""

    def seq_pattern(self, meta: Meta, children: Children) -> SeqPattern:
        """``SEQ (e1, …, en)``."""
        return SeqPattern(tuple(children), pos=_pos(meta))

    def event_template(self, meta: Meta, children: Children) -> SeqTemplate:
        """``{ triples }``."""
        return SeqTemplate(children[0] if children else (), pos=_pos(meta))

    def window_event(self, meta: Meta, children: Children) -> SeqWindow:
        """A window name."""
        return SeqWindow(children[0], pos=_pos(meta))

    def negated_event(self, meta: Meta, children: Children) -> SeqElement:
        """``!e``."""
        element = children[0]
        assert isinstance(element, SeqElement)
        return element.replace(negated=True, pos=_pos(meta))

    def nested_path(self, meta: Meta, children: Children) -> NestedPath:
        """``[path term?]``."""
        term = self._graph_node(children[1]) if len(children) > 1 else None
        return NestedPath(self._path(children[0]), term, pos=_pos(meta))

    def axis_step(self, meta: Meta, children: Children) -> AxisStep:
        """``axis``, ``axis::label``, ``axis::[path]``, ``axis::label[path]``."""
        token = children[0]
        match = _AXIS.fullmatch(str(token))
        assert match is not None
        axis, inverse = match.group(1), match.group(2) is not None
        label = next((c for c in children[1:] if isinstance(c, _Label)), None)
        rest = [c for c in children[1:] if not isinstance(c, _Label)]
        nested = self._path(rest[0]) if rest else None
        iri = None if label is None else label.iri
        return AxisStep(axis, inverse, iri, nested, pos=_pos(meta))

    def axis_label(self, meta: Meta, children: Children) -> _Label:
        """The label of ``axis::label``: an IRI, or ``beg`` for ``:beg``."""
        child = children[0]
        if isinstance(child, ast.Iri):
            return _Label(child)
        assert isinstance(child, Token)
        namespace = self.prefixes.get("")
        if namespace is None:
            raise semantic_error(
                f"the label {child} means :{child}, but the prefix ':' is not declared", child
            )
        return _Label(ast.Iri(namespace + str(child), pos=_token_pos(child)))


@dataclass(frozen=True, slots=True)
class _Label:
    iri: ast.Iri


def _ends_with_label(path: ast.Var | ast.Iri | ast.Path) -> bool:
    """Whether the text of ``path`` ends with the label of an axis step (``next::beg``)."""
    while True:
        if isinstance(path, AxisStep):
            return path.label is not None and path.nested is None
        if isinstance(path, ast.PathSequence):
            path = path.steps[-1]
        elif isinstance(path, ast.PathAlternative):
            path = path.options[-1]
        elif isinstance(path, ast.PathInverse):
            path = path.path
        else:
            return False


class CqelsCepPrinter(CqelsPrinter, RspQlPrinter):
    """CQELS-CEP text: ``SEQ ({…}, !{…})``, ``[path term]`` and axis steps in paths."""

    def pattern_seq_pattern(self, pattern: SeqPattern, depth: int) -> str:
        """``SEQ (e1, …, en)``."""
        return "SEQ (" + ", ".join(self.seq_element(e, depth) for e in pattern.elements) + ")"

    def seq_element(self, element: SeqElement, depth: int) -> str:
        """``{ triples }`` or a window name, after ``!`` when negated."""
        bang = "!" if element.negated else ""
        if isinstance(element, SeqWindow):
            return bang + self.name(element.window)
        assert isinstance(element, SeqTemplate)
        triples = " . ".join(self.triples(t, depth) for t in element.triples)
        return f"{bang}{{ {triples} }}" if triples else bang + "{ }"

    def verb(self, verb: ast.Var | ast.Iri | ast.Path) -> str:
        """A predicate; in parentheses when it ends with a labelled axis step, whose next
        ``[`` would open a nested test (``cqelscep.lark``: the documented shift choice)."""
        text = super().verb(verb)
        return f"({text})" if _ends_with_label(verb) else text

    def path_nested_path(self, path: NestedPath) -> str:
        """``[path term?]``."""
        term = "" if path.term is None else " " + self.graph_node(path.term)
        return f"[{self.path(path.path)}{term}]"

    def path_axis_step(self, step: AxisStep) -> str:
        """``next``, ``next-1::label[path]``…"""
        text = step.axis + ("-1" if step.inverse else "")
        if step.label is None and step.nested is None:
            return text
        text += "::"
        if step.label is not None:
            text += self.iri(step.label.value)
        if step.nested is not None:
            text += f"[{self.path(step.nested)}]"
        return text


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

    builder: ClassVar[type[Builder]] = CqelsCepBuilder
    printer: ClassVar[type[Printer]] = CqelsCepPrinter


DIALECT = CqelsCep()
