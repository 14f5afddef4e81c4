"""The declarative CSV-to-RDF mapping (rsep.rdf.mapping), without Spark."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from rsep.errors import UserError
from rsep.rdf.mapping import RowError, available_mappings, load_mapping

XSD = "http://www.w3.org/2001/XMLSchema#"

MINI = """
name = "mini"
stream = "ex:stream/{station}"
event = "ex:event/{station}/{__line__}"
[source]
delimiter = ";"
[prefixes]
ex = "http://example.org/"
[time]
column = "when"
format = "iso"
zone = "Europe/Copenhagen"
[[resource]]
subject = "ex:obs/{station}/{__line__}"
a = "ex:Observation"
"ex:value" = { value = "{value}", datatype = "xsd:double" }
"ex:label" = { value = "{label}", language = "da", optional = true }
"ex:station" = "<http://example.org/station/{station}>"
"""


def write(tmp_path: Path, text: str, name: str = "m.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def rows(mapper, text: str):  # type: ignore[no-untyped-def]
    return list(mapper.rows(io.StringIO(text), "in.csv"))


def test_row_becomes_one_event_with_typed_terms(tmp_path: Path) -> None:
    mapper = load_mapping(write(tmp_path, MINI)).bind()
    [(line, row)] = rows(mapper, 'station;when;value;label\nA 1;2014-08-01T07:50:00;61;Søf "vej"\n')
    assert line == 2
    event = mapper.map_row(row)
    assert event.stream == "http://example.org/stream/A%201"  # IRI-escaped space
    assert event.event_id == "<http://example.org/event/A%201/2>"
    assert event.t_start == event.t_end == 1406872200000  # 07:50 CEST = 05:50 UTC
    subject = "<http://example.org/obs/A%201/2>"
    assert (subject, f"<{RDF_TYPE}>", "<http://example.org/Observation>") in event.triples
    assert (subject, "<http://example.org/value>", f'"61"^^<{XSD}double>') in event.triples
    assert (subject, "<http://example.org/label>", '"Søf \\"vej\\""@da') in event.triples
    assert len(event.triples) == 4


RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def test_optional_empty_value_drops_only_that_triple(tmp_path: Path) -> None:
    mapper = load_mapping(write(tmp_path, MINI)).bind()
    [(_, row)] = rows(mapper, "station;when;value;label\nB;2014-08-01T07:50:00;1.5;\n")
    assert len(mapper.map_row(row).triples) == 3


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("B;2014-08-01T07:50:00;abc;x", "'abc' is not a valid xsd:double"),
        ("B;;1;x", "missing timestamp in column 'when'"),
        ("B;yesterday;1;x", "unparsable timestamp 'yesterday' in column 'when'"),
        ("B;2014-08-01T07:50:00;;x", "empty value in column 'value'"),
    ],
)
def test_bad_rows_give_a_reason(tmp_path: Path, line: str, reason: str) -> None:
    mapper = load_mapping(write(tmp_path, MINI)).bind()
    [(_, row)] = rows(mapper, f"station;when;value;label\n{line}\n")
    with pytest.raises(RowError, match="^" + reason.replace("(", r"\(")):
        mapper.map_row(row)


def test_wrong_field_count_is_reported_with_its_line(tmp_path: Path) -> None:
    mapper = load_mapping(write(tmp_path, MINI)).bind()
    got = rows(
        mapper,
        "station;when;value;label\nA;2014-08-01T07:50:00;1;x\nA;2014\nA;2014-08-01T07:55:00;2;y\n",
    )
    assert got[1] == (3, "expected 4 fields, found 2")
    assert isinstance(got[0][1], dict) and isinstance(got[2][1], dict)


def test_undeclared_prefix_names_the_mapping_file(tmp_path: Path) -> None:
    path = write(tmp_path, MINI.replace('a = "ex:Observation"', 'a = "sosa:Observation"'))
    with pytest.raises(
        UserError, match=r"m\.toml: invalid mapping: undeclared prefix in 'sosa:Observation'"
    ):
        load_mapping(path)


def test_unknown_mapping_lists_the_shipped_ones() -> None:
    with pytest.raises(UserError, match="shipped mappings: aarhus-parking, aarhus-traffic"):
        load_mapping("no-such-mapping")


def test_time_formats(tmp_path: Path) -> None:
    for fmt, value, expected in [
        ("unix_s", "1451624400", 1451624400000),
        ("unix_ms", "1451624400123", 1451624400123),
        ("%Y%m%d%H%M", "200802010900", 1201874400000),  # 09:00 EST = 14:00 UTC
        ("%y%m%d", "930101", 725842800000),  # 1993-01-01 00:00 CET
    ]:
        zone = {"%Y%m%d%H%M": "America/New_York", "%y%m%d": "Europe/Prague"}.get(fmt, "UTC")
        text = MINI.replace('format = "iso"', f'format = "{fmt}"').replace(
            "Europe/Copenhagen", zone
        )
        mapper = load_mapping(write(tmp_path, text)).bind()
        [(_, row)] = rows(mapper, f"station;when;value;label\nA;{value};1;x\n")
        assert mapper.map_row(row).t_start == expected, fmt


def test_shipped_mappings_load() -> None:
    assert available_mappings() == [
        "aarhus-parking",
        "aarhus-traffic",
        "aarhus-userlocation",
        "aarhus-weather",
        "berka-transactions",
        "homec-generation",
        "homec-power",
        "homec-smarthome",
        "homec-weather",
        "nasdaq-bars",
    ]
    for name in available_mappings():
        assert load_mapping(name).resources


def test_aarhus_lookup_links_observations_to_the_sensor_repository(repo_root: Path) -> None:
    mapper = load_mapping("aarhus-traffic").bind(base=repo_root / "data/aarhus/traffic")
    row = {
        "status": "OK",
        "avgMeasuredTime": "74",
        "avgSpeed": "50",
        "extID": "668",
        "medianMeasuredTime": "73",
        "TIMESTAMP": "2014-08-01T07:50:00",
        "vehicleCount": "5",
        "_id": "1",
        "REPORT_ID": "182955",
        "__line__": "2",
        "__file__": "f",
    }
    event = mapper.map_row(row)
    props = {o for _, p, o in event.triples if p.endswith("#observedProperty>")}
    assert len(props) == 5 and all("#Property-" in p for p in props)
    assert len(event.triples) == 20
    with pytest.raises(RowError, match="no entry in lookup 'property'"):
        mapper.map_row({**row, "REPORT_ID": "1"})
