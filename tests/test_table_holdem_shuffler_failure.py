"""Texas Hold'em from the shuffler: a failure while the players bet between streets.

The board still to come is in the shuffler during the betting rounds. A jam, a malfunction,
an open door or a restart leaves those cards unvouched for: 11/2008 art. 9(2) with
interpretation H11 (machine_failure=void) voids the hand. A link that is lost and comes back
with its session (the device stayed powered) changes nothing: the next street is asked once
the link is up again.
"""
import pytest

from controller.rules.cards import Card
from drivers import events as ev
from drivers.shuffler import StatusAnswer

from table_helpers import kinds, rulings, table

IDENT = ev.DeviceIdentity(device_class="shuffler", vendor="v", model="m", serial="S1",
                          firmware_version="1", firmware_hash="00", recognises_cards=True)


def dispensed(t, *cards):
    for c in cards:
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=Card.parse(c)))


def preflop_betting(**kw):
    """Two players, hole cards out, the preflop betting round open (seat 2 small blind)."""
    t = table("texas-holdem", "shuffler", holdem={"small_blind": 5, "big_blind": 10}, **kw)
    t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    t.command("close_bets")
    dispensed(t, "As", "Kd", "Ah", "Kc")
    assert t.state == "player_decisions"
    return t


def finish_preflop(t):
    t.command("holdem_action", seat=5, action="call")
    t.command("holdem_action", seat=2, action="check")


def checked_round(t):
    """Everyone still to act checks the betting round through."""
    street = t._holdem.street
    while t.state == "player_decisions" and t._holdem.street == street \
            and not t._holdem.is_over:
        t.command("holdem_action", seat=t._holdem.to_act, action="check")


def dispense_asked(t, since):
    return sum(1 for c in t.commands[since:] if c.action == "dispense_card")


@pytest.mark.parametrize("event", [
    ev.Jam(device="shuffler", ts=0.0, where="output"),
    ev.Malfunction(device="shuffler", ts=0.0, code=7, text="motor"),
    ev.DoorOpened(device="shuffler", ts=0.0),
    ev.LinkLost(device="shuffler", ts=0.0, reason="device rebooted", rebooted=True),
], ids=["jam", "malfunction", "door_open", "reboot"])
def test_a_shuffler_failure_between_streets_voids_the_hand_art_9_2(event):
    t = preflop_betting()
    t.handle_device(event)
    r = rulings(t)[-1]
    assert r["remedy"] == "round_void" and r["article"].startswith("11/2008 art. 9")
    assert r["phase"] == "dealing"
    assert t.round.void is not None
    assert t.state == "malfunction"          # the supervisor puts the shuffler right first
    assert "settlement" not in kinds(t)


def test_a_link_lost_without_a_restart_keeps_the_hand_and_resumes_the_board():
    t = preflop_betting()
    t.handle_device(ev.LinkLost(device="shuffler", ts=0.0, reason="no heartbeat for 3 s"))
    assert not rulings(t) and t.round.void is None
    mark = len(t.commands)
    finish_preflop(t)
    assert t.state == "dealing"
    assert dispense_asked(t, mark) == 0      # not asked of a shuffler that is not there
    t.handle_device(ev.LinkRestored(device="shuffler", ts=0.0, identity=IDENT, resumed=True))
    assert dispense_asked(t, mark) == 1      # asked once the link is back
    dispensed(t, "2c", "7s", "8d", "9h")     # burn and flop
    assert t.state == "player_decisions" and not rulings(t)


def test_a_shuffler_back_with_a_new_session_restarted_while_away_voids_the_hand():
    t = preflop_betting()
    t.handle_device(ev.LinkLost(device="shuffler", ts=0.0, reason="port closed"))
    assert not rulings(t)
    mark = len(t.commands)
    t.handle_device(ev.LinkRestored(device="shuffler", ts=0.0, identity=IDENT, resumed=False))
    r = rulings(t)[-1]
    assert r["remedy"] == "round_void" and r["article"].startswith("11/2008 art. 9")
    assert t.state == "malfunction"
    assert dispense_asked(t, mark) == 0


