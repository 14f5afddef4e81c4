"""The engine's numba kernels compiled before a live query's clock starts.

A kernel compiles, or loads from numba's on-disk cache, the first time it is called with a
new signature; on a fresh install a live query's first micro-batches would wait for the
compiler inside the stream. :func:`warm` compiles the kernels for the signatures the
engine's evaluators call (:data:`SIGNATURES`) when a query starts; :func:`observed` reads
which signatures a process has compiled, so that a test keeps the table complete.

A signature is written one argument after another, separated by spaces: a scalar by its
numpy code (``i8``, ``u1``, ``f8``, ``b1``), an array as ``code[ndim layout]`` with ``r``
when read-only (``i8[1C]``, ``i8[2A]``, ``i8[1Cr]``), a tuple as ``(a,b)``, a literal
(a constant a kernel passes to another) as ``=value``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from numba.core import types
from numba.core.dispatcher import Dispatcher

__all__ = ["SIGNATURES", "decode", "encode", "observed", "warm"]

_SCALARS: dict[str, types.Type] = {
    "b1": types.boolean,
    "i1": types.int8,
    "i2": types.int16,
    "i4": types.int32,
    "i8": types.int64,
    "u1": types.uint8,
    "u2": types.uint16,
    "u4": types.uint32,
    "u8": types.uint64,
    "f4": types.float32,
    "f8": types.float64,
}
_CODES = {v: k for k, v in _SCALARS.items()}


def encode(signature: Iterable[types.Type]) -> str:
    """The text of a kernel's argument types (the module's notation)."""
    return " ".join(_encode_type(t) for t in signature)


def _encode_type(t: types.Type) -> str:
    if isinstance(t, types.Array):
        return f"{_CODES[t.dtype]}[{t.ndim}{t.layout}{'' if t.mutable else 'r'}]"
    if isinstance(t, types.BaseTuple):
        return "(" + ",".join(_encode_type(e) for e in t.types) + ")"  # type: ignore[attr-defined]
    if isinstance(t, types.Literal) and isinstance(t.literal_value, (bool, int)):
        return f"={t.literal_value}"
    if t in _CODES:
        return _CODES[t]
    raise ValueError(f"no notation for the numba type {t!r}")


def decode(text: str) -> tuple[types.Type, ...]:
    """The argument types written in ``text`` (:func:`encode`'s inverse)."""
    items, end = _decode_items(text.replace(" ", ","), 0, "")
    if end != len(text):
        raise ValueError(f"unexpected {text[end:]!r} in the kernel signature {text!r}")
    return tuple(items)


def _decode_items(text: str, at: int, close: str) -> tuple[list[types.Type], int]:
    """Types separated by commas from ``at`` up to ``close`` (or the end of ``text``)."""
    items: list[types.Type] = []
    while at < len(text) and (not close or text[at] != close):
        if text[at] == "(":
            inner, at = _decode_items(text, at + 1, ")")
            items.append(types.Tuple(tuple(inner)))  # type: ignore[no-untyped-call]
            at += 1
        else:
            end = at
            while end < len(text) and text[end] not in ",)":
                end += 1
            items.append(_decode_type(text[at:end]))
            at = end
        if at < len(text) and text[at] == ",":
            at += 1
    return items, at


def _decode_type(token: str) -> types.Type:
    if token.startswith("="):
        value = token[1:]
        constant = value == "True" if value in ("True", "False") else int(value)
        literal: types.Type = types.literal(constant)  # type: ignore[no-untyped-call]
        return literal
    code, _, shape = token.partition("[")
    if code not in _SCALARS:
        raise ValueError(f"unknown type code {code!r} in the kernel signature token {token!r}")
    if not shape:
        return _SCALARS[code]
    shape = shape.rstrip("]")
    readonly = shape.endswith("r")
    ndim, layout = int(shape[0]), shape[1]
    array: types.Type = types.Array(_SCALARS[code], ndim, layout, readonly=readonly)  # type: ignore[call-overload]
    return array


def _dispatchers(module: str) -> dict[str, Dispatcher]:
    return {
        name: obj
        for name, obj in vars(sys.modules[module]).items()
        if isinstance(obj, Dispatcher) and obj.py_func.__module__ == module
    }


def observed() -> dict[str, set[str]]:
    """The signatures each engine kernel of this process has been compiled for, by
    ``module.name``: those the table must hold."""
    out: dict[str, set[str]] = {}
    for module in sorted(m for m in sys.modules if m.startswith("rsep.engine.")):
        for name, kernel in _dispatchers(module).items():
            if kernel.signatures:
                out[f"{module}.{name}"] = {encode(s) for s in kernel.signatures}
    return out


def warm() -> None:
    """Compile (or load from numba's cache) the kernels of :data:`SIGNATURES` in the
    engine's modules imported so far (those of the evaluators built), so that a query's
    first batches run them at once."""
    for qualified, signatures in SIGNATURES.items():
        module, _, name = qualified.rpartition(".")
        if module not in sys.modules:
            continue
        kernel = getattr(sys.modules[module], name)
        done = {encode(s) for s in kernel.signatures}
        for signature in signatures:
            if signature not in done:
                kernel.compile(decode(signature))


SIGNATURES: dict[str, tuple[str, ...]] = {
    "rsep.engine.automaton.absent": (
        (
            "i4[2C] i8[1C] i8[2C] i8[2C] i8[1C] i8[1C] i8[1C] i8[1C] i8[1C] i8[1C] i4[1C] i4[2C] "
            "i4[2C] i4[1C] i8[1C] i8[1C] i8[1C] i8[1C] i4[2C] i4[1C] i1[2C] i8[1C] i4[2C] i1[1C] "
            "i4[1C] i8[1C] i1[1C] i1[1C] f8[1C] b1[1C] i4[1C]"
        ),
    ),
    "rsep.engine.automaton.run_partitions": (
        (
            "i8[1C] i4[1C] i4[1C] i4[1C] i8[1C] i8[1C] b1[1C] b1[1C] i1[1C] i1[1C] i8[1C] i4[1C] "
            "i8[2C] i4[2C] i4[2C] i4[1C] i8[1C] i8[1C] b1[1C] i4[2C] i4[1C] i8[2C] i4[2C] i8[1C] "
            "i8[1C] i8[1C] i8[1C] i4[2C] i4[1C] i1[2C] i8[1C] i4[2C] i1[1C] i4[1C] i8[1C] i1[1C] "
            "i1[1C] f8[1C] b1[1C] i8[2C] i4[1C] i8 i8 b1 i4[2C] i8[2C] i4[2C] i8 i8"
        ),
    ),
    "rsep.engine.batch._after_newline": ("u1[1C] i8 i8",),
    "rsep.engine.batch._encode": ("u8[1C] i8[1C] i8[1C]",),
    "rsep.engine.batch._hashes": ("u8[1C] i8[1C] i8[1C]",),
    "rsep.engine.batch._repeats": ("i4[1C] i4[1C] i4[1C] i4[1C]",),
    "rsep.engine.batch._rows_of": ("i8[1C] i4[1C] i4[1C] i4[1C] i8[1C] i8[1C]",),
    "rsep.engine.batch._same_hashes": ("u8[1C] u8[1C]",),
    "rsep.engine.batch._store_order": (
        "u8[1C] i8[1C] i8[1C] i8[1C] i8[1C] i8[1C] i4[1C]",
        "u8[1C] i8[1C] i8[1C] i8[1C] i8[1Cr] i8[1Cr] i4[1C]",
    ),
    "rsep.engine.batch._times": ("u8[1C] i8[1C] i8[1C] u8[1Cr] i8[1C] b1",),
    "rsep.engine.batch._tokens": ("u8[1C] i8 b1[1C] i8 i8",),
    "rsep.engine.expression._rows": ("i4[1C] i8[1C] i4[2C] i1[1C] i1[1C] f8[1C] b1[1C]",),
    "rsep.engine.sequence._by_key_within_instants": ("i8[1C] u8[1C]",),
    "rsep.engine.sequence._first_seen": ("i4[1C] i8",),
    "rsep.engine.sequence._grouped": ("i4[1C] i8",),
    "rsep.engine.terms._find": (
        "u8[1C] i8[2A] i8[2A] (i8[1C],u8[1C],i8[1C],u8[1C]) i8[1C]",
        "u8[1C] i8[2C] i8[2C] (i8[1C],u8[1C],i8[1C],u8[1C]) i8[1C]",
    ),
    "rsep.engine.terms._gather": ("u1[1C] i8[1C] i8[1C]",),
    "rsep.engine.terms._insert": ("u8[1C] i8[1C] i8[1C] (i8[1C],u8[1C],i8[1C],u8[1C]) i8",),
    "rsep.engine.terms._plain": ("u8[1C] i8[1C] i8[1C] b1[2C]",),
    "rsep.engine.terms._rehash_tagged": ("i8[1C] u8[1C] i8",),
}
"""The signatures the engine's evaluators call each kernel with, by ``module.name``
(``tests/engine/test_kernels.py`` fails, naming it, when a query calls one not here)."""
