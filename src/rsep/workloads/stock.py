"""Stock workloads: NASDAQ one-minute bars, generated at scale or replicated from the real
sample (SPAseq Sec. 8.1's stock data set, UC4; issue 7: "NASDAQ bars replicated to 10 M
events").

Both write the sample's own format, ``TICKER,YYYYMMDDhhmm,open,high,low,close,volume``
without a header, so the ``nasdaq-bars`` mapping reads them unchanged.

Figures measured on the real sample (``stocks/opencep_nasdaq_2008-02-01``,
``NASDAQ_AAPL_AMZN_GOOG.txt`` and ``NASDAQ_MEDIUM.txt``: 3,017 bars of 7 tickers on
2008-02-01), which :func:`stock_bars` copies:

- trading minutes 09:00 to 16:59 (480 a day); a ticker has a bar in 89.8 % of the minutes
  (AAPL 460, AMZN 442, CBRL 357, DRIV 418, GOOG 463, MSFT 477, ORLY 400 of 480); bars of
  one minute in ticker order, never two bars of a ticker in a minute;
- prices 29.77 (ORLY) to 534.42 (GOOG); per-ticker standard deviation of the one-minute
  log return of the close 0.00125 (AAPL) to 0.00448 (MSFT); open against the previous
  close: standard deviation 0.0021 (log);
- (high - low) / close: median 0.00155, 90th percentile 0.0044;
- volume 100 to 6,394,893 shares, log-normal (mean of ln 9.74, standard deviation 2.18).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from rsep.errors import UserError
from rsep.workloads.output import SYNTHETIC, check_count, write_lines

OPEN_MINUTE = 9 * 60
"""First bar of a trading day (09:00), as in the sample."""
MINUTES_PER_DAY = 480
"""09:00 to 16:59."""
BAR_PRESENCE = 0.898
"""Share of a ticker's trading minutes that have a bar."""
PRICE_RANGE = (29.77, 534.42)
RETURN_STD_RANGE = (0.00125, 0.00448)
OPEN_GAP_STD = 0.0021
SPREAD_MEAN = 0.0005
"""Mean of each of the two exponential tails added beyond open and close (median spread 0.0016)."""
VOLUME_LOG_MEAN = 9.74
VOLUME_LOG_STD = 2.18
VOLUME_RANGE = (100, 6_394_893)
MEAN_REVERSION = 0.001
"""Pull of the log price towards its start per bar: keeps a ticker within about 7 % of its
start price (the sample's intraday ranges are 3 % to 8 %)."""
SAMPLE_DAY = datetime(2008, 2, 1)


@dataclass
class _Ticker:
    """The state of one generated ticker's random walk."""

    name: str
    start: float  # log of the start price
    log_price: float
    sigma: float


def trading_days(first: datetime) -> Iterator[datetime]:
    """``first`` and the weekdays after it (markets are closed on Saturday and Sunday)."""
    day = first.replace(hour=0, minute=0, second=0, microsecond=0)
    while True:
        if day.weekday() < 5:
            yield day
        day += timedelta(days=1)


def stock_bars(
    n_events: int, seed: int = 0, tickers: int = 100, first_day: datetime = SAMPLE_DAY
) -> Iterator[str]:
    """``n_events`` synthetic one-minute bars of ``tickers`` companies named ``SYN0000``,
    ``SYN0001``… (the ticker says the event is synthetic), one CSV line each, in time order.

    Each ticker's close follows a mean-reverting random walk of the log price whose
    volatility is drawn from the sample's per-ticker range; bars come minute by minute
    through trading days from ``first_day`` (weekdays, 09:00-16:59), each ticker present in
    a minute with the sample's probability. Deterministic for ``seed``.
    """
    check_count(n_events)
    if tickers < 1:
        raise UserError(f"stock_bars needs at least one ticker, not {tickers}")
    rng = random.Random(seed)
    low, high = (math.log(p) for p in PRICE_RANGE)
    book = []
    for i in range(tickers):
        start = rng.uniform(low, high)
        book.append(_Ticker(f"SYN{i:04d}", start, start, rng.uniform(*RETURN_STD_RANGE)))
    emitted = 0
    for day in trading_days(first_day):
        for minute in range(OPEN_MINUTE, OPEN_MINUTE + MINUTES_PER_DAY):
            stamp = (day + timedelta(minutes=minute)).strftime("%Y%m%d%H%M")
            for ticker in book:
                if rng.random() >= BAR_PRESENCE:
                    continue
                yield _bar(rng, ticker, stamp)
                emitted += 1
                if emitted == n_events:
                    return


