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

A status request the shuffler refuses as ``busy`` is asked again after a wait the service times
(a ``wait`` command, whose end comes back as the journaled ``wait_over`` input: the machine has
no clock), a few times; then the round is held for the supervisor with an alarm naming the
shuffler and the way out.

On the runner and a real journal: a restart is a real recovery from the journal.
"""
import pytest

from controller.journal import Journal
from controller.rules.cards import Card
from drivers import events as ev
from drivers.shuffler import StatusAnswer

from table_helpers import asked, deck_checked, shuffler_runner

C = Card.parse


def make(path, game="super-pan-9"):
    return shuffler_runner(path, game, machine_failure="rectify")


def seat_2_asked(path):
    """Super Pan 9 (P3 ``rectify``): the banker at seat 1, ana's bet on seat 2, the dice
    thrown so seat 2 is dealt first: its hand is asked of the shuffler."""
    run = make(path)
    run.command("open_table", "supervisor")
    run.device(deck_checked(0.05))
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


# --- 2. a status refused as busy is asked again after a wait, then the supervisor is called ----

def refused_busy(run, ts=6.2):
    run.device(ev.CommandRefused(device="shuffler", ts=ts, action="status", reason="busy",
                                 text="shuffler refused status: busy; wait for the current "
                                      "action to finish"))


def waits(run, since=0):
    """The waits the table asked of the service's timer: what each is for."""
    return [{k: v for k, v in r.payload.items() if k not in ("device_class", "action")}
            for r in run.journal.records(since=since, kinds=["device_command"])
            if r.payload["action"] == "wait" and r.payload["device_class"] == "timer"]


def wait_over(run, ts=7.0):
    from controller.inputs import TIMER, WaitOver

    run.device(WaitOver(device=TIMER, ts=ts, **waits(run)[-1]))


@pytest.mark.parametrize("how", ["jam", "restart"])
def test_a_status_refused_as_busy_is_asked_again_after_a_wait(tmp_path, how):
    run = fail(seat_2_asked(tmp_path), tmp_path, how)
    mark = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    first = last_ask(run)
    refused_busy(run)
    # Nothing asked at once: a wait, timed outside the table, for the asked request.
    assert asked(run, mark) == ["status", "wait"]
    w = waits(run, mark)[0]
    assert (w["what"], w["about"], w["ask"]) == ("status", "shuffler", first)
    assert w["after_s"] > 0
    assert run.table.state == "dealing" and run.table.round.void is None
    wait_over(run)
    assert asked(run, mark) == ["status", "wait", "status"] and last_ask(run) != first
    answer(run, "ready")
    assert asked(run, mark) == ["status", "wait", "status", "dispense_hand"]
    assert not rulings(run, mark)
    verified(tmp_path)


def test_a_shuffler_that_keeps_refusing_its_status_holds_the_round_for_the_supervisor(
        tmp_path):
    from controller.table.machine import STATUS_BUSY_WAITS

    run = fail(seat_2_asked(tmp_path), tmp_path, "jam")
    mark = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    for i in range(STATUS_BUSY_WAITS):
        refused_busy(run, ts=6.0 + i)
        wait_over(run, ts=6.5 + i)
    assert asked(run, mark) == ["status"] + ["wait", "status"] * STATUS_BUSY_WAITS
    refused_busy(run, ts=9.0)
    # No endless asking: the round is held, nothing more asked, the supervisor alarmed.
    assert asked(run, mark) == ["status"] + ["wait", "status"] * STATUS_BUSY_WAITS
    assert run.table.state == "malfunction" and run.table.round.void is None
    assert not rulings(run, mark)
    alarm = of_kind(run, "device_condition", mark)[-1]
    assert alarm["device"] == "shuffler"
    assert "shuffler refused its status" in alarm["what"]
    assert "clear_malfunction" in alarm["what"] and "void_round" in alarm["what"]
    # A hand out meanwhile is the one asked before: taken as seat 2's while held.
    run.device(ev.HandDispensed(device="shuffler", ts=9.5, cards=(C("9s"), C("Ks"))))
    assert shown(run, mark) == [("box 2", 2)]
    later = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    assert asked(run, later) == ["dispense_hand"]            # the banker's
    run.device(ev.HandDispensed(device="shuffler", ts=10.0, cards=(C("Kh"), C("Kd"))))
    assert run.table.state == "settlement" and not of_kind(run, "irregular_event")
    verified(tmp_path)


