"""A shuffler that fails after betting closed, before any hand is asked of it.

With the shuffler the deal begins when the first hand (or card) is asked of it (docs/
interpretations.md, "a controller restart while dealing"): betting may close while the round
still waits for its shuffle, or after the shuffler refused the hand as busy, and nothing is out
or on its way then. A failure in that moment is one before the deal, as a restart in it is
(recovery keeps the bets): the round is held for the supervisor with its bets (Hold'em: its
blinds), and once cleared the deal goes on; betting does not open again. A hand that WAS asked
when the shuffler failed or refused it may be out: that is a failure while dealing, ruled by
the game (tests/test_table_refusals.py).
"""
import pytest

from controller.rules.cards import Card, full_deck
from drivers import events as ev

from table_helpers import hand, kinds, rulings, table

IDENT = ev.DeviceIdentity("shuffler", "sim", "S1", "0001", "1.0", "ab" * 16, True)

# Each failure of the shuffler, and what puts it right before the supervisor clears.
FAILURES = {
    "door_open": (ev.DoorOpened(device="shuffler", ts=5.0),
                  ev.DoorClosed(device="shuffler", ts=6.0)),
    "jam": (ev.Jam(device="shuffler", ts=5.0, where="exit"), None),
    "malfunction": (ev.Malfunction(device="shuffler", ts=5.0, code=7, text="motor"), None),
    "reboot": (ev.LinkLost(device="shuffler", ts=5.0, reason="device rebooted", rebooted=True),
               ev.LinkRestored(device="shuffler", ts=6.0, identity=IDENT, resumed=False)),
    "shuffle_refused": (ev.CommandRefused(device="shuffler", ts=5.0, action="shuffle",
                                          reason="fault", text="shuffler refused shuffle"),
                        None),
}

BETS = {
    "q-poker": ("versus_croupier", 10),
    "fortune-3-card-poker": ("ante", 10),
}


def actions(t, since=0):
    return [c.action for c in t.commands[since:]]


def seat_or_bet(t):
    game = t.game.game_id
    if game == "texas-holdem":
        t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    else:
        wager, amount = BETS[game]
        t.command("place_bet", box=2, wager=wager, amount=amount)


def awaiting_the_shuffle(game, **kw):
    """The reproduction: a bet (or the seating), the shuffler jams and is cleared, which asks
    its deck to be checked and shuffled again; betting closes before that shuffle is done. The
    plan is fixed, but no hand is asked of the shuffler."""
    if game == "texas-holdem":
        kw.setdefault("holdem", {"small_blind": 5, "big_blind": 10})
    t = table(game, "shuffler", **kw)
    seat_or_bet(t)
    t.handle_device(ev.Jam(device="shuffler", ts=1.0, where="exit"))
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_open"
    t.command("close_bets")
    assert t.state == "bets_closed" and t.tracker is not None
    assert "dispense_hand" not in actions(t) and "dispense_card" not in actions(t)
    return t


def refused_busy(game, **kw):
    """Betting closed and the first hand asked; the shuffler refused it as busy (it did
    nothing), so no hand is on its way."""
    if game == "texas-holdem":
        kw.setdefault("holdem", {"small_blind": 5, "big_blind": 10})
    t = table(game, "shuffler", **kw)
    seat_or_bet(t)
    t.command("close_bets")
    asked = actions(t)[-1]
    assert asked in ("dispense_hand", "dispense_card")
    t.handle_device(ev.CommandRefused(device="shuffler", ts=2.0, action=asked, reason="busy"))
    assert t.state == "bets_closed"
    return t


def fail_and_clear(t, failure):
    """The shuffler fails; the round is held with its bets; put right and cleared, the deal
    goes on in bets_closed. Returns the number of commands before the clear."""
    event, fix = FAILURES[failure]
    t.handle_device(event)
    assert t.state == "malfunction"
    assert t.round.void is None, rulings(t)
    assert "round_void" not in kinds(t)
    if fix is not None:
        t.handle_device(fix)
    mark = len(t.commands)
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_closed" and t.round.round_id == 1
    return mark


def shuffled_and_dealt(t, mark):
    """The deck is checked and shuffled again (the shuffler lost its order), then the hands
    are asked and dealt; the round is the one whose bets closed."""
    assert actions(t, mark)[:1] == ["deck_check"]
    t.handle_device(ev.DeckCheckResult(device="shuffler", ts=7.0, count=52,
                                       cards=tuple(full_deck()), deck_ids=(1,)))
    assert actions(t, mark)[-1] == "shuffle"
    t.handle_device(ev.ShuffleDone(device="shuffler", ts=8.0, count=52))
    assert actions(t, mark)[-1] in ("dispense_hand", "dispense_card")


