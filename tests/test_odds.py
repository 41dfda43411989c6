"""The exact odds engine: published figures, a slow enumeration, the settlement itself, the CLI."""
from __future__ import annotations

import itertools
import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from controller.rules import fortune_3_card_poker, get_game, odds, q_poker
from controller.rules.cards import Card, full_deck
from controller.rules.errors import RuleError
from controller.rules.three_card import FORTUNE, Q_POKER, Category, evaluate

DECK = full_deck()


# The standard casino game, as a check of the engine against published analyses: Ante and
# Play 1 to 1, croupier qualifies at Q-high, not qualified pays the Ante and returns the Play,
# ties push, and an ante bonus 5-4-1 (straight flush, three of a kind, straight) paid whenever
# the player plays. Pair Plus 40-30-6-4-1.
STANDARD_THREE_CARD_POKER = odds.VersusSpec(
    win={c: Fraction(2) for c in Category},
    tie={c: Fraction(0) for c in Category},
    unqualified=Fraction(1), lose=Fraction(-2), fold=Fraction(-1),
    bonus={Category.STRAIGHT_FLUSH: Fraction(5), Category.THREE_OF_A_KIND: Fraction(4),
           Category.STRAIGHT: Fraction(1)},
    extra_stake=Fraction(1))
STANDARD_PAIR_PLUS = {Category.STRAIGHT_FLUSH: 40, Category.THREE_OF_A_KIND: 30,
                      Category.STRAIGHT: 6, Category.FLUSH: 4, Category.PAIR: 1}


def test_standard_game_matches_published_analyses():
    """The standard casino game (Ante/Play 1 to 1, ante bonus 5-4-1, Q-high qualification,
    Pair Plus 40-30-6-4-1): published house edges 2.32 % (Pair Plus) and 3.37 % (Ante and
    Play with the Q-6-4 strategy, element of risk 2.01 %)."""
    table = odds.hand_table(FORTUNE)
    result = {"pair_plus": odds.pair_wager_odds(table, STANDARD_PAIR_PLUS),
              "ante": odds.versus_odds(table, STANDARD_THREE_CARD_POKER,
                                       odds.outcome_counts(table))}
    # Pair Plus by hand from the category counts: (48*40 + 52*30 + 720*6 + 1096*4 + 3744
    # - 16440) / 22100 = -512 / 22100
    assert Fraction(result["pair_plus"]["house_edge_exact"]) == Fraction(512, 22100)
    assert result["pair_plus"]["house_edge"] == pytest.approx(0.0232, abs=5e-5)
    ante = result["ante"]
    assert ante["house_edge"] == pytest.approx(0.0337, abs=5e-5)
    assert ante["element_of_risk"] == pytest.approx(0.0201, abs=5e-5)
    # the Q-6-4 strategy: play Q-6-4 and better, fold Q-6-3 and worse
    assert ante["strategy"]["threshold"] is True
    assert ante["strategy"]["weakest_hand_played"].split()[0][0] == "Q"
    assert [c[0] for c in ante["strategy"]["weakest_hand_played"].split()[:3]] == ["Q", "6", "4"]
    assert [c[0] for c in ante["strategy"]["strongest_hand_folded"].split()[:3]] == ["Q", "6", "3"]


def _slow_counts(ranking, player_idx):
    """Croupier hands against one player hand, one by one."""
    table = odds.hand_table(ranking)
    player = set(table.cards[player_idx].tolist())
    mine = evaluate([DECK[c] for c in player], ranking).key
    counts = {"unqualified": 0, "lower": 0, "tie": 0, "higher": 0}
    for combo in itertools.combinations(sorted(set(range(52)) - player), 3):
        v = evaluate([DECK[c] for c in combo], ranking)
        if not (v.category > 0 or v.key[1] >= 12):
            counts["unqualified"] += 1
        elif v.key < mine:
            counts["lower"] += 1
        elif v.key == mine:
            counts["tie"] += 1
        else:
            counts["higher"] += 1
    return counts


