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
across a restart; :meth:`ClockWatch.across_stop`: within one boot, the step while the daemon
was stopped, exactly), then one on every turn of its main loop (:meth:`ClockWatch.check`), and
journals what they find as ``clock_step`` and ``clock_behind`` records before anything else.
Restarted in the same boot before the clock is set, it shows the boot's warning again
(:meth:`ClockWatch.resume`), which the journal carries from start to start.
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
    """The wall clock stepped between two looks: ``step_ns`` (positive forward). One found at
    start across a stop of the daemon in the same boot has ``last_seq``: the journal's last
    record before the stop, whose clocks are ``before``."""

    before: Sample
    after: Sample
    threshold_ns: int
    boot: str | None
    last_seq: int | None = None

    @property
    def step_ns(self) -> int:
        return self.after.offset_ns - self.before.offset_ns

    def payload(self) -> dict[str, Any]:
        """The ``clock_step`` record's payload."""
        out = {"step_ns": self.step_ns, "before": self.before.to_json(),
               "after": self.after.to_json(), "threshold_ns": self.threshold_ns,
               "boot_id": self.boot}
        if self.last_seq is not None:
            out.update(while_stopped=True, last_seq=self.last_seq)
        return out


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

    @classmethod
    def from_payload(cls, payload: Any) -> "Behind | None":
        """A ``clock_behind`` record's payload read back, or None when it is not one."""
        p = payload if isinstance(payload, dict) else {}
        values = [p.get(k) for k in ("last_seq", "last_wall_ns", "wall_ns", "mono_ns")]
        if not all(type(v) is int for v in values):
            return None
        boot = p.get("boot_id")
        return cls(values[0], values[1], Sample(values[2], values[3]),
                   boot if isinstance(boot, str) else None)

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

    def across_stop(self, last_seq: int, last_wall_ns: int, last_mono_ns: int,
                    last_boot: str | None) -> Step | None:
        """After :meth:`start`: the step of the wall clock while the daemon was stopped, when
        the journal's last record is of this boot (``last_boot``, the boot id its run started
        with): its ``wall - monotonic`` against the start's look's, exactly as between two
        looks. None across a reboot (two boots' monotonic clocks cannot be compared), or
        within the threshold."""
        if self.boot is None or last_boot != self.boot:
            return None
        before = Sample(last_wall_ns, last_mono_ns)
        if abs(self.last.offset_ns - before.offset_ns) <= self.threshold_ns:
            return None
        return Step(before, self.last, self.threshold_ns, self.boot, last_seq=last_seq)

    def resume(self, earlier: Behind) -> bool:
        """After :meth:`start`, restarted in the boot of ``earlier`` (the boot's clock_behind
        record, read back): while the clock is still behind the record it named, show it
        again, as before the restart; of two, the one the clock has further to catch up to.
        True when it is shown."""
        if self.boot is None or earlier.boot != self.boot or self._wall >= earlier.last_wall_ns:
            return False
        if self.behind is not None and self.behind.last_wall_ns >= earlier.last_wall_ns:
            return False
        self.behind = earlier
        return True

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


def run_start(journal: Any, last: Any) -> Any:
    """The journal's last ``service`` start record at or before ``last`` (a record), or None:
    the start of the run ``last`` belongs to, whose ``boot_id`` is that record's boot. Read
    back from the end, as far as that start."""
    rec = last
    while rec is not None and not (rec.kind == "service" and isinstance(rec.payload, dict)
                                   and rec.payload.get("event") == "start"):
        rec = journal.last("service", until=rec.seq - 1)
    return rec


def boot_behind(journal: Any, began: Any) -> list[Any]:
    """The ``clock_behind`` records the run begun at ``began`` (its ``service`` start) showed:
    the one its start carried from an earlier start of the boot (``"clock_behind": seq``),
    and one it wrote itself; oldest first."""
    out = []
    carried = began.payload.get("clock_behind")
    if type(carried) is int and 0 < carried < began.seq:
        out.append(journal.last(CLOCK_BEHIND, since=carried - 1, until=carried))
    out.append(journal.last(CLOCK_BEHIND, since=began.seq))
    return [r for r in out if r is not None]


def seconds(ns: int) -> str:
    """A duration for a person: ``3600.000 s``."""
    return f"{abs(ns) / 1e9:.3f} s"


def _utc(ns: int) -> str:
    import datetime as dt
    return dt.datetime.fromtimestamp(ns // 10**9, tz=dt.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S")