@pytest.mark.parametrize("failure", sorted(FAILURES))
@pytest.mark.parametrize("game", sorted(BETS))
def test_a_failure_before_any_hand_is_asked_holds_the_round_and_the_deal_goes_on(game,
                                                                                  failure):
    t = awaiting_the_shuffle(game)
    mark = fail_and_clear(t, failure)
    # Betting stays closed (89/2004 art. 6(2), 78/2008 art. 6(3): the croupier closed it)
    with pytest.raises(Exception, match="bets_closed"):
        seat_or_bet(t)
    shuffled_and_dealt(t, mark)
    hand(t, "As", "Ah", "Ad")                        # box 2
    hand(t, "Ks", "Kh", "Kd")                        # the croupier
    assert t.state == "player_decisions" and t.round.void is None
    assert not [r for r in rulings(t) if r["remedy"] == "round_void"]


@pytest.mark.parametrize("game", sorted(BETS))
def test_a_failure_after_the_shuffler_refused_the_hand_as_busy_holds_the_round(game):
    # Refused as busy, the hand was never dispensed: nothing is out or on its way, as in a
    # restart at that moment (docs/controller.md, recovery: "or the shuffler refused the hand").
    t = refused_busy(game)
    mark = fail_and_clear(t, "door_open")
    shuffled_and_dealt(t, mark)
    hand(t, "As", "Ah", "Ad")
    hand(t, "Ks", "Kh", "Kd")
    assert t.state == "player_decisions" and t.round.void is None


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_holdem_a_failure_before_any_card_is_asked_keeps_the_blinds_posted_once(failure):
    # 11/2008 art. 5: the blinds are posted when betting closes; held and cleared, the hand
    # goes on with them: betting does not reopen and they are not posted again.
    t = awaiting_the_shuffle("texas-holdem")
    assert kinds(t).count("blinds") == 1
    mark = fail_and_clear(t, failure)
    shuffled_and_dealt(t, mark)
    assert kinds(t).count("blinds") == 1
    for c in ("As", "Kd", "Ah", "Kc"):               # seat 5, seat 2, seat 5, seat 2
        t.handle_device(ev.CardDispensed(device="shuffler", ts=9.0, card=Card.parse(c)))
    assert t.state == "player_decisions" and t._holdem.street == "preflop"
    assert t._holdem.pot == 15 and t.round.void is None


def test_a_hand_out_while_held_before_the_deal_shows_the_deal_had_begun():
    # Held with nothing asked, a hand the shuffler puts out all the same is out at the table:
    # it is the deal's first, and the failure came while dealing after all (89/2004 art.
    # 11(5): void under the defaults), as for a card out while the table is stopped.
    t = awaiting_the_shuffle("q-poker")
    t.handle_device(ev.DoorOpened(device="shuffler", ts=5.0))
    assert t.round.void is None
    hand(t, "As", "Ah", "Ad")
    assert [e.data["recipient"] for e in t.outbox if e.kind == "card"] == ["box 2"]
    assert kinds(t).count("bets_closed") == 1        # betting had closed already
    r = rulings(t)[-1]
    assert (r["irregularity"], r["phase"], r["remedy"], r["article"]) == (
        "shuffler_malfunction", "dealing", "round_void", "89/2004 art. 11(5)")


def test_pan9_betting_closed_before_the_shake_stays_closed_after_a_failure_is_cleared():
    # Super Pan 9 deals once the dice are read (a failure then, before any hand is asked, is
    # P3's "before the first card": tests/test_table_machine.py). Before the shake, with
    # betting closed by the croupier, the failure holds the round likewise; cleared, betting
    # stays closed and the banker shakes (261/96/M art. 2(5): no bet after the shake).
    t = table("super-pan-9", "shuffler")
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100)
    t.command("close_bets")
    mark = fail_and_clear(t, "door_open")
    with pytest.raises(Exception, match="bets_closed"):
        t.command("place_bet", box=3, wager="seat", amount=100)
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=7.0, dice=(1, 1, 1, 1)))
    assert t.state == "dealing" and t.round.void is None
    t.handle_device(ev.DeckCheckResult(device="shuffler", ts=8.0, count=52,
                                       cards=tuple(full_deck()), deck_ids=(1,)))
    t.handle_device(ev.ShuffleDone(device="shuffler", ts=9.0, count=52))
    assert actions(t, mark)[-1] == "dispense_hand"
