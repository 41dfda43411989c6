"""The same input, back to back and after a pause: what an idle gap costs the table's own work.

A dice result reaches the table seconds after the shake; a card at a table's pace comes tens of
milliseconds after the one before. The daemon's figures (controller.bench.daemon) show such a
frame costing about twice a back-to-back one. This benchmark says where that comes from, in
one process with nothing else in the way: a :class:`~controller.table.runner.TableRunner`
takes the card (Q Poker from the shoe), the jam (after the second card of a round) and the
dice result (Super Pan 9) that a croupier's round brings it, and each input is timed

* back to back with the input before it (the baseline),
* after a **busy** pause of ``PAUSE_S``: this thread keeps its CPU spinning on the clock, so
  no idle state, no wake-up and no other process of ours has a part in it,
* after a **sleep** of ``PAUSE_S``, as the daemon waits for a frame (in ``extra``).

The journal is on a RAM-backed directory (``/dev/shm`` where it is a tmpfs), so its commit
costs no disk flush and the figure is the CPU's alone; ``extra.journal_on`` says where it was.
The conditions take turns input by input, so they meet the same minutes of the machine.

Two more figures complete the picture:

* ``pause.control``: a small piece of work (the canonical JSON and SHA-256 of one record,
  ``CONTROL_REPS`` times), which fits in the CPU's first-level caches, after the same busy
  pause: a pause slows the table's work only as far as its memory has left the caches;
* ``pause.commit``: one journal commit on the bench's disk after a busy pause, against back to
  back: the disk's part of an idle gap.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from controller.errors import TablectlError
from controller.journal import Journal
from controller.table.runner import TableRunner
from drivers import events as ev

from .figures import Figure, percentile
from .rounds import Croupier, RunnerTarget, make_table

NAME = "pause"
TITLE = "An input back to back and after a pause: what an idle gap costs (in-process)"
KINDS = ("card", "jam", "dice")
KEYS = tuple(f"pause.{k}.{p}" for k in KINDS + ("control", "commit") for p in ("p50", "p99"))
# As the daemon bench waits before a dice result (controller.bench.daemon.DICE_IDLE_S).
PAUSE_S = 0.005
CONDITIONS = ("back_to_back", "busy", "sleep")
CONTROL_REPS = 40
# The daemon checkpoints its journal when the table is quiet; so does the bench, every so
# many rounds, so the write-ahead log stays the size a running table keeps it.
CHECKPOINT_ROUNDS = 40


def pause(condition: str, seconds: float = PAUSE_S) -> None:
    """Let ``seconds`` pass: not at all (``back_to_back``), spinning on the clock (``busy``:
    the CPU never idles) or asleep (``sleep``)."""
    if condition == "busy":
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
    elif condition == "sleep":
        time.sleep(seconds)
    elif condition != "back_to_back":
        raise ValueError(f"no pause condition {condition!r}; choose from {', '.join(CONDITIONS)}")


class _Turns:
    """The conditions in turn, one per timed input, and the times taken under each."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {c: [] for c in CONDITIONS}
        self._next = 0

    def timed(self, fn: Callable[[], Any]) -> None:
        condition = CONDITIONS[self._next % len(CONDITIONS)]
        self._next += 1
        pause(condition)
        t0 = time.perf_counter()
        fn()
        self.times[condition].append(time.perf_counter() - t0)

    def count(self) -> int:
        return min(len(v) for v in self.times.values())


class _TimedTarget(RunnerTarget):
    """A runner whose device inputs of one kind are timed, each after its turn's pause."""

    def __init__(self, runner: TableRunner, event_type: type, turns: _Turns) -> None:
        super().__init__(runner)
        self.event_type, self.turns = event_type, turns

    def device(self, event: ev.DeviceEvent) -> None:
        if isinstance(event, self.event_type):
            self.turns.timed(lambda: self.runner.device(event))
        else:
            self.runner.device(event)


def ram_directory() -> tuple[str | None, str]:
    """A RAM-backed directory to hold the journal (``/dev/shm`` when it is a tmpfs), and what
    it is; the system's temporary directory (``disk``) where there is none."""
    try:
        with open("/proc/mounts") as f:
            for line in f:
                fields = line.split()
                if len(fields) > 2 and fields[1] == "/dev/shm" and fields[2] == "tmpfs" \
                        and os.access("/dev/shm", os.W_OK):
                    return "/dev/shm", "tmpfs"
    except OSError:
        pass
    return None, "disk"


