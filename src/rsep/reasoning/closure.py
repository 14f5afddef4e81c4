"""Stream items entailed in the columnar engine: closure tables computed once from the
ontology, applied to a batch of events as joins on term ids (EP-SPARQL Sect. 5, background
knowledge; Sect. 6 Test 2, an event's subject classified by a class hierarchy).

:class:`Closure` holds, as sorted int32 pairs of one :class:`~rsep.engine.terms.TermDictionary`,
what the reasoner's closure ``M(T)`` of the schema says (:class:`~.reasoner.Ontology`):
subclasses (``rdfs:subClassOf``, transitive by scm-sco; ``owl:equivalentClass`` both ways),
subproperties (scm-spo; ``owl:equivalentProperty`` both ways), domains, ranges, and under
``owl_rl`` inverses, symmetric and transitive properties. :func:`entail_batch` applies, as
a semi-naive fixpoint of vectorised joins over every event of a batch at once, the rules

- rdfs7 / prp-spo1, prp-eqp1/2: ``(x p y), p ⊑ q ⊢ (x q y)``;
- rdfs2 / prp-dom, rdfs3 / prp-rng: ``(x p y), dom(p) = C ⊢ (x a C)``, the range on ``y``;
- rdfs9 / cax-sco, cax-eqc1/2: ``(x a C), C ⊑ D ⊢ (x a D)``;
- prp-inv1/2, prp-symp: ``(x p y) ⊢ (y q x)``; prp-trp: ``(x p y), (y p z) ⊢ (x p z)``
  inside one event;
- under ``owl_rl``, eq-sym, eq-trans and eq-rep-s/p/o for the ``owl:sameAs`` of the event,

which is ``G ∪ (M(G ∪ T) ∖ M(T))`` of each item when its triples are instance data. An event
that states schema itself, under ``owl_rl`` uses another OWL term as a predicate
(``owl:differentFrom`` …) or says that a term of the ontology is ``owl:sameAs`` another, and
every event when the ontology uses an OWL construct these tables do not cover
(``owl:someValuesFrom``, ``owl:FunctionalProperty`` …), takes the exact path: the reasoner
on that event alone (:meth:`Ontology.entail`), counted in :attr:`Closure.exact`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np
from pyoxigraph import NamedNode, Triple

from rsep.algebra.params import Entailment
from rsep.engine.batch import TripleBatch, batches_of
from rsep.engine.pattern import equal_pairs
from rsep.engine.terms import KIND_BLANK, KIND_IRI, KIND_LITERAL, TermDictionary
from rsep.rdf.event import Event
from rsep.reasoning.reasoner import OWL, RDF, RDFS, TYPE, Ontology

__all__ = ["Closure", "entail_batch", "entail_events"]

_SUPPORTED_PREDICATES = frozenset(
    {
        RDFS + "subClassOf",
        RDFS + "subPropertyOf",
        RDFS + "domain",
        RDFS + "range",
        RDFS + "label",
        RDFS + "comment",
        RDFS + "seeAlso",
        RDFS + "isDefinedBy",
        OWL + "equivalentClass",
        OWL + "equivalentProperty",
        OWL + "inverseOf",
        OWL + "versionInfo",
        OWL + "imports",
    }
)
_SUPPORTED_TYPES = frozenset(
    {
        RDFS + "Class",
        RDF + "Property",
        OWL + "Class",
        OWL + "ObjectProperty",
        OWL + "DatatypeProperty",
        OWL + "AnnotationProperty",
        OWL + "Ontology",
        OWL + "TransitiveProperty",
        OWL + "SymmetricProperty",
    }
)

# per-term flags, computed once per id from its text
_SCHEMA_PREDICATE, _VOCABULARY_CLASS, _OWL_TERM = 1, 2, 4
_NOT_SCHEMA = (OWL + "sameAs", OWL + "differentFrom")


def _flag(text: str) -> int:
    if not text.startswith("<"):
        return 0
    iri = text[1:-1]
    flags = 0
    if iri.startswith((RDFS, OWL)):
        flags |= _VOCABULARY_CLASS
        if iri not in _NOT_SCHEMA:
            flags |= _SCHEMA_PREDICATE
    if iri in (RDF + "first", RDF + "rest"):
        flags |= _SCHEMA_PREDICATE
    if iri.startswith(OWL):
        flags |= _OWL_TERM
    return flags


def _covered(triple: Triple) -> bool:
    """Whether the closure tables cover schema ``triple`` under ``owl_rl``."""
    if triple.predicate.value == TYPE:
        kind = triple.object
        return isinstance(kind, NamedNode) and kind.value in _SUPPORTED_TYPES
    return triple.predicate.value in _SUPPORTED_PREDICATES


@dataclass(frozen=True)
class _Pairs:
    """A relation on term ids, as int64 keys sorted and their values."""

    keys: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, int]], reflexive: bool = False) -> _Pairs:
        """The distinct pairs, sorted; a reflexive one only when ``reflexive`` (a property
        its own inverse is one; a class its own subclass says nothing)."""
        table = np.array(list(pairs), np.int64).reshape(-1, 2)
        return cls.of_columns(table[:, 0], table[:, 1], reflexive)

    @classmethod
    def of_columns(cls, keys: np.ndarray, values: np.ndarray, reflexive: bool = False) -> _Pairs:
        """The distinct pairs ``(keys[i], values[i])``, sorted (as :meth:`of`)."""
        keys, values = keys.astype(np.int64), values.astype(np.int64)
        unique = np.unique((keys << 32) | values)
        keys, values = unique >> 32, unique & 0xFFFFFFFF
        kept = np.ones(len(keys), np.bool_) if reflexive else keys != values
        return cls(keys[kept], values[kept].astype(np.int32))

    def transitive(self) -> _Pairs:
        """The transitive closure (without reflexive pairs), so that one join derives every
        consequence of a chain (scm-sco, scm-spo; equivalences both ways join in)."""
        out = self
        while True:
            rows, further = out.join(out.values)
            more = _Pairs.of_columns(
                np.concatenate([out.keys, out.keys[rows]]),
                np.concatenate([out.values, further]),
            )
            if len(more.keys) == len(out.keys):
                return out
            out = more

    def join(self, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every (row of ``column``, value) whose key is the row's id."""
        if not len(self.keys) or not len(column):
            return np.zeros(0, np.int64), np.zeros(0, np.int32)
        x = column.astype(np.int64)
        lo = np.searchsorted(self.keys, x, "left")
        counts = np.searchsorted(self.keys, x, "right") - lo
        rows = np.repeat(np.arange(len(x)), counts)
        at = np.repeat(lo - (np.cumsum(counts) - counts), counts) + np.arange(len(rows))
        return rows, self.values[at]


