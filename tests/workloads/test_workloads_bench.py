"""The benchmark harness's measuring (rsep.workloads.bench): the CPU of a process tree, as
the ``spark`` point counts it (the driver, its JVM and the JVM's Python workers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rsep.workloads.bench import process_tree, tree_cpu_seconds

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")

BUSY = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", {grandchild!r}])
while time.process_time() < 0.3:
    pass
child.wait()
print("done", flush=True)
sys.stdin.readline()
"""
"""A child that uses 0.3 CPU s itself and waits for a grandchild that uses 0.3 CPU s, then
stays alive until told to end."""

GRANDCHILD = """
import time
while time.process_time() < 0.3:
    pass
"""


def test_tree_cpu_counts_descendants_and_the_ended_ones() -> None:
    """A child's own CPU and that of the grandchild it waited for (ended: counted in the
    child's ``cutime``) are in this process's tree CPU, and the child is in its tree."""
    before = tree_cpu_seconds()
    code = BUSY.format(grandchild=GRANDCHILD)
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "done"
        assert child.pid in {pid for pid, _ in process_tree(os.getpid())}
        assert tree_cpu_seconds(child.pid) >= 0.6 - 0.05
        assert tree_cpu_seconds() - before >= 0.6 - 0.05
    finally:
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.close()
        child.wait()
