"""Broker faults under a live query (rsep.spark.kafka, module docstring): the noida-db
broker stopped mid-stream and started again on the same data and port while the query
runs, its answers going to a topic on that broker. The query waits, tries again with
back-off, reports the waits, and goes on: the answers are the oracle's, none lost, none
twice."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from broker import Broker
from test_kafka import KEYED, messages, tick
from test_replay import canonical, compiled, market, oracle

from rsep.spark.kafka import KafkaAddress, create_topic, produce, read_topic
from rsep.spark.live import start_live
from rsep.spark.sink import KafkaSink
from rsep.spark.source import KafkaSource

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def committed(checkpoint: Path) -> int:
    found = checkpoint / "commits"
    return sum(p.name.isdigit() for p in found.iterdir()) if found.is_dir() else 0


def test_calls_are_tried_again_with_back_off(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A call the broker does not answer is tried again after 0.5 s, 1 s, 2 s…, each wait
    reported; past the patience the error is the user's, with the reason."""
    from confluent_kafka import KafkaError, KafkaException

    from rsep.errors import UserError
    from rsep.spark import kafka

    pauses: list[float] = []
    clock = [0.0]

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(kafka.time, "sleep", sleep)
    monkeypatch.setattr(kafka.time, "monotonic", lambda: clock[0])
    answers = iter([KafkaError._TRANSPORT, KafkaError._TRANSPORT, KafkaError._TRANSPORT])

    def flaky() -> str:
        code = next(answers, None)
        if code is not None:
            raise KafkaException(KafkaError(code))
        return "offsets"

    assert kafka._patiently("kafka topic t", flaky) == "offsets"
    assert pauses == [0.5, 1.0, 2.0]
    assert capsys.readouterr().err.count("kafka topic t: the broker does not answer") == 3

    def down() -> str:
        raise KafkaException(KafkaError(KafkaError._TRANSPORT))

    with pytest.raises(UserError, match=r"no answer from the broker in 1[23]\d s"):
        kafka._patiently("kafka topic t", down)
    assert max(pauses) == 8.0


@pytest.mark.spark
@pytest.mark.slow
def test_broker_stopped_and_started_again(spark: SparkSession, tmp_path: Path) -> None:
    """Half the events in a two-partition topic, read ten a trigger; the broker stops after
    two committed batches and starts again eight seconds later, when the other half and a
    tick arrive: the answers in the results topic are the oracle's, each once."""
    broker = Broker(tmp_path)
    broker.start()
    try:
        plan = compiled(KEYED)
        events = market(21, 80)
        inbox = KafkaAddress(broker.bootstrap, "faults")
        outbox = KafkaAddress(broker.bootstrap, "faults-answers")
        create_topic(inbox, 2)
        create_topic(outbox)
        texts = messages([*events, tick(10**7), tick(10**7)])  # a tick on each partition
        half = len(texts) // 2
        for index, text in enumerate(texts[:half]):
            produce(inbox, [text], partition=index % 2)
        checkpoint = tmp_path / "ck"
        live = start_live(
            spark, plan, KafkaSource(inbox, max_per_trigger=10), checkpoint,
            KafkaSink(outbox), partitions=2, interval="1 second",
        )  # fmt: skip
        try:
            deadline = time.time() + 300
            while committed(checkpoint) < 2 and time.time() < deadline:
                assert live.query.exception() is None
                time.sleep(0.2)
            broker.stop()
            time.sleep(8)  # the query finds no broker for a while
            broker.start()
            for index, text in enumerate(texts[half:], start=half):
                produce(inbox, [text], partition=index % 2)
            while (live.watermark or 0) < 10**7 - 1 and time.time() < deadline:
                assert live.query.exception() is None, live.query.exception()
                time.sleep(0.5)
        finally:
            live.stop()
        assert live.watermark == 10**7 - 1
        found = [json.dumps(json.loads(line), sort_keys=True) for line in read_topic(outbox)]
        assert len(found) == len(set(found)), "an answer written twice"
        assert sorted(found) == oracle(plan, events) == canonical(live.results())
    finally:
        broker.stop()


@dataclass
class SlowSink(KafkaSink):
    """A results topic behind a slow consumer: each micro-batch's write waits ``pause``
    seconds before it reaches the broker; the first write with answers calls ``fault``
    then (the broker goes away while the batch is in the sink)."""

    pause: float = 2.0
    fault: Callable[[], None] | None = None
    writes: list[float] = field(default_factory=list)

    def write(self, lines: list[str], batch_id: int) -> None:
        time.sleep(self.pause)
        if lines and self.fault is not None:
            self.fault()
            self.fault = None
        began = time.monotonic()
        super().write(lines, batch_id)
        self.writes.append(time.monotonic() - began)


@pytest.mark.spark
@pytest.mark.slow
def test_slow_sink_while_the_broker_is_away(
    spark: SparkSession, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Every event in the topic from the start, read ten a trigger by a query whose sink
    takes two seconds a batch; the broker stops while the first batch with answers waits
    in the sink and starts again fifteen seconds later (longer than a broker call's
    timeout): the sink's write waits for it with back-off, says so on standard error, and
    the query goes on: the answers in the results topic are the oracle's, each once."""
    broker = Broker(tmp_path)
    broker.start()
    restart: list[threading.Timer] = []

    def away() -> None:
        broker.stop()
        restart.append(threading.Timer(15, broker.start))
        restart[0].start()

    try:
        plan = compiled(KEYED)
        events = market(23, 60)
        inbox = KafkaAddress(broker.bootstrap, "slow")
        outbox = KafkaAddress(broker.bootstrap, "slow-answers")
        create_topic(inbox, 2)
        create_topic(outbox)
        texts = messages([*events, tick(10**7), tick(10**7)])
        for index, text in enumerate(texts):
            produce(inbox, [text], partition=index % 2)
        sink = SlowSink(outbox, fault=away)
        live = start_live(
            spark, plan, KafkaSource(inbox, max_per_trigger=10), tmp_path / "ck", sink,
            partitions=2, interval="1 second",
        )  # fmt: skip
        try:
            deadline = time.time() + 400
            while (live.watermark or 0) < 10**7 - 1 and time.time() < deadline:
                assert live.query.exception() is None, live.query.exception()
                time.sleep(0.5)
        finally:
            live.stop()
        assert restart, "no batch with answers reached the sink"
        restart[0].join()
        assert live.watermark == 10**7 - 1
        said = capfd.readouterr().err
        assert max(sink.writes) > 10, sink.writes  # a write waited for the broker
        assert "the broker does not answer" in said or "waiting for the broker" in said
        found = [json.dumps(json.loads(line), sort_keys=True) for line in read_topic(outbox)]
        assert len(found) == len(set(found)), "an answer written twice"
        assert sorted(found) == oracle(plan, events) == canonical(live.results())
    finally:
        for timer in restart:
            timer.join()
        broker.stop()
