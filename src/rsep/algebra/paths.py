"""Nested regular expressions: CQELS-CEP's property paths with nSPARQL's nesting and axes.

CQELS-CEP (seed 001, Sect. 2.3 and 3.1) extends SPARQL 1.1 property paths with nSPARQL's
nested regular expressions (Pérez, Arenas, Gutierrez, "nSPARQL: A navigational language for
RDF", J. Web Sem. 8(4), 2010; the paper's reference [16]):

    exp ::= axis | axis::a | axis::[exp] | exp/exp | exp|exp | exp* | exp+
    axis ∈ {self, next, next⁻¹, edge, edge⁻¹, node, node⁻¹}

and with one more path element, ``elt ::= elt [elt]``, written in Example 6 as the step
``[:means :subway]`` of ``?s (^:beg/[:means :subway]/:end)+ :c``. pyoxigraph evaluates
SPARQL 1.1 paths only, so the plan carries a path that nests or uses an axis as a tree
(:class:`PathTriple`), and the oracle evaluates it as a binary relation
(``rsep.semantics.nested_path``).

The tree keeps both vocabularies under their own names: the SPARQL 1.1 algebra's
``link``, ``inv``, ``seq``, ``alt``, ``ZeroOrMorePath``/``OneOrMorePath``/``ZeroOrOnePath``
and ``NPS`` (sec. 18.2.2.4: :class:`Link`, :class:`Inverse`, :class:`PathSequence`,
:class:`Alternative`, :class:`Repeat`, :class:`NegatedSet`), nSPARQL's axis steps
(:class:`Axis`) and CQELS-CEP's nested test (:class:`Nested`). ``str()`` prints CQELS-CEP
syntax with full IRIs, which the ``cqelscep`` grammar reads back.

Every node is a frozen dataclass: equality and hashing are structural.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Variable

__all__ = [
    "AXES",
    "Alternative",
    "Axis",
    "Link",
    "NegatedSet",
    "Nested",
    "PathEnd",
    "PathExpr",
    "PathSequence",
    "PathTriple",
    "Repeat",
    "is_nested",
]

AXES = ("self", "next", "edge", "node")
"""nSPARQL's navigation axes (seed 001, Sect. 2.3; nSPARQL, Sect. 3)."""

PathEnd = Variable | NamedNode | Literal
"""The subject or object of a path triple: a variable, an IRI or a literal (``sp, op ∈ I ∪
L ∪ V``, seed 001, Sect. 2.3, extended triple patterns)."""

# Precedence of the SPARQL 1.1 path grammar (sec. 19.8, [88]-[94]), loosest first: a node
# is printed in parentheses where its context needs a tighter one.
_ALTERNATIVE, _SEQUENCE, _ELT_OR_INVERSE, _ELT, _PRIMARY = range(5)


class PathExpr(ABC):
    """A nested regular expression (seed 001, Sect. 2.3; nSPARQL, Sect. 3)."""

    @property
    @abstractmethod
    def precedence(self) -> int:
        """How tightly the printed form binds (SPARQL 1.1 sec. 19.8, [88]-[94])."""

    @abstractmethod
    def text(self) -> str:
        """The expression in CQELS-CEP syntax, full IRIs."""

    def operand(self, context: int) -> str:
        """The text of this node as an operand of a node of precedence ``context``."""
        inner = self.text()
        return f"({inner})" if self.precedence < context else inner

    def __str__(self) -> str:
        return self.text()

    def children(self) -> tuple[PathExpr, ...]:
        """The sub-expressions, in order."""
        return ()

    def walk(self) -> tuple[PathExpr, ...]:
        """This node and all its descendants, pre-order."""
        found: list[PathExpr] = [self]
        for child in self.children():
            found.extend(child.walk())
        return tuple(found)


@dataclass(frozen=True)
class Link(PathExpr):
    """An IRI as a path, SPARQL's ``link(iri)``: one edge labelled ``iri`` forward; nSPARQL's
    ``next::iri``."""

    iri: NamedNode

    @property
    def precedence(self) -> int:
        return _PRIMARY

    def text(self) -> str:
        return str(self.iri)


@dataclass(frozen=True)
class Inverse(PathExpr):
    """``^path``, SPARQL's ``inv(path)``: the pairs of ``path`` reversed."""

    path: PathExpr

    @property
    def precedence(self) -> int:
        return _ELT_OR_INVERSE

    def text(self) -> str:
        return "^" + self.path.operand(_ELT)

    def children(self) -> tuple[PathExpr, ...]:
        return (self.path,)


@dataclass(frozen=True)
class PathSequence(PathExpr):
    """``p1/p2/…``, SPARQL's ``seq`` and nSPARQL's ``exp/exp``: composition of relations."""

    steps: tuple[PathExpr, ...]

    def __post_init__(self) -> None:
        if len(self.steps) < 2:
            raise ValueError("a path sequence needs at least two steps")

    @property
    def precedence(self) -> int:
        return _SEQUENCE

    def text(self) -> str:
        return "/".join(step.operand(_ELT_OR_INVERSE) for step in self.steps)

    def children(self) -> tuple[PathExpr, ...]:
        return self.steps


