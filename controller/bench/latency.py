"""Event latency: from the simulator writing a frame to the controller's decision, durable.

The path is the real one, in one process (:class:`~controller.bench.live.LiveTable`): the
firmware simulator writes a card, dice or jam frame on a pseudo-terminal; the real driver
reads it through pyserial, the link layer and the codec and puts the event on the queue; the
:class:`~controller.table.runner.TableRunner` lets the table machine rule on it, journals
the event with the decisions in one transaction (commit, fsync) and only then publishes
them. The time
measured runs from the simulator's writing the event's frame on the pty (``time.monotonic`` in
its thread just before the write: SimulatedDevice.written_at) to the first published decision
(the event stream).

Rounds are played as a croupier would: Q Poker from the shoe for card frames, Super Pan 9 for
the dice result, and a shoe jam in the middle of dealing for jam frames (each jam voids its
round; the supervisor clears it).

Baselines measured in the same run: a bare echo over a pseudo-terminal (write a frame of the
same size on the master, a thread reads it on the slave and writes it back, read back on the
master: no processing at all), and the frame's time on a real 115,200-baud line. The journal's
commit time (one ``Journal.append``) is reported beside them, because every decision waits for
that commit and the disk's flush, not the controller's code, sets the floor.
"""
from __future__ import annotations

import asyncio
import os
import tempfile
import threading
import time
import tty
from pathlib import Path
from typing import Any

from .codec import frames
from .figures import PI_FACTOR, Figure, percentile, wire_pi_note, wire_time_s
from .live import LiveCroupier, LiveTable
from .rigplay import PATIENCE_S

NAME = "latency"
TITLE = "Event latency: simulator frame to durable, published decision (in-process)"
KINDS = ("card", "dice", "jam")
KEYS = tuple(f"latency.{k}.{p}" for k in KINDS for p in ("p50", "p99", "p99_wire"))
EVENT_KIND = {"card": "card_drawn", "dice": "dice_result", "jam": "jam"}


def pty_echo(frame: bytes, n: int) -> list[float]:
    """Round trips of ``frame`` over a raw pseudo-terminal with an echoing thread."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    stop = threading.Event()

    def echo() -> None:
        while not stop.is_set():
            data = os.read(slave, 4096)
            if data:
                os.write(slave, data)
    t = threading.Thread(target=echo, daemon=True)
    t.start()
    out = []
    try:
        for _ in range(n):
            t0 = time.monotonic()
            os.write(master, frame)
            got = b""
            while len(got) < len(frame):
                got += os.read(master, 4096)
            out.append(time.monotonic() - t0)
    finally:
        stop.set()
        os.write(master, b"\0")
        t.join(1)
        os.close(master)
        os.close(slave)
    return out


def journal_commit(directory: Path, n: int) -> list[float]:
    from controller.journal import Journal

    out = []
    with Journal.open(directory / "commit.db", "bench-1") as j:
        for i in range(n):
            t0 = time.monotonic()
            j.append("device", {"i": i}, "1", "shoe")
            out.append(time.monotonic() - t0)
    return out


async def play(directory: Path, game: str, rounds: int, jam: bool = False,
               seed: int = 1, runner_class: Any = None) -> LiveTable:
    """Play ``rounds`` rounds of ``game`` from the shoe; with ``jam`` the shoe jams after the
    second card of every round."""
    live = LiveTable(directory, game, "shoe", seed=seed, runner_class=runner_class)
    await live.start()

    async def hook(phase: str) -> None:
        if phase == "dealing":
            n = live.count("shoe", "jam")
            await live.act("shoe", "inject", "jam")
            await live.wait_processed("shoe", "jam", n + 1, PATIENCE_S)

    croupier = LiveCroupier(live, seed, hook if jam else None)
    try:
        for _ in range(rounds):
            await croupier.play_round()
    finally:
        await live.close()
    return live


def collect(live: LiveTable, kind: str) -> dict[str, Any]:
    event = EVENT_KIND[kind]
    lat, to_queue, in_controller = [], [], []
    for s in live.samples:
        if s.kind != event or s.emitted is None or s.published is None:
            continue
        lat.append(s.published - s.emitted)
        to_queue.append(s.dequeued - s.emitted)
        in_controller.append(s.published - s.dequeued)
    if not lat:
        raise RuntimeError(f"no {kind} frame reached a published decision")
    return {"samples": len(lat), "p50_s": percentile(lat, 50), "p99_s": percentile(lat, 99),
            "max_s": max(lat), "to_queue_p50_s": percentile(to_queue, 50),
            "in_controller_p50_s": percentile(in_controller, 50),
            "escaped": len(live.escaped)}


def run(quick: bool = False) -> list[Figure]:
    # Rounds: a Q Poker round from the shoe deals about nine cards, so 300 rounds give some
    # 2,600 cards; a dice result and a jam are one a round, so they take 2,000 rounds each
    # for their p99 to be taken over thousands of events, as the daemon's figures are.
    sizes = {"card": 3, "dice": 3, "jam": 3} if quick else {"card": 300, "dice": 2000,
                                                              "jam": 2000}
    fr = frames()
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-",
                                     dir=os.environ.get("TABLECTL_BENCH_DIR")) as tmp:
        d = Path(tmp)
        commit = journal_commit(d, 30 if quick else 300)
        runs = {
            "card": asyncio.run(play(d / "card", "q-poker", sizes["card"])),
            "dice": asyncio.run(play(d / "dice", "super-pan-9", sizes["dice"])),
            "jam": asyncio.run(play(d / "jam", "q-poker", sizes["jam"], jam=True)),
        }
    out = []
    for kind in KINDS:
        stats = collect(runs[kind], kind)
        echo = pty_echo(fr[kind], 200 if quick else 5000)
        wire = wire_time_s(len(fr[kind]))
        stats.update(frame_bytes=len(fr[kind]), wire_s=wire,
                     echo_p50_s=percentile(echo, 50), echo_p99_s=percentile(echo, 99),
                     commit_p50_s=percentile(commit, 50), commit_p99_s=percentile(commit, 99),
                     rounds=sizes[kind])
        # On a Pi the CPU part grows tenfold; the commit's flush time does not shrink.
        cpu = max(stats["p99_s"] - stats["commit_p99_s"], stats["to_queue_p50_s"])
        pi99 = stats["p99_s"] + (PI_FACTOR - 1) * cpu
        note = ("the journal commit (disk flush) is the floor; the CPU part grows tenfold "
                "on a Pi")
        out += [
            Figure(f"latency.{kind}.p50", f"{kind} frame to published decision, p50",
                   stats["p50_s"], "s", stats["echo_p50_s"], "bare pty echo, p50", "lower",
                   pi=stats["p50_s"] + (PI_FACTOR - 1) * max(
                       stats["p50_s"] - stats["commit_p50_s"], stats["to_queue_p50_s"]),
                   pi_note=note, extra=stats),
            Figure(f"latency.{kind}.p99", f"{kind} frame to published decision, p99",
                   stats["p99_s"], "s", stats["echo_p99_s"], "bare pty echo, p99", "lower",
                   pi=pi99, pi_note=note, extra=stats),
            Figure(f"latency.{kind}.p99_wire", f"{kind} frame: p99 against the frame's wire time",
                   stats["p99_s"], "s", wire,
                   f"{len(fr[kind])} bytes at 115,200 baud", "lower", pi=pi99,
                   pi_note=wire_pi_note(pi99, wire),
                   extra=stats),
        ]
    return out