@pytest.mark.parametrize("ranking", [Q_POKER, FORTUNE], ids=["q-poker", "fortune"])
def test_counts_agree_with_a_card_by_card_enumeration(ranking):
    table = odds.hand_table(ranking)
    got = odds.outcome_counts(table)
    # hands spread over the order, including ones with many ties under Fortune's ranking
    for i in (0, 1234, 9000, 15555, 22099):
        slow = _slow_counts(ranking, i)
        assert sum(slow.values()) == odds.N_CROUPIER
        assert {k: int(getattr(got, k)[i]) for k in slow} == slow


def test_q_poker_one_deck_has_no_ties_and_counts_add_up():
    got = odds.outcome_counts(odds.hand_table(Q_POKER))
    assert not got.tie.any()
    total = got.unqualified + got.lower + got.tie + got.higher
    assert (total == odds.N_CROUPIER).all()


def _settled_play_value(game, cards, wagers):
    """The mean net of playing one hand, settling every croupier hand with the game itself."""
    taken = {Card.parse(c) for c in cards}
    rest = [c for c in DECK if c not in taken]
    total = 0
    for combo in itertools.combinations(rest, 3):
        doc = {"game": game.game_id, "boxes": [{"box": 1, "cards": cards, **wagers}],
               "croupier": {"cards": [str(c) for c in combo]}}
        total += sum(w.net for w in game.settle(doc).wagers)
    return Fraction(total, odds.N_CROUPIER)


def _engine_play_value(table, spec, cards):
    codes = sorted(Card.parse(c).code for c in cards)
    i = int(np.flatnonzero((table.cards == codes).all(axis=1))[0])
    play, _, scale = odds.decision_values(table, spec, odds.outcome_counts(table))
    return Fraction(int(play[i]), odds.N_CROUPIER * scale)


def test_q_poker_engine_agrees_with_the_settlement_on_a_borderline_hand():
    chosen = q_poker.GAME.resolve_interpretations()
    table = odds.hand_table(q_poker.ranking(chosen))
    spec = odds.VersusSpec(win=q_poker.VERSUS_CROUPIER_PAYS,
                           tie={c: Fraction(0) for c in q_poker.VERSUS_CROUPIER_PAYS},
                           unqualified=Fraction(1, 2), lose=Fraction(-1), fold=Fraction(-1, 2))
    cards = ["Qs", "6c", "3h"]
    settled = _settled_play_value(q_poker.GAME, cards, {"versus_croupier": 2,
                                                        "decision": "play"}) / 2
    assert settled == _engine_play_value(table, spec, cards)


def test_fortune_engine_agrees_with_the_settlement_on_a_borderline_hand():
    chosen = fortune_3_card_poker.GAME.resolve_interpretations()
    table = odds.hand_table(fortune_3_card_poker.ranking(chosen))
    cards = ["Qh", "6s", "4d"]
    settled = _settled_play_value(fortune_3_card_poker.GAME, cards,
                                  {"ante": 1, "play": 1, "decision": "play"})
    assert settled == _engine_play_value(table, odds.fortune_spec(chosen), cards)


def test_q_poker_odds_under_the_defaults():
    result = get_game("q-poker").odds()
    bets = result["bets"]
    assert set(bets) == {"pair_bonus", "versus_croupier"}
    # art. 10 is the classic 40-30-6-4-1 table: 512/22100 by hand (see the standard game)
    assert Fraction(bets["pair_bonus"]["house_edge_exact"]) == Fraction(512, 22100)
    vs = bets["versus_croupier"]
    # folding costs only half (art. 9(3)), so the house edge must lie below the 1/2 of
    # folding everything, and above 0
    assert 0 < vs["house_edge"] < 0.5
    assert vs["strategy"]["play_hands"] + vs["strategy"]["fold_hands"] == 22100


