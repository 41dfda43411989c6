"""`tablectl rules settle` against payouts worked out by hand from the official texts
(/work/shared/regulations/, quoted by article in each case), a few hands per game, the edges
included: ties broken by suit or not at all, a croupier who does not qualify, the bonus tables,
the commission and the banker's advantage of Super Pan 9. The readings are the defaults of
docs/interpretations.md."""
import json

import pytest

from settle_helpers import settle_cli


def nets(doc):
    """(box, wager) -> net, as the command settles ``doc``; and the house's net."""
    out = settle_cli(json.dumps(doc))
    return {(w["box"], w["wager"]): w["net"] for w in out["wagers"]}, out["house_net"]


def play(box, cards, pair=0, stake=20, decision="play", bonus="pair_bonus"):
    doc = {"box": box, "cards": cards, "versus_croupier": stake, "decision": decision}
    return dict(doc, **({bonus: pair} if pair else {}))


# 89/2004. Suits rank espadas, copas, paus, ouros (art. 4(1)); art. 8 breaks a tie of ranks by
# suit: three odd cards by the suit of the highest card (8(6)), a pair by the suit of its odd
# card (8(5)). Art. 9(3): a fold loses half; 9(5): a croupier below Q-high pays half; 9(7):
# straight flush 3 to 1, three of a kind 2 to 1, straight 3 to 2, others 1 to 1. Art. 10:
# the pair bonus pays 40, 30, 6, 4, 1 to 1.
Q_POKER = [
    ({"game": "q-poker", "croupier": {"cards": ["Kd", "8c", "4h"]}, "boxes": [
        play(1, ["Ks", "8d", "4c"]),            # K-8-4 each: the K of spades beats diamonds
        play(2, ["Kc", "8s", "3d"]),            # K-8-3 below K-8-4
        play(3, ["9s", "9c", "5h"], pair=10),   # a pair beats three odd cards, 1 to 1
        play(4, ["5c", "6d", "7s"], pair=10),   # straight: 3 to 2, bonus 6 to 1
        play(5, ["Ac", "Jc", "6h"], stake=10, decision="fold"),
        play(6, ["2s", "3s", "4s"], pair=10),   # straight flush: 3 to 1, bonus 40 to 1
        play(7, ["Qh", "Jh", "2h"], pair=10)]},  # flush: 1 to 1, bonus 4 to 1
     {(1, "versus_croupier"): 20, (2, "versus_croupier"): -20,
      (3, "pair_bonus"): 10, (3, "versus_croupier"): 20,
      (4, "pair_bonus"): 60, (4, "versus_croupier"): 30,
      (5, "versus_croupier"): -5,
      (6, "pair_bonus"): 400, (6, "versus_croupier"): 60,
      (7, "pair_bonus"): 40, (7, "versus_croupier"): 20}),
    ({"game": "q-poker", "croupier": {"cards": ["9h", "9d", "5c"]}, "boxes": [
        play(1, ["9s", "9c", "5h"]),            # same pair, same odd card: 5 of hearts wins
        play(3, ["As", "Kc", "Qd"])]},          # a straight above the pair, 3 to 2
     {(1, "versus_croupier"): 20, (3, "versus_croupier"): 30}),
    ({"game": "q-poker", "croupier": {"cards": ["Jh", "9s", "3c"]}, "boxes": [
        play(1, ["5d", "6d", "7d"], pair=10),   # J-high does not qualify: half, whatever the hand
        play(2, ["2c", "2d", "Ks"], decision="fold")]},
     {(1, "pair_bonus"): 400, (1, "versus_croupier"): 10, (2, "versus_croupier"): -10}),
]

# 78/2008. Art. 9(3): a fold loses the Ante; 9(4): the Play equals the Ante; 9(8): straight
# flush 5 to 1, three of a kind 4 to 1, straight and others 1 to 1; art. 10: Pair Plus 40, 25,
# 5, 4, 1 to 1; art. 8(3): 3-2-A is the lowest sequence. Equal three odd cards against a
# qualified croupier are returned (F5 `tie`).
FORTUNE = [
    ({"game": "fortune-3-card-poker", "croupier": {"cards": ["Qs", "7d", "2c"]}, "boxes": [
        play(1, ["Ah", "Kh", "Qh"], pair=10, bonus="pair_plus"),
        play(2, ["Ac", "2h", "3s"], pair=10, bonus="pair_plus"),
        play(3, ["8c", "8d", "8s"], pair=10, bonus="pair_plus"),
        play(4, ["Qc", "7c", "2d"]),
        play(6, ["Jd", "Js", "4d"], pair=10, bonus="pair_plus", decision="fold")]},
     {(1, "pair_plus"): 400, (1, "ante"): 100, (1, "play"): 100,
      (2, "pair_plus"): 50, (2, "ante"): 20, (2, "play"): 20,
      (3, "pair_plus"): 250, (3, "ante"): 80, (3, "play"): 80,
      (4, "ante"): 0, (4, "play"): 0,
      (6, "pair_plus"): 10, (6, "ante"): -20}),
]


