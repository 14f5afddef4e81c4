"""rsep: continuous queries and complex event patterns over RDF streams.

Layers (imports point down only): cli, spark, engine, semantics, algebra, lang, rdf.
See docs/architecture.md.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rsep")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
