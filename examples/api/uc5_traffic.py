"""UC5 of SPAseq through the Python API: congestion propagating from one Aarhus road segment
to the two it leads to (examples/uc5-traffic), over the CityPulse reports that ship in
that folder, turned into a table of triples with pandas (no ``rsep convert``).

Run from the repository's root: ``python examples/api/uc5_traffic.py``. Notebook-style:
each ``# %%`` is a cell. Needs nothing outside the repository.
"""

# %% The query: A congested, then B and C congested at one later instant, within 30 minutes
from pathlib import Path

import pandas as pd

import rsep

EXAMPLE = Path("examples/uc5-traffic")
query = rsep.Query.read(EXAMPLE / "congestion-propagation.spaseq")
print(query.explain().split("parameters")[0])

# %% The reports as triples, modelled as the aarhus-traffic mapping models them
# One event per report row, on the segment's stream; one ssn:Observation per column, its
# IRI ending in the observed property's name. The mapping also writes ssn:observedProperty,
# looked up in CityBench's sensor repository (GPL-3.0, not in the repository); the query
# does not read it, so it is left out here.
SES = "http://www.insight-centre.org/dataset/SampleEventService#"
SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
DOUBLE = "^^<http://www.w3.org/2001/XMLSchema#double>"
COLUMNS = {
    "AvgSpeed": "avgSpeed",
    "VehicleCount": "vehicleCount",
    "CongestionLevel": "vehicleCount",
    "EstimatedTime": "avgMeasuredTime",
    "MeasureTime": "medianMeasuredTime",
}
reports = pd.concat(
    pd.read_csv(path, dtype=str) for path in sorted((EXAMPLE / "data" / "traffic").glob("*.stream"))
).reset_index(drop=True)
local = pd.to_datetime(reports["TIMESTAMP"]).dt.tz_localize("Europe/Copenhagen")
reports["t"] = local.astype("int64") // 1_000_000
reports = reports.sort_values("t", kind="stable")
sensor = SES + "AarhusTrafficData" + reports["REPORT_ID"]
rows = []
for kind, column in COLUMNS.items():
    observation = (
        "<" + SES + "Observation-" + reports["REPORT_ID"] + "-" + reports["_id"] + "-" + kind + ">"
    )
    for p, o in (
        (f"<{SSN}observedBy>", "<" + sensor + ">"),
        ("<http://purl.oclc.org/NET/sao/hasValue>", '"' + reports[column] + '"' + DOUBLE),
        ("<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{SSN}Observation>"),
    ):
        rows.append(
            pd.DataFrame(
                {
                    "stream": sensor,
                    "event_id": "<"
                    + SES
                    + "Event-"
                    + reports["REPORT_ID"]
                    + "-"
                    + reports["_id"]
                    + ">",
                    "t_start": reports["t"],
                    "t_end": reports["t"],
                    "s": observation,
                    "p": p,
                    "o": o,
                }
            )
        )
triples = pd.concat(rows).sort_index(kind="stable")  # an event's rows adjacent, in time order
segments = reports["REPORT_ID"].nunique()
print(f"{len(reports):,} reports of {segments} segments, {len(triples):,} triples")

# %% Run it on the engine in this process and on the oracle: the same answers
kb = {"http://example.org/kb/aarhus-segments": EXAMPLE / "data" / "aarhus-segments.ttl"}
found, oracle = (query.run(triples, kb, engine=e).to_pandas() for e in ("local", "reference"))
in_order = [frame.sort_values(list(frame.columns), ignore_index=True) for frame in (found, oracle)]
pd.testing.assert_frame_equal(*in_order)  # the same answers (a bag per instant)

# %% The detections: when 181223 was congested, and when both segments after it were
found["A"] = pd.to_datetime(found["interval_start"], unit="ms", utc=True).dt.tz_convert(
    "Europe/Copenhagen"
)
found["B & C"] = pd.to_datetime(found["interval_end"], unit="ms", utc=True).dt.tz_convert(
    "Europe/Copenhagen"
)
for column in ("speed1", "speed2", "speed3"):
    found[column] = found[column].str.extract(r'^"([^"]*)"', expand=False).astype(float)
print(found[["A", "speed1", "B & C", "speed2", "speed3", "toStreet2"]].to_string(index=False))
print(f"{len(found)} congestion propagations")  # examples/uc5-traffic/README.md: 7
