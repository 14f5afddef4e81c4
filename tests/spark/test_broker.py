"""The test broker's absence skips a test, except in CI (``CI`` set), where it fails it
(tests/spark/broker.py; ``.ci/run`` sets ``CI``)."""

from __future__ import annotations

import pytest
from broker import unavailable


def test_missing_broker_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no broker"):
        unavailable("no broker")


def test_missing_broker_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI needs the test broker: no broker"):
        unavailable("no broker")
