"""The shape of a round in each game: which phases it has and when bets close.

This is not a rule the machine decides by itself: each entry cites the article that gives the
shape; every irregularity is still ruled by the game's own ``ruling``. Adding a fifth game means
one more entry here beside its regulation module.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Flow:
    close_bets_at: str            # "first_card" | "shake" | "first_card" (Hold'em blinds posted)
    decision_wager: str | None    # the wager whose holder decides play/fold (three-card games)
    hands_open_after_deal: bool   # players open their hands before deciding (art. 9(1))
    betting_streets: bool         # Hold'em: betting rounds between streets
    dice: bool                    # Super Pan 9: the banker shakes four dice
    # A freshly shuffled deck every round: Super Pan 9 art. 2(1); Texas Hold'em's one deck of 52
    # (11/2008 art. 1(1)(3)), shuffled and cut before each hand (art. 3(1)), ten players
    # taking 28 of it. Q Poker and Fortune 3 Card Poker deal on to the cut card.
    shuffle_every_round: bool
    articles: str


FLOWS: dict[str, Flow] = {
    "q-poker": Flow("first_card", "versus_croupier", True, False, False, False,
                    "89/2004 art. 6(2) no bets after the first card; art. 9(1)-(3) hands open, "
                    "pair bonus, then play or not before the croupier's hand opens"),
    "fortune-3-card-poker": Flow("first_card", "ante", True, False, False, False,
                                 "78/2008 art. 6 no bets after the first card; art. 9(1)-(4) "
                                 "hands open, pair plus, then play (Play = Ante) or fold"),
    "texas-holdem": Flow("first_card", None, False, True, False, True,
                         "11/2008 art. 3(1) a deck shuffled and cut for each hand; art. 6-8: "
                         "hole cards, flop, turn, river, each followed by a betting round; "
                         "showdown of the players still in"),
    "super-pan-9": Flow("shake", None, False, False, True, True,
                        "261/96/M art. 2(1) fresh deck every round; art. 2(5) no bets after "
                        "the shake; art. 5(6) the banker reveals after the players"),
}


def flow_for(game_id: str, default: Flow | None = None) -> Flow:
    """The flow of ``game_id``; ``default`` for a game without an entry (a test game)."""
    if game_id in FLOWS:
        return FLOWS[game_id]
    if default is not None:
        return default
    raise KeyError(game_id)
