"""UC1 of SPAseq through the Python API: a household draws much power from the grid, the
weather turns favourable, and right after the solar panels deliver (examples/uc1-smart-grid),
over three streams built with pandas from one table of smart-home rows.

The real rows (UMass Smart* HomeC) are not in the repository (no licence to copy them), so
this script generates rows like them with :mod:`rsep.workloads` (seeded, every weather
summary marked ``(synthetic)``); examples/uc1-smart-grid/README.md runs the real sample.
Run from the repository's root: ``python examples/api/uc1_smart_grid.py``. Notebook-style:
each ``# %%`` is a cell.
"""

# %% The query: A (use > 1.2 kW); B+ (a clear-day report, skip till next); C (solar > 0.1 kW)
import io
from pathlib import Path

import pandas as pd

import rsep
from rsep.workloads import homec_rows

query = rsep.Query.read(Path("examples/uc1-smart-grid/smart-grid.spaseq"))
print(query.explain().split("parameters")[0])

# %% A day of generated HomeC rows (one a minute, ``time`` advancing 1 s a row as in HomeC)
ROWS = 1440
homec = pd.read_csv(io.StringIO("".join(homec_rows(ROWS, seed=1))), dtype=str)
homec["t"] = homec["time"].astype("int64") * 1000  # Unix seconds to the plan's milliseconds
print(f"{len(homec):,} rows, {homec['summary'].str.endswith('(synthetic)').sum():,} synthetic")

# %% The rows as triples on SPAseq's three smart-home streams
# The triples the query reads, with the IRIs of the homec-power, homec-weather and
# homec-generation mappings (which write a few more per row: location, source, type).
SM, POWER, ENV = (
    "http://www.smart.com/",
    "http://www.smart.com/power#",
    "http://www.smart.com/environmental#",
)
DOUBLE = "^^<http://www.w3.org/2001/XMLSchema#double>"


def triples(stream: str, *rows: tuple[pd.Series, str, pd.Series]) -> pd.DataFrame:
    """One event per HomeC row on ``stream``: the triples (s, p, o) of each row."""
    return pd.concat(
        pd.DataFrame(
            {
                "stream": SM + stream,
                "t_start": homec["t"],
                "t_end": homec["t"],
                "s": s,
                "p": p,
                "o": o,
            }
        )
        for s, p, o in rows
    )


house = f"<{POWER}houseC>"
reading = "<" + SM + "homec/power-" + homec["time"] + ">"
generation = "<" + SM + "homec/generation-" + homec["time"] + ">"
weather = "<" + ENV + "homec-weather-" + homec["time"] + ">"
table = pd.concat(
    [
        triples(
            "power",
            (house, f"<{POWER}haspower>", reading),
            (reading, f"<{SM}use>", '"' + homec["use [kW]"] + '"' + DOUBLE),
        ),
        triples(
            "environmental",
            (weather, f"<{ENV}haslocation>", f"<{SM}location#houseC>"),
            (weather, f"<{SM}icon>", '"' + homec["icon"] + '"'),
            (weather, f"<{SM}temperature>", '"' + homec["temperature"] + '"' + DOUBLE),
        ),
        triples(
            "generation",
            (house, f"<{POWER}haspower>", generation),
            (generation, f"<{SM}gen>", '"' + homec["gen [kW]"] + '"' + DOUBLE),
        ),
    ]
)
table = table.sort_values(["t_start", "stream"], kind="stable")  # an event's rows adjacent
print(f"{len(table):,} triples on {table['stream'].nunique()} streams")

# %% Run it on the engine in this process and on the oracle: the same answers
found, oracle = (query.run(table, engine=e).to_pandas() for e in ("local", "reference"))
in_order = [frame.sort_values(list(frame.columns), ignore_index=True) for frame in (found, oracle)]
pd.testing.assert_frame_equal(*in_order)  # the same answers (a bag per instant)

# %% The notifications: the draw, the first clear-day report after it, the solar output
for column in ("use", "temp", "gen"):
    found[column] = found[column].str.extract(r'^"([^"]*)"', expand=False).astype(float)
found["row A"] = (found["interval_start"] // 1000 - int(homec["time"][0])).astype(int)
found["row C"] = (found["interval_end"] // 1000 - int(homec["time"][0])).astype(int)
print(found[["row A", "use", "icon", "temp", "row C", "gen"]].to_string(index=False))
print(f"{len(found)} notifications")
