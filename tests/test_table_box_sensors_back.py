"""A box-sensor board that starts watching again in the middle of a deal.

The box sensors deal no card: when they fail while dealing the deal goes on without them
(docs/controller.md). The board may then come back before the deal is over: the supervisor
clears its jam or malfunction, or it restarted and its link comes back with a new session. The
cards dealt while it was failed or restarting were placed out of its sight (what a failed board
reports is not used, and a restarted one lost what it had not sent), so the table cannot match
them against its reports. Only the cards drawn after the board came back are watched in the
dealing order; a report of one dealt before is that card placed, and no order is ruled on it.
Nothing is ruled ``wrong_order`` for a deal that went right.

A link lost and back with the session resumed is no such gap: the board kept watching and sends
what it saw once the link is back (docs/protocol.md 3.2), matched as usual.
"""
import pytest

from drivers import events as ev

from table_helpers import draw, hand, kinds, placed, rulings, table

IDENT = ev.DeviceIdentity("box-sensors", "sim", "B1", "0001", "1.0", "ab" * 16, False)

# How the board goes out of sight and comes back. "clear": it reports a malfunction, its
# reports are not used until the supervisor clears it; "restart": it reboots while the link is
# down (what it had queued is lost) and comes back with a new session.
GONE = {
    "clear": [ev.Malfunction(device="sensors", ts=1.0, code=3, text="sensor 3")],
    "restart": [ev.LinkLost(device="sensors", ts=1.0, reason="device rebooted", rebooted=True)],
}
BACK = {
    "clear": lambda t: t.command("clear_malfunction", role="supervisor"),
    "restart": lambda t: t.handle_device(ev.LinkRestored(device="sensors", ts=2.0,
                                                         identity=IDENT, resumed=False)),
}

CARDS = ["As", "Kd", "Qh", "Jc", "Ts", "9d", "8h", "7c", "6s", "5d", "4h", "3c", "2s",
         "Ad", "Kh", "Qc", "Js", "Td", "9h"]


def bets(t):
    game = t.game.game_id
    if game == "texas-holdem":
        t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    elif game == "super-pan-9":
        t.command("set_banker", seat=1, capital=1000)
        t.command("place_bet", box=2, wager="seat", amount=100)
        t.command("place_bet", box=4, wager="seat", amount=100)
        t.command("shake")
        t.handle_device(ev.DiceResult(device="dice", ts=0.5, dice=(1, 1, 1, 2)))
    else:
        wager = "ante" if game.startswith("fortune") else "versus_croupier"
        t.command("place_bet", box=1, wager=wager, amount=10)
        t.command("place_bet", box=3, wager=wager, amount=10)


def next_box(t):
    step = t.tracker.expected if t.tracker is not None else None
    if step is None and t.tracker is None:
        return 1 if t.game.game_id not in ("texas-holdem",) else 5
    if step is None:
        return None
    rec = step.deal.recipient
    return rec.box if rec.kind == "box" else None


def deal_one(t, cards, watching=True):
    """The croupier draws the next card and lays it where the plan says; the board reports
    it when it watches."""
    box = next_box(t)
    draw(t, cards.pop(0))
    if box is not None and watching:
        placed(t, box)
    return box


def deal_to_a_box(t, cards, watching=True):
    """Deal up to and including the next card for a box."""
    while deal_one(t, cards, watching) is None:
        pass


GAMES = ["q-poker", "fortune-3-card-poker", "texas-holdem", "super-pan-9"]


@pytest.mark.parametrize("how", sorted(GONE))
@pytest.mark.parametrize("game", GAMES)
def test_a_board_back_mid_deal_is_matched_only_against_the_cards_after_it(game, how):
    t = table(game, box_sensors=True)
    bets(t)
    cards = list(CARDS)
    deal_to_a_box(t, cards)                  # watched, placed where it was dealt for
    for e in GONE[how]:
        t.handle_device(e)
    assert t.state == "dealing"              # the sensors deal no card: the deal goes on
    deal_to_a_box(t, cards, watching=False)  # placed out of the board's sight
    BACK[how](t)
    assert t.state == "dealing"
    while t.state == "dealing":
        deal_one(t, cards)                   # every card laid where the plan says
    assert not [r for r in rulings(t) if r["irregularity"] == "wrong_order"], rulings(t)
    assert t.round.void is None and "round_void" not in kinds(t)
    assert t.state in ("player_decisions", "croupier_reveal", "settlement")


