"""Declarative mappings from CSV rows to RDF events (one mapping file per data set, no code).

A mapping is a TOML file: how to read the CSV (``[source]``), the prefixes, where the
event time is (``[time]``), the stream and event IRIs (templates), optional lookups of
terms in a background RDF graph (``[[lookup]]``), and the resources each row becomes
(``[[resource]]``). Each CSV row becomes one event. ``docs/mappings.md`` documents the
format; ``src/rsep/mappings/`` holds the mappings of the shipped data sets.

The compiled form (:class:`RowMapper`) is plain Python and picklable: the Spark converter
ships it to its tasks.
"""

from __future__ import annotations

import csv
import gzip
import io
import lzma
import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from importlib import resources
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from rsep.errors import UserError
from rsep.rdf.terms import RDF, XSD
from rsep.rdf.time import zone

_FIELD_RE = re.compile(r"\{([^{}]+)\}")
_CURIE_RE = re.compile(r"^([A-Za-z][\w.-]*|):(.*)$", re.S)
_IRI_SAFE = "/:?#[]@!$&'()*+,;=-._~%"

_LEXICAL: dict[str, re.Pattern[str]] = {
    XSD + "integer": re.compile(r"^[+-]?\d+$"),
    XSD + "int": re.compile(r"^[+-]?\d+$"),
    XSD + "long": re.compile(r"^[+-]?\d+$"),
    XSD + "nonNegativeInteger": re.compile(r"^\+?\d+$"),
    XSD + "decimal": re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$"),
    XSD + "double": re.compile(r"^([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?INF|NaN)$"),
    XSD + "float": re.compile(r"^([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?INF|NaN)$"),
    XSD + "boolean": re.compile(r"^(true|false|1|0)$"),
    XSD + "dateTime": re.compile(
        r"^-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$"
    ),
}

MAPPINGS_PACKAGE = "rsep.mappings"

Lookups = dict[str, dict[tuple[str, ...], str]]


class RowError(Exception):
    """Why one CSV row cannot become an event (the caller adds file and line)."""


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class Template:
    """A string with ``{column}`` fields; ``{__line__}``, ``{__file__}`` name the record."""

    parts: tuple[str, ...]  # literal text at even positions, field names at odd ones
    escape: Callable[[str], str] = field(default=str, compare=False)

    @classmethod
    def parse(cls, text: str, escape: Callable[[str], str] = str) -> Template:
        """Split ``text`` into literal parts and field names."""
        return cls(tuple(_FIELD_RE.split(text)), escape)

    @property
    def fields(self) -> tuple[str, ...]:
        """The column names the template reads."""
        return self.parts[1::2]

    def render(self, row: dict[str, str]) -> str:
        """Fill the fields from ``row``; an empty or missing value is a :class:`RowError`."""
        out: list[str] = []
        for i, part in enumerate(self.parts):
            if i % 2 == 0:
                out.append(part)
                continue
            value = row.get(part)
            if value is None:
                raise RowError(f"no column {part!r}")
            if value == "":
                raise RowError(f"empty value in column {part!r}")
            out.append(self.escape(value))
        return "".join(out)


_PLAIN_RE = re.compile(r"[A-Za-z0-9._~:/#-]*")


def _iri_escape(value: str) -> str:
    if _PLAIN_RE.fullmatch(value):
        return value
    return quote(value, safe=_IRI_SAFE)


def _literal_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")


# --------------------------------------------------------------------------- term specs


@dataclass(frozen=True)
class IriSpec:
    """A term written as an IRI template (``<…{col}…>`` or a CURIE), or ``_:…`` blank node."""

    prefix: str
    template: Template
    suffix: str
    optional: bool = False


@dataclass(frozen=True)
class LiteralSpec:
    """A literal from a template, with a datatype or a language tag; checked lexically."""

    template: Template
    datatype: str | None = None
    language: str | None = None
    optional: bool = False


@dataclass(frozen=True)
class LookupSpec:
    """A term found in a lookup table (from a background graph) by a key of rendered terms."""

    table: str
    key: tuple[IriSpec | LiteralSpec, ...]
    optional: bool = False


TermSpec = IriSpec | LiteralSpec | LookupSpec


@dataclass(frozen=True)
class Resource:
    """The triples one row gives about one subject."""

    subject: IriSpec
    properties: tuple[tuple[str, TermSpec], ...]  # (predicate in N-Triples, object spec)