def _sorted_ids(ids: Iterable[int]) -> np.ndarray:
    return np.array(sorted(set(ids)), np.int32)


@dataclass
class Closure:
    """The closure tables of an :class:`Ontology` in ``dictionary``'s ids (the module's
    docstring), and the count of events entailed by the exact path."""

    ontology: Ontology
    dictionary: TermDictionary
    exact: int = 0
    """Events entailed by the reasoner on the exact path so far."""
    type_id: int = field(init=False)
    sub_class: _Pairs = field(init=False)
    sub_property: _Pairs = field(init=False)
    domain: _Pairs = field(init=False)
    range: _Pairs = field(init=False)
    inverse: _Pairs = field(init=False)
    symmetric: np.ndarray = field(init=False)
    transitive: np.ndarray = field(init=False)
    same_as: int = field(init=False)
    """The id of ``owl:sameAs`` under ``owl_rl`` (eq-sym, eq-trans, eq-rep-s/p/o), else -1."""
    terms: np.ndarray = field(init=False)
    """The ids the tables hold, sorted: an item saying one is ``owl:sameAs`` another term
    changes the schema, so it takes the exact path."""
    exact_all: bool = field(init=False)
    """Whether the ontology uses an OWL construct the tables do not cover."""
    _flags: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        d = self.dictionary
        self.type_id = d.intern(f"<{TYPE}>")
        self._flags = np.full(0, -1, np.int8)
        owl = self.ontology.entailment is Entailment.OWL_RL
        by: dict[str, list[tuple[str, str]]] = {}
        for t in self.ontology.closed:
            if isinstance(t.object, Triple):
                continue
            by.setdefault(t.predicate.value, []).append((str(t.subject), str(t.object)))

        def pairs(*predicates: str, both: bool = False) -> list[tuple[int, int]]:
            found = [pair for p in predicates for pair in by.get(p, [])]
            if not found:
                return []
            ids = d.encode([text for pair in found for text in pair]).reshape(-1, 2)
            out = [(int(a), int(b)) for a, b in ids.tolist()]
            return out + [(b, a) for a, b in out] if both else out

        thing = d.intern(f"<{OWL}Thing>")
        self.sub_class = _Pairs.of(
            (a, b)
            for a, b in pairs(RDFS + "subClassOf")
            + (pairs(OWL + "equivalentClass", both=True) if owl else [])
            if b != thing
        ).transitive()
        self.sub_property = _Pairs.of(
            pairs(RDFS + "subPropertyOf")
            + (pairs(OWL + "equivalentProperty", both=True) if owl else [])
        ).transitive()
        self.domain = _Pairs.of((a, b) for a, b in pairs(RDFS + "domain") if b != thing)
        self.range = _Pairs.of((a, b) for a, b in pairs(RDFS + "range") if b != thing)
        self.inverse = _Pairs.of(pairs(OWL + "inverseOf", both=True) if owl else [], True)
        kinds = by.get(TYPE, [])

        def typed(kind: str) -> np.ndarray:
            found = [s for s, o in kinds if o == f"<{kind}>"]
            return _sorted_ids(d.encode(found).tolist()) if found and owl else _sorted_ids([])

        self.symmetric = typed(OWL + "SymmetricProperty")
        self.transitive = typed(OWL + "TransitiveProperty")
        self.exact_all = owl and not all(_covered(t) for t in self.ontology.triples)
        self.same_as = d.intern(f"<{OWL}sameAs>") if owl else -1
        tables = (self.sub_class, self.sub_property, self.domain, self.range, self.inverse)
        self.terms = np.unique(
            np.concatenate(
                [
                    *(t.keys for t in tables),
                    *(t.values for t in tables),
                    self.symmetric,
                    self.transitive,
                    [self.type_id],
                ]
            ).astype(np.int64)
        )

    @classmethod
    def of(
        cls, graphs: Iterable[Iterable[Triple]], entailment: Entailment, dictionary: TermDictionary
    ) -> Closure:
        """The closure tables of the schema of background ``graphs``."""
        return cls(Ontology.of(graphs, entailment), dictionary)

    def flags(self, ids: np.ndarray) -> np.ndarray:
        """The flags of ``ids`` (schema predicate, RDFS/OWL term, OWL term), each computed
        once from its text."""
        size = len(self.dictionary)
        if len(self._flags) < size:
            self._flags = np.concatenate(
                [self._flags, np.full(size - len(self._flags), -1, np.int8)]
            )
        wanted = np.unique(ids)
        unknown = wanted[self._flags[wanted] < 0]
        if len(unknown):
            texts = self.dictionary.texts(unknown)
            self._flags[unknown] = np.array([_flag(text) for text in texts], np.int8)
        found: np.ndarray = self._flags[ids]
        return found