def test_fortune_odds_and_every_reading_moves_the_edge_the_right_way():
    game = get_game("fortune-3-card-poker")
    base = game.odds()["bets"]
    # Pair Plus 40-25-5-4-1 by hand: (1920 + 1300 + 3600 + 4384 + 3744 - 16440) / 22100
    assert Fraction(base["pair_plus"]["house_edge_exact"]) == Fraction(1492, 22100)
    edge = base["ante"]["house_edge"]
    worse = [{"ante_play_odds": "ante_only"}, {"qualified_tie": "croupier_wins"},
             {"odd_cards_equal": "croupier_wins"}]
    for reading in worse:
        assert game.odds(reading)["bets"]["ante"]["house_edge"] > edge, reading
    flush = game.odds({"suited_ace_king_queen": "flush"})["bets"]
    # four straight flushes become flushes: 4 * (40 - 4) chips less per 22100
    assert (Fraction(flush["pair_plus"]["house_edge_exact"])
            - Fraction(base["pair_plus"]["house_edge_exact"])) == Fraction(4 * 36, 22100)


def test_q_poker_q1_readings_give_the_same_edge():
    # the A-2-3 suit swap is symmetric between player and croupier (docs/interpretations.md Q1)
    game = get_game("q-poker")
    a = game.odds()["bets"]["versus_croupier"]["house_edge_exact"]
    b = game.odds({"straight_suit_card": "highest_face_value"})["bets"]["versus_croupier"]
    assert a == b["house_edge_exact"]
    assert odds.hand_table(q_poker.ranking(game.resolve_interpretations(
        {"straight_suit_card": "highest_face_value"}))).rank.tolist() != \
        odds.hand_table(Q_POKER).rank.tolist()


def test_q_poker_several_decks_has_no_exact_odds():
    with pytest.raises(RuleError, match="one deck"):
        get_game("q-poker").odds({"decks": "several"})


def test_progress_reaches_the_total():
    seen = []
    get_game("fortune-3-card-poker").odds(progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (22100, 22100)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


# ---------------------------------------------------------------- the command line
def tablectl(*args):
    return subprocess.run([sys.executable, "-m", "controller.cli", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("game,bets", [("q-poker", {"pair_bonus", "versus_croupier"}),
                                       ("fortune-3-card-poker", {"pair_plus", "ante"})])
def test_cli_json_has_the_documented_keys(game, bets):
    run = tablectl("odds", game, "--json")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["game"] == game
    assert out["interpretations"] == get_game(game).resolve_interpretations()
    assert set(out["bets"]) == bets
    for bet in out["bets"].values():
        assert isinstance(bet["house_edge"], float) and 0 < bet["house_edge"] < 1
    assert run.stderr == ""  # no progress bar when stderr is not a terminal


def test_cli_set_chooses_a_reading_and_bad_input_is_one_clear_line():
    run = tablectl("odds", "fortune-3-card-poker", "--json", "--set", "ante_play_odds=ante_only")
    assert json.loads(run.stdout)["interpretations"]["ante_play_odds"] == "ante_only"
    for args, words in [(("texas-holdem",), "no house-banked wager"),
                        (("q-poker", "--set", "decks=two"), "choose one of"),
                        (("q-poker", "--set", "nope=1"), 'no interpretation "nope"'),
                        # the same reading chosen twice, otherwise: which was meant cannot be
                        # told, and the last is not taken for it
                        (("fortune-3-card-poker", "--set", "qualified_tie=push", "--set",
                          "qualified_tie=croupier_wins"),
                         "--set gives qualified_tie twice ('push', then 'croupier_wins')")]:
        run = tablectl("odds", *args)
        assert run.returncode == 2
        assert words in run.stderr and "Traceback" not in run.stderr


def test_cli_text_output_names_each_wager():
    run = tablectl("odds", "q-poker")
    assert run.returncode == 0
    assert "pair_bonus" in run.stdout and "versus_croupier" in run.stdout


def test_progress_bar_draws_one_line_and_ends_it():
    import io

    from controller.rules.odds_cli import ProgressBar

    stream = io.StringIO()
    bar = ProgressBar(stream, "q-poker", width=10)
    for done in (0, 5, 5, 10):
        bar(done, 10)
    bar.close()
    text = stream.getvalue()
    assert text.count("\r") == 3  # the repeated 50 % is not redrawn
    assert text.endswith("[##########] 100%\n")
