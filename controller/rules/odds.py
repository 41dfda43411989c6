"""Exact odds of the three-card games by exhaustive enumeration.

Every one of the 22,100 player hands meets every croupier hand that can be dealt with it (the
18,424 three-card hands of the 49 remaining cards): 407,170,400 meetings. Rather than compare
them one by one, the hands are ranked once (:func:`hand_table`) and, for each player hand, the
croupier hands below, equal to and above it are *counted* by inclusion-exclusion over the
player's three cards:

    disjoint(x) = all(x) - sum over the 3 cards of with_card(x)
                         + sum over the 3 pairs of with_pair(x) - [the player's hand itself]

where each term counts hands of rank below ``x``. The croupier qualifies from one rank upward
(Q-high or better), so four numbers describe each player hand: croupier hands not qualified,
qualified and lower, qualified and equal, qualified and higher. A wager's return follows from
its paytable (:class:`VersusSpec`), and the play/fold decision is the better of the two for
each player hand. All sums are exact integers; the edge is also given as an exact fraction.

Pure computation (numpy), no I/O: ``progress(done, total)`` is called between chunks when
given, and the command line draws it.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from math import lcm
from typing import Any, Callable, Mapping

import numpy as np

from .cards import Card, full_deck
from .errors import RuleError
from .three_card import Category, Ranking, evaluate, qualifies

N_HANDS = 22100          # C(52, 3)
N_CROUPIER = 18424       # C(49, 3): croupier hands for each player hand

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class HandTable:
    """All 22,100 hands under one ranking: cards (codes), dense rank, category."""

    cards: np.ndarray        # (22100, 3) card codes, ascending
    rank: np.ndarray         # (22100,) 0 = weakest; equal ranks tie
    category: np.ndarray     # (22100,) Category values
    qualify_from: int        # the lowest rank at which the croupier qualifies (Q-high)


@functools.lru_cache(maxsize=8)
def hand_table(ranking: Ranking) -> HandTable:
    """Rank every three-card hand once under ``ranking``."""
    deck = full_deck()
    combos = list(itertools.combinations(range(52), 3))
    values = [evaluate([deck[i] for i in combo], ranking) for combo in combos]
    keys = sorted({v.key for v in values})
    dense = {k: i for i, k in enumerate(keys)}
    rank = np.fromiter((dense[v.key] for v in values), dtype=np.int32, count=len(values))
    qualify_from = min(dense[v.key] for v in values if qualifies(v))
    # Qualification must be a rank threshold for the counting below to hold.
    assert all(qualifies(v) == (dense[v.key] >= qualify_from) for v in values)
    return HandTable(cards=np.array(combos, dtype=np.int16), rank=rank,
                     category=np.fromiter((int(v.category) for v in values), dtype=np.int8),
                     qualify_from=qualify_from)


@dataclass(frozen=True)
class Outcomes:
    """For each player hand, how many of the croupier hands dealt with it fall in each class."""

    unqualified: np.ndarray
    lower: np.ndarray        # qualified, beaten by the player
    tie: np.ndarray          # qualified, equal
    higher: np.ndarray       # qualified, beats the player


def outcome_counts(table: HandTable, progress: Progress | None = None,
                   chunk: int = 2210) -> Outcomes:
    """Count every croupier hand against every player hand (see the module docstring)."""
    n_ranks = int(table.rank.max()) + 2
    cum_all = np.zeros(n_ranks, dtype=np.int64)
    np.add.at(cum_all, table.rank + 1, 1)
    cum_all = np.cumsum(cum_all)                               # cum_all[x] = #(rank < x)

    cum_card = np.zeros((52, n_ranks), dtype=np.int32)
    for j in range(3):
        np.add.at(cum_card, (table.cards[:, j], table.rank + 1), 1)
    cum_card = np.cumsum(cum_card, axis=1)

    # the 50 hands holding each pair of cards, their ranks sorted
    pair_index = -np.ones((52, 52), dtype=np.int32)
    pairs = list(itertools.combinations(range(52), 2))
    for i, (a, b) in enumerate(pairs):
        pair_index[a, b] = i
    idx = np.concatenate([pair_index[table.cards[:, a], table.cards[:, b]]
                          for a, b in ((0, 1), (0, 2), (1, 2))])
    ranks = np.concatenate([table.rank] * 3)
    order = np.argsort(idx, kind="stable")
    assert (np.bincount(idx, minlength=len(pairs)) == 50).all()  # 50 third cards per pair
    pair_ranks = ranks[order].reshape(len(pairs), 50)
    pair_ranks.sort(axis=1)

    n = len(table.rank)
    out = {k: np.zeros(n, dtype=np.int64) for k in ("below_q", "below", "below_or_eq")}
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        c = table.cards[start:stop].astype(np.int64)
        r = table.rank[start:stop].astype(np.int64)
        own_pairs = [pair_index[c[:, a], c[:, b]] for a, b in ((0, 1), (0, 2), (1, 2))]
        for name, x in (("below_q", np.full_like(r, table.qualify_from)), ("below", r),
                        ("below_or_eq", r + 1)):
            count = cum_all[x].copy()
            for j in range(3):
                count -= cum_card[c[:, j], x]
            for p in own_pairs:
                count += (pair_ranks[p] < x[:, None]).sum(axis=1)
            count -= (r < x)                      # the player's own hand
            out[name][start:stop] = count
        if progress is not None:
            progress(stop, n)
    below_q, below, below_eq = out["below_q"], out["below"], out["below_or_eq"]
    total = np.full(n, N_CROUPIER, dtype=np.int64)
    unqualified = below_q
    lower = np.maximum(below - below_q, 0)
    tie = below_eq - np.maximum(below, below_q)
    tie = np.where(table.rank >= table.qualify_from, tie, 0)
    higher = total - unqualified - lower - tie
    return Outcomes(unqualified, lower, tie, higher)


# ---------------------------------------------------------------- wagers

@dataclass(frozen=True)
class VersusSpec:
    """The wager played against the croupier, per unit of the first stake (Ante or bet).

    All amounts are the player's net. ``win`` by the player's category when a qualified
    croupier is beaten; ``tie`` likewise for a qualified tie; ``bonus`` is paid whenever the
    player plays, whatever the croupier holds (the ante bonus of the standard game);
    ``extra_stake`` is what playing adds to the stake (the Play), for the element of risk.
    """

    win: Mapping[int, Fraction]
    tie: Mapping[int, Fraction]
    unqualified: Fraction
    lose: Fraction
    fold: Fraction
    bonus: Mapping[int, Fraction] = field(default_factory=dict)
    extra_stake: Fraction = Fraction(0)


def decision_values(table: HandTable, spec: VersusSpec,
                    outcomes: Outcomes) -> tuple[np.ndarray, np.ndarray, int]:
    """Per player hand, the exact return of playing and of folding, as integer numerators
    over ``N_CROUPIER * scale`` (the third value), so no rounding enters the comparison."""
    cats = list(Category)
    values = [spec.unqualified, spec.lose, spec.fold,
              *(spec.win[c] for c in cats), *(spec.tie[c] for c in cats),
              *(spec.bonus.get(c, Fraction(0)) for c in cats)]
    scale = lcm(*(Fraction(v).denominator for v in values))

    def per_hand(mapping) -> np.ndarray:
        lut = np.array([int(Fraction(mapping.get(c, 0)) * scale) for c in cats], dtype=np.int64)
        return lut[table.category]

    play = (outcomes.unqualified * int(spec.unqualified * scale)
            + outcomes.lower * per_hand(spec.win)
            + outcomes.tie * per_hand(spec.tie)
            + outcomes.higher * int(spec.lose * scale)
            + N_CROUPIER * per_hand(spec.bonus))
    fold = np.full_like(play, N_CROUPIER * int(spec.fold * scale))
    return play, fold, scale


def versus_odds(table: HandTable, spec: VersusSpec, outcomes: Outcomes) -> dict[str, Any]:
    """House edge of the versus-croupier wager with the best decision for every hand."""
    play, fold, scale = decision_values(table, spec, outcomes)
    plays = play > fold
    best = np.where(plays, play, fold)
    total = Fraction(int(best.sum()), N_HANDS * N_CROUPIER * scale)
    edge = -total
    p_play = Fraction(int(plays.sum()), N_HANDS)
    weakest = int(np.flatnonzero(plays)[np.argmin(table.rank[plays])]) if plays.any() else None
    strongest_fold = (int(np.flatnonzero(~plays)[np.argmax(table.rank[~plays])])
                      if (~plays).any() else None)
    monotone = (weakest is None or strongest_fold is None
                or table.rank[weakest] > table.rank[strongest_fold])
    result = {
        "house_edge": float(edge),
        "house_edge_exact": str(edge),
        "player_hands": N_HANDS,
        "croupier_hands_each": N_CROUPIER,
        "meetings_enumerated": N_HANDS * N_CROUPIER,
        "strategy": {
            "play_hands": int(plays.sum()),
            "fold_hands": int((~plays).sum()),
            "play_probability": float(p_play),
            "weakest_hand_played": _describe(table, weakest),
            "strongest_hand_folded": _describe(table, strongest_fold),
            "threshold": bool(monotone),
        },
    }
    if spec.extra_stake:
        average_stake = 1 + spec.extra_stake * p_play
        result["average_stake"] = float(average_stake)
        result["element_of_risk"] = float(edge / average_stake)
    return result


def _describe(table: HandTable, i: int | None) -> str | None:
    if i is None:
        return None
    cards = [Card.from_code(int(c)) for c in table.cards[i]]
    cards.sort(key=lambda c: (c.rank, c.suit_rank), reverse=True)
    return " ".join(map(str, cards)) + f" ({Category(int(table.category[i])).label})"


def pair_wager_odds(table: HandTable, pays: Mapping[int, int]) -> dict[str, Any]:
    """House edge of a paytable wager on the player's own three cards (x to 1; others lose)."""
    counts = np.bincount(table.category, minlength=len(Category))
    ret = sum(int(counts[c]) * pays.get(Category(c), -1) for c in range(len(Category)))
    edge = -Fraction(ret, N_HANDS)
    return {"house_edge": float(edge), "house_edge_exact": str(edge),
            "hands_enumerated": N_HANDS,
            "paytable": {Category(c).label: pays[Category(c)] for c in sorted(pays, reverse=True)},
            "hand_counts": {Category(c).label: int(counts[c]) for c in range(len(Category))}}


