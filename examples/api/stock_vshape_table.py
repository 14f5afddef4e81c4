"""UC4 of SPAseq through the Python API: the V-shape query of examples/uc4-stock over
one-minute bars turned into a table of triples with pandas (no ``rsep convert``), answers
as a pandas DataFrame.

The real NASDAQ bars of 2008-02-01 are read from ``../shared`` when it is beside the
repository (examples/uc4-stock/README.md: 8 V shapes). They are not in the repository (no
licence to copy them), so elsewhere the script generates bars with V shapes planted where
they are known (:func:`rsep.workloads.stock.vshape_bars`, tickers ``SYN0000``…) and a
knowledge base naming those companies. Run from the repository's root:
``python examples/api/stock_vshape_table.py``. Notebook-style: each ``# %%`` is a cell.
"""

# %% The query and its plan
import io
from pathlib import Path

import pandas as pd
from pyoxigraph import Literal, NamedNode, Triple

import rsep
from rsep.workloads.stock import planted_vshapes, vshape_bars

EXAMPLE = Path("examples/uc4-stock")
BARS = Path("../shared/data/stocks/opencep_nasdaq_2008-02-01/NASDAQ_AAPL_AMZN_GOOG.txt")
query = rsep.Query.read(EXAMPLE / "v-shape.spaseq")
print(query.explain().split("parameters")[0])

# %% The bars: real ones when ../shared is here, else generated ones with planted V shapes
KB = "http://example.org/kb/sp500"
columns = ["ticker", "minute", "open", "high", "low", "close", "volume"]
if BARS.exists():
    bars = pd.read_csv(BARS, header=None, names=columns, dtype=str)
    kb: dict[str, object] = {KB: EXAMPLE / "data" / "sp500-sectors.ttl"}
    expected = 8  # examples/uc4-stock/README.md
else:
    GENERATED = 1400
    lines = "".join(vshape_bars(GENERATED, seed=4))
    bars = pd.read_csv(io.StringIO(lines), header=None, names=columns, dtype=str)
    company = {ticker: NamedNode(f"http://example/company#{ticker}") for ticker in bars["ticker"]}
    kb = {
        KB: {
            Triple(node, NamedNode(f"http://example/{p}"), Literal(value))
            for ticker, node in company.items()
            for p, value in (("name", f"{ticker} (synthetic)"), ("sector", "synthetic"))
        }
    }
    expected = planted_vshapes(GENERATED)
print(f"{len(bars):,} bars of {bars['ticker'].nunique()} companies")

# %% The bars as a table of triples in the event store's schema (rsep.TABLE_COLUMNS)
times = pd.to_datetime(bars["minute"], format="%Y%m%d%H%M").dt.tz_localize("America/New_York")
ms = times.astype("int64") // 1_000_000
stream = "http://example.org/stream/nasdaq"
line = bars.index.astype(str)
event = "<" + stream + "/" + bars["ticker"] + "/" + bars["minute"] + "/" + line + ">"
company_iri = "<http://example/company#" + bars["ticker"] + ">"
DOUBLE = "^^<http://www.w3.org/2001/XMLSchema#double>"
triples = pd.concat(
    [
        pd.DataFrame(
            {
                "stream": stream,
                "event_id": event,
                "t_start": ms,
                "t_end": ms,
                "s": company_iri,
                "p": f"<http://example/{name}>",
                "o": '"' + bars[column] + '"' + DOUBLE,
            }
        )
        for name, column in (("price", "close"), ("volume", "volume"))
    ]
).sort_index(kind="stable")
print(f"{len(bars):,} bars, {len(triples):,} triples")

# %% Run it on the engine in this process; the oracle gives the same answers
found, oracle = (query.run(triples, kb, engine=e).to_pandas() for e in ("local", "reference"))
in_order = [frame.sort_values(list(frame.columns), ignore_index=True) for frame in (found, oracle)]
pd.testing.assert_frame_equal(*in_order)  # the same answers (a bag per instant)

# %% The V shapes: three consecutive bars of one company, a fall of more than 0.2 %, a recovery
found["A"] = pd.to_datetime(found["interval_start"], unit="ms", utc=True).dt.tz_convert(
    "America/New_York"
)
for column in ("p1", "p2", "p3"):
    found[column] = found[column].str.extract(r'^"([^"]*)"', expand=False).astype(float)
print(found[["company", "name", "A", "p1", "p2", "p3"]].head(20).to_string(index=False))
print(f"{len(found)} V shapes, {expected} expected")
