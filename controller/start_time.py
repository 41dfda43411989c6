"""How much more start time to ask systemd for before a start phase that reads the journal.

The unit's ``TimeoutStartSec`` is a fixed figure, but opening the journal, the recovery's
replay and each device's backward search for its last link session read a part of the
journal that grows with it: on a Pi's SD card after months of play they may take longer than
the whole start timeout, and systemd would kill a healthy start (then restart it, to be killed
again). Before each such phase the service sends ``EXTEND_TIMEOUT_USEC`` with
:func:`phase_budget` of the journal's size: systemd then waits that long from now for the next
message (the next phase's extension, or ``READY=1``), never less than ``TimeoutStartSec``.

The budget is generous on purpose (a start killed for taking its time is a table down) but
finite: a start that hangs is still killed, after its phase's budget instead of the timeout.
"""
from __future__ import annotations

from pathlib import Path

# Every phase gets at least this: the fixed costs (imports, SQLite's opening, the WAL's reserve)
# and a card whose writes are slow.
PHASE_FLOOR_S = 30.0
# The slowest reading of the journal planned for: 2 MB/s, about 500 random 4 KiB reads a
# second, a third of what an A1 SD card promises (1,500; sequential reads run at 20 MB/s or
# more). A phase reads at most the whole file once, so one file's worth at this rate bounds it.
READ_BYTES_PER_S = 2_000_000


def journal_bytes(path: str | Path) -> int:
    """The journal's size on disk: the file and its WAL (records a crash left there). 0 for a
    journal not made yet, or one this user cannot see (opening it will say why)."""
    total = 0
    for p in (Path(path), Path(f"{path}-wal")):
        try:
            total += p.stat().st_size
        except OSError:
            pass
    return total


def phase_budget(nbytes: int) -> float:
    """Seconds a start phase that reads up to ``nbytes`` of journal may take."""
    return PHASE_FLOOR_S + max(nbytes, 0) / READ_BYTES_PER_S
