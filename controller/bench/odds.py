"""The odds engine (``tablectl odds``) against a straightforward enumeration, per game.

The engine counts croupier hands by inclusion-exclusion over ranked hands (numpy). The
baseline is what one would write first: a plain Python loop over every player hand and every
croupier (banker) hand dealt from the cards left, each hand ranked by the game's own
evaluator, each meeting classified one by one. That loop takes too long in full for the
three-card games (407,170,400 meetings), so it runs over a seeded sample of player hands and
is extrapolated; the figure says so (``extrapolated``). The sample's counts are held against
the engine's for the same hands (``agrees``): the two must find the same numbers.

``tablectl odds GAME --json`` is timed as a whole process, the way a person runs it.
"""
from __future__ import annotations

import itertools
import random
import subprocess
import sys
import time
from typing import Any

from .figures import Figure

NAME = "odds"
TITLE = "Odds engine: tablectl odds per game against a plain enumeration"
GAMES = ("q-poker", "fortune-3-card-poker", "super-pan-9")
KEYS = tuple(f"odds.{g}" for g in GAMES)


def time_command(game: str) -> float:
    """Wall time of ``tablectl odds GAME --json`` in a fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "odds", game, "--json"],
                          capture_output=True, text=True)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"tablectl odds {game} failed: {proc.stderr.strip()}")
    return took


def engine_time(game: str) -> float:
    """The engine alone, in this process, from cold (no cached hand table)."""
    from controller.rules import get_game
    from controller.rules import odds as engine

    engine.hand_table.cache_clear()
    t0 = time.perf_counter()
    get_game(game).odds()
    return time.perf_counter() - t0


def naive_three_card(game: str, sample: int, seed: int = 1) -> dict[str, Any]:
    """Plain loop over ``sample`` player hands x all 18,424 croupier hands each."""
    from controller.rules import get_game
    from controller.rules.cards import full_deck
    from controller.rules import odds as engine
    from controller.rules.three_card import evaluate, qualifies
    from controller.rules import q_poker, fortune_3_card_poker

    chosen = get_game(game).resolve_interpretations({})
    module = q_poker if game == "q-poker" else fortune_3_card_poker
    ranking = module.ranking(chosen)
    deck = full_deck()

    t0 = time.perf_counter()
    value = {}
    for combo in itertools.combinations(range(52), 3):
        v = evaluate([deck[i] for i in combo], ranking)
        value[combo] = (v.key, qualifies(v))
    rank_time = time.perf_counter() - t0

    hands = list(itertools.combinations(range(52), 3))
    picked = random.Random(seed).sample(range(len(hands)), sample)
    counts = []
    t0 = time.perf_counter()
    for i in picked:
        player = hands[i]
        pkey = value[player][0]
        rest = [c for c in range(52) if c not in player]
        unq = lower = tie = higher = 0
        for croupier in itertools.combinations(rest, 3):
            ckey, cq = value[croupier]
            if not cq:
                unq += 1
            elif pkey > ckey:
                lower += 1
            elif pkey == ckey:
                tie += 1
            else:
                higher += 1
        counts.append((unq, lower, tie, higher))
    loop_time = time.perf_counter() - t0

    table = engine.hand_table(ranking)
    out = engine.outcome_counts(table)
    index = {tuple(int(c) for c in row): n for n, row in enumerate(table.cards)}
    agrees = all(
        (int(out.unqualified[index[hands[i]]]), int(out.lower[index[hands[i]]]),
         int(out.tie[index[hands[i]]]), int(out.higher[index[hands[i]]])) == got
        for i, got in zip(picked, counts))
    per_hand = loop_time / sample
    return {"estimate_s": rank_time + per_hand * engine.N_HANDS, "rank_s": rank_time,
            "loop_s": loop_time, "player_hands_sampled": sample,
            "player_hands_total": engine.N_HANDS,
            "meetings_timed": sample * engine.N_CROUPIER,
            "meetings_total": engine.N_HANDS * engine.N_CROUPIER,
            "extrapolated": sample < engine.N_HANDS, "agrees": agrees}


def naive_pan9(sample: int | None, seed: int = 1) -> dict[str, Any]:
    """Plain loop over seat hands x banker hands from the other 50 cards, by the game's own
    comparison (art. 7-8); seat wins and banker wins counted and held against the engine's."""
    from controller.rules.cards import full_deck
    from controller.rules.super_pan_9 import hand_key, seat_outcome_counts

    deck = full_deck()
    hands = list(itertools.combinations(range(52), 2))
    picked = (range(len(hands)) if sample is None or sample >= len(hands)
              else random.Random(seed).sample(range(len(hands)), sample))
    t0 = time.perf_counter()
    key = {h: hand_key([deck[h[0]], deck[h[1]]]) for h in hands}
    wins = losses = 0
    for i in picked:
        seat = hands[i]
        ks = key[seat]
        for banker in itertools.combinations([c for c in range(52) if c not in seat], 2):
            if ks > key[banker]:
                wins += 1
            else:
                losses += 1
    took = time.perf_counter() - t0
    n = len(picked)
    full = n == len(hands)
    result = {"estimate_s": took * len(hands) / n, "loop_s": took, "player_hands_sampled": n,
              "player_hands_total": len(hands), "meetings_timed": n * 1225,
              "meetings_total": len(hands) * 1225, "extrapolated": not full}
    if full:
        e_wins, e_losses, _ = seat_outcome_counts()
        result["agrees"] = (wins, losses) == (e_wins, e_losses)
    else:
        result["agrees"] = None       # the engine counts all hands at once; checked in full
    return result


def run(quick: bool = False) -> list[Figure]:
    figures = []
    for game in GAMES:
        took = time_command(game)
        engine = engine_time(game)
        if game == "super-pan-9":
            naive = naive_pan9(200 if quick else None)
        else:
            naive = naive_three_card(game, 3 if quick else 40)
        label = ("plain Python enumeration" + (", extrapolated from "
                 f"{naive['player_hands_sampled']} of {naive['player_hands_total']} player hands"
                 if naive["extrapolated"] else ", in full"))
        figures.append(Figure(
            f"odds.{game}", f"tablectl odds {game} (whole command)", took, "s",
            naive["estimate_s"], label, "lower",
            pi_note="a Pi computes the same odds in ten times the time; `tablectl odds` is "
                    "an office tool, not on the table's path",
            extra={**naive, "engine_in_process_s": engine}))
    return figures
