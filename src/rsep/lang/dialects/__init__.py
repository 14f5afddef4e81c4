"""The query languages rsep reads: one small module per dialect, holding its differences.

Following the sqlglot model (STYLE.md), a dialect is a subclass of :class:`Dialect` that
names only what it changes: the grammar extension file appended to SPARQL 1.1
(``grammar/<name>.lark``, see :func:`rsep.lang.parser.build_parser`), the keywords it adds,
the textual cues by which :func:`detect_dialect` recognises it, and its defaults for the
operational parameters that make RSP and CEP engines answer differently (DESIGN.md, "The
plan makes hidden choices explicit"). Every streaming dialect also reads ``stream.lark``:
durations, window specifications with explicit parameters, and ``PRAGMA name = value``.
A dialect module also holds the AST of its own rules: its nodes (the shared streaming ones are
in ``rsep.lang.ast_stream``), its builder (``Dialect.builder``, a subclass of
``rsep.lang.build.Builder``) and its printer (``Dialect.printer``); :meth:`Dialect.parse_query`
gives the checked tree of a text and :meth:`Dialect.print` its text.

The parameters (:data:`PARAMETER_NAMES`) come from the papers: window origin t0 and the present
window (RSP-QL Semantics, Definition 13), report policies (RSP-QL, "Evaluation time
instants", after SECRET), R2S operators (RSP-QL, Definitions 20-22), event selection
strategies (SPAseq, Sect. 4.2 and 5), selection and consumption policies (RSEP-QL, Sect.
4.3 and 4.4), point or interval timestamps (EP-SPARQL, Sect. 4.2; CQELS-CEP, Sect. 3), and
the CSR-Bench engine profiles (``csrbench/config/*.properties``). docs/languages.md has the
table of every dialect's defaults and where each comes from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib import import_module, resources
from typing import ClassVar

from lark import Lark, Token, Tree

from rsep.errors import UserError
from rsep.lang import ast
from rsep.lang.build import Builder, build
from rsep.lang.checks import check_sparql
from rsep.lang.dialects.stream import StreamBuilder, StreamPrinter
from rsep.lang.parser import GRAMMAR_PACKAGE, build_parser, parse_with
from rsep.lang.printer import Printer, to_sparql

__all__ = [
    "DETECTION_ORDER",
    "PARAMETER_NAMES",
    "SHARED_DEFAULTS",
    "Cues",
    "Default",
    "Dialect",
    "StreamingDialect",
    "all_dialects",
    "cue",
    "cue_text",
    "defaults_of",
    "detect_dialect",
    "get_dialect",
    "keyword_cue",
    "parse",
]

# The cues of a dialect: regular expressions over cue_text(query); one match is enough.
Cues = tuple[re.Pattern[str], ...]

# A default: the value, written as in ``PRAGMA name = value`` or ``--set name=value``, and a
# one-line justification citing the paper section (or engine configuration) it comes from.
Default = tuple[str, str]

# The names of the operational parameters a query may set with ``PRAGMA name = value`` and
# for which every dialect declares a default (docs/languages.md). Only the names live here:
# the allowed values and their typed reading are ``rsep.algebra.params.PARAMETERS``, which
# checks at import that it knows every one of these names; ``rsep.algebra.compile`` checks a
# PRAGMA's value and reports it with the PRAGMA's line and column.
PARAMETER_NAMES: tuple[str, ...] = (
    "window.t0",
    "window.present",
    "window.report",
    "r2s",
    "time_unit",
    "lateness",
    "strategy",
    "selection",
    "consumption",
    "input_unit",
    "timestamps",
    "profile",
    "entailment",
    "entailment.scope",
)

SHARED_DEFAULTS: Mapping[str, Default] = {
    "input_unit": (
        "triple",
        "only RSEP-QL consumes input (RSEP-QL Sect. 4.4), and its Def. 8-9 make the potential "
        "input a set of triples",
    ),
    "entailment": (
        "none",
        "SPARQL 1.1 matches basic graph patterns under simple entailment (Sect. 18); "
        "C-SPARQL reasons with RDFS and EP-SPARQL with its background knowledge only when "
        "asked (docs/reasoning.md)",
    ),
    "entailment.scope": (
        "both",
        "EP-SPARQL Sect. 5: background knowledge and streams are reasoned over together",
    ),
}
"""The defaults of parameters only one paper defines, the same in every dialect: a dialect
takes them unless its ``defaults`` name the parameter (:meth:`Dialect.__init_subclass__`)."""


class Dialect:
    """A query language rsep reads: SPARQL 1.1 plus the differences its subclass declares.

    A subclass sets ``name`` (the ``--dialect`` value), ``title``, ``grammar`` (its own
    extension file under ``rsep/lang/grammar``; files of the base classes come first),
    ``keywords`` (the words it adds), ``cues`` (regular expressions matched against
    :func:`cue_text` of a query; one match is enough) and ``defaults`` (one
    :data:`Default` for every name in :data:`PARAMETER_NAMES`).
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    grammar: ClassVar[str | None] = None
    keywords: ClassVar[frozenset[str]] = frozenset()
    cues: ClassVar[Cues] = ()
    defaults: ClassVar[Mapping[str, Default]] = {}
    builder: ClassVar[type[Builder]] = Builder
    printer: ClassVar[type[Printer]] = Printer

    def __init_subclass__(cls, **kwargs: object) -> None:
        """A subclass's own ``defaults``, completed by :data:`SHARED_DEFAULTS`."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("defaults")
        if own is not None:
            cls.defaults = {**SHARED_DEFAULTS, **own}

    @classmethod
    def grammar_files(cls) -> tuple[str, ...]:
        """The extension files appended to ``sparql.lark``, base classes' first."""
        files: list[str] = []
        for klass in reversed(cls.__mro__):
            own = klass.__dict__.get("grammar")
            if isinstance(own, str) and own not in files:
                files.append(own)
        return tuple(files)

    def parser(self, start: str = "query_unit") -> Lark:
        """The LALR(1) parser of this dialect (built once per process and start rule)."""
        return build_parser(*(_grammar(file) for file in self.grammar_files()), start=start)

    def parse(self, text: str, start: str = "query_unit") -> Tree[Token]:
        """Parse ``text`` in this dialect; raise :class:`~rsep.lang.parser.QuerySyntaxError`."""
        tree = parse_with(self.parser(start), text)
        self.validate(tree, text)
        return tree

    def validate(self, tree: Tree[Token], text: str) -> None:
        """Reject what this dialect's LALR(1) grammar has to over-accept; raise
        :class:`~rsep.lang.parser.QuerySyntaxError`. Nothing, unless a dialect says so."""

    def parse_query(
        self,
        text: str,
        *,
        prefixes: Mapping[str, str] | None = None,
        base: str | None = None,
        check: bool = True,
    ) -> ast.Query:
        """Parse, build and check a query of this dialect: its AST (``rsep.lang.ast`` and
        the dialect's nodes). Raises :class:`~rsep.lang.parser.QuerySyntaxError` or
        :class:`~rsep.lang.checks.QuerySemanticError`; ``check=False`` skips the checks of
        SPARQL 1.1 (``check_sparql``) and of the streaming parts (``stream_checks``).

        ``prefixes`` and ``base`` are declared outside the text (an engine's prologue).
        """
        tree = self.parse(text)
        query = build(tree, prefixes=prefixes, base=base, builder=self.builder)
        if check:
            # stream_checks knows every dialect's nodes, so it imports the dialect modules
            from rsep.lang.stream_checks import check_query

            check_sparql(self.sparql_tree(tree), prefixes=(prefixes or {}).keys())
            check_query(query, self)
        return query

    def sparql_tree(self, tree: Tree[Token]) -> Tree[Token]:
        """``tree`` as ``check_sparql`` (SPARQL 1.1's rules) should see it: a dialect
        rewrites, in place, the parts of its own syntax those rules would misread. The tree
        is not used afterwards."""
        return tree

    def print(self, node: ast.Node) -> str:
        """Text of ``node`` (a query, or a pattern, expression…) in this dialect; parsed
        back (:meth:`parse_query`) it builds the same tree, and printing it is idempotent."""
        return to_sparql(node, printer=self.printer)

    def matches(self, text: str) -> bool:
        """Whether one of this dialect's cues occurs in ``text`` (already :func:`cue_text`)."""
        return any(cue.search(text) for cue in self.cues)

    def parameter(self, name: str) -> str:
        """This dialect's default value of the operational parameter ``name``."""
        return self.defaults[name][0]

    def __repr__(self) -> str:
        return f"<dialect {self.name}>"


