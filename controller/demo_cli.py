"""``tablectl demo``: the whole controller at work on simulated devices, in under a minute."""
from __future__ import annotations

import argparse

from controller.demo import GAMES, MODES, run_demo
from controller.errors import TablectlError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="play rounds of every game on simulated devices through "
                                    "the real controller")
    p.add_argument("--game", default="all", metavar="GAME",
                   help=f"{' | '.join(GAMES)} | all (default all)")
    p.add_argument("--mode", choices=MODES, default=None,
                   help="shoe or shuffler (default: both)")
    p.add_argument("--rounds", type=int, default=None, metavar="N",
                   help="rounds per game and mode (default 2)")
    p.add_argument("--faults", action="store_true",
                   help="meet irregularities in every second round (on by default when no "
                        "option is given)")
    p.add_argument("--seed", type=int, default=1, metavar="N", help="the run's seed (default 1)")
    p.add_argument("--dir", default=None, metavar="DIR",
                   help="keep each table's journal, config and log here (default: a new "
                        "temporary folder)")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    if args.game != "all" and args.game not in GAMES:
        raise TablectlError(f"unknown game {args.game!r}; choose {', '.join(GAMES)} or all")
    if args.rounds is not None and not 1 <= args.rounds <= 1000:
        raise TablectlError(f"--rounds {args.rounds}: play 1 to 1000 rounds")
    defaults = args.game == "all" and args.mode is None and args.rounds is None
    tallies = run_demo(games=GAMES if args.game == "all" else (args.game,),
                       modes=MODES if args.mode is None else (args.mode,),
                       rounds=args.rounds or 2, faults=args.faults or defaults,
                       seed=args.seed, workdir=args.dir)
    return 0 if all(t.journal_ok for t in tallies) else 1
