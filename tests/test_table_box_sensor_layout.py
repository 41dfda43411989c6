"""A box-sensor board that reports a box the table's layout does not have.

A box number outside 1..layout is no card on a box: it is the board's fault, a malfunction of
the box sensors, ruled as the table rules their failures (docs/controller.md): while dealing the
sensors deal no card, so the deal goes on without them and their condition stops the next
round (89/2004 art. 11(5), 78/2008 art. 11(4), H11, P3 speak of the device that deals); before
the deal the round is held with its bets; after the deal the round goes on. No box is
invented, no box is voided and no card is moved off the box it was dealt for.
"""
import pytest

from controller.errors import TablectlError

from table_helpers import LAYOUT, draw, kinds, placed, rulings, table


def sensor_condition(t):
    return [e.data for e in t.outbox if e.kind == "device_condition"
            and e.data["device"] == "sensors"]


def opened(t):
    return {e.data["recipient"]: e.data["hand"] for e in t.outbox if e.kind == "hand_opened"}


@pytest.mark.parametrize("box", [200, 0, 8, -1])
def test_q_poker_a_box_outside_the_layout_while_dealing_is_the_sensors_malfunction(box):
    t = table("q-poker", box_sensors=True)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As")
    placed(t, box)
    assert not rulings(t) and "box_void" not in kinds(t) and t.round.void_boxes == set()
    told = sensor_condition(t)[-1]
    assert told["conditions"] == ["malfunction"]
    assert f"box {box}" in told["what"] and "1-7" in told["what"]
    assert t.state == "dealing"
    # box 1 keeps the card dealt for it: the plan goes on with the croupier's card
    assert t.tracker.expected.deal.recipient.kind == "croupier"
    # the deal goes on without the board: what it reports is not used until it is cleared
    draw(t, "Kd", "Ah")
    placed(t, 1)
    assert not rulings(t)
    draw(t, "Ks", "Ad", "Kc")
    assert t.state == "player_decisions" and opened(t) == {"box 1": ["As", "Ah", "Ad"]}
    t.command("decide", box=1, decision="play")
    t.command("confirm_result")
    with pytest.raises(TablectlError, match="devices not ready"):
        t.command("next_round")                     # the condition stops the next round
    t.command("clear_malfunction", role="supervisor")
    t.command("next_round")


@pytest.mark.parametrize("game,setup,first", [
    ("fortune-3-card-poker",
     lambda t: t.command("place_bet", box=1, wager="ante", amount=10), "box 1"),
    ("texas-holdem",
     lambda t: t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2), "box 5"),
])
def test_every_card_game_dealt_from_the_shoe_invents_no_box(game, setup, first):
    t = table(game, box_sensors=True)
    setup(t)
    draw(t, "As")
    placed(t, LAYOUT[game] + 1)
    assert not rulings(t) and t.state == "dealing"
    assert sensor_condition(t)[-1]["conditions"] == ["malfunction"]
    hands = {e.data["recipient"]: e.data["hand"] for e in t.outbox if e.kind == "card"}
    assert list(hands) == [first] and len(hands[first]) == 1


def test_pan9_a_seat_outside_the_layout_voids_nothing_p5():
    # Under P5 round_void a card on a seat not in play voids the round; a seat that does not
    # exist is no seat at all: the board failed, and the deal goes on.
    t = table("super-pan-9", box_sensors=True)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("shake")
    from drivers import events as ev
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 1)))
    draw(t, "9s")
    placed(t, 9)
    assert not rulings(t) and t.round.void is None and t.state == "dealing"
    draw(t, "Ks", "Kd", "Kh")
    assert t.state == "settlement"


def test_before_the_deal_the_round_is_held_with_its_bets():
    t = table("q-poker", box_sensors=True)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    placed(t, 200)
    assert t.state == "malfunction" and t.round.void is None and not rulings(t)
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_open" and t.round.bets_json()[0]["amount"] == 10


def test_after_the_deal_the_round_goes_on_and_no_box_is_voided():
    # 89/2004 art. 11(4)/(1) would void box 8 and, with box 1 short of a card, the round; but
    # box 8 is no box of this table: the board failed.
    t = table("q-poker", box_sensors=True)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    for c, b in (("As", 1), ("Kd", None), ("Ah", 1), ("Ks", None), ("Ad", 1), ("Kc", None)):
        draw(t, c)
        if b:
            placed(t, b)
    assert t.state == "player_decisions"
    placed(t, 8)
    assert not rulings(t) and t.round.void is None and t.round.void_boxes == set()
    assert sensor_condition(t)[-1]["conditions"] == ["malfunction"]
    t.command("decide", box=1, decision="play")
    assert t.state == "settlement"