@pytest.mark.parametrize("how", sorted(GONE))
def test_with_the_shuffler_a_hand_laid_while_the_board_was_away_is_not_matched(how):
    # A shuffler's hand is placed as one stack (89/2004 art. 7(2)): box 3's, laid while the
    # board was away, is not the one box 5's is matched against.
    t = table("q-poker", "shuffler", box_sensors=True)
    for box in (1, 3, 5):
        t.command("place_bet", box=box, wager="versus_croupier", amount=10)
    t.command("close_bets")
    hand(t, "As", "Ah", "Ad")
    placed(t, 1)
    for e in GONE[how]:
        t.handle_device(e)
    hand(t, "Ks", "Kh", "Kd")                # box 3, out of the board's sight
    BACK[how](t)
    hand(t, "Qs", "Qh", "Qd")
    placed(t, 5)
    hand(t, "2s", "3h", "5d")                # the croupier's
    assert not rulings(t) and t.round.void is None and t.state == "player_decisions"


@pytest.mark.parametrize("game", GAMES)
def test_a_card_dealt_before_the_board_came_back_reported_after_is_that_card_placed(game):
    # The croupier lays the card once the board is back: it is one dealt before, not watched
    # in the order; the card after it is.
    t = table(game, box_sensors=True)
    bets(t)
    cards = list(CARDS)
    deal_to_a_box(t, cards)
    t.handle_device(ev.Malfunction(device="sensors", ts=1.0, code=3, text="sensor 3"))
    late = deal_one(t, cards, watching=False)
    while late is None:
        late = deal_one(t, cards, watching=False)
    t.command("clear_malfunction", role="supervisor")
    placed(t, late)
    assert kinds(t)[-1] == "card_placed"
    while t.state == "dealing":
        deal_one(t, cards)
    assert not rulings(t) and t.round.void is None


def test_a_card_dealt_after_the_board_came_back_on_the_wrong_box_is_still_wrong_order():
    # What the board watches again is matched in the dealing order (89/2004 art. 11(1)): box
    # 5's card lands on box 1, whose only card was seen placed before the board failed.
    t = table("q-poker", box_sensors=True)
    for box in (1, 3, 5):
        t.command("place_bet", box=box, wager="versus_croupier", amount=10)
    cards = list(CARDS)
    deal_to_a_box(t, cards)                  # box 1
    t.handle_device(ev.Malfunction(device="sensors", ts=1.0, code=3, text="sensor 3"))
    deal_to_a_box(t, cards, watching=False)  # box 3, unseen
    t.command("clear_malfunction", role="supervisor")
    assert next_box(t) == 5
    draw(t, cards.pop(0))
    placed(t, 1)
    r = rulings(t)[-1]
    assert (r["irregularity"], r["remedy"], r["article"]) == (
        "wrong_order", "round_void", "89/2004 art. 11(1)")
    assert r["detail"] == "the card for box 5 landed on box 1"


def test_the_deal_held_and_cleared_with_the_board_matches_only_the_cards_after_the_clear():
    # Q5 continue: the shoe fails while dealing and the round is held; the board failed too.
    # One clear puts both right: the board watches again from the next card.
    t = table("q-poker", box_sensors=True, interpretations={"shoe_malfunction": "continue"})
    bets(t)
    cards = list(CARDS)
    deal_to_a_box(t, cards)
    t.handle_device(ev.Malfunction(device="sensors", ts=1.0, code=3, text="sensor 3"))
    deal_to_a_box(t, cards, watching=False)
    t.handle_device(ev.Jam(device="shoe", ts=2.0, where="exit"))
    assert t.state == "malfunction" and t.round.void is None
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing"
    while t.state == "dealing":
        deal_one(t, cards)
    assert not [r for r in rulings(t) if r["irregularity"] == "wrong_order"]
    assert t.round.void is None and t.state == "player_decisions"


def test_a_link_resumed_keeps_the_board_in_the_dealing_order():
    # The board kept watching while its link was down; what it saw comes once the link is back
    # (docs/protocol.md 3.2), and it is matched as usual: a card on the wrong box is still
    # wrong_order.
    t = table("q-poker", box_sensors=True)
    bets(t)
    cards = list(CARDS)
    deal_to_a_box(t, cards)                  # box 1
    t.handle_device(ev.LinkLost(device="sensors", ts=1.0, reason="cable"))
    draw(t, cards.pop(0))                    # box 3's card
    t.handle_device(ev.LinkRestored(device="sensors", ts=2.0, identity=IDENT, resumed=True))
    placed(t, 1)                             # the report it kept: box 3's card on box 1
    r = rulings(t)[-1]
    assert (r["irregularity"], r["remedy"]) == ("wrong_order", "round_void")
