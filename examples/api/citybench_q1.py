"""CityBench Q1 (RSP-QL) through the Python API: the congestion level of two Aarhus road
segments, over 3-second windows (examples/citybench), on the hour of traffic reports that
ships in examples/citybench/data, turned into a table of triples with pandas.

CityBench's sensor repository, the background graph that tells which property of a sensor
is its congestion level, is GPL-3.0 and not in the repository; this script writes the part
Q1 reads itself: one property per sensor and column, typed as the column's kind
(``ct:CongestionLevel``…), under an IRI of its own (the repository's are not copied). Q1
does not select the property, so its answers are the README's (36).
Run from the repository's root: ``python examples/api/citybench_q1.py``. Notebook-style:
each ``# %%`` is a cell.
"""

# %% The query: a window of 3 s sliding by 1 s on each of two segments' streams
from pathlib import Path

import pandas as pd
from pyoxigraph import NamedNode, Triple

import rsep

EXAMPLE = Path("examples/citybench")
query = rsep.Query.read(EXAMPLE / "Q1.rspql")
print(query.explain().split("parameters")[0])

# %% The reports, one row per observed property (the aarhus-traffic mapping's model)
SES = "http://www.insight-centre.org/dataset/SampleEventService#"
CT = "http://www.insight-centre.org/citytraffic#"
KINDS = {
    "avgSpeed": ["AvgSpeed"],
    "vehicleCount": ["VehicleCount", "CongestionLevel"],  # CityBench's congestion: the count
    "avgMeasuredTime": ["EstimatedTime"],
    "medianMeasuredTime": ["MeasureTime"],
}
files = sorted((EXAMPLE / "data" / "traffic").glob("*.stream"))
reports = pd.concat(pd.read_csv(path, dtype=str) for path in files)
reports["t"] = (
    pd.to_datetime(reports["TIMESTAMP"]).dt.tz_localize("Europe/Copenhagen").astype("int64")
    // 1_000_000
)
observed = reports.melt(
    id_vars=["REPORT_ID", "_id", "t"], value_vars=list(KINDS), var_name="column"
)
observed["kind"] = observed["column"].map(KINDS)
observed = observed.explode("kind").sort_values(["t", "REPORT_ID"], kind="stable")
print(f"{len(reports)} reports of {len(files)} segments, {len(observed)} observations")

# %% The observations as triples; the properties as a background graph
sensor = SES + "AarhusTrafficData" + observed["REPORT_ID"]
subject = "<" + SES + "Observation-" + observed["REPORT_ID"] + "-" + observed["_id"] + "-"
subject += observed["kind"] + ">"
prop = "http://example.org/citybench/property/" + observed["REPORT_ID"] + "-" + observed["kind"]
triples = pd.concat(
    pd.DataFrame(
        {"stream": sensor, "t_start": observed["t"], "t_end": observed["t"], "s": subject}
    ).assign(p=p, o=o)
    for p, o in (
        ("<http://purl.oclc.org/NET/ssnx/ssn#observedBy>", "<" + sensor + ">"),
        ("<http://purl.oclc.org/NET/ssnx/ssn#observedProperty>", "<" + prop + ">"),
        (
            "<http://purl.oclc.org/NET/sao/hasValue>",
            '"' + observed["value"] + '"^^<http://www.w3.org/2001/XMLSchema#double>',
        ),
    )
).sort_index(kind="stable")  # an event's rows adjacent, in time order
repository = {
    Triple(
        NamedNode(iri),
        NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
        NamedNode(CT + kind),
    )
    for iri, kind in set(zip(prop, observed["kind"], strict=True))
}
graphs = {"http://localhost:12345/WebGlCity/RDF/SensorRepository.rdf": repository}

# %% Run it on the engine in this process and on the oracle: the same answers
found, oracle = (query.run(triples, graphs, engine=e).to_pandas() for e in ("local", "reference"))
in_order = [frame.sort_values(list(frame.columns), ignore_index=True) for frame in (found, oracle)]
pd.testing.assert_frame_equal(*in_order)  # the same answers (a bag per instant)

# %% The congestion levels of 182955 and 158505, each second a window closes
found["at"] = pd.to_datetime(found["time"], unit="ms", utc=True).dt.tz_convert("Europe/Copenhagen")
for column in ("v1", "v2"):
    found[column] = found[column].str.extract(r'^"([^"]*)"', expand=False).astype(float)
print(found[["at", "v1", "v2"]].head(9).to_string(index=False))
print(f"{len(found)} answers")  # examples/citybench/README.md: 36
