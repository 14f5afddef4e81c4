"""EP-SPARQL's Q-closure through the Python API (Sect. 4.2): query (2), companies whose stock
price drops by more than half, reads the downratings that the CONSTRUCT rule of query (4)
derives from the same stream, as ``rsep run --rules`` does.

Run from the repository's root: ``python examples/api/epsparql_rules.py``.
Notebook-style: each ``# %%`` is a cell.
"""

# %% The two queries of the paper (tests/lang/paper_queries/epsparql), with their prefix
from pathlib import Path

import rsep

EX = "http://example.org/"
PAPER = Path("tests/lang/paper_queries/epsparql")
drops = rsep.Query(f"PREFIX : <{EX}>\n" + (PAPER / "query2.epsparql").read_text("utf-8"))
downratings = rsep.Query(f"PREFIX : <{EX}>\n" + (PAPER / "query4.epsparql").read_text("utf-8"))
closed = drops.with_rules(downratings)
print(closed.explain().split("parameters")[0])

# %% Over the ratings and prices stream: the engine and the oracle agree
stream = {EX + "S": Path("tests/semantics/data/epsparql/ratings.trig")}
found = closed.run(stream).to_pandas()
oracle = closed.run(stream, engine="reference").to_pandas()
columns = list(found.columns)
assert found.sort_values(columns, ignore_index=True).equals(
    oracle.sort_values(columns, ignore_index=True)
)
print(found[["time", "company", "ratingagency"]].to_string(index=False))

# %% Without the rule no drop comes with an agency
alone = drops.run(stream).to_pandas()
print(f"{alone['ratingagency'].notna().sum()} agencies without the rule")