class StreamingDialect(Dialect):
    """A dialect that reads streams: it shares ``stream.lark`` (durations, windows, PRAGMA)."""

    grammar = "stream.lark"
    builder: ClassVar[type[Builder]] = StreamBuilder
    printer: ClassVar[type[Printer]] = StreamPrinter


@cache
def _grammar(file: str) -> str:
    return resources.files(GRAMMAR_PACKAGE).joinpath("grammar", file).read_text(encoding="utf-8")


# Detection --------------------------------------------------------------------------------

# The explicit order in which cues are tried: the most specific constructs first, so a
# query that mixes cues (an RSEP-QL query has FROM NAMED WINDOW, like RSP-QL; CQELS-CEP
# queries use RSP-QL's window declarations; a SPAseq query has FROM STREAM, like C-SPARQL)
# goes to the dialect that owns the rarer construct; RDFox's FROM dynamic stream <s> [...]
# comes before CQELS-QL, whose cue STREAM <s> [ not after FROM it also shows. SPARQL, without
# cues, comes last.
DETECTION_ORDER = (
    "spaseq",
    "rsepql",
    "cqelscep",
    "epsparql",
    "rspql",
    "rdfox",
    "csparql",
    "cqels",
    "sparql",
)

# Other spellings of dialect names: CQELS-QL, SPARQL 1.1.
_ALIASES = {"cqelsql": "cqels", "sparql11": "sparql", "sparql1.1": "sparql"}