def _rows_not_in(
    known: tuple[np.ndarray, ...], found: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, ...]:
    """The distinct rows ``(e, s, p, o)`` of ``found`` (with its other columns) that
    ``known`` does not hold; of equal rows, the one least saturated (:data:`_BY_SCO` …)."""
    k1 = np.concatenate([_key(known[0], known[1]), _key(found[0], found[1])])
    k2 = np.concatenate([_key(known[2], known[3]), _key(found[2], found[3])])
    fresh = np.concatenate([np.zeros(len(known[0]), np.int8), np.ones(len(found[0]), np.int8)])
    saturated = np.concatenate([np.zeros(len(known[0]), np.int8), found[4]])
    order = np.lexsort((saturated, fresh, k2, k1))
    k1, k2, fresh = k1[order], k2[order], fresh[order]
    first = np.ones(len(order), np.bool_)
    first[1:] = (k1[1:] != k1[:-1]) | (k2[1:] != k2[:-1])
    pick = order[first & (fresh == 1)] - len(known[0])
    return tuple(column[pick] for column in found)


def _key(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.int64) << 32) | b.astype(np.int64)


_BY_SCO, _BY_SPO = 1, 2
"""A derived row's saturation: made by a join with the transitive subclass (subproperty)
table, so that join gives it nothing new."""