def fortune_box(box):
    """Q Poker's box as Fortune's: the stake is the Ante, and a player who plays puts the
    same again as his Play (art. 9(4))."""
    box = dict(box)
    box["ante"] = box.pop("versus_croupier")
    if box["decision"] == "play":
        box["play"] = box["ante"]
    return box


@pytest.mark.parametrize("doc, expected", Q_POKER + [
    (dict(doc, boxes=[fortune_box(b) for b in doc["boxes"]]), exp) for doc, exp in FORTUNE])
def test_three_card_games_settle_as_the_text_pays(doc, expected):
    got, house = nets(doc)
    assert got == expected
    assert house == -sum(expected.values())


def test_super_pan_9_banker_advantage_highest_card_and_commission():
    """261/96/M. Art. 6: K Q J 10 … A, pictures and tens worth 0; art. 7(1): more points win;
    7(2): equal points, the higher card wins; art. 8: equal points and cards, the banker wins;
    art. 9: 5 % of every winning bet, and of the bank's win (P7 `all_winners`), rounded down
    (P8 `floor`). The banker holds J-5, 5 points."""
    doc = {"game": "super-pan-9", "banker": {"seat": 4, "capital": 1000,
                                             "cards": ["Jd", "5s"]},
           "first_seat": 1, "seats": [
               {"seat": 1, "cards": ["Jh", "5c"], "bets": [{"amount": 100}]},   # all equal
               {"seat": 2, "cards": ["Ts", "5d"], "bets": [{"amount": 100}]},   # 10 below J
               {"seat": 3, "cards": ["Qh", "5h"], "bets": [{"amount": 100}]},   # Q above J
               {"seat": 5, "cards": ["9s", "Kc"], "bets": [{"amount": 30}]},    # 9 points
               {"seat": 6, "cards": ["Ac", "3d"], "bets": [{"amount": 100}]}]}  # 4 points
    out = settle_cli(json.dumps(doc))
    assert {w["box"]: w["net"] for w in out["wagers"]} == {1: -100, 2: -100, 3: 95, 5: 29,
                                                          6: -100}
    # the bank takes 300 and pays 130: it won 170, less 8 (8.5 rounded down)
    (bank,) = out["bank"]
    assert (bank["won"], bank["commission"], bank["net"]) == (170, 8, 162)
    assert out["commission"] == 5 + 1 + 8 and out["house_net"] == 14


HOLDEM_TIE = {"game": "texas-holdem", "blinds": {"small": 5, "big": 10}, "button": 1,
              "seats": [{"box": 1, "stack": 1000, "cards": ["2c", "3d"]},
                        {"box": 3, "stack": 1000, "cards": ["4d", "5h"]},
                        {"box": 6, "stack": 1000, "cards": ["6c", "7s"]}],
              "board": ["9h", "Th", "Jc", "Qd", "Kc"]}      # every seat plays the board
CHECKS = [{"box": b, "action": "check"} for b in (3, 6, 1)]


@pytest.mark.parametrize("rake, actions, nets_, house", [
    # 3 × 1000 all in: 5 % is 150, over the cap of five big blinds, 50 (art. 16); 2950 split
    # three ways is 983 and 1 over, which goes to seat 1, the nearest the croupier's left
    # (art. 10(4)-(5))
    (5, [{"box": b, "action": "allin"} for b in (1, 3, 6)], {1: -16, 3: -17, 6: -17}, 50),
    # 3 × 100: 4.5 % is 13.5, 13 rounded down (H9 `down`); 287 is 95 each and 2 over to seat 1
    ("4.5", [{"box": 1, "action": "raise", "amount": 100}, {"box": 3, "action": "call"},
             {"box": 6, "action": "call"}] + CHECKS * 3, {1: -3, 3: -5, 6: -5}, 13),
])
def test_holdem_split_pot_odd_chips_and_the_capped_rake(rake, actions, nets_, house):
    """11/2008 art. 10(4): equal hands split the pot to the least divisible value; 10(5):
    what cannot be divided goes to the player still in nearest the croupier's left; art. 16:
    3 to 5 % of the pot, at most five times the big blind."""
    out = settle_cli(json.dumps(dict(HOLDEM_TIE, rake=rake, actions=actions)))
    assert {w["box"]: w["net"] for w in out["wagers"]} == nets_
    assert out["commission"] == out["house_net"] == house