# --------------------------------------------------------------------------- compiler


def compile_mapping(mapping: Mapping) -> str:
    """Python source of ``map_terms(row) -> (stream, event_id, triples)`` for ``mapping``.

    Each cell is read, checked and escaped once; each distinct term is built once per row;
    an optional term whose cells are empty drops only its triple. The bad-record reasons are
    those of :class:`RowError`: no column, empty value, invalid lexical form, no lookup entry.
    """
    return _Compiler(mapping).source()


class _Compiler:
    def __init__(self, mapping: Mapping) -> None:
        self.mapping = mapping
        self.cells: dict[str, str] = {}  # column -> variable holding its raw value
        self.terms: dict[object, str] = {}  # spec key -> variable holding the term
        self.counter = 0

    def source(self) -> str:
        m = self.mapping
        body: list[str] = []
        stream = self.term(m.stream, body)
        event = self.term(m.event, body)
        body.append("triples = []")
        for resource in m.resources:
            subject = self.term(resource.subject, body)
            for predicate, spec in resource.properties:
                if spec.optional:
                    inner: list[str] = []
                    saved = dict(self.cells), dict(self.terms)
                    value = self.term(spec, inner)
                    self.cells, self.terms = saved
                    blank = (
                        " or ".join(f"not row.get({name!r}, '').strip()" for name in _columns(spec))
                        or "False"
                    )
                    body.append("try:")
                    body.extend("    " + line for line in inner)
                    body.append("except RowError:")
                    body.append(f"    if not ({blank}):")
                    body.append("        raise")
                    body.append("else:")
                    body.append(f"    triples.append(({subject}, {predicate!r}, {value}))")
                else:
                    value = self.term(spec, body)
                    body.append(f"triples.append(({subject}, {predicate!r}, {value}))")
        body.append(f"return {stream}, {event}, triples")
        return "def map_terms(row):\n" + "\n".join("    " + line for line in body) + "\n"

    def fresh(self, kind: str) -> str:
        """A new variable name (cells ``c…``, terms ``t…``)."""
        self.counter += 1
        return f"{kind}{self.counter}"

    def cell(self, name: str, out: list[str]) -> str:
        var = self.cells.get(name)
        if var is None:
            var = self.cells[name] = self.fresh("c")
            out.append(f"{var} = row.get({name!r})")
            out.append(f"if {var} is None: raise RowError({f'no column {name!r}'!r})")
            out.append(f"if {var} == '': raise RowError({f'empty value in column {name!r}'!r})")
        return var

    def escaped(self, raw: str, out: list[str]) -> str:
        """The variable holding cell ``raw`` escaped for an IRI (escaped once per row)."""
        key = "iri:" + raw
        var = self.cells.get(key)
        if var is None:
            var = self.cells[key] = self.fresh("e")
            out.append(f"{var} = iri_escape({raw})")
        return var

    def text(self, template: Template, out: list[str], escape: str | None) -> str:
        parts: list[str] = []
        for i, part in enumerate(template.parts):
            if i % 2 == 0:
                if part:
                    parts.append(repr(part))
            else:
                raw = self.cell(part, out)
                parts.append(self.escaped(raw, out) if escape else raw)
        return " + ".join(parts) or "''"

    def term(self, spec: TermSpec, out: list[str]) -> str:
        key = repr(spec)
        var = self.terms.get(key)
        if var is not None:
            return var
        var = self.fresh("t")
        if isinstance(spec, IriSpec):
            escape = "iri_escape" if spec.template.escape is _iri_escape else None
            inner = self.text(spec.template, out, escape)
            out.append(f"{var} = {spec.prefix!r} + {inner} + {spec.suffix!r}")
        elif isinstance(spec, LiteralSpec):
            lexical = self.text(spec.template, out, None)
            out.append(f"{var} = ({lexical}).strip()")
            if spec.datatype is not None:
                short = spec.datatype.removeprefix(XSD)
                if spec.datatype in _LEXICAL:
                    out.append(
                        f"if not LEXICAL[{spec.datatype!r}].match({var}): "
                        f"raise RowError(repr({var}) + {f' is not a valid xsd:{short}'!r})"
                    )
                tail = f'"^^<{spec.datatype}>'
            elif spec.language is not None:
                tail = f'"@{spec.language}'
            else:
                tail = '"'
            out.append(f"{var} = '\"' + literal_escape({var}) + {tail!r}")
        else:
            keys = ", ".join(self.term(part, out) for part in spec.key)
            out.append(f"{var} = LOOKUPS[{spec.table!r}].get(({keys},))")
            out.append(
                f"if {var} is None: raise RowError("
                f"{f'no entry in lookup {spec.table!r} for '!r} + ' '.join(({keys},)))"
            )
        self.terms[key] = var
        return var


