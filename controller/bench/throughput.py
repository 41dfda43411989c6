"""Events per second: the rule engine and state machine alone, then with the durable journal.

The inputs are whole rounds of each of the four games in shoe mode (bets, cards, dice,
decisions, Hold'em's seats and betting actions, results),
recorded once from a scripted croupier and replayed as a burst, as fast as they can be taken:

* ``throughput.core``: :meth:`Table.apply` alone (rules and state machine, no I/O);
* ``throughput.durable``: :class:`~controller.table.runner.TableRunner`, one input at a time:
  each input committed (fsync) with its decisions before anything is published or sent;
* ``throughput.group_commit``: the same runner inside :meth:`TableRunner.batch`, as the daemon
  takes a burst already waiting on its queue: 64 inputs and their decisions in one
  transaction, published and sent only once it is durable; a restart recovers from such a
  journal like any other (the figure checks it);
* ``throughput.device_burst``: card frames the simulator's shoe sends back to back through
  the pseudo-terminal, the link layer and the real driver onto the controller's queue.

The baseline of every figure is the physical one: card frames a second a 115,200-baud line
carries.
"""
from __future__ import annotations

import asyncio
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from controller.errors import TablectlError
from controller.journal import Journal
from controller.table.runner import TableRunner

from .codec import frames
from .figures import PI_FACTOR, Figure, wire_time_s
from .rounds import ALL_GAMES, make_table, record_rounds

NAME = "throughput"
TITLE = "Throughput: events per second, core alone and durable, against a serial line"
KEYS = ("throughput.core", "throughput.durable", "throughput.group_commit",
        "throughput.device_burst")


def feed(runner: TableRunner, record: dict[str, Any]) -> None:
    """One recorded input through the runner's public interface (a refusal is journaled and
    was a refusal when recorded too)."""
    from drivers.events import event_from_json
    try:
        if record["source"] == "device":
            runner.device(event_from_json(dict(record["event"])))
        else:
            runner.command(record["name"], record["role"], **record["args"])
    except TablectlError:
        pass


def recorded(rounds: int) -> dict[str, list[dict[str, Any]]]:
    return {g: record_rounds(g, rounds, seed=i + 1) for i, g in enumerate(ALL_GAMES)}


def core_rate(inputs: dict[str, list[dict[str, Any]]]) -> tuple[float, int, dict[str, float]]:
    """Inputs a second over all games, the count, and each game's own rate."""
    n, took, per_game = 0, 0.0, {}
    for game, records in inputs.items():
        table = make_table(game)
        t0 = time.perf_counter()
        for rec in records:
            table.apply(rec)
            table.outbox.clear()
            table.commands.clear()
        spent = time.perf_counter() - t0
        per_game[game] = round(len(records) / spent)
        took += spent
        n += len(records)
    return n / took, n, per_game


def durable_rate(inputs: dict[str, list[dict[str, Any]]], directory: Path,
                 limit: int) -> tuple[float, int]:
    n, took = 0, 0.0
    for game, records in inputs.items():
        with Journal.open(directory / f"durable-{game}.db", "bench-1") as j:
            runner = TableRunner(make_table(game), j)
            records = records[:limit]
            t0 = time.perf_counter()
            for rec in records:
                feed(runner, rec)
            took += time.perf_counter() - t0
            n += len(records)
    return n / took, n


def group_rate(inputs: dict[str, list[dict[str, Any]]], directory: Path,
               batch: int) -> tuple[float, int, bool]:
    n, took, recovers = 0, 0.0, True
    for game, records in inputs.items():
        path = directory / f"group-{game}.db"
        with Journal.open(path, "bench-1") as j:
            table = make_table(game)
            runner = TableRunner(table, j)
            t0 = time.perf_counter()
            for i in range(0, len(records), batch):
                with runner.batch():
                    for rec in records[i:i + batch]:
                        feed(runner, rec)
                        n += 1
            took += time.perf_counter() - t0
            state = table.state
            ok = j.verify().ok
        with Journal.open(path, "bench-1") as j:        # a restart reads it back
            report = TableRunner(make_table(game), j).recover()
            recovers = recovers and ok and report["state_at_crash"] == state
    return n / took, n, recovers


def device_burst_rate(n: int) -> tuple[float, int]:
    """Card frames a second from the simulated shoe, drawn back to back, onto the queue."""
    from drivers.factory import open_driver
    from firmware_sim.table import SimulatedTable

    async def main(sim: Any) -> tuple[float, int]:
        shoe = sim.add("shoe")
        q: asyncio.Queue = asyncio.Queue()
        drv = open_driver(shoe.spec(), q)
        try:
            while (await q.get()).kind != "link_up":
                pass
            first: list[float] = []

            def croupier() -> None:
                first.append(time.perf_counter())
                for i in range(n):
                    if i and i % 52 == 0:          # the shoe ran out: a fresh deck
                        shoe.load_deck(fresh=True)
                    shoe.draw()
            thread = threading.Thread(target=croupier, daemon=True)
            thread.start()
            got = 0
            while got < n:
                e = await asyncio.wait_for(q.get(), 30)
                if e.kind == "card_drawn":
                    got += 1
            took = time.perf_counter() - first[0]
            thread.join(10)
            return got / took, got
        finally:
            await drv.close()

    with SimulatedTable(seed=3, speed=1000.0) as sim:
        return asyncio.run(main(sim))


def run(quick: bool = False) -> list[Figure]:
    inputs = recorded(10 if quick else 200)
    wire = 1 / wire_time_s(len(frames()["card"]))
    base = "card frames a second on a 115,200-baud line"
    core, n_core, per_game = core_rate(inputs)
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-",
                                     dir=os.environ.get("TABLECTL_BENCH_DIR")) as tmp:
        d = Path(tmp)
        durable, n_durable = durable_rate(inputs, d, 20 if quick else 200)
        group, n_group, recovers = group_rate(inputs, d, 64)
    burst, n_burst = device_burst_rate(100 if quick else 2_000)
    cpu_note = "CPU-bound: a tenth of this on a Pi"
    return [
        Figure("throughput.core", "rules + state machine alone (inputs/s)", core, "events/s",
               wire, base, "higher", pi_note=cpu_note,
               extra={"inputs": n_core, "games": list(inputs), "per_game": per_game}),
        Figure("throughput.durable", "TableRunner: one commit (fsync) per input", durable,
               "events/s", wire, base, "higher",
               pi=1 / (1 / durable + (PI_FACTOR - 1) / core),
               pi_note="mostly the disk's flush time, which a Pi's SD card does not better; "
                       "the CPU part grows tenfold",
               extra={"inputs": n_durable}),
        Figure("throughput.group_commit", "TableRunner.batch: a burst of 64 inputs per commit",
               group, "events/s", wire, base, "higher", pi_note=cpu_note,
               extra={"inputs": n_group, "batch": 64, "recovers": recovers}),
        Figure("throughput.device_burst", "simulated shoe -> pty -> driver -> queue", burst,
               "events/s", wire, base, "higher",
               pi_note="a real line at 115,200 baud is the bound there, not the Pi",
               extra={"cards": n_burst}),
    ]
