"""An RSP-QL query through the Python API: RSP-QL Example 3's window over the stream of who
is near which shop, joined with Example 1's background graph of shop owners; the engine in
this process against the oracle, answers as an Arrow table.

Run from the repository's root: ``python examples/api/rspql_background_graph.py``.
Notebook-style: each ``# %%`` is a cell.
"""

# %% The query: a 5 ms window sliding every 2 ms, RSTREAM, the owners from the graph
from pathlib import Path

import rsep

EX = "http://example.org/"
DATA = Path("tests/semantics/data")
query = rsep.Query(
    f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS
SELECT ?who ?owner
FROM <{EX}shops>
FROM NAMED WINDOW :w ON :S_nearby [RANGE PT0.005S STEP PT0.002S]
WHERE {{ WINDOW :w {{ ?who :isNearby ?shop }} ?owner :owns ?shop }}
"""
)
for name, parameter in query.parameters.items():  # every choice, and where it came from
    print(f"{name:<18} {query.parameters.show(name):<22} {parameter.source}")

# %% Over the stream file and the graph file, on the engine and on the oracle
streams = {EX + "S_nearby": DATA / "s_nearby.tnt"}
graphs = {EX + "shops": DATA / "g_shops.ttl"}
table = query.run(streams, graphs).to_arrow()
oracle = query.run(streams, graphs, engine="reference").to_arrow()
key = [("time", "ascending"), ("who", "ascending"), ("owner", "ascending")]
assert table.sort_by(key).equals(oracle.sort_by(key))
print(table.select(["time", "who", "owner"]).to_pandas().to_string(index=False))
print(f"{table.num_rows} answers")
