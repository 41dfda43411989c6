"""``tablectl odds GAME [--json] [--set KEY=VALUE]``: the exact house edge of every wager.

The game computes (``Game.odds``, pure); this module only reads the options, draws a progress
bar on stderr when stderr is a terminal, and prints. The ``--json`` output is a contract:

* ``game``: the game id; ``interpretations``: every interpretation key with the reading used;
* ``bets``: wager name to an object with at least ``house_edge`` (a fraction of the stake,
  positive when the house wins). Wagers: ``pair_bonus`` and ``versus_croupier`` (q-poker),
  ``pair_plus`` and ``ante`` (fortune-3-card-poker; the Ante with its Play decision, per unit of
  Ante), ``seat`` (super-pan-9). texas-holdem has no house-banked wager: a clear error.

The three-card games add ``house_edge_exact`` (a fraction ``p/q``), and for paytable wagers
``paytable``, ``hand_counts`` and ``hands_enumerated``; for the wager against the croupier
``player_hands``, ``croupier_hands_each``, ``meetings_enumerated`` and ``strategy`` (the optimal
decision: ``play_hands``, ``fold_hands``, ``play_probability``, ``weakest_hand_played``,
``strongest_hand_folded``, ``threshold`` = whether one rank separates playing from folding), and
for the Ante ``average_stake`` and ``element_of_risk`` (edge per unit actually wagered).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from . import GAME_IDS, get_game
from .cli import parse_sets


def register(sub: argparse._SubParsersAction) -> None:
    odds = sub.add_parser(
        "odds", help="exact house edge of every wager by exhaustive enumeration",
        description="Exact return of every wager by enumerating every player hand against "
                    "every croupier (or banker) hand, with the optimal play/fold strategy.")
    odds.add_argument("game", choices=GAME_IDS, metavar="GAME", help=" | ".join(GAME_IDS))
    odds.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                      help="choose another reading of an interpretation (repeatable)")
    odds.add_argument("--json", action="store_true", help="machine-readable output")
    odds.set_defaults(func=cmd_odds)


class ProgressBar:
    """A one-line bar on a terminal: ``progress(done, total)``."""

    def __init__(self, stream: TextIO, label: str, width: int = 30):
        self.stream, self.label, self.width = stream, label, width
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 * done // max(total, 1)
        if percent == self.shown:
            return
        self.shown = percent
        filled = self.width * done // max(total, 1)
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] "
                          f"{percent:3d}%")
        self.stream.flush()

    def close(self) -> None:
        if self.shown >= 0:
            self.stream.write("\n")
            self.stream.flush()


def cmd_odds(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    chosen = game.resolve_interpretations(parse_sets(args.set))
    bar = ProgressBar(sys.stderr, f"{game.game_id}: enumerating") if sys.stderr.isatty() else None
    try:
        result = game.odds(chosen, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
        return 0
    print(_text(game.title, game.regulation, result))
    return 0


def _text(title: str, regulation: str, result: dict[str, Any]) -> str:
    lines = [f"{title} ({regulation}): exact odds by full enumeration"]
    changed = ", ".join(f"{k}={v}" for k, v in result.get("interpretations", {}).items())
    if changed:
        lines.append(f"  interpretations: {changed}")
    for name, bet in result["bets"].items():
        line = f"  {name:<16} house edge {100 * bet['house_edge']:8.4f} %"
        if "element_of_risk" in bet:
            line += f"   element of risk {100 * bet['element_of_risk']:.4f} %"
        lines.append(line)
        strategy = bet.get("strategy")
        if strategy and strategy.get("weakest_hand_played"):
            lines.append(f"  {'':<16} play {strategy['play_hands']} of "
                         f"{strategy['play_hands'] + strategy['fold_hands']} hands; weakest "
                         f"played {strategy['weakest_hand_played']}")
    return "\n".join(lines)
