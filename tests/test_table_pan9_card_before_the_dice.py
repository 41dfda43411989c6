"""Super Pan 9: a card out of the shoe or shuffler before the dice are read.

The dice say which seat receives the first cards (261/96/M art. 2(2)), so before they are read
no seat is owed a card: a card out then, while betting is open or closed or during the shake,
is a card out of the dealing order, ruled by the game (P5), as the table already rules one out
while it waits in malfunction (docs/interpretations.md, "a card out while the table is
stopped"). ``round_void`` (default): the round is void, every bet returned. ``rectify``: the
card has no place in a plan the dice have not made; it is taken out of play face down and never
shown, and the deal begins with the next card once the dice are read. It is never passed over
as if it were not out.
"""
import pytest

from drivers import events as ev

from table_helpers import draw, hand, kinds, nets, rulings, table

P5 = "261/96/M interpretation P5 (dealing_error)"


def pan9(mode="shoe", state="bets_open", **kw):
    t = table("super-pan-9", mode, **kw)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    if state == "bets_closed":
        t.command("close_bets")
    elif state == "dice_shaking":
        t.command("shake")
    assert t.state == state
    return t


def card_out(t, mode):
    if mode == "shoe":
        draw(t, "9s")
    else:
        hand(t, "9s", "9h")


def cards_shown(t):
    return [e.data["recipient"] for e in t.outbox if e.kind == "card"]


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
@pytest.mark.parametrize("state", ["bets_open", "bets_closed", "dice_shaking"])
def test_a_card_out_before_the_dice_is_out_of_the_dealing_order_p5_void(state, mode):
    t = pan9(mode, state)
    card_out(t, mode)
    assert "irregular_event" not in kinds(t)
    r = rulings(t)[-1]
    assert (r["irregularity"], r["remedy"], r["article"]) == ("wrong_order", "round_void", P5)
    assert t.round.void is not None and t.state == "round_void"
    void = [e.data for e in t.outbox if e.kind == "round_void"][-1]
    assert void["returned"] == [{"box": 2, "wager": "seat", "player": "ana", "amount": 100}]
    assert not cards_shown(t)
    t.command("next_round")                      # a new round, from a new shuffle
    assert t.round.round_id == 2


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
@pytest.mark.parametrize("state", ["bets_open", "bets_closed"])
def test_rectify_a_card_out_while_betting_is_out_of_play_and_the_deal_starts_after_the_dice(
        state, mode):
    t = pan9(mode, state, interpretations={"dealing_error": "rectify"})
    card_out(t, mode)
    r = rulings(t)[-1]
    assert (r["irregularity"], r["remedy"], r["article"]) == ("wrong_order", "rectify", P5)
    assert t.round.void is None and not cards_shown(t)
    aside = [e.data for e in t.outbox if e.kind == "card_set_aside"][-1]
    assert aside["recipient"] == "burn" and set(aside["cards"]) == {None}
    assert "9s" not in str([e.to_json() for e in t.outbox])     # never shown
    assert t.state == "malfunction"              # the ruling asks for the supervisor
    t.command("clear_malfunction", role="supervisor")
    assert t.state == state
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=3.0, dice=(1, 1, 1, 1)))
    # in play 1 (banker) and 2; counting 4 from the banker (one): 1, 2, 1, 2 -> seat 2 first
    if mode == "shoe":
        draw(t, "Ks", "9d", "Kh", "Kd")
    else:
        hand(t, "Ks", "9d")
        hand(t, "Kh", "Kd")
    assert t.state == "settlement"
    assert cards_shown(t)[0] == "box 2"
    assert nets(t)[(2, "seat")] == 95            # 9 against 0: even money less 5 % (art. 9)


def test_rectify_a_card_out_during_the_shake_holds_the_round_and_the_banker_shakes_again():
    # The card is out of play; the table waits for the supervisor, and the throw under way
    # when it came out is not taken (as when the table is held during the shake): once
    # cleared, the banker shakes again under the points he declared (art. 2(3)).
    t = pan9("shoe", "dice_shaking", interpretations={"dealing_error": "rectify"})
    draw(t, "9s")
    assert rulings(t)[-1]["remedy"] == "rectify" and t.state == "malfunction"
    t.handle_device(ev.DiceResult(device="dice", ts=3.0, dice=(6, 6, 6, 6)))
    assert t.round.dice is None and kinds(t)[-1] == "irregular_event"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_closed"
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=4.0, dice=(1, 1, 1, 1)))
    draw(t, "Ks", "9d", "Kh", "Kd")
    assert t.state == "settlement" and nets(t)[(2, "seat")] == 95


@pytest.mark.parametrize("held", [False, True])
def test_after_a_card_out_of_play_the_deal_has_not_begun_until_the_next_card_p3(held):
    # Under P5 rectify the card out before the dice is no card of the deal: a shoe failure
    # once the dice are read and before the next card is one before the first card (P3: the
    # round waits for the supervisor with the same dice), not one while dealing.
    t = pan9("shoe", "bets_open", interpretations={"dealing_error": "rectify"})
    if held:                                     # the card out while the table was held
        t.handle_device(ev.LinkLost(device="shoe", ts=1.0, reason="cable"))
        t.handle_device(ev.LinkRestored(device="shoe", ts=2.0, identity=ev.DeviceIdentity(
            "shoe", "sim", "S1", "0001", "1.0", "ab" * 16, True)))
    draw(t, "9s")
    t.command("clear_malfunction", role="supervisor")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=3.0, dice=(1, 1, 1, 1)))
    t.handle_device(ev.Jam(device="shoe", ts=3.5, where="exit"))
    r = rulings(t)[-1]
    assert (r["irregularity"], r["phase"], r["remedy"]) == ("shoe_malfunction", "shaking",
                                                            "continue")
    assert t.round.void is None and t.state == "malfunction"
    t.command("clear_malfunction", role="supervisor")
    draw(t, "Ks", "9d", "Kh", "Kd")
    assert t.state == "settlement" and nets(t)[(2, "seat")] == 95
