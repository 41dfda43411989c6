"""What a benchmark reports: figures with their baseline, and the statistics behind them."""
from __future__ import annotations

import math
import os
import platform
import sys
from dataclasses import dataclass, field
from typing import Any, Sequence

from .interpreter import interpreter

# A Raspberry Pi is taken as ten times slower than the machine the bench runs on (CPU-bound
# work); its SD card or USB disk flushes no faster than this machine's disk either, so the
# durable figures are scaled by the same factor (see docs/performance.md).
PI_FACTOR = 10.0
BAUD = 115_200
BITS_PER_BYTE = 10          # start bit, 8 data bits, stop bit


def wire_time_s(nbytes: int, baud: int = BAUD) -> float:
    """Time ``nbytes`` take on a serial line at ``baud`` (8N1: ten bits a byte)."""
    return nbytes * BITS_PER_BYTE / baud


def wire_pi_note(pi_value: float, wire_s: float) -> str:
    """The Pi note of a figure against the wire-time target: what the Pi estimate is in wire
    times, since the target is a ratio and the estimate is not."""
    if not wire_s or math.isnan(pi_value):
        return "target: below 1"
    return (f"target: below 1; on a Pi about {pi_value / wire_s:.1f} times the wire time (the "
            "controller's work grows tenfold there, the flush does not)")


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100) by linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


@dataclass
class Figure:
    """One measured figure beside its baseline.

    ``better`` says which way is good (``lower`` for a time, ``higher`` for a rate);
    ``ratio`` is ``value / baseline``. ``pi`` is the figure expected on a Raspberry Pi,
    and ``pi_note`` what that means for the table. ``extra`` holds the figure's own detail
    (sample sizes, percentiles, counts)."""

    key: str
    title: str
    value: float
    unit: str
    baseline: float
    baseline_title: str
    better: str = "lower"
    pi: float | None = None
    pi_note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        if not self.baseline or math.isnan(self.baseline) or math.isnan(self.value):
            return math.nan
        return self.value / self.baseline

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "value": _num(self.value), "unit": self.unit,
                "baseline": {"title": self.baseline_title, "value": _num(self.baseline),
                             "unit": self.unit},
                "ratio": _num(self.ratio), "better": self.better,
                "pi": {"value": _num(self.pi if self.pi is not None else self.pi_scaled()),
                       "note": self.pi_note},
                "extra": self.extra}

    def pi_scaled(self) -> float:
        """The figure on a Pi when it scales with the CPU (a time ×10, a rate ÷10)."""
        return self.value * PI_FACTOR if self.better == "lower" else self.value / PI_FACTOR


def _num(x: float | None) -> float | None:
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return None
    return float(f"{float(x):.9g}")


def fmt(value: float | None, unit: str) -> str:
    """A figure for people: times in the nearest of s, ms, µs; rates with thousands."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if unit == "s":
        a = abs(value)
        if a >= 1:
            return f"{value:.3g} s" if a < 100 else f"{value:.0f} s"
        if a >= 1e-3:
            return f"{value * 1e3:.3g} ms"
        return f"{value * 1e6:.3g} µs"
    if unit.endswith("/s"):
        return f"{value:,.0f} {unit}"
    if unit == "MiB":
        return f"{value:.1f} MiB"
    if unit == "%":
        return f"{value:.2f} %"
    return f"{value:.4g} {unit}"


def machine() -> dict[str, Any]:
    """Where the figures were measured."""
    try:
        load = os.getloadavg()
    except OSError:
        load = (math.nan,) * 3
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"python": sys.version.split()[0], "platform": platform.platform(),
            "cpu": cpu, "cpus": os.cpu_count(), "load_average": [round(x, 2) for x in load],
            "interpreter": interpreter()}


def rss_mib(pid: int | None = None) -> float:
    """Resident memory of a process (this one by default) in MiB, from /proc."""
    path = f"/proc/{pid or 'self'}/status"
    with open(path) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return math.nan


def open_fds(pid: int | None = None) -> int:
    """Open file descriptors of a process (this one by default)."""
    return len(os.listdir(f"/proc/{pid or 'self'}/fd"))


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks
