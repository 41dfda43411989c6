"""The durable journal: records per second, one commit per record and in group commits.

Every figure is a rate of records on disk (``synchronous=FULL``: each commit is fsync'd before
the call returns). The baseline is the disk itself: how many ``write`` + ``fsync`` of a small
record a second the same directory takes with no database at all. A journal commit costs about
one such flush, so one commit per record can never beat the disk's flush rate; a group commit
amortises one flush over many records.
"""
from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from .figures import Figure

NAME = "journal"
TITLE = "Journal: durable records per second against the disk's own flush rate"
KEYS = ("journal.append", "journal.append_many", "journal.group_writer")
PAYLOAD = {"source": "device", "event": {"kind": "card_drawn", "device": "shoe", "ts": 12.5,
                                         "card": "Qh", "face_up": False, "deck": None}}


def fsync_rate(directory: Path, n: int) -> float:
    """Bare ``write`` + ``fsync`` of a 200-byte record per second in ``directory``."""
    path = directory / "fsync.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        data = b"x" * 200
        t0 = time.perf_counter()
        for _ in range(n):
            os.write(fd, data)
            os.fsync(fd)
        return n / (time.perf_counter() - t0)
    finally:
        os.close(fd)
        path.unlink()


def append_rate(directory: Path, n: int) -> float:
    from controller.journal import Journal

    with Journal.open(directory / "append.db", "bench-1") as j:
        t0 = time.perf_counter()
        for i in range(n):
            j.append("device", PAYLOAD, "1", "shoe")
        took = time.perf_counter() - t0
        assert j.verify().ok
    return n / took


def append_many_rate(directory: Path, n: int, batch: int) -> float:
    from controller.journal import Entry, Journal

    with Journal.open(directory / "many.db", "bench-1") as j:
        t0 = time.perf_counter()
        for _ in range(n // batch):
            j.append_many([Entry("device", PAYLOAD, "1", "shoe")] * batch)
        took = time.perf_counter() - t0
        assert j.verify().ok
    return (n // batch) * batch / took


def group_writer_rate(directory: Path, n: int, writers: int) -> float:
    """``writers`` tasks each awaiting its own append, as drivers would: GroupWriter gathers
    what arrives while a commit is in flight into the next one."""
    from controller.journal import GroupWriter, Journal

    async def main(j: Journal) -> float:
        gw = GroupWriter(j)

        async def one(k: int) -> None:
            for _ in range(n // writers):
                await gw.append("device", PAYLOAD, "1", f"dev{k}")
        t0 = time.perf_counter()
        await asyncio.gather(*(one(k) for k in range(writers)))
        took = time.perf_counter() - t0
        await gw.close()
        return (n // writers) * writers / took

    with Journal.open(directory / "group.db", "bench-1") as j:
        rate = asyncio.run(main(j))
        assert j.verify().ok
    return rate


def run(quick: bool = False) -> list[Figure]:
    n_sync = 60 if quick else 600
    n_many = 2_000 if quick else 40_000
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-", dir=os.environ.get(
            "TABLECTL_BENCH_DIR")) as tmp:
        d = Path(tmp)
        disk = fsync_rate(d, n_sync)
        single = append_rate(d, n_sync)
        many = append_many_rate(d, n_many, 64)
        group = group_writer_rate(d, n_many // 4, 64)
    note = ("a Pi's SD card flushes in milliseconds too; the CPU part (hashing, JSON) "
            "grows tenfold, so group commits matter more there")
    return [
        Figure("journal.append", "Journal.append: one commit (fsync) per record", single,
               "records/s", disk, "bare write+fsync of 200 bytes, same directory", "higher",
               pi_note=note, extra={"records": n_sync}),
        Figure("journal.append_many", "Journal.append_many: 64 records per commit", many,
               "records/s", disk, "bare write+fsync of 200 bytes, same directory", "higher",
               pi_note=note, extra={"records": n_many, "batch": 64}),
        Figure("journal.group_writer", "GroupWriter: 64 tasks awaiting durable appends",
               group, "records/s", disk, "bare write+fsync of 200 bytes, same directory",
               "higher", pi_note=note, extra={"records": n_many // 4, "writers": 64}),
    ]