def test_held_after_the_refusals_the_clear_asks_the_status_again_from_the_start(tmp_path):
    from controller.table.machine import STATUS_BUSY_WAITS

    run = fail(seat_2_asked(tmp_path), tmp_path, "jam")
    run.command("clear_malfunction", "supervisor")
    for i in range(STATUS_BUSY_WAITS):
        refused_busy(run, ts=6.0 + i)
        wait_over(run, ts=6.5 + i)
    refused_busy(run, ts=9.0)
    assert run.table.state == "malfunction"
    mark = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    assert asked(run, mark) == ["status"]
    refused_busy(run, ts=11.0)
    assert asked(run, mark) == ["status", "wait"]           # waits again, not held at once
    assert run.table.state == "dealing"


def test_a_wait_over_after_the_busy_cleared_asks_nothing_more(tmp_path):
    run = fail(seat_2_asked(tmp_path), tmp_path, "jam")
    mark = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    refused_busy(run)
    # The shuffler is heard from before the wait ends (a report of its own: it is free
    # again): asked again at once, as a report of its own cannot answer it.
    run.device(ev.Status(device="shuffler", ts=6.3, state="idle"))
    assert asked(run, mark) == ["status", "wait", "status"]
    wait_over(run)                                  # the wait of the first request: stale
    assert asked(run, mark) == ["status", "wait", "status"]
    answer(run, "ready")
    assert asked(run, mark) == ["status", "wait", "status", "dispense_hand"]


def test_a_restart_during_the_wait_holds_the_round_and_the_clear_asks_again(tmp_path):
    run = fail(seat_2_asked(tmp_path), tmp_path, "jam")
    run.command("clear_malfunction", "supervisor")
    refused_busy(run)
    pending = waits(run)[-1]
    run = fail(run, tmp_path, "restart")            # the service's timer is gone with it
    assert run.table.state == "malfunction" and run.table.round.void is None
    mark = run.journal.head()[0]
    from controller.inputs import TIMER, WaitOver
    run.device(WaitOver(device=TIMER, ts=7.0, **pending))    # a stale one: nothing
    assert asked(run, mark) == []
    run.command("clear_malfunction", "supervisor")
    assert asked(run, mark) == ["status"]
    answer(run, "ready")
    assert asked(run, mark) == ["status", "dispense_hand"]
    verified(tmp_path)


# The same when the status is asked to learn whether a shuffler that refused a hand as busy is
# free again (busy with work of its own, which may end without a report): refused as busy in
# its turn, it is asked again after a wait, and at last the supervisor is called.

def hand_refused_busy(run, ts=2.0):
    run.device(ev.CommandRefused(device="shuffler", ts=ts, action="dispense_hand",
                                 reason="busy", text="shuffler refused dispense hand of 2: "
                                                     "busy; wait for the current action to "
                                                     "finish"))


def test_the_status_of_a_shuffler_that_refused_a_hand_as_busy_is_asked_again_after_a_wait(
        tmp_path):
    run = seat_2_asked(tmp_path)
    mark = run.journal.head()[0]
    hand_refused_busy(run)
    assert asked(run, mark) == ["status"]
    refused_busy(run, ts=2.1)
    assert asked(run, mark) == ["status", "wait"]
    wait_over(run, ts=3.0)
    assert asked(run, mark) == ["status", "wait", "status"]
    answer(run, "ready", ts=3.1)
    assert asked(run, mark) == ["status", "wait", "status", "dispense_hand"]    # seat 2's
    run.device(ev.HandDispensed(device="shuffler", ts=4.0, cards=(C("9s"), C("Ks"))))
    assert shown(run, mark) == [("box 2", 2)] and not rulings(run, mark)


def test_a_shuffler_that_refused_a_hand_and_keeps_refusing_its_status_calls_the_supervisor(
        tmp_path):
    from controller.table.machine import STATUS_BUSY_WAITS

    run = seat_2_asked(tmp_path)
    mark = run.journal.head()[0]
    hand_refused_busy(run)
    for i in range(STATUS_BUSY_WAITS):
        refused_busy(run, ts=2.1 + i)
        wait_over(run, ts=2.5 + i)
    refused_busy(run, ts=6.0)
    assert asked(run, mark) == ["status"] + ["wait", "status"] * STATUS_BUSY_WAITS
    assert run.table.state == "malfunction" and run.table.round.void is None
    assert not rulings(run, mark)
    alarm = of_kind(run, "device_condition", mark)[-1]
    assert "shuffler refused its status" in alarm["what"] and "void_round" in alarm["what"]
    later = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    assert asked(run, later) == ["dispense_hand"]       # nothing was out: asked again
    hand_refused_busy(run, ts=7.0)
    assert asked(run, later) == ["dispense_hand", "status"]     # a fresh count
