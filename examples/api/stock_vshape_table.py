"""UC4 of SPAseq on real data through the Python API: the V-shape query of
examples/uc4-stock over NASDAQ one-minute bars, the bars turned into a table of triples with
pandas (no ``rsep convert``), answers as a pandas DataFrame.

Run from the repository's root, with ``../shared`` beside it:
``python examples/api/stock_vshape_table.py``. Notebook-style: each ``# %%`` is a cell.
"""

# %% The query and its plan
from pathlib import Path

import pandas as pd

import rsep

EXAMPLE = Path("examples/uc4-stock")
BARS = Path("../shared/data/stocks/opencep_nasdaq_2008-02-01/NASDAQ_AAPL_AMZN_GOOG.txt")
query = rsep.Query.read(EXAMPLE / "v-shape.spaseq")
print(query.explain().split("parameters")[0])

# %% The bars as a table of triples in the event store's schema (rsep.TABLE_COLUMNS)
columns = ["ticker", "minute", "open", "high", "low", "close", "volume"]
bars = pd.read_csv(BARS, header=None, names=columns, dtype=str)
times = pd.to_datetime(bars["minute"], format="%Y%m%d%H%M").dt.tz_localize("America/New_York")
ms = times.astype("int64") // 1_000_000
stream = "http://example.org/stream/nasdaq"
line = bars.index.astype(str)
event = "<" + stream + "/" + bars["ticker"] + "/" + bars["minute"] + "/" + line + ">"
company = "<http://example/company#" + bars["ticker"] + ">"
DOUBLE = "^^<http://www.w3.org/2001/XMLSchema#double>"
triples = pd.concat(
    [
        pd.DataFrame(
            {
                "stream": stream,
                "event_id": event,
                "t_start": ms,
                "t_end": ms,
                "s": company,
                "p": f"<http://example/{name}>",
                "o": '"' + bars[column] + '"' + DOUBLE,
            }
        )
        for name, column in (("price", "close"), ("volume", "volume"))
    ]
).sort_index(kind="stable")
print(f"{len(bars):,} bars, {len(triples):,} triples")

# %% Run it on the engine in this process; the oracle gives the same answers
kb = {"http://example.org/kb/sp500": EXAMPLE / "data" / "sp500-sectors.ttl"}
found = query.run(triples, kb).to_pandas()
oracle = query.run(triples, kb, engine="reference").to_pandas()
assert (
    found.sort_values(list(found.columns))
    .reset_index(drop=True)
    .equals(oracle.sort_values(list(oracle.columns)).reset_index(drop=True))
)

# %% The V shapes: three consecutive bars of one company, a fall of more than 0.2 %, a recovery
found["A"] = pd.to_datetime(found["interval_start"], unit="ms", utc=True).dt.tz_convert(
    "America/New_York"
)
for column in ("p1", "p2", "p3"):
    found[column] = found[column].str.extract(r'^"([^"]*)"', expand=False).astype(float)
print(found[["company", "name", "A", "p1", "p2", "p3"]].to_string(index=False))
print(f"{len(found)} V shapes")  # examples/uc4-stock/README.md: 8
