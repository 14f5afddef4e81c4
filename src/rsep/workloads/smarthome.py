"""Smart-home workloads: rows of the UMass Smart* HomeC data with weather (SPAseq Sec.
8.1's SHD data set, UC1), generated at scale in the sample's own CSV schema, so that the
``homec-smarthome``, ``homec-power``, ``homec-weather`` and ``homec-generation`` mappings
read them unchanged.

Figures measured on the sample (``smarthome/smarthome_homec_sample``, the first 2,838 rows
of HomeC, 2016-01-01 from midnight local time), which :func:`homec_rows` copies:

- 32 columns (:data:`COLUMNS`); ``time`` in Unix seconds advancing 1 s per row although
  each row is one minute of data (the Kaggle file's quirk; the mappings keep it), from
  1451624400;
- the kW channels' mean, standard deviation, minimum and maximum (:data:`CHANNELS`), e.g.
  use 1.27 / 0.93 / 0.0097 / 7.37; ``use`` equals ``House overall`` and ``gen`` equals
  ``Solar`` in every row; the 14 appliance channels add up to 0.92 kW of use on average,
  the rest is unmetered;
- solar generation 0.0000333 to 0.482 kW: about 0.0034 kW at night, a daytime arc from
  08:00 to 17:00;
- weather hourly (60 equal rows): temperature 28.65-37.31, apparentTemperature
  20.86-32.74, humidity 0.47-0.70, visibility 8.06-10, pressure 1012.01-1016.91, windSpeed
  5.14-11.65, windBearing 214-285, dewPoint 17.07-25.27, precipIntensity 0-0.0011,
  precipProbability 0-0.02; cloudCover 0 to 1 in 20 values (:data:`CLOUD_COVER`; the sample
  also holds the text ``cloudCover`` in 58 rows, not copied); icon clear-night 41 %, clear-day
  29 %, partly-cloudy-night 20 %, partly-cloudy-day 6 %, cloudy 4 %.

Every generated row's ``summary`` ends with ``(synthetic)``, so the events say so.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path

from rsep.workloads.output import SYNTHETIC, check_count, write_lines

FIRST_TIME = 1451624400
"""The sample's first ``time`` (2016-01-01 00:00 US Eastern)."""
CHANNELS: dict[str, tuple[float, float, float, float]] = {
    # column: (mean, standard deviation, minimum, maximum), kW, measured on the sample
    "Dishwasher [kW]": (0.0619, 0.2649, 0.0, 1.3787),
    "Furnace 1 [kW]": (0.2060, 0.2203, 0.0175, 1.8278),
    "Furnace 2 [kW]": (0.2292, 0.2460, 0.0595, 0.7420),
    "Home office [kW]": (0.1041, 0.1326, 0.0401, 0.6292),
    "Fridge [kW]": (0.0706, 0.0877, 0.00385, 0.8513),
    "Wine cellar [kW]": (0.0194, 0.0350, 0.0061, 0.1247),
    "Garage door [kW]": (0.0133, 0.0071, 0.0101, 0.1953),
    "Kitchen 12 [kW]": (0.00062, 0.00021, 0.0000333, 0.00258),
    "Kitchen 14 [kW]": (0.0113, 0.0949, 0.0, 1.5845),
    "Kitchen 38 [kW]": (0.0000112, 0.000011, 0.0, 0.00005),
    "Barn [kW]": (0.1042, 0.2761, 0.0256, 6.3278),
    "Well [kW]": (0.0247, 0.1741, 0.00097, 1.6103),
    "Microwave [kW]": (0.0095, 0.0733, 0.00367, 1.8537),
    "Living room [kW]": (0.0608, 0.0931, 0.001, 0.3482),
}
USE_RANGE = (0.00965, 7.3656)
UNMETERED = (0.358, 0.3)
"""Mean and standard deviation of use minus the appliance channels (kW)."""
SOLAR_NIGHT = 0.00343
SOLAR_RANGE = (0.0000333, 0.48225)
DAYLIGHT = (8 * 60, 17 * 60)
"""Minutes of the day with solar generation."""
WEATHER: dict[str, tuple[float, float, float, float]] = {
    # column: (mean, hourly step deviation, minimum, maximum), measured ranges
    "temperature": (33.37, 0.6, 28.65, 37.31),
    "humidity": (0.60, 0.01, 0.47, 0.70),
    "visibility": (9.88, 0.1, 8.06, 10.0),
    "pressure": (1014.46, 0.3, 1012.01, 1016.91),
    "windSpeed": (7.68, 0.5, 5.14, 11.65),
    "windBearing": (260.0, 5.0, 214.0, 285.0),
    "dewPoint": (20.99, 0.6, 17.07, 25.27),
}
APPARENT_OFFSET = 6.58
"""temperature - apparentTemperature on average (33.37 - 26.79)."""
APPARENT_RANGE = (20.86, 32.74)
CLOUD_COVER = (
    (0.0, 348), (0.05, 58), (0.1, 58), (0.11, 54), (0.13, 58), (0.14, 58), (0.15, 116),
    (0.16, 116), (0.17, 58), (0.19, 116), (0.21, 116), (0.25, 116), (0.26, 58), (0.27, 58),
    (0.28, 116), (0.29, 58), (0.31, 174), (0.44, 58), (0.75, 580), (1.0, 406),
)  # fmt: skip
"""The numeric cloudCover values and how many rows of the sample hold each (hourly values
repeated over the hour's rows)."""
PERSISTENCE = 0.95
"""Lag-one autocorrelation of the minute-by-minute channels."""
COLUMNS = (
    "time",
    "use [kW]",
    "gen [kW]",
    "House overall [kW]",
    *CHANNELS,
    "Solar [kW]",
    "temperature",
    "icon",
    "humidity",
    "visibility",
    "summary",
    "apparentTemperature",
    "pressure",
    "windSpeed",
    "cloudCover",
    "windBearing",
    "precipIntensity",
    "dewPoint",
    "precipProbability",
)