def test_a_new_session_after_every_card_is_out_changes_nothing():
    t = preflop_betting()
    finish_preflop(t)
    dispensed(t, "2c", "7s", "8d", "9h")     # burn and flop
    checked_round(t)
    dispensed(t, "3c", "Qs")                 # burn and turn
    checked_round(t)
    dispensed(t, "4d", "5s")                 # burn and river: the whole board is out
    assert t.state == "player_decisions" and t.tracker.done
    t.handle_device(ev.LinkLost(device="shuffler", ts=0.0, reason="port closed"))
    t.handle_device(ev.LinkRestored(device="shuffler", ts=0.0, identity=IDENT, resumed=False))
    assert not rulings(t) and t.round.void is None
    checked_round(t)
    assert "settlement" in kinds(t)


def test_rectify_reading_keeps_betting_and_asks_the_board_once_the_jam_is_cleared():
    t = preflop_betting(interpretations={"machine_failure": "rectify"})
    t.handle_device(ev.Jam(device="shuffler", ts=0.0, where="output"))
    r = rulings(t)[-1]
    assert r["remedy"] == "rectify" and r["article"].startswith("11/2008 art. 9")
    assert t.state == "player_decisions" and t.round.void is None
    mark = len(t.commands)
    finish_preflop(t)
    assert dispense_asked(t, mark) == 0      # the jam is still there
    t.command("clear_malfunction", role="supervisor")
    assert dispense_asked(t, mark) == 1


# --- held after betting closed, the first card asked: the blinds are posted once ------------

def blinds_posted(t):
    return [e.data for e in t.outbox if e.kind == "blinds"]


@pytest.mark.parametrize("failure", [
    ev.Jam(device="shuffler", ts=0.0, where="output"),
    ev.DoorOpened(device="shuffler", ts=0.0),
    ev.Malfunction(device="shuffler", ts=0.0, code=7, text="motor"),
    "restart",
], ids=["jam", "door_open", "malfunction", "restart"])
def test_rectify_held_after_close_bets_the_clear_deals_on_with_the_blinds_posted_once(failure):
    # H11 rectify: the first hole card was asked and none is out when the shuffler fails (or
    # the controller restarts). The hand is held for the supervisor; the clear goes on with
    # the deal. Betting does not reopen, so close_bets is not given again and the blinds
    # (art. 5) are not posted, nor journaled, a second time.
    t = table("texas-holdem", "shuffler", interpretations={"machine_failure": "rectify"},
              holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    t.command("close_bets")
    assert t.commands[-1].action == "dispense_card" and len(blinds_posted(t)) == 1
    if failure == "restart":
        t.apply({"source": "restart"})
    else:
        t.handle_device(failure)
        if isinstance(failure, ev.DoorOpened):
            t.handle_device(ev.DoorClosed(device="shuffler", ts=0.0))
    r = rulings(t)[-1]
    assert (r["remedy"], r["article"]) == ("rectify", "11/2008 art. 9(1)")
    assert t.state == "malfunction" and t.round.void is None
    mark = len(t.commands)
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_closed"
    with pytest.raises(Exception, match="bets_closed"):
        t.command("close_bets")
    # The card asked before may be on its way: the shuffler's status first, then the first
    # hole card again once it says none is (docs/interpretations.md).
    assert [c.action for c in t.commands[mark:]] == ["status"]
    ask = t.commands[-1].args["ask"]             # the driver names the request answered
    t.handle_device(StatusAnswer(device="shuffler", ts=0.0, state="ready", ask=ask))
    assert dispense_asked(t, mark) == 1              # the first hole card, asked again
    dispensed(t, "As", "Kd", "Ah", "Kc")
    assert t.state == "player_decisions" and t._holdem.street == "preflop"
    assert len(blinds_posted(t)) == 1 and t._holdem.pot == 15
    assert t._holdem.stacks == {2: 490, 5: 495}      # H4 literal: seat 5 small, 2 big
