"""Cut the CityBench slice of the Aarhus data: one hour, 2014-08-01 08:00-09:00 local time.

Reads ``../shared/data/aarhus`` (weather, parking, user location, the knowledge bases) and
writes, under OUT, the CSV files the mappings ``aarhus-weather``, ``aarhus-parking`` and
``aarhus-userlocation`` read, and the background graphs as plain N3 (``rsep run --graph``
reads uncompressed RDF). The traffic rows of the hour are in ``data/traffic`` beside this
file (CC-BY-4.0, ``data/SOURCE.md``). Two columns are added, because a mapping copies
cells and does not compute (README, "Data"):

- parking: ``vacancies`` = ``totalspaces - vehiclecount``, the value CityBench's parking
  stream reports (``ct:ParkingVacancy``);
- user location: the raw lines are ``user|lat,lng`` with no time; line n gets the time
  ``USER_START + (n - 1) s`` (one location a second, as a replay stamps them), and the
  first ``USER_LINES`` lines are kept.

Usage: ``python slice.py SHARED_DATA OUT`` (e.g. ``python slice.py ../../../shared/data slice``).
"""

from __future__ import annotations

import csv
import lzma
import shutil
import sys
from datetime import datetime, timedelta
from pathlib import Path

from pyoxigraph import RdfFormat, Store

FIRST = "2014-08-01T08:00:00"
LAST = "2014-08-01T09:00:00"  # excluded
USER_START = "2014-08-01T08:01:00"
USER_LINES = 60


def in_hour(moment: str) -> bool:
    """Whether a local time (ISO, a space or a T between date and time) is in the hour."""
    text = moment.replace(" ", "T")
    return FIRST <= text < LAST


def write_weather(aarhus: Path, out: Path) -> Path:
    """The weather rows of the hour, columns unchanged."""
    target = out / "weather" / "AarhusWeatherData0.stream"
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = (aarhus / "weather" / "AarhusWeatherData0.stream").read_text("utf-8").splitlines()
    rows = [line for line in lines[1:] if in_hour(line.rsplit(",", 1)[1])]
    target.write_text("\n".join([lines[0], *rows]) + "\n", "utf-8")
    return target


def write_parking(aarhus: Path, out: Path) -> Path:
    """The parking rows of the hour (every garage), with ``vacancies`` added."""
    target = out / "parking" / "AarhusParkingData.stream"
    target.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(aarhus / "parking" / "AarhusParkingData.stream.xz", "rt", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields = [*(reader.fieldnames or []), "vacancies"]
        rows = [row for row in reader if in_hour(row["updatetime"])]
    with target.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fields, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            row["vacancies"] = str(int(row["totalspaces"]) - int(row["vehiclecount"]))
            writer.writerow(row)
    return target


def write_user_location(aarhus: Path, out: Path) -> Path:
    """The first ``USER_LINES`` locations as ``user,lat,lng,time``, one a second."""
    target = out / "userlocation" / "UserLocationService.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = (aarhus / "userlocation" / "UserLocationService.stream").read_text("utf-8").split()
    start = datetime.fromisoformat(USER_START)
    with target.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["user", "lat", "lng", "time"])
        for n, line in enumerate(lines[:USER_LINES]):
            user, point = line.split("|")
            lat, lng = point.split(",")
            writer.writerow([user, lat, lng, (start + timedelta(seconds=n)).isoformat()])
    return target


SENSORS = (
    "AarhusTrafficData182955",
    "AarhusTrafficData158505",
    "AarhusTrafficData186979",
    "AarhusWeatherData0",
    "AarhusParkingData[A-Z]+",
    "UserLocationService",
)
EXTRACT = """PREFIX ssn: <http://purl.oclc.org/NET/ssnx/ssn#>
CONSTRUCT { ?sensor ssn:observes ?p . ?p ?pp ?po . ?foi ?fp ?fo }
WHERE {
  ?sensor ssn:observes ?p . ?p ?pp ?po .
  OPTIONAL { ?p ssn:isPropertyOf ?foi . ?foi ?fp ?fo }
  FILTER (REGEX(STR(?sensor), "#(SENSORS)$"))
}""".replace("SENSORS", "|".join(SENSORS))


def write_repository(aarhus: Path, out: Path) -> Path:
    """The part of the sensor repository about the slice's sensors: what each observes,
    each property's type and feature of interest, and the feature's coordinates (125
    triples of 44,213; the answers are the same with the whole repository (checked for
    every query), but the oracle ran Q6 in 111 s with it and in 10 s with this part)."""
    target = out / "kb" / "SensorRepository-slice.nt"
    target.parent.mkdir(parents=True, exist_ok=True)
    store = Store()
    with lzma.open(aarhus / "kb" / "SensorRepository.n3.xz", "rb") as f:
        store.bulk_load(f.read(), format=RdfFormat.N3)
    triples = sorted(str(t) for t in store.query(EXTRACT))  # type: ignore[union-attr]
    target.write_text("".join(f"{t} .\n" for t in triples), "utf-8")
    return target


def write_events(aarhus: Path, out: Path) -> list[Path]:
    """The cultural and library events (background graphs), uncompressed."""
    kb = out / "kb"
    kb.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("AarhusCulturalEvents.n3", "AarhusLibraryEvents.n3"):
        source, target = aarhus / "kb" / name, kb / name
        if source.exists():
            shutil.copyfile(source, target)
        else:
            with lzma.open(source.with_name(name + ".xz"), "rb") as f, target.open("wb") as g:
                shutil.copyfileobj(f, g)
        written.append(target)
    return written


def write_slice(shared_data: Path, out: Path) -> None:
    """Everything above, from ``shared_data`` (``../shared/data``) into ``out``."""
    aarhus = shared_data / "aarhus"
    write_weather(aarhus, out)
    write_parking(aarhus, out)
    write_user_location(aarhus, out)
    write_repository(aarhus, out)
    write_events(aarhus, out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    write_slice(Path(sys.argv[1]), Path(sys.argv[2]))