def _derive(
    closure: Closure,
    delta: tuple[np.ndarray, ...],
    every: tuple[np.ndarray, ...],
    kind: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """One round of the rules on the new rows ``delta`` (``e, s, p, o`` and saturation;
    ``every`` row too, for prp-trp): the derived rows with their saturation."""
    e, s, p, o, saturated = delta
    out: list[tuple[np.ndarray, ...]] = []
    type_id = closure.type_id

    def add(e: np.ndarray, s: np.ndarray, p: np.ndarray | int, o: np.ndarray, by: int = 0) -> None:
        if len(e):
            p = np.broadcast_to(np.asarray(p, np.int32), e.shape)
            out.append((e, s, p, o, np.full(len(e), by, np.int8)))

    unsaturated = np.flatnonzero((saturated & _BY_SPO) == 0)
    rows, q = closure.sub_property.join(p[unsaturated])
    rows = unsaturated[rows]
    add(e[rows], s[rows], q, o[rows], _BY_SPO)
    rows, c = closure.domain.join(p)
    add(e[rows], s[rows], type_id, c)
    rows, c = closure.range.join(p)
    add(e[rows], o[rows], type_id, c)
    typed = np.flatnonzero((p == type_id) & ((saturated & _BY_SCO) == 0))
    rows, d = closure.sub_class.join(o[typed])
    rows = typed[rows]
    add(e[rows], s[rows], type_id, d, _BY_SCO)
    rows, q = closure.inverse.join(p)
    add(e[rows], o[rows], q, s[rows])
    if len(closure.symmetric):
        rows = np.flatnonzero(np.isin(p, closure.symmetric))
        add(e[rows], o[rows], p[rows], s[rows])
    if closure.same_as >= 0:
        _equality(closure.same_as, delta, every, add)
    transitive = closure.transitive.tolist() + ([closure.same_as] if closure.same_as >= 0 else [])
    for prop in transitive:
        mine = p == prop
        all_rows = np.flatnonzero(every[2] == prop)
        ae, a_s, ao = every[0][all_rows], every[1][all_rows], every[3][all_rows]
        de, ds, do = e[mine], s[mine], o[mine]
        left, right = equal_pairs(_key(de, do), _key(ae, a_s))  # new (x p y), (y p z)
        add(de[left], ds[left], prop, ao[right])
        left, right = equal_pairs(_key(de, ds), _key(ae, ao))  # (w p x), new (x p y)
        add(de[left], a_s[right], prop, do[left])
    if not out:
        return (*(np.zeros(0, np.int32) for _ in range(4)), np.zeros(0, np.int8))
    columns = [np.concatenate([part[k] for part in out]).astype(np.int32) for k in range(4)]
    saturation = np.concatenate([part[4] for part in out])
    # an RDF triple: an IRI as predicate (eq-rep-p may put another term there); no
    # reflexive owl:sameAs (trivial, as the oracle drops it)
    keep = kind[columns[2]] == KIND_IRI
    if closure.same_as >= 0:
        keep &= (columns[2] != closure.same_as) | (columns[1] != columns[3])
    return (*(c[keep] for c in columns), saturation[keep])


def _equality(
    same: int,
    delta: tuple[np.ndarray, ...],
    every: tuple[np.ndarray, ...],
    add: Callable[..., None],
) -> None:
    """eq-sym and eq-rep-s/p/o on the new rows (eq-trans is prp-trp on ``owl:sameAs``): a
    new row with a term said to be the same as another, and a new ``owl:sameAs`` on every
    row holding its subject, give the row with the other term in that place."""
    e, s, p, o = delta[:4]
    new = np.flatnonzero(p == same)
    add(e[new], o[new], same, s[new])
    known = np.flatnonzero(every[2] == same)
    if not len(new) and not len(known):
        return
    ke, ka, kb = every[0][known], every[1][known], every[3][known]
    ne, na, nb = e[new], s[new], o[new]
    for place in (1, 2, 3):
        left, right = equal_pairs(_key(e, delta[place]), _key(ke, ka))
        row = [e[left], s[left], p[left], o[left]]
        row[place] = kb[right]
        add(*row)
        left, right = equal_pairs(_key(every[0], every[place]), _key(ne, na))
        row = [column[left] for column in every[:4]]
        row[place] = nb[right]
        add(*row)


def entail_batch(batch: TripleBatch, closure: Closure) -> TripleBatch:
    """``batch`` with each event's triples entailed with the ontology (the module's
    docstring): one row per distinct triple of each event, events unchanged. The batch's
    ids are ``closure.dictionary``'s."""
    if closure.ontology.entailment is Entailment.NONE or not len(batch.s):
        return batch
    dictionary = closure.dictionary
    flags = closure.flags(np.concatenate([batch.p, batch.o]))
    pf, of = flags[: len(batch.p)], flags[len(batch.p) :]
    is_type = batch.p == closure.type_id
    schema = ((pf & _SCHEMA_PREDICATE) != 0) | (is_type & ((of & _VOCABULARY_CLASS) != 0))
    owl = closure.ontology.entailment is Entailment.OWL_RL
    owl_term = ((pf & _OWL_TERM) != 0) | (is_type & ((of & _OWL_TERM) != 0))
    if owl:
        same = batch.p == closure.same_as
        sides = np.concatenate([batch.s[same], batch.o[same]])
        odd = (
            (dictionary.values.kind[sides] != KIND_IRI)
            & (dictionary.values.kind[sides] != KIND_BLANK)
            | np.isin(sides, closure.terms)
            | (closure.flags(sides) != 0)
        )
        unsafe = np.zeros(len(batch.p), np.bool_)
        unsafe[np.flatnonzero(same)] = odd[: int(same.sum())] | odd[int(same.sum()) :]
        exact_rows = schema | (owl_term & ~same) | unsafe
    else:
        exact_rows = schema
    if closure.exact_all:
        exact_events = np.arange(len(batch), dtype=np.int32)
    else:
        exact_events = np.unique(batch.triple_event[exact_rows])
    on_exact = np.isin(batch.triple_event, exact_events)
    fast = ~on_exact
    withheld = fast & owl_term & (not owl)
    active = fast & ~withheld
    every: tuple[np.ndarray, ...] = (
        batch.triple_event[active],
        batch.s[active],
        batch.p[active],
        batch.o[active],
    )
    kind = dictionary.values.kind
    delta = (*every, np.zeros(len(every[0]), np.int8))
    while len(delta[0]):
        found = _derive(closure, delta, every, kind)
        delta = _rows_not_in(every, found)
        every = tuple(np.concatenate([a, b]) for a, b in zip(every, delta[:4], strict=True))
    # a literal subject is kept through the rounds (OWL 2 RL/RDF reasons on generalised
    # triples, and so does the reasoner), an RDF triple has none
    every = tuple(c[kind[every[1]] != KIND_LITERAL] for c in every)
    parts = [every, tuple(c[withheld] for c in (batch.triple_event, batch.s, batch.p, batch.o))]
    if len(exact_events):
        parts.append(_exact(batch, exact_events, closure))
    e, s, p, o = (np.concatenate([part[k] for part in parts]) for k in range(4))
    order = np.argsort(e, kind="stable")
    return replace(
        batch,
        triple_event=e[order].astype(np.int32),
        s=s[order].astype(np.int32),
        p=p[order].astype(np.int32),
        o=o[order].astype(np.int32),
    )


def _exact(batch: TripleBatch, events: np.ndarray, closure: Closure) -> tuple[np.ndarray, ...]:
    """The rows of ``events`` (batch rows) entailed by the reasoner, one event at a time."""
    dictionary = closure.dictionary
    columns: list[list[np.ndarray]] = [[], [], [], []]
    bounds = np.searchsorted(batch.triple_event, np.stack([events, events + 1]))
    for event, lo, hi in zip(events.tolist(), bounds[0].tolist(), bounds[1].tolist(), strict=True):
        nodes = [dictionary.nodes(c[lo:hi]) for c in (batch.s, batch.p, batch.o)]
        graph = frozenset(Triple(*terms) for terms in zip(*nodes, strict=True))
        entailed = sorted(closure.ontology.entail(graph), key=str)
        texts = [str(term) for t in entailed for term in (t.subject, t.predicate, t.object)]
        ids = dictionary.encode(texts).reshape(-1, 3) if texts else np.zeros((0, 3), np.int32)
        columns[0].append(np.full(len(ids), event, np.int32))
        for k in range(3):
            columns[k + 1].append(ids[:, k].astype(np.int32))
        closure.exact += 1
    return tuple(np.concatenate(column) for column in columns)


def entail_events(events: Iterable[Event], closure: Closure) -> list[Event]:
    """``events`` (objects) entailed as :func:`entail_batch` entails a batch, for the
    engines that take events: an event the ontology adds nothing to is the same object, an
    entailed one keeps its stream, interval and id."""
    listed = list(events)
    out: list[Event] = []
    dictionary = closure.dictionary
    for batch in batches_of(listed, dictionary):
        mine = listed[len(out) : len(out) + len(batch)]
        entailed = entail_batch(batch, closure)
        size = np.bincount(entailed.triple_event, minlength=len(batch))
        grown = size != np.bincount(batch.triple_event, minlength=len(batch))
        bounds = np.concatenate([[0], np.cumsum(size)]).tolist()
        out += mine
        for k in np.flatnonzero(grown).tolist():
            lo, hi = bounds[k], bounds[k + 1]
            nodes = [dictionary.nodes(c[lo:hi]) for c in (entailed.s, entailed.p, entailed.o)]
            graph = frozenset(Triple(*terms) for terms in zip(*nodes, strict=True))
            out[len(out) - len(mine) + k] = replace(mine[k], graph=graph)
    return out
