"""rsep.Query.transform over Spark Connect: the batch and streaming DataFrame tests of
test_dataframe_api (SPAseq with and without PARTITION BY, RSP-QL; answers equal the
oracle's) run by a Connect client (connect_client.py, a process of its own) against a Spark
Connect server started for the test. Skipped where the Connect client's grpcio is not
installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cluster import connect_server
from connect_client import STREAMED
from test_dataframe_api import CASES

pytestmark = pytest.mark.spark

try:
    import grpc  # noqa: F401
except ImportError:
    pytest.skip(
        "the Spark Connect client needs grpcio, grpcio-status and googleapis-common-protos "
        "(pip install 'pyspark[connect]'), which this environment lacks",
        allow_module_level=True,
    )


def test_dataframes_over_spark_connect(tmp_path: Path) -> None:
    client = Path(__file__).with_name("connect_client.py")
    with connect_server(tmp_path / "server") as url:
        done = subprocess.run(
            [sys.executable, str(client), url, str(tmp_path / "client")],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    assert done.returncode == 0, done.stdout + done.stderr[-5000:]
    expected = [f"batch {name}" for name in sorted(CASES)]
    expected += [f"streaming {name}" for name in STREAMED]
    assert done.stdout.splitlines() == expected
