"""The shared buffer of partial matches: runs point into one DAG of versioned nodes.

Flink CEP's ``SharedBuffer`` stores each partial match once, as a DAG that runs point into,
so that a run that branches (Kleene+, skip-till-any: SPAseq Sect. 7.1, Theorem 3) costs one
pointer instead of a copy of everything it took (STYLE.md, "Apache Flink CEP"). Here a
:class:`BufferNode` is one version of a run's history: the item it added (an event the run
took, or an event a deferred negation must look at) and the version before it. Nodes are
immutable, so a fork shares every node of its parent and only adds its own; a node lives as
long as a run points to it (Python's references do Flink's reference counting), and
:func:`items` reads a history back, oldest first.

A history can be long (a Kleene+ run over thousands of events), longer than pickle's
recursion allows, so :func:`flatten` and :func:`restore` write the DAG as a table, each
node once, for checkpoints (``IncrementalQuery`` is pickled between batches).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["BufferNode", "extend", "flatten", "items", "restore"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True, eq=False)
class BufferNode(Generic[T]):
    """One version of a history: ``item`` added after ``previous`` (``None``: the first);
    ``size`` counts the items up to here."""

    item: T
    previous: BufferNode[T] | None
    size: int


def extend(node: BufferNode[T] | None, item: T) -> BufferNode[T]:
    """The version after ``node`` that adds ``item``; ``node`` is shared, not copied."""
    return BufferNode(item, node, 1 if node is None else node.size + 1)


def items(node: BufferNode[T] | None) -> list[T]:
    """The items of a history, oldest first."""
    out: list[T] = []
    while node is not None:
        out.append(node.item)
        node = node.previous
    out.reverse()
    return out


def flatten(
    roots: Iterable[BufferNode[T] | None],
) -> tuple[list[tuple[T, int]], dict[int, int]]:
    """The DAG under ``roots`` as a table of ``(item, index of previous or -1)``, each node
    once and after its previous, with the index of each node (by ``id``)."""
    table: list[tuple[T, int]] = []
    index: dict[int, int] = {}
    for root in roots:
        chain: list[BufferNode[T]] = []
        node = root
        while node is not None and id(node) not in index:
            chain.append(node)
            node = node.previous
        for version in reversed(chain):
            before = -1 if version.previous is None else index[id(version.previous)]
            index[id(version)] = len(table)
            table.append((version.item, before))
    return table, index


def restore(table: list[tuple[T, int]]) -> list[BufferNode[T]]:
    """The nodes of a table written by :func:`flatten`, in its order."""
    nodes: list[BufferNode[T]] = []
    for item, before in table:
        nodes.append(extend(None if before < 0 else nodes[before], item))
    return nodes