def _columns(spec: TermSpec) -> list[str]:
    """The columns a term reads."""
    if isinstance(spec, LookupSpec):
        return [name for part in spec.key for name in part.template.fields]
    return list(spec.template.fields)


# --------------------------------------------------------------------------- time


@dataclass(frozen=True)
class TimeSpec:
    """Where a row's time is and how to read it: ``iso``, ``unix_s``, ``unix_ms`` or strptime."""

    column: str
    format: str = "iso"
    zone_name: str | None = None
    end_column: str | None = None

    def read(self, row: dict[str, str], tz: tzinfo) -> tuple[int, int]:
        start = self._ms(row, self.column, tz)
        end = start if self.end_column is None else self._ms(row, self.end_column, tz)
        if end < start:
            raise RowError(f"time interval ends before it starts: {end} < {start}")
        return start, end

    def _ms(self, row: dict[str, str], column: str, tz: tzinfo) -> int:
        text = row.get(column)
        if text is None:
            raise RowError(f"no time column {column!r}")
        text = text.strip()
        if not text:
            raise RowError(f"missing timestamp in column {column!r}")
        try:
            if self.format == "unix_s":
                return round(float(text) * 1000)
            if self.format == "unix_ms":
                return int(text)
            if self.format == "iso":
                moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            else:
                moment = datetime.strptime(text, self.format)
        except ValueError:
            raise RowError(f"unparsable timestamp {text!r} in column {column!r}") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=tz)
        return int(moment.timestamp() * 1000)


# --------------------------------------------------------------------------- the mapping


@dataclass(frozen=True)
class CsvSource:
    """How to read the CSV files of a data set."""

    delimiter: str = ","
    quote: str = '"'
    header: bool = True
    columns: tuple[str, ...] = ()
    files: str = "*"
    encoding: str = "utf-8"


@dataclass(frozen=True)
class LookupTable:
    """A table of terms read from a background RDF file by a SPARQL SELECT query."""

    name: str
    sources: tuple[str, ...]  # candidate paths, relative to the input; the first that exists
    query: str
    key: tuple[str, ...]
    value: str


@dataclass(frozen=True)
class MappedEvent:
    """One row as an event, every term in N-Triples syntax."""

    stream: str
    event_id: str
    t_start: int
    t_end: int
    triples: list[tuple[str, str, str]]


@dataclass(frozen=True)
class Mapping:
    """A parsed mapping file; :meth:`bind` loads its lookups and gives a :class:`RowMapper`."""

    name: str
    description: str
    path: Path
    source: CsvSource
    time: TimeSpec
    stream: IriSpec
    event: IriSpec
    resources: tuple[Resource, ...]
    lookups: tuple[LookupTable, ...]
    synthetic: bool = False

    def bind(
        self, lookup_paths: dict[str, Path] | None = None, base: Path | None = None
    ) -> RowMapper:
        """Load every lookup table (paths from ``lookup_paths`` or relative to ``base``)."""
        tables: dict[str, dict[tuple[str, ...], str]] = {}
        for table in self.lookups:
            given = (lookup_paths or {}).get(table.name)
            if given is None:
                folder = base or self.path.parent
                candidates = [folder / source for source in table.sources]
                given = next((c for c in candidates if c.exists()), candidates[0])
            tables[table.name] = load_lookup(table, given)
        missing = set(lookup_paths or {}) - {t.name for t in self.lookups}
        if missing:
            raise UserError(f"mapping {self.name!r} has no lookup named {sorted(missing)[0]!r}")
        return RowMapper(self, tables, zone(self.time.zone_name))


@dataclass(frozen=True)
class RowMapper:
    """A mapping with its lookups loaded: turns CSV rows into events.

    The mapping is compiled into one Python function (:func:`compile_mapping`) that reads
    and escapes each cell once and builds every term by concatenation; the compiled
    function is rebuilt from its source after unpickling (in each Spark task).
    """

    mapping: Mapping
    lookups: Lookups
    tz: tzinfo = UTC
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.source:
            object.__setattr__(self, "source", compile_mapping(self.mapping))

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_compiled"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _function(self) -> Callable[[dict[str, str]], tuple[str, str, list[tuple[str, str, str]]]]:
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            scope: dict[str, Any] = {
                "RowError": RowError,
                "iri_escape": _iri_escape,
                "literal_escape": _literal_escape,
                "LEXICAL": _LEXICAL,
                "LOOKUPS": self.lookups,
            }
            exec(compile(self.source, f"<mapping {self.mapping.name}>", "exec"), scope)
            compiled = scope["map_terms"]
            self.__dict__["_compiled"] = compiled
        return compiled  # type: ignore[no-any-return]

    def map_row(self, row: dict[str, str]) -> MappedEvent:
        """The event of one row (``__line__`` and ``__file__`` must be in ``row``)."""
        t_start, t_end = self.mapping.time.read(row, self.tz)
        stream, event_id, triples = self._function()(row)
        return MappedEvent(stream[1:-1], event_id, t_start, t_end, triples)

    def rows(self, stream: IO[str], file_name: str) -> Iterator[tuple[int, dict[str, str] | str]]:
        """Yield ``(line, row)`` for each CSV record, or ``(line, reason)`` for a bad one."""
        src = self.mapping.source
        reader = csv.reader(stream, delimiter=src.delimiter, quotechar=src.quote, strict=True)
        columns = list(src.columns)
        stem = Path(file_name).name
        while True:
            try:
                record = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield reader.line_num, f"malformed CSV: {exc}"
                continue
            if not columns:
                columns = [c.strip() for c in record]
                continue
            if not record or record == [""]:
                continue
            if len(record) != len(columns):
                yield reader.line_num, f"expected {len(columns)} fields, found {len(record)}"
                continue
            row = dict(zip(columns, record, strict=True))
            row["__line__"] = str(reader.line_num)
            row["__file__"] = stem
            yield reader.line_num, row


def load_lookup(table: LookupTable, path: Path) -> dict[tuple[str, ...], str]:
    """Run the table's SELECT over the RDF file at ``path``; key and value in N-Triples."""
    from pyoxigraph import RdfFormat, Store

    if not path.exists():
        raise UserError(
            f"lookup {table.name!r}: no such file {path} (give one with --lookup {table.name}=PATH)"
        )
    suffixes = [s.lower() for s in path.suffixes]
    fmt = {".ttl": RdfFormat.TURTLE, ".n3": RdfFormat.N3, ".nt": RdfFormat.N_TRIPLES}.get(
        next((s for s in reversed(suffixes) if s not in {".xz", ".gz"}), ""), RdfFormat.TURTLE
    )
    store = Store()
    try:
        with open_text(path) as handle:
            store.bulk_load(handle.read().encode(), format=fmt)
    except SyntaxError as exc:
        raise UserError(f"lookup {table.name!r}: {path}: {exc}") from None
    result: dict[tuple[str, ...], str] = {}
    for solution in store.query(table.query):  # type: ignore[union-attr]
        key = tuple(str(solution[v]) for v in table.key)
        result[key] = str(solution[table.value])
    return result


def open_text(path: Path, encoding: str = "utf-8") -> IO[str]:
    """Open a text file, decompressing ``.xz`` and ``.gz`` on the fly."""
    if path.suffix == ".xz":
        return io.TextIOWrapper(lzma.open(path, "rb"), encoding=encoding, newline="")
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding=encoding, newline="")
    return path.open(encoding=encoding, newline="")


# --------------------------------------------------------------------------- loading


def available_mappings() -> list[str]:
    """Names of the mappings shipped with rsep."""
    folder = resources.files(MAPPINGS_PACKAGE)
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def load_mapping(name_or_path: str | Path) -> Mapping:
    """Read a mapping file, or a shipped mapping by name (e.g. ``aarhus-traffic``)."""
    path = Path(name_or_path)
    if not path.exists():
        shipped = resources.files(MAPPINGS_PACKAGE) / f"{name_or_path}.toml"
        if not shipped.is_file():
            names = ", ".join(available_mappings())
            raise UserError(f"no mapping file {name_or_path!r} (shipped mappings: {names})")
        path = Path(str(shipped))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: {exc}") from None
    try:
        return _build(data, path)
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{path}: invalid mapping: {exc}") from None


