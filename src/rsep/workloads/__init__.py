"""Workloads at scale for benchmarks: seeded generators that copy the real samples of
``../shared/data`` (schema, event rates, value ranges), and a replicator of the real NASDAQ
bars (issue 7; SPAseq Sec. 8.1 replicates its stock data set the same way).

Every generator streams its output line by line (10 M events never sit in memory), is
deterministic for a seed, writes the sample's own format so that the shipped ``rsep
convert`` mappings (or SPAseq stream descriptions) read it unchanged, and says that its
output is synthetic: in the file name and in a field of every event.

This layer sits beside :mod:`rsep.cli`; only the CLI and the benchmarks import it.
"""

from rsep.workloads.creditcard import card_transactions, write_card_stream
from rsep.workloads.output import SYNTHETIC
from rsep.workloads.smarthome import homec_rows, write_homec
from rsep.workloads.stock import replicate_bars, stock_bars, write_bars, write_replicated_bars

__all__ = [
    "SYNTHETIC",
    "card_transactions",
    "homec_rows",
    "replicate_bars",
    "stock_bars",
    "write_bars",
    "write_card_stream",
    "write_homec",
    "write_replicated_bars",
]