@dataclass(frozen=True)
class Alternative(PathExpr):
    """``p1|p2|…``, SPARQL's ``alt`` and nSPARQL's ``exp|exp``: union of relations."""

    options: tuple[PathExpr, ...]

    def __post_init__(self) -> None:
        if len(self.options) < 2:
            raise ValueError("a path alternative needs at least two options")

    @property
    def precedence(self) -> int:
        return _ALTERNATIVE

    def text(self) -> str:
        return "|".join(option.operand(_SEQUENCE) for option in self.options)

    def children(self) -> tuple[PathExpr, ...]:
        return self.options


@dataclass(frozen=True)
class Repeat(PathExpr):
    """``p*``, ``p+`` or ``p?``: nSPARQL's ``exp*`` (and ``exp+``), SPARQL's
    ``ZeroOrMorePath``, ``OneOrMorePath`` and ``ZeroOrOnePath``."""

    path: PathExpr
    modifier: str

    def __post_init__(self) -> None:
        if self.modifier not in {"*", "+", "?"}:
            raise ValueError(f"not a path modifier: {self.modifier!r}")

    @property
    def precedence(self) -> int:
        return _ELT

    def text(self) -> str:
        return self.path.operand(_PRIMARY) + self.modifier

    def children(self) -> tuple[PathExpr, ...]:
        return (self.path,)


@dataclass(frozen=True)
class NegatedSet(PathExpr):
    """``!(a|^b|…)``, SPARQL's negated property set ``NPS``: one edge forward whose label is
    none of ``forward``, or one edge backward whose label is none of ``backward``."""

    forward: tuple[NamedNode, ...] = ()
    backward: tuple[NamedNode, ...] = ()

    def __post_init__(self) -> None:
        if not self.forward and not self.backward:
            raise ValueError("a negated property set names at least one IRI")

    @property
    def precedence(self) -> int:
        return _PRIMARY

    def text(self) -> str:
        items = [str(iri) for iri in self.forward] + ["^" + str(iri) for iri in self.backward]
        return "!" + (items[0] if len(items) == 1 else "(" + "|".join(items) + ")")


@dataclass(frozen=True)
class Axis(PathExpr):
    """An nSPARQL axis step (seed 001, Sect. 2.3 and Table 1; nSPARQL, Sect. 3): ``axis``,
    ``axis::a`` (``label``), ``axis::[exp]`` (``nested``), and ``axis::a[exp]`` (both:
    ``axis::a/self::[exp]``, as in Example 5's ``next⁻¹::beg[next::means/self::subway]``).
    ``inverse`` is ``axis⁻¹``, written ``next-1``."""

    axis: str
    inverse: bool = False
    label: NamedNode | None = None
    nested: PathExpr | None = None

    def __post_init__(self) -> None:
        if self.axis not in AXES:
            raise ValueError(f"not an nSPARQL axis: {self.axis!r} (one of {', '.join(AXES)})")

    @property
    def precedence(self) -> int:
        return _PRIMARY

    def text(self) -> str:
        out = self.axis + ("-1" if self.inverse else "")
        if self.label is None and self.nested is None:
            return out
        out += "::"
        if self.label is not None:
            out += str(self.label)
        if self.nested is not None:
            out += f"[{self.nested.text()}]"
        return out

    def children(self) -> tuple[PathExpr, ...]:
        return () if self.nested is None else (self.nested,)


@dataclass(frozen=True)
class Nested(PathExpr):
    """CQELS-CEP's nested test ``[path term]`` (seed 001, Sect. 3.1, ``elt ::= elt [elt]``):
    the nodes from which ``path`` leads somewhere (to ``term`` when it is given), staying
    there: nSPARQL's ``self::[exp]`` with ``exp = path`` (``path/self::term``). Example 6's
    ``[:means :subway]`` is Example 5's ``self::[next::means/self::subway]``."""

    path: PathExpr
    term: NamedNode | Literal | None = None

    @property
    def precedence(self) -> int:
        return _PRIMARY

    def text(self) -> str:
        term = "" if self.term is None else " " + str(self.term)
        return f"[{self.path.text()}{term}]"

    def children(self) -> tuple[PathExpr, ...]:
        return (self.path,)


def is_nested(path: PathExpr) -> bool:
    """Whether ``path`` uses what SPARQL 1.1 lacks: a nested test or an nSPARQL axis."""
    return any(isinstance(node, Axis | Nested) for node in path.walk())


@dataclass(frozen=True)
class PathTriple:
    """An extended triple pattern ``(sp, exp, op)`` (seed 001, Sect. 2.3): the pairs of
    ``[[exp]]_G`` whose ends match ``subject`` and ``object``."""

    subject: PathEnd
    path: PathExpr
    object: PathEnd

    @property
    def variables(self) -> frozenset[str]:
        """The variables of the two ends, without ``?``."""
        return frozenset(
            end.value for end in (self.subject, self.object) if isinstance(end, Variable)
        )

    def __str__(self) -> str:
        return f"{self.subject} {self.path.text()} {self.object} ."