def _rounds(game: str, directory: Path, n: int, event_type: type) -> _Turns:
    """Play rounds of ``game`` until ``n`` inputs of ``event_type`` were timed under each
    condition."""
    turns = _Turns()
    with Journal.open(directory / f"{game}.db", "bench-1") as j:
        target = _TimedTarget(TableRunner(make_table(game), j), event_type, turns)
        croupier = Croupier(target, game, seed=7)
        croupier.open()
        played = 0
        while turns.count() < n:
            end = croupier.play_round()
            if end not in ("round_complete", "round_void"):
                raise TablectlError(f"{game}: the bench's round ended in {end}")
            played += 1
            if played % CHECKPOINT_ROUNDS == 0:
                j.checkpoint()
    return turns


def _jams(directory: Path, n: int) -> _Turns:
    """Q Poker rounds in which the shoe jams after the second card (89/2004 art. 11(5): the
    round is void), until ``n`` jams were timed under each condition."""
    from controller.rules.cards import full_deck

    turns = _Turns()
    rng, deck = random.Random(7), full_deck()
    with Journal.open(directory / "jam.db", "bench-1") as j:
        runner = TableRunner(make_table("q-poker"), j)
        runner.command("open_table", "supervisor")
        played = 0
        while turns.count() < n:
            if runner.table.state == "shuffling":
                runner.command("deck_ready")
            shoe = rng.sample(deck, len(deck))
            runner.command("place_bet", "dealer", box=rng.randint(1, 7),
                           wager="versus_croupier", amount=10)
            for _ in range(2):
                runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=shoe.pop(),
                                           face_up=False))
            turns.timed(lambda: runner.device(ev.Jam(device="shoe", ts=0.0, where="exit")))
            void = runner.table.round.void if runner.table.round is not None else None
            if runner.table.state != "malfunction" or not void:
                raise TablectlError(f"a jam left the table in {runner.table.state} with its "
                                    "round not void")
            # Cleared by the supervisor, the table asks for a fresh deck (shuffling).
            runner.command("clear_malfunction", "supervisor")
            played += 1
            if played % CHECKPOINT_ROUNDS == 0:
                j.checkpoint()
    return turns


def _control(n: int) -> _Turns:
    record = {"kind": "dice", "round": "17", "payload": {"dice": [3, 5, 1, 6], "total": 15},
              "table": "bench-1", "prev": "0" * 64}

    def work() -> None:
        for _ in range(CONTROL_REPS):
            text = json.dumps(record, sort_keys=True, separators=(",", ":"))
            hashlib.sha256(text.encode()).hexdigest()
    turns = _Turns()
    while turns.count() < n:
        turns.timed(work)
    return turns


def _commits(directory: Path, n: int) -> _Turns:
    turns = _Turns()
    with Journal.open(directory / "commit.db", "bench-1") as j:
        i = 0
        while turns.count() < n:
            turns.timed(lambda: j.append("device", {"i": i}, "1", "shoe"))
            i += 1
    return turns


def _figures(key: str, what: str, turns: _Turns, extra: dict[str, Any],
             pi_note: str) -> list[Figure]:
    t = turns.times
    stats = {f"{c}_p{p}_s": percentile(t[c], p) for c in CONDITIONS for p in (50, 99)}
    stats.update(samples=turns.count(), pause_s=PAUSE_S, **extra)
    return [Figure(f"pause.{key}.p{p}", f"{what} after a {PAUSE_S * 1e3:g} ms busy pause, p{p}",
                   stats[f"busy_p{p}_s"], "s", stats[f"back_to_back_p{p}_s"],
                   f"back to back, p{p}", "lower", pi_note=pi_note, extra=stats)
            for p in (50, 99)]


def run(quick: bool = False) -> list[Figure]:
    n = 6 if quick else 400
    ram, kind = ram_directory()
    note = ("a Pi's caches are smaller, but no other machine's guest shares them: not measured "
            "there")
    out: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-pause-", dir=ram) as tmp:
        d = Path(tmp)
        plays = {"card": lambda: _rounds("q-poker", d, n, ev.CardDrawn),
                 "jam": lambda: _jams(d, n),
                 "dice": lambda: _rounds("super-pan-9", d, n, ev.DiceResult)}
        for k in KINDS:
            out += _figures(k, f"{k} input through the table runner", plays[k](),
                            {"journal_on": kind}, note)
    out += _figures("control", f"canonical JSON and SHA-256 of a record, {CONTROL_REPS} times",
                    _control(n), {"reps": CONTROL_REPS}, note)
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-",
                                     dir=os.environ.get("TABLECTL_BENCH_DIR")) as tmp:
        out += _figures("commit", "one journal commit (fsync) on the bench's disk",
                        _commits(Path(tmp), n), {"journal_on": "disk"},
                        "the flush is the disk's: a Pi's SD card or USB disk is no faster")
    return out
