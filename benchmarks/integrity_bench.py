#!/usr/bin/env python3
"""Shuffle sentinel benchmark: false alarms on genuine shuffles, cards to catch each bad deck.

    python benchmarks/integrity_bench.py [--decks N] [--trials N] [--seed N] [--json]

Defaults (100,000 genuine decks, 200 decks of each bad kind) take about a minute on a laptop.
The figures in docs/integrity.md come from ``--decks 1000000``. Results are counts of cards and
decks, never timings; the same seed gives the same figures.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.integrity.bench import format_report, run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--decks", type=int, default=100_000, help="genuine decks (false alarms)")
    p.add_argument("--trials", type=int, default=200, help="decks of each bad kind")
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    args = p.parse_args(argv)
    if args.decks < 1 or args.trials < 1:
        p.error("--decks and --trials must be at least 1")
    res = run(args.decks, args.trials, args.seed)
    print(json.dumps(res, indent=2) if args.json else format_report(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