def _bar(rng: random.Random, ticker: _Ticker, stamp: str) -> str:
    """The next bar of ``ticker`` at minute ``stamp``."""
    previous = ticker.log_price
    opening = previous + rng.gauss(0.0, OPEN_GAP_STD)
    pull = MEAN_REVERSION * (ticker.start - opening)
    ticker.log_price = opening + pull + rng.gauss(0.0, ticker.sigma)
    return _line(rng, ticker.name, stamp, math.exp(opening), math.exp(ticker.log_price))


def _line(rng: random.Random, name: str, stamp: str, o: float, c: float) -> str:
    """The CSV line of a bar opening at ``o`` and closing at ``c``: high and low a spread
    beyond them, a volume, both drawn as in the sample."""
    h = max(o, c) * (1 + rng.expovariate(1 / SPREAD_MEAN))
    lo = min(o, c) * (1 - rng.expovariate(1 / SPREAD_MEAN))
    volume = round(math.exp(rng.gauss(VOLUME_LOG_MEAN, VOLUME_LOG_STD)))
    volume = min(max(volume, VOLUME_RANGE[0]), VOLUME_RANGE[1])
    return f"{name},{stamp},{o:.2f},{h:.2f},{lo:.2f},{c:.2f},{volume}\n"


VSHAPE_EVERY = 10
"""A planted V shape every this many bars of a ticker (:func:`vshape_bars`)."""
VSHAPE_TICKERS = 7
"""Tickers of :func:`vshape_bars`, as many as the real sample has."""
CALM = 0.0015
"""Largest one-bar move of :func:`vshape_bars` outside a planted V: less than the V's
0.2 % fall (rsep.workloads.baselines.FALL), so no V forms by chance."""
VSHAPE_PULL = 0.01
"""Pull of :func:`vshape_bars`' log price towards its start per calm bar: holds the climbs
of the plants (0.1 % to 0.5 % every ten bars) to a few per cent above the start."""


