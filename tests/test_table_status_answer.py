"""Whether a hand asked before a failure or a restart is on its way: only the shuffler's answer
to the table's own status request says so.

A hand asked of the shuffler and not answered by the supervisor's clear may still come (a
device command is journaled before it is sent, and the table cannot tell whether it left). The
table asks the shuffler's status, and asks the hand again only when that status says none is
coming (tests/test_table_late_hand.py). The status must be the answer to that request: a report
the shuffler sends on its own (after it restarts, or a cleared condition), or one answering an
earlier request that comes late, may be older than the hand and say ``ready`` while the hand is
on its way. The shuffler driver names the answer to each request (``status_answer`` with the
table's ``ask``; docs/protocol.md 3.7); anything else is no answer.

On the runner and a real journal: a restart is a real recovery from the journal.
"""
import pytest

from controller.journal import Journal
from controller.rules.cards import Card
from drivers import events as ev
from drivers.shuffler import StatusAnswer

from table_helpers import asked, shuffler_runner

C = Card.parse


def make(path, game="super-pan-9"):
    return shuffler_runner(path, game, machine_failure="rectify")


def seat_2_asked(path):
    """Super Pan 9 (P3 ``rectify``): the banker at seat 1, ana's bet on seat 2, the dice
    thrown so seat 2 is dealt first: its hand is asked of the shuffler."""
    run = make(path)
    run.command("open_table", "supervisor")
    run.device(ev.ShuffleDone(device="shuffler", ts=0.1, count=52))
    run.command("set_banker", seat=1, capital=1000)
    run.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    run.command("shake")
    run.device(ev.DiceResult(device="dice", ts=1.0, dice=(1, 1, 1, 1)))
    assert asked(run)[-1] == "dispense_hand"
    return run


def fail(run, path, how):
    """The shuffler jams, or the controller restarts (a recovery from the journal)."""
    if how == "jam":
        run.device(ev.Jam(device="shuffler", ts=5.0, where="exit"))
        return run
    run.journal.close()
    again = make(path)
    again.recover()
    return again


def last_ask(run):
    """The name the table gave its last status request (the ``ask`` of its command)."""
    return [r.payload["ask"] for r in run.journal.records(kinds=["device_command"])
            if r.payload["action"] == "status"][-1]


def answer(run, state, ask=None, ts=6.5):
    run.device(StatusAnswer(device="shuffler", ts=ts, state=state,
                            ask=last_ask(run) if ask is None else ask))


def shown(run, since=0):
    return [(r.payload["recipient"], r.payload["count"])
            for r in run.journal.records(since=since, kinds=["table"])
            if r.payload.get("kind") == "card"]


def of_kind(run, kind, since=0):
    return [r.payload for r in run.journal.records(since=since, kinds=["table", "alarm"])
            if r.payload.get("kind") == kind]


def rulings(run, since=0):
    return [r.payload for r in run.journal.records(since=since, kinds=["decision"])]


def verified(path):
    with Journal.open(path / "journal.db", readonly=True) as j:
        assert j.verify().ok


# --- 1. only the answer to the table's own request says no hand is coming --------------------

@pytest.mark.parametrize("how", ["jam", "restart"])
def test_a_report_the_shuffler_sends_on_its_own_does_not_have_the_hand_asked_again(tmp_path,
                                                                                  how):
    run = fail(seat_2_asked(tmp_path), tmp_path, how)
    mark = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    assert asked(run, mark) == ["status"]
    # Sent on its own (as after a restart), older than the hand it may be: no answer.
    run.device(ev.Status(device="shuffler", ts=6.4, state="ready"))
    assert asked(run, mark) == ["status"]
    answer(run, "dispensing")                       # the answer: the hand is on its way
    assert asked(run, mark) == ["status"]
    run.device(ev.HandDispensed(device="shuffler", ts=7.0, cards=(C("9s"), C("Ks"))))
    assert asked(run, mark) == ["status", "dispense_hand"]     # the banker's, once
    run.device(ev.HandDispensed(device="shuffler", ts=8.0, cards=(C("Kh"), C("Kd"))))
    assert shown(run, mark) == [("box 2", 2), ("box 1", 2)]
    assert run.table.state == "settlement" and not rulings(run, mark)
    assert not of_kind(run, "irregular_event")
    verified(tmp_path)


@pytest.mark.parametrize("how", ["jam", "restart"])
def test_the_late_answer_to_an_earlier_request_does_not_have_the_hand_asked_again(tmp_path,
                                                                                 how):
    run = fail(seat_2_asked(tmp_path), tmp_path, how)
    run.command("clear_malfunction", "supervisor")
    first = last_ask(run)
    run.device(ev.CommandRefused(device="shuffler", ts=6.1, action="status",
                                 reason="not-connected", text="not connected"))
    mark = run.journal.head()[0]
    run.device(ev.LinkUp(device="shuffler", ts=6.2, identity=ev.DeviceIdentity(
        device_class="shuffler", vendor="v", model="m", serial="S1", firmware_version="1",
        firmware_hash="00", recognises_cards=True)))
    assert asked(run, mark) == ["status"] and last_ask(run) != first
    answer(run, "idle", ask=first)                  # the first request's, come late: no answer
    assert asked(run, mark) == ["status"]
    answer(run, "ready")                            # the answer to the second
    assert asked(run, mark) == ["status", "dispense_hand"]      # seat 2's, again


def test_a_restart_while_the_status_is_awaited_asks_it_again_and_takes_only_the_new_answer(
        tmp_path):
    run = fail(seat_2_asked(tmp_path), tmp_path, "jam")
    run.command("clear_malfunction", "supervisor")
    before = last_ask(run)
    run = fail(run, tmp_path, "restart")            # the request may never have left
    assert run.table.state == "malfunction" and run.table.round.void is None
    mark = run.journal.head()[0]
    answer(run, "ready", ask=before)                # what the restarted driver cannot own
    run.command("clear_malfunction", "supervisor")
    assert asked(run, mark) == ["status"] and last_ask(run) != before
    answer(run, "dispensing", ask=before)           # still the old request's: no answer
    assert asked(run, mark) == ["status"]
    answer(run, "ready")
    assert asked(run, mark) == ["status", "dispense_hand"]
    verified(tmp_path)
