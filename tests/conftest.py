"""Fixtures shared by the whole suite: the ../shared data folder and one local SparkSession."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RSEP_SHARED", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``; tests that need it skip with a reason when it is absent."""
    data = SHARED / "data"
    if not data.is_dir():
        pytest.skip(f"shared data not found at {data} (it exists in CI and on developer machines)")
    return data


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The root of this repository."""
    return REPO


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One local SparkSession for the whole test run (start-up costs seconds)."""
    from rsep.spark.session import get_session

    session = get_session(
        "local[2]",
        app_name="rsep-tests",
        conf={"spark.driver.extraJavaOptions": _driver_opts(), "spark.sql.shuffle.partitions": "2"},
    )
    yield session
    session.stop()


def _driver_opts() -> str:
    log4j = REPO / "src" / "rsep" / "spark" / "log4j2.properties"
    return f"-XX:TieredStopAtLevel=1 -Dlog4j.configurationFile={log4j.as_uri()}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``exhaustive`` (the 10,000-case differential runs) are skipped unless
    asked for: ``-m exhaustive`` or ``RSEP_EXHAUSTIVE=1``."""
    wanted = (
        "exhaustive" in (config.getoption("-m") or "") or os.environ.get("RSEP_EXHAUSTIVE") == "1"
    )
    if wanted:
        return
    skip = pytest.mark.skip(reason="exhaustive run: -m exhaustive or RSEP_EXHAUSTIVE=1")
    for item in items:
        if "exhaustive" in item.keywords:
            item.add_marker(skip)
