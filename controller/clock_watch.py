"""The wall clock watched against the monotonic clock: a step noticed, a clock behind the journal.

Every journal record is stamped with the wall clock (``wall_ns``) and the monotonic clock
(``mono_ns``). A Raspberry Pi without a real-time clock boots with the time fake-hwclock or
systemd-timesyncd last saved, and NTP steps the wall clock later, perhaps in the middle of a
round; the monotonic clock is never stepped. So between two looks, a change of
``wall - monotonic`` beyond what drift and slewing make is a step of the wall clock, and its
size (signed: positive forward) is what an auditor adds to the wall times stamped before it in
the same boot to bring them to the clock after it (docs/journal.md, *The clock*).

:class:`ClockWatch` holds the last look. The daemon (controller/service.py) takes one look at
start, against the journal's last record (:meth:`ClockWatch.start`: a clock that went back
across a restart), then one on every turn of its main loop (:meth:`ClockWatch.check`), and
journals what they find as ``clock_behind`` and ``clock_step`` records before anything else.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

CLOCK_STEP = "clock_step"          # the journal kind of a step noticed while running
CLOCK_BEHIND = "clock_behind"      # ... and of a start whose clock is behind the journal
# A change of wall - monotonic beyond this between two looks is a step. NTP slews at most
# 500 ppm (half a millisecond a second) and the looks are seconds apart: a slew never comes
# near it, and systemd-timesyncd steps rather than slews beyond 0.4 s.
STEP_THRESHOLD_NS = 1_000_000_000
# What the pit display's health names the clock by: not a device id (those have no spaces).
HEALTH_NAME = "wall clock"
BOOT_ID = "/proc/sys/kernel/random/boot_id"


def boot_id() -> str | None:
    """The kernel's id of this boot, or None where it cannot be read. A monotonic time is
    meaningful only within its boot: records of one boot share it."""
    try:
        with open(BOOT_ID, encoding="ascii") as f:
            return f.read().strip() or None
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class Sample:
    """One look at both clocks, in nanoseconds."""

    wall_ns: int
    mono_ns: int

    @property
    def offset_ns(self) -> int:
        return self.wall_ns - self.mono_ns

    def to_json(self) -> dict[str, int]:
        return {"wall_ns": self.wall_ns, "mono_ns": self.mono_ns}


@dataclass(frozen=True, slots=True)
class Step:
    """The wall clock stepped between two looks: ``step_ns`` (positive forward)."""

    before: Sample
    after: Sample
    threshold_ns: int
    boot: str | None

    @property
    def step_ns(self) -> int:
        return self.after.offset_ns - self.before.offset_ns

    def payload(self) -> dict[str, Any]:
        """The ``clock_step`` record's payload."""
        return {"step_ns": self.step_ns, "before": self.before.to_json(),
                "after": self.after.to_json(), "threshold_ns": self.threshold_ns,
                "boot_id": self.boot}


@dataclass(frozen=True, slots=True)
class Behind:
    """At start, the wall clock read earlier than the journal's last record."""

    last_seq: int
    last_wall_ns: int
    now: Sample
    boot: str | None

    @property
    def behind_ns(self) -> int:
        return self.last_wall_ns - self.now.wall_ns

    def payload(self) -> dict[str, Any]:
        """The ``clock_behind`` record's payload."""
        return {"behind_ns": self.behind_ns, "last_seq": self.last_seq,
                "last_wall_ns": self.last_wall_ns, **self.now.to_json(),
                "boot_id": self.boot}

    def warning(self) -> str:
        """What the pit is told while the clock is still behind."""
        last = _utc(self.last_wall_ns)
        return (f"the wall clock was {seconds(self.behind_ns)} behind the journal's last "
                f"record (record {self.last_seq}, {last} UTC) when the service started: it "
                "went back across the restart (no real-time clock, or its battery is flat). "
                "The table plays on; its records are stamped with this clock until time "
                "synchronisation sets it, which the journal records as a clock_step. Check "
                "it with `timedatectl` (docs/install.md, The clock)")


class ClockWatch:
    """Looks at ``clock`` (any object with ``time_ns()`` and ``monotonic_ns()``: the
    journal's, so the looks and the records read the same clocks) and says when its wall
    clock stepped, or started behind the journal."""

    def __init__(self, clock: Any = time, threshold_ns: int = STEP_THRESHOLD_NS) -> None:
        self.clock = clock
        self.threshold_ns = threshold_ns
        self.boot = boot_id()
        # The last look, as two integers: no object is made on a look that finds no step.
        self._wall, self._mono = clock.time_ns(), clock.monotonic_ns()
        self.behind: Behind | None = None      # a start behind the journal, not caught up

    @property
    def last(self) -> Sample:
        """The last look."""
        return Sample(self._wall, self._mono)

    def start(self, last_seq: int | None, last_wall_ns: int | None) -> Behind | None:
        """Look now against the journal's last record (before this start wrote any): the
        clock behind it, or None (a new journal, or a clock at or past it)."""
        self._wall, self._mono = self.clock.time_ns(), self.clock.monotonic_ns()
        self.behind = None
        if last_seq is not None and last_wall_ns is not None and self._wall < last_wall_ns:
            self.behind = Behind(last_seq, last_wall_ns, self.last, self.boot)
        return self.behind

    def check(self) -> Step | None:
        """Look again: the step since the last look when it is beyond the threshold (either
        way), else None. Each look is the next one's reference, so drift and slewing, which
        move the clock a little at a time, never add up to a step."""
        # On every input's way to the journal: two reads and a subtraction.
        wall, mono = self.clock.time_ns(), self.clock.monotonic_ns()
        before_wall, before_mono = self._wall, self._mono
        self._wall, self._mono = wall, mono
        if self.behind is not None and wall >= self.behind.last_wall_ns:
            self.behind = None                 # caught up: nothing more to show
        if abs((wall - mono) - (before_wall - before_mono)) <= self.threshold_ns:
            return None
        return Step(Sample(before_wall, before_mono), Sample(wall, mono), self.threshold_ns,
                    self.boot)

    def health_entry(self) -> dict[str, Any] | None:
        """The entry the pit display's health shows while the clock is behind the journal
        (controller/api/health.py), in a device's shape; None otherwise."""
        if self.behind is None:
            return None
        return {"device": HEALTH_NAME, "class": "clock", "link": "unknown",
                "last_heard_s": None, "identity": None, "conditions": [CLOCK_BEHIND],
                "problem": self.behind.warning()}


def seconds(ns: int) -> str:
    """A duration for a person: ``3600.000 s``."""
    return f"{abs(ns) / 1e9:.3f} s"


def _utc(ns: int) -> str:
    import datetime as dt
    return dt.datetime.fromtimestamp(ns // 10**9, tz=dt.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S")
