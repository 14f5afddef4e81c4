"""The DataFrame tests of ``test_dataframe_api`` against a Spark Connect server, run by
``test_dataframe_connect`` in a process of its own (a process with a classic SparkContext
cannot open a Connect session): ``python connect_client.py sc://HOST:PORT FOLDER`` prints a
line per case that passed and exits 0, or fails with the assertion's traceback."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
for _folder in ("api", "spark"):
    if str(TESTS / _folder) not in sys.path:
        sys.path.insert(0, str(TESTS / _folder))

import test_dataframe_api as frames  # noqa: E402

STREAMED = ("spaseq-keyed", "rspql")
"""The cases also run as streaming DataFrames."""


def main(argv: list[str]) -> int:
    from pyspark.sql import SparkSession

    url, folder = argv[1], Path(argv[2])
    spark = SparkSession.builder.remote(url).getOrCreate()
    try:
        for name in sorted(frames.CASES):
            scratch = folder / f"batch-{name}"
            scratch.mkdir(parents=True)
            frames.test_batch_dataframe_in_dataframe_out(spark, scratch, name)
            print("batch", name, flush=True)
        for name in STREAMED:
            scratch = folder / f"streaming-{name}"
            scratch.mkdir(parents=True)
            frames.test_streaming_dataframe_in_dataframe_out(spark, scratch, name)
            print("streaming", name, flush=True)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
