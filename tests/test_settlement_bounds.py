"""No figure of a settlement passes 2^53 - 1, the largest whole number the console page (and any
JSON reader using doubles) holds exactly: for every game, a round the rules accept settles to
whole numbers within it, because a round's stakes are bounded as the table bounds them
(MAX_ROUND_STAKES, Hold'em's stacks together at most 2^53 - 1); `rules settle` refuses what the
table refuses, with the way out; and the settlement is checked once more before it is printed
or journaled."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from controller.rules import get_game
from controller.rules.base import (MAX_AMOUNT, MAX_ROUND_STAKES, Settlement,
                                   check_settlement_amounts)
from controller.rules.cards import full_deck
from controller.rules.errors import RuleError
from controller.rules.texas_holdem import start_hand

from table_helpers import draw, settlement, table
from test_settle_input import one_line_refusal, settle

DECK = [str(c) for c in full_deck()]

# Small stakes, stakes up to the round's bound, the bound itself, and beyond it up to 2^53 - 1
# (which the document reader takes, and the round's bound must refuse).
STAKE = st.one_of(st.just(0), st.integers(1, 1000), st.integers(0, MAX_ROUND_STAKES),
                  st.just(MAX_ROUND_STAKES), st.integers(MAX_ROUND_STAKES, MAX_AMOUNT))


def figures(doc, path=""):
    """Every number in a settlement's JSON, with where it is."""
    if isinstance(doc, bool) or doc is None or isinstance(doc, str):
        return
    if isinstance(doc, (int, float)):
        yield path, doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield from figures(v, f"{path}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from figures(v, f"{path}[{i}]")


def settled_within_bounds(doc) -> dict | None:
    """The game's settlement of ``doc`` (None when the rules refuse it), every figure of which
    must be a whole number within 2^53 - 1 either way."""
    try:
        result = get_game(doc["game"]).settle(doc)
    except RuleError:
        return None
    out = result.to_json()
    for where, value in figures(out):
        assert isinstance(value, int), (where, value)
        assert -MAX_AMOUNT <= value <= MAX_AMOUNT, (where, value)
    check_settlement_amounts(out)
    return out


def three_card_round(data, game: str) -> dict:
    cards = data.draw(st.permutations(DECK))
    n = data.draw(st.integers(1, 7))
    boxes = []
    for i in range(n):
        hand = cards[3 * i + 3:3 * i + 6]
        if game == "q-poker":
            vs = data.draw(STAKE) // 2 * 2           # even_stakes, the default reading
            box = {"box": i + 1, "cards": hand, "pair_bonus": data.draw(STAKE),
                   "versus_croupier": vs}
            if vs:
                box["decision"] = data.draw(st.sampled_from(["play", "fold"]))
        else:
            ante = data.draw(STAKE)
            box = {"box": i + 1, "cards": hand, "pair_plus": data.draw(STAKE), "ante": ante}
            if ante:
                box["decision"] = data.draw(st.sampled_from(["play", "fold"]))
                if box["decision"] == "play":
                    box["play"] = ante
        boxes.append(box)
    return {"game": game, "croupier": {"cards": cards[:3]}, "boxes": boxes}


@settings(max_examples=150)
@given(st.data(), st.sampled_from(["q-poker", "fortune-3-card-poker"]))
def test_three_card_rounds_settle_within_the_bound(data, game):
    doc = three_card_round(data, game)
    out = settled_within_bounds(doc)
    stakes = sum(v for b in doc["boxes"] for k, v in b.items()
                 if k in ("pair_bonus", "versus_croupier", "pair_plus", "ante"))
    assert (out is not None) <= (stakes <= MAX_ROUND_STAKES)


@settings(max_examples=150)
@given(st.data())
def test_super_pan_9_rounds_settle_within_the_bound(data):
    cards = data.draw(st.permutations(DECK))
    seats = data.draw(st.lists(st.sampled_from([1, 2, 3, 5, 6, 7, 8]), min_size=1,
                               max_size=7, unique=True))
    doc = {"game": "super-pan-9",
           "banker": {"seat": 4, "capital": data.draw(st.integers(1, MAX_AMOUNT)),
                      "cards": cards[:2]},
           "dice": data.draw(st.lists(st.integers(1, 6), min_size=4, max_size=4)),
           "co_bankers": [{"house": True, "capital": data.draw(st.integers(1, MAX_AMOUNT))}],
           "seats": [{"seat": s, "cards": cards[2 * i + 2:2 * i + 4],
                      "bets": [{"player": f"p{s}{j}", "amount": data.draw(STAKE) or 1}
                               for j in range(data.draw(st.integers(1, 3)))]}
                     for i, s in enumerate(seats)]}
    settled_within_bounds(doc)


@settings(max_examples=100)
@given(st.data())
def test_holdem_hands_settle_within_the_bound(data):
    """Stacks together up to 2^53 - 1, each seat going all in or folding in turn, as the
    betting engine allows; the rake at any rate the regulation takes."""
    n = data.draw(st.integers(2, 6))
    seats = list(range(1, n + 1))
    stacks = {s: data.draw(st.integers(1, MAX_AMOUNT // n)) for s in seats}
    small = data.draw(st.integers(1, 10**6))
    state = start_hand(seats, stacks, None, small, 2 * small)
    actions = []
    while state.to_act is not None:
        legal = {a.kind for a in state.legal_actions()}
        # A call with chips behind would leave betting for the flop: only when it is all in.
        kind = data.draw(st.sampled_from(["allin" if "allin" in legal else "call", "fold"]))
        actions.append({"box": state.to_act, "action": kind})
        state.act(state.to_act, kind)
    cards = data.draw(st.permutations(DECK))
    doc = {"game": "texas-holdem", "blinds": {"small": small, "big": 2 * small},
           "rake": data.draw(st.sampled_from([0, 3, 5, "4.5"])),
           "seats": [{"box": s, "stack": stacks[s], "cards": cards[2 * i:2 * i + 2]}
                     for i, s in enumerate(seats)],
           "actions": actions,
           "board": cards[20:20 + state.board_cards_due]}
    assert settled_within_bounds(doc) is not None


# --- at the bound and past it, in `rules settle` ----------------------------------------------

STRAIGHT_FLUSH = ["As", "Ks", "Qs"]


@pytest.mark.parametrize("game, wager", [("q-poker", "pair_bonus"),
                                         ("fortune-3-card-poker", "pair_plus")])
def test_a_straight_flush_on_the_largest_stake_a_round_takes_is_exact(game, wager,
                                                                   monkeypatch, capsys):
    doc = {"game": game, "boxes": [{"box": 1, "cards": STRAIGHT_FLUSH,
                                    wager: MAX_ROUND_STAKES}]}
    code, out, err = settle(doc, monkeypatch, capsys)
    assert code == 0, err
    assert settled_within_bounds(doc)["wagers"][0]["net"] == 40 * MAX_ROUND_STAKES


@pytest.mark.parametrize("doc", [
    {"game": "q-poker", "boxes": [{"box": 1, "cards": STRAIGHT_FLUSH,
                                   "pair_bonus": MAX_AMOUNT}]},
    {"game": "q-poker", "boxes": [{"box": 1, "cards": STRAIGHT_FLUSH, "pair_bonus": 1},
                                  {"box": 2, "cards": ["2c", "5d", "9h"],
                                   "pair_bonus": MAX_ROUND_STAKES}]},
    {"game": "fortune-3-card-poker", "croupier": {"cards": ["Js", "8d", "3h"]},
     "boxes": [{"box": 1, "cards": STRAIGHT_FLUSH, "pair_plus": MAX_ROUND_STAKES // 2 + 2,
                "ante": MAX_ROUND_STAKES // 2, "play": MAX_ROUND_STAKES // 2,
                "decision": "play"}]},
    {"game": "super-pan-9", "banker": {"seat": 4, "capital": MAX_AMOUNT,
                                       "cards": ["Kd", "5s"]},
     "dice": [3, 5, 1, 6], "seats": [{"seat": 1, "cards": ["9h", "Ts"],
                                      "bets": [{"amount": MAX_ROUND_STAKES},
                                               {"amount": 1}]}]},
], ids=["q-poker one stake", "q-poker two boxes", "fortune", "super-pan-9"])
def test_stakes_the_table_would_refuse_are_refused_with_the_way_out(doc, monkeypatch, capsys):
    code, out, err = settle(doc, monkeypatch, capsys)
    one_line_refusal(code, out, err)
    assert "bets together are" in err and f"above {MAX_ROUND_STAKES:,}" in err, err
    assert "check the stakes for a digit too many" in err, err


def test_holdem_stacks_together_beyond_the_limit_are_refused(monkeypatch, capsys):
    doc = {"game": "texas-holdem", "blinds": {"small": 5, "big": 10},
           "seats": [{"box": 1, "stack": MAX_AMOUNT // 2 + 1, "cards": ["As", "Ad"]},
                     {"box": 2, "stack": MAX_AMOUNT // 2 + 1, "cards": ["Ks", "Kd"]}],
           "actions": [{"box": 1, "action": "allin"}, {"box": 2, "action": "call"}],
           "board": ["2c", "3d", "4h", "8s", "9c"]}
    code, out, err = settle(doc, monkeypatch, capsys)
    one_line_refusal(code, out, err)
    assert "stacks together are" in err and "2^53 - 1" in err, err


def test_a_settlement_beyond_the_limit_is_never_printed(monkeypatch, capsys):
    """The last check before printing or journaling, whatever a game's rules let through."""
    big = Settlement("q-poker", {}, {}, [], house_net=-(MAX_AMOUNT + 1))
    with pytest.raises(RuleError, match=r"house_net would be -9,007,199,254,740,992"):
        check_settlement_amounts(big.to_json())
    check_settlement_amounts(Settlement("q-poker", {}, {}, [], house_net=-MAX_AMOUNT).to_json())


def test_at_the_table_a_straight_flush_on_the_largest_bet_settles_exactly():
    t = table("q-poker")
    t.command("place_bet", box=1, wager="pair_bonus", amount=MAX_ROUND_STAKES)
    draw(t, "As", "2c", "Ks", "5d", "Qs", "9h")          # box 1 and the croupier in turn
    doc = settlement(t)
    assert doc["wagers"][0]["net"] == 40 * MAX_ROUND_STAKES <= MAX_AMOUNT
    check_settlement_amounts(doc)
