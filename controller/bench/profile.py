"""The profile of the hottest path: an input through the runner, journal and machine.

``python -m controller.bench.profile [--rounds N] [--core]`` replays recorded rounds of every
game through a :class:`~controller.table.runner.TableRunner` with a real journal (or, with
``--core``, through the table machine alone) under cProfile and prints the functions that take
the time. docs/performance.md summarises its output.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import tempfile
from pathlib import Path


def profile(rounds: int = 100, core: bool = False, top: int = 25) -> str:
    from controller.journal import Journal
    from controller.table.runner import TableRunner
    from drivers.events import event_from_json

    from .rounds import make_table
    from .throughput import recorded

    inputs = recorded(rounds)
    prof = cProfile.Profile()
    with tempfile.TemporaryDirectory(prefix="tablectl-profile-") as tmp:
        for game, records in inputs.items():
            if core:
                table = make_table(game)
                prof.enable()
                for rec in records:
                    table.apply(rec)
                    table.outbox.clear()
                    table.commands.clear()
                prof.disable()
                continue
            with Journal.open(Path(tmp) / f"{game}.db", "bench-1") as j:
                runner = TableRunner(make_table(game), j)
                prof.enable()
                for rec in records:
                    if rec["source"] == "device":
                        runner.device(event_from_json(dict(rec["event"])))
                    else:
                        runner.command(rec["name"], rec["role"], **rec["args"])
                prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m controller.bench.profile")
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--core", action="store_true", help="the table machine alone, no journal")
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args(argv)
    print(profile(args.rounds, args.core, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