def _clip(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def _num(value: float) -> str:
    """A number as the sample writes it (at most 9 significant digits)."""
    return f"{value:.9g}"


def _sky(cloud: float, day: bool) -> tuple[str, str]:
    """The icon and summary of a cloud cover, by day or night: clear under 0.5, cloudy at
    1 (64 %, 21 % and 14 % of the sample's cloud values; its icons say 69 %, 27 % and 4 %)."""
    if cloud < 0.5:
        return ("clear-day" if day else "clear-night"), "Clear"
    if cloud < 1.0:
        return ("partly-cloudy-day" if day else "partly-cloudy-night"), "Partly Cloudy"
    return "cloudy", "Overcast"


def homec_rows(n_events: int, seed: int = 0) -> Iterator[str]:
    """The header and ``n_events`` synthetic HomeC rows, one minute of a house each, ``time``
    advancing 1 s per row from the sample's start. Appliance channels are first-order
    autoregressive around the sample's mean with its deviation, clipped to its range; solar
    follows a daily arc; the weather changes once an hour. Deterministic for ``seed``."""
    check_count(n_events)
    rng = random.Random(seed)
    noise = math.sqrt(1 - PERSISTENCE**2)
    level = {name: mean for name, (mean, _, _, _) in CHANNELS.items()}
    unmetered = UNMETERED[0]
    weather = {name: mean for name, (mean, _, _, _) in WEATHER.items()}
    clouds, cloud_weights = zip(*CLOUD_COVER, strict=True)
    cloud, peak = 0.0, 0.3
    yield ",".join(COLUMNS) + "\n"
    for row in range(n_events):
        minute = row % 1440
        if minute == 0:
            peak = rng.uniform(0.1, SOLAR_RANGE[1])
        if row % 60 == 0:
            for name, (mean, step, low, high) in WEATHER.items():
                pulled = weather[name] + 0.1 * (mean - weather[name])
                weather[name] = _clip(pulled + rng.gauss(0.0, step), low, high)
            cloud = rng.choices(clouds, weights=cloud_weights)[0]
        cells = []
        for name, (mean, std, low, high) in CHANNELS.items():
            value = mean + PERSISTENCE * (level[name] - mean) + rng.gauss(0.0, std * noise)
            level[name] = _clip(value, low, high)
            cells.append(level[name])
        unmetered = max(
            0.0,
            UNMETERED[0]
            + PERSISTENCE * (unmetered - UNMETERED[0])
            + rng.gauss(0.0, UNMETERED[1] * noise),
        )
        use = _clip(sum(cells) + unmetered, *USE_RANGE)
        day = DAYLIGHT[0] <= minute < DAYLIGHT[1]
        arc = math.sin(math.pi * (minute - DAYLIGHT[0]) / (DAYLIGHT[1] - DAYLIGHT[0]))
        solar = (peak * (1 - 0.6 * cloud) * arc) if day else SOLAR_NIGHT
        solar = _clip(solar * rng.uniform(0.9, 1.1), *SOLAR_RANGE)
        icon, summary = _sky(cloud, day)
        temperature = weather["temperature"]
        apparent = _clip(temperature - APPARENT_OFFSET, *APPARENT_RANGE)
        fields = [
            str(FIRST_TIME + row),
            _num(use),
            _num(solar),
            _num(use),
            *(_num(v) for v in cells),
            _num(solar),
            f"{temperature:.2f}",
            icon,
            f"{weather['humidity']:.2f}",
            f"{weather['visibility']:.2f}",
            f"{summary} ({SYNTHETIC})",
            f"{apparent:.2f}",
            f"{weather['pressure']:.2f}",
            f"{weather['windSpeed']:.2f}",
            _num(cloud),
            f"{weather['windBearing']:.0f}",
            "0",
            f"{weather['dewPoint']:.2f}",
            "0",
        ]
        yield ",".join(fields) + "\n"


def write_homec(folder: Path, n_events: int, seed: int = 0) -> Path:
    """Write :func:`homec_rows` to ``folder/HomeC_synthetic_seed<seed>_<n>.csv``."""
    return write_lines(
        folder / f"HomeC_{SYNTHETIC}_seed{seed}_{n_events}.csv", homec_rows(n_events, seed)
    )
