"""``tablectl bench``: the controller's figures, each beside the baseline it is compared with.

One module per figure group; each has ``NAME``, ``TITLE``, ``KEYS`` (the figures it always
reports) and ``run(quick: bool) -> list[Figure]``. Absolute times vary from machine to machine,
so every figure carries the baseline measured in the same run and the ratio of the two, and
what the figure would be on a Raspberry Pi (taken as ten times slower than the machine the
bench ran on, see :data:`controller.bench.figures.PI_FACTOR`). docs/performance.md holds the
latest figures and how each is measured.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

# name -> module, in the order they run (the cheap ones first).
BENCHMARKS = {
    "codec": "controller.bench.codec",
    "journal": "controller.bench.journal",
    "throughput": "controller.bench.throughput",
    "latency": "controller.bench.latency",
    "pause": "controller.bench.pause",
    "daemon": "controller.bench.daemon",
    "footprint": "controller.bench.footprint",
    "odds": "controller.bench.odds",
}


@dataclass
class Options:
    """Settings of one ``tablectl bench`` run that the benchmarks' daemons share."""

    # [service] cpu_wakeup_us of every daemon the bench starts; the bench holds the same
    # request itself for the whole run, so each baseline meets the CPUs as the daemon left
    # them (-1: nobody asks; controller.cpu_latency).
    cpu_wakeup_us: int = 0
    # The real-time (SCHED_FIFO) priority the event stream's listener asks for, so its stamp
    # does not wait behind the simulated devices on the same CPUs (controller.bench.floor.
    # Listener); 0 asks nothing. Then what the run's listeners got: "fifo", "other", or
    # "other: " and why it was refused.
    listener_priority: int = 10
    listener_policies: set[str] = field(default_factory=set)


OPTIONS = Options()


def configure(**values: object) -> None:
    """Set :data:`OPTIONS` for a run from ``values``, every other setting to its default (with
    no arguments: all back to the defaults). The object stays the same, so the modules that
    imported it see the change."""
    fresh = Options(**values)  # type: ignore[arg-type]
    for f in fields(Options):
        setattr(OPTIONS, f.name, getattr(fresh, f.name))