def _build(data: dict[str, Any], path: Path) -> Mapping:
    prefixes = {"rdf": RDF, "xsd": XSD, **data.get("prefixes", {})}

    def iri(text: str, optional: bool = False) -> IriSpec:
        text = text.strip()
        if text == "a":
            return IriSpec(f"<{RDF}type", Template.parse(""), ">", optional)
        if text.startswith("<") and text.endswith(">"):
            return IriSpec("<", Template.parse(text[1:-1], _iri_escape), ">", optional)
        if text.startswith("_:"):
            return IriSpec("_:", Template.parse(text[2:], _iri_escape), "", optional)
        match = _CURIE_RE.match(text)
        if match is None or match.group(1) not in prefixes:
            raise ValueError(f"undeclared prefix in {text!r}")
        return IriSpec(
            "<" + prefixes[match.group(1)],
            Template.parse(match.group(2), _iri_escape),
            ">",
            optional,
        )

    def expand(text: str) -> str:
        spec = iri(text)
        if spec.template.fields:
            raise ValueError(f"a datatype or predicate cannot have fields: {text!r}")
        return spec.prefix + spec.template.parts[0] + spec.suffix

    def term(value: Any) -> TermSpec:
        if isinstance(value, str):
            return iri(value)
        if not isinstance(value, dict):
            raise ValueError(f"a term is a string or a table, not {value!r}")
        optional = bool(value.get("optional", False))
        if "lookup" in value:
            keys = tuple(term(k) for k in value["key"])
            if any(isinstance(k, LookupSpec) for k in keys):
                raise ValueError("a lookup key cannot itself be a lookup")
            return LookupSpec(value["lookup"], keys, optional)  # type: ignore[arg-type]
        if "iri" in value:
            return iri(value["iri"], optional)
        if "value" in value:
            datatype = value.get("datatype")
            dt = expand(datatype)[1:-1] if datatype else None
            return LiteralSpec(
                Template.parse(value["value"], str), dt, value.get("language"), optional
            )
        raise ValueError(f"a term table needs 'iri', 'value' or 'lookup': {value!r}")

    src = data.get("source", {})
    source = CsvSource(
        delimiter=src.get("delimiter", ","),
        quote=src.get("quote", '"'),
        header=src.get("header", True),
        columns=tuple(src.get("columns", ())),
        files=src.get("files", "*"),
        encoding=src.get("encoding", "utf-8"),
    )
    if not source.header and not source.columns:
        raise ValueError("[source] without a header needs 'columns'")
    t = data["time"]
    time = TimeSpec(t["column"], t.get("format", "iso"), t.get("zone"), t.get("end_column"))
    zone(time.zone_name)  # fail early on an unknown zone
    resources_: list[Resource] = []
    for res in data.get("resource", []):
        props: list[tuple[str, TermSpec]] = []
        for key, value in res.items():
            if key == "subject":
                continue
            pred = f"<{RDF}type>" if key == "a" else expand(key)
            for item in value if isinstance(value, list) else [value]:
                props.append((pred, term(item)))
        resources_.append(Resource(iri(res["subject"]), tuple(props)))
    lookups = tuple(
        LookupTable(
            lk["name"],
            tuple([lk["source"]] if isinstance(lk["source"], str) else lk["source"]),
            lk["query"],
            tuple(lk["key"]),
            lk["value"],
        )
        for lk in data.get("lookup", [])
    )
    names = {lk.name for lk in lookups}
    for res_ in resources_:
        for _, spec in res_.properties:
            if isinstance(spec, LookupSpec) and spec.table not in names:
                raise ValueError(f"undefined lookup {spec.table!r}")
    if not resources_:
        raise ValueError("a mapping needs at least one [[resource]]")
    return Mapping(
        name=data.get("name", path.stem),
        description=data.get("description", ""),
        path=path,
        source=source,
        time=time,
        stream=iri(data["stream"]),
        event=iri(data.get("event", "<urn:rsep:event:{__file__}:{__line__}>")),
        resources=tuple(resources_),
        lookups=lookups,
        synthetic=bool(data.get("synthetic", False)),
    )
