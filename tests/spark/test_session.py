"""``rsep.spark.session.get_session``: one session per process, left as it was made."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest

from rsep.spark.session import get_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def test_the_running_session_is_reused_untouched_from_any_thread(spark: SparkSession) -> None:
    """Another thread sees no active session (``getActiveSession`` is per thread), yet
    ``get_session()`` gives the running one without re-applying rsep's defaults (the test
    session's 2 shuffle partitions stay 2, not the default 4)."""
    before = spark.conf.get("spark.sql.shuffle.partitions")
    found: list[object] = []

    def run() -> None:
        session = get_session()
        found.append(session.sparkContext is spark.sparkContext)
        found.append(session.conf.get("spark.sql.shuffle.partitions"))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert found == [True, before]
    assert spark.conf.get("spark.sql.shuffle.partitions") == before == "2"