# ---------------------------------------------------------------- the games

def q_poker_odds(chosen: Mapping[str, str], progress: Progress | None = None) -> dict[str, Any]:
    """89/2004: the pair bonus (art. 10) and the bet versus the croupier (art. 9)."""
    from . import q_poker as q

    if chosen["decks"] != "one":
        raise RuleError("exact odds are computed for one deck (decks=one): the reading "
                        "decks=several does not say how many decks, and the odds depend on it")
    table = hand_table(q.ranking(chosen))
    outcomes = outcome_counts(table, progress)
    spec = VersusSpec(
        win={c: q.VERSUS_CROUPIER_PAYS[c] for c in Category},
        tie={c: Fraction(0) for c in Category},      # no tie with one deck
        unqualified=q.NOT_QUALIFIED_PAYS, lose=Fraction(-1), fold=-q.FOLD_LOSES)
    versus = versus_odds(table, spec, outcomes)
    versus["assumes"] = "even stakes: halves and 3 to 2 paid exactly (odd_chip)"
    return {"game": q.GAME.game_id, "interpretations": dict(chosen),
            "bets": {q.PAIR_BONUS: pair_wager_odds(table, q.PAIR_BONUS_PAYS),
                     q.VERSUS_CROUPIER: versus}}


def fortune_spec(chosen: Mapping[str, str]) -> VersusSpec:
    """78/2008 art. 9 as a :class:`VersusSpec` per unit of Ante, under the chosen readings."""
    from . import fortune_3_card_poker as f

    both = chosen["ante_play_odds"] == "ante_and_play"
    win = {c: Fraction(f.ANTE_PLAY_PAYS[c] + (f.ANTE_PLAY_PAYS[c] if both else 1))
           for c in Category}
    tie_value = Fraction(0) if chosen["qualified_tie"] == "push" else Fraction(-2)
    tie = {c: tie_value for c in Category}
    if chosen["odd_cards_equal"] == "croupier_wins":
        tie[Category.THREE_ODD_CARDS] = Fraction(-2)
    return VersusSpec(win=win, tie=tie, unqualified=Fraction(1), lose=Fraction(-2),
                      fold=Fraction(-1), extra_stake=Fraction(1))


def fortune_odds(chosen: Mapping[str, str], progress: Progress | None = None) -> dict[str, Any]:
    """78/2008: the Pair Plus (art. 10) and the Ante with its Play decision (art. 9)."""
    from . import fortune_3_card_poker as f

    table = hand_table(f.ranking(chosen))
    outcomes = outcome_counts(table, progress)
    return {"game": f.GAME.game_id, "interpretations": dict(chosen),
            "bets": {f.PAIR_PLUS: pair_wager_odds(table, f.PAIR_PLUS_PAYS),
                     f.ANTE: versus_odds(table, fortune_spec(chosen), outcomes)}}