_LEXEMES = re.compile(
    r"""(?P<iri><[^<>"{}|^`\\\s]*>)"""
    r'''|(?P<string>"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^'\\]|\\.|'(?!''))*\'\'\''''
    r"""|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"|(?P<comment>#[^\n]*)",
    re.S,
)
_BLANKS = re.compile(r"\s+")


def cue_text(text: str) -> str:
    """``text`` as cues see it: every IRI written ``<>``, every string ``""``, no comments,
    and each run of white space one blank (so cues need not care about layout)."""

    def replace(match: re.Match[str]) -> str:
        if match.group("iri") is not None:
            return "<>"
        if match.group("string") is not None:
            return '""'
        return " "

    return _BLANKS.sub(" ", _LEXEMES.sub(replace, text)).strip()


def get_dialect(name: str) -> Dialect:
    """The dialect called ``name`` (a value of ``--dialect``, e.g. ``rspql``)."""
    key = name.strip().lower().replace("-", "").replace("_", "")
    key = _ALIASES.get(key, key)
    if key not in DETECTION_ORDER:
        known = ", ".join(sorted(DETECTION_ORDER))
        raise UserError(f"unknown dialect {name!r} (known: {known})")
    return _load(key)


@cache
def _load(name: str) -> Dialect:
    module = import_module(f"{__name__}.{name}")
    dialect = module.DIALECT
    assert isinstance(dialect, Dialect) and dialect.name == name
    return dialect


def all_dialects() -> tuple[Dialect, ...]:
    """Every dialect, in :data:`DETECTION_ORDER`."""
    return tuple(_load(name) for name in DETECTION_ORDER)


def detect_dialect(text: str) -> Dialect:
    """The dialect whose cues ``text`` shows first, in :data:`DETECTION_ORDER`; SPARQL when
    none does. ``--dialect`` overrides detection."""
    cues = cue_text(text)
    for dialect in all_dialects():
        if dialect.matches(cues):
            return dialect
    return _load("sparql")


def parse(text: str, dialect: str | Dialect | None = None) -> tuple[Dialect, Tree[Token]]:
    """Parse ``text`` in ``dialect`` (a name, a :class:`Dialect`, or detected when ``None``)
    and return the dialect with the tree; raise :class:`~rsep.lang.parser.QuerySyntaxError`."""
    if dialect is None:
        chosen = detect_dialect(text)
    elif isinstance(dialect, Dialect):
        chosen = dialect
    else:
        chosen = get_dialect(dialect)
    return chosen, chosen.parse(text)


def keyword_cue(*words: str, then: str = "") -> re.Pattern[str]:
    """A case-insensitive cue: the keywords ``words`` as whole words (not part of a
    prefixed name or a variable), separated by single blanks, followed by ``then``."""
    body = " ".join(re.escape(word) for word in words)
    return re.compile(rf"(?<![\w:?$\-]){body}(?![\w\-]){then}", re.I)


def cue(pattern: str, flags: int = re.I) -> re.Pattern[str]:
    """A cue from a regular expression over :func:`cue_text` (case-insensitive by default)."""
    return re.compile(pattern, flags)


def defaults_of(dialect: Dialect) -> dict[str, str]:
    """The default value of every parameter for ``dialect``, in :data:`PARAMETER_NAMES` order."""
    return {name: dialect.defaults[name][0] for name in PARAMETER_NAMES}
