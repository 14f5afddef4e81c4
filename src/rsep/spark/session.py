"""One way to get a SparkSession: local mode by default, a cluster by changing the master.

``local[2]`` with a small number of shuffle partitions and the UI off suits this 2-core
machine (../shared/guide/SPARK.md); ``spark://host:port`` runs the same job on a standalone
cluster and ``sc://host:port`` on Spark Connect.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"

_LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.driver.memory": "4g",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.python.worker.reuse": "true",
    # a loaded machine starts Python workers slowly; the default 15 s fails them
    "spark.python.authenticate.socketTimeout": "120s",
}


def get_session(
    master: str | None = None, app_name: str = "rsep", conf: dict[str, str] | None = None
) -> SparkSession:
    """The session running in this process, untouched, when no ``master`` is named (tests
    share one; ``SparkSession.getActiveSession`` sees it only in the thread that made it),
    else a new one on ``master`` (``local[2]`` by default).

    ``master`` may be ``local[N]``, ``spark://host:port`` or a Spark Connect URL ``sc://…``;
    ``RSEP_SPARK_MASTER`` overrides the default. Extra ``conf`` entries win over ours.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if master is None and conf is None and SparkContext._active_spark_context is not None:
        return SparkSession.builder.getOrCreate()
    master = master or os.environ.get("RSEP_SPARK_MASTER") or DEFAULT_MASTER
    os.environ.setdefault("PYSPARK_PYTHON", _python())
    builder = SparkSession.builder.appName(app_name)
    if master.startswith("sc://"):
        builder = builder.remote(master)
    else:
        if master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.master(master)
        log4j = Path(__file__).with_name("log4j2.properties")
        java_opts = f"-Dlog4j.configurationFile={log4j.as_uri()}"
        settings = {
            **_LOCAL_CONF,
            "spark.driver.extraJavaOptions": java_opts,
            "spark.executor.extraJavaOptions": java_opts,
            **(conf or {}),
        }
        for key, value in settings.items():
            builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR") if not master.startswith("sc://") else None
    return session


def _python() -> str:
    import sys

    return sys.executable
