"""Where a frame's time goes inside the daemon, read from the daemon's own journal.

The journal stamps every record with ``CLOCK_MONOTONIC`` (``mono_ns``) as its transaction
begins: after the pty, the link and the table's rules have had the frame, before the hash
chain, SQLite's insert and the commit's flush. The simulator stamps the frame's write and the
listener its event's arrival with the same system-wide clock, so each frame's latency splits
at the stamp of its input record into

* **to the journal**: the pty, decoding, the link, the event loop's hand-overs, the rules;
* **from the journal**: the commit and its flush, publishing, the socket, the listener.

A frame is found in the journal by its device and the sequence number its link journals with
it (``link.seq``); a sequence number seen again (a new link session numbers its frames anew)
is matched in order.
"""
from __future__ import annotations

from collections import defaultdict, deque
from pathlib import Path
from typing import Any, Iterable

from controller.journal import Journal, Kind

from .figures import percentile


def journal_stamps(path: Path, device: str) -> dict[int, deque[float]]:
    """The monotonic stamps (s) of the input records of ``device``'s frames in the journal at
    ``path``, by the frame's sequence number, oldest first."""
    out: dict[int, deque[float]] = defaultdict(deque)
    with Journal.open(path, readonly=True) as journal:
        for rec in journal.records(kinds=(Kind.DEVICE.value,)):
            p = rec.payload
            link = p.get("link") if isinstance(p, dict) else None
            if link is None or p.get("event", {}).get("device") != device:
                continue
            out[int(link["seq"])].append(rec.mono_ns / 1e9)
    return out


def split(samples: Iterable[tuple[float, int, float]],
          stamps: dict[int, deque[float]]) -> dict[str, Any]:
    """Split each ``(written, seq, arrived)`` sample at its frame's journal stamp: p50 and p99
    of each part, and how many samples found no stamp (``unmatched``, which should be 0)."""
    to_j: list[float] = []
    from_j: list[float] = []
    unmatched = 0
    for written, seq, arrived in samples:
        waiting = stamps.get(seq)
        # A stamp before the frame was written belongs to an earlier frame of that number.
        while waiting and waiting[0] < written:
            waiting.popleft()
        if not waiting or waiting[0] > arrived:
            unmatched += 1
            continue
        stamp = waiting.popleft()
        to_j.append(stamp - written)
        from_j.append(arrived - stamp)
    out: dict[str, Any] = {"samples": len(to_j), "unmatched": unmatched}
    for name, xs in (("to_journal", to_j), ("from_journal", from_j)):
        for p in (50, 99):
            out[f"{name}_p{p}_s"] = percentile(xs, p)
    return out