def vshape_bars(
    n_events: int, seed: int = 0, tickers: int = VSHAPE_TICKERS, every: int = VSHAPE_EVERY
) -> Iterator[str]:
    """``n_events`` synthetic bars (tickers ``SYN0000``…) with V shapes planted where they
    are known: what stands in for the real sample on a clone without ``../shared``, so that
    the V-shape workload has answers (SPAseq UC4).

    Every ticker has a bar every trading minute from 09:00 (no gaps); bar j of a ticker
    (counted from 0) moves its close by at most :data:`CALM` either way (a walk pulled
    towards its start), except that bar ``j % every == every - 2`` falls 0.3 % to 1 % and
    the next one climbs 0.1 % to 0.5 % above the bar before the fall. Under strict
    contiguity a 3-step V shape is therefore exactly one per complete plant: ⌊bars of the
    ticker / every⌋ per ticker, all inside one hour when ``every`` divides 60
    (:func:`planted_vshapes`). Open is the previous close. Deterministic for ``seed``.
    """
    check_count(n_events)
    if tickers < 1 or every < 3:
        raise UserError(f"vshape_bars needs a ticker and every >= 3, not {tickers}, {every}")
    rng = random.Random(seed)
    low, high = (math.log(p) for p in PRICE_RANGE)
    starts = [round(math.exp(rng.uniform(low, high)), 2) for _ in range(tickers)]
    closes = list(starts)
    before_fall = list(starts)
    emitted = 0
    for day in trading_days(SAMPLE_DAY):
        for minute in range(OPEN_MINUTE, OPEN_MINUTE + MINUTES_PER_DAY):
            stamp = (day + timedelta(minutes=minute)).strftime("%Y%m%d%H%M")
            phase = (emitted // tickers) % every
            for i in range(tickers):
                previous = closes[i]
                if phase == every - 2:
                    before_fall[i] = previous
                    close = previous * (1 - rng.uniform(0.003, 0.01))
                elif phase == every - 1:
                    close = before_fall[i] * (1 + rng.uniform(0.001, 0.005))
                else:
                    pull = VSHAPE_PULL * math.log(starts[i] / previous)
                    move = min(max(pull + rng.uniform(-CALM, CALM), -CALM), CALM)
                    close = previous * math.exp(move)
                closes[i] = round(close, 2)
                yield _line(rng, f"SYN{i:04d}", stamp, previous, closes[i])
                emitted += 1
                if emitted == n_events:
                    return


def planted_vshapes(n_events: int, tickers: int = VSHAPE_TICKERS, every: int = VSHAPE_EVERY) -> int:
    """How many strict 3-step V shapes :func:`vshape_bars` plants in ``n_events`` bars."""
    bars, extra = divmod(n_events, tickers)
    return sum((bars + (i < extra)) // every for i in range(tickers))


def write_vshape_bars(folder: Path, n_events: int, seed: int = 0) -> Path:
    """Write :func:`vshape_bars` to ``folder/NASDAQ_vshape_synthetic_seed<seed>_<n>.txt``."""
    name = f"NASDAQ_vshape_{SYNTHETIC}_seed{seed}_{n_events}.txt"
    return write_lines(folder / name, vshape_bars(n_events, seed))


def write_bars(folder: Path, n_events: int, seed: int = 0, tickers: int = 100) -> Path:
    """Write :func:`stock_bars` to ``folder/NASDAQ_synthetic_seed<seed>_<n>.txt``."""
    name = f"NASDAQ_{SYNTHETIC}_seed{seed}_{n_events}.txt"
    return write_lines(folder / name, stock_bars(n_events, seed, tickers))


def _read_bars(sources: Sequence[Path]) -> list[tuple[str, list[str]]]:
    """The real bars of ``sources`` as (minute, fields), in time order (stable)."""
    bars: list[tuple[str, list[str]]] = []
    for source in sources:
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            fields = line.split(",")
            if len(fields) != 7 or len(fields[1]) != 12 or not fields[1].isdigit():
                raise UserError(
                    f"{source}:{number}: not a NASDAQ bar (TICKER,YYYYMMDDhhmm,o,h,l,c,v)"
                )
            bars.append((fields[1], fields))
    if not bars:
        raise UserError(f"no bars in {', '.join(str(s) for s in sources)}")
    bars.sort(key=lambda bar: bar[0])
    return bars


def replicate_bars(sources: Sequence[Path], n_events: int) -> Iterator[str]:
    """The real bars of ``sources`` (NASDAQ files of one day) repeated until ``n_events``
    lines: copy k moves to the k-th trading day after the sample's day, so timestamps keep
    increasing; tickers and values are the real ones (SPAseq Sec. 8.1 replicates its stock
    data the same way, changing identifiers only). The file name marks it synthetic
    (:func:`write_replicated_bars`); the events keep the real tickers, so that a background
    KB of the real companies still joins. Only the source day is held in memory.
    """
    check_count(n_events)
    bars = _read_bars(sources)
    first = datetime.strptime(bars[0][0][:8], "%Y%m%d")
    if any(minute[:8] != bars[0][0][:8] for minute, _ in bars):
        raise UserError("replicate_bars needs the bars of a single day")
    emitted = 0
    for day in trading_days(first):
        date = day.strftime("%Y%m%d")
        for minute, fields in bars:
            yield ",".join([fields[0], date + minute[8:], *fields[2:]]) + "\n"
            emitted += 1
            if emitted == n_events:
                return


def write_replicated_bars(sources: Sequence[Path], folder: Path, n_events: int) -> Path:
    """Write :func:`replicate_bars` to ``folder/NASDAQ_replicated_synthetic_<n>.txt``."""
    name = f"NASDAQ_replicated_{SYNTHETIC}_{n_events}.txt"
    return write_lines(folder / name, replicate_bars(sources, n_events))
