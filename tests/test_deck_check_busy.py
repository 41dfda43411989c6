"""A deck check the shuffler refuses as ``busy`` stays owed: it is asked again once the
shuffler is free, and the round's shuffle waits for its result.

In shuffler mode the table asks for the gathered deck's check before its shuffle
(docs/integrity.md, "The deck check in shuffler mode"). A shuffler busy with work of its own (a
shuffle, a self-test) refuses the check as ``busy``. The check is not skipped: the table asks
the shuffler's status, and asks the check again when the shuffler is free (its status says
``idle`` or ``ready``, or the ``ShuffleDone`` ending the work it was busy with comes). That
``ShuffleDone`` is not the round's shuffle (no shuffle was asked: the check is owed), and it is
no irregular event either, since the shuffler said it was busy: taken as the round's shuffle,
the round would open on a deck nobody counted (Super Pan 9 261/96/M art. 2(1); in the three
other games the shuffler's shuffle of the round's cards, 89/2004 and 78/2008 art. 3(2), 11/2008
art. 3(1)(2)). A restart in between rebuilds the same owed check from the journal.
"""
import pytest

from controller.rules.cards import Card
from controller.table.machine import BUSY_STATUS_ASKS
from drivers import events as ev

from table_helpers import asked, shuffler_runner, status_answer
from test_deck_check_owed import (DECK_STATE, IDENT, checked, done, one_round, order,
                                  published, restarted, shuffled)


def refused(run, reason="busy", action="deck_check", ts=0.0):
    run.device(ev.CommandRefused(device="shuffler", ts=ts, action=action, reason=reason,
                                 text=f"shuffler refused {action}: {reason}"))


def irregular(run):
    return [e["event"] for e in published(run, "irregular_event")]


def opened(tmp_path, game="fortune-3-card-poker"):
    run = shuffler_runner(tmp_path, game)
    run.command("open_table", "supervisor")
    assert asked(run) == ["deck_check"] and run.table.state == "shuffling"
    return run


def test_a_check_refused_as_busy_is_asked_again_when_the_shuffler_says_it_is_free(tmp_path):
    run = opened(tmp_path)
    refused(run)                                # still doing its own work
    assert asked(run) == ["deck_check", "status"] and run.table.state == "shuffling"
    status_answer(run, "ready", 0.1)            # free again: the check, not the shuffle
    assert asked(run) == ["deck_check", "status", "deck_check"]
    assert run.table.state == "shuffling"
    run.device(checked(0.2))
    assert asked(run)[-1] == "shuffle"
    shuffled(run, 0.3)
    assert run.table.state == "bets_open"
    assert order(run) == ["deck_check", "deck_check", "result", "shuffle"]
    assert irregular(run) == []
    run.journal.close()


def test_the_shuffle_done_ending_the_busy_work_is_not_the_rounds_shuffle(tmp_path):
    """The work the shuffler was busy with ends in a ShuffleDone: expected (no irregular event),
    not shown as the round's shuffle, and the check is asked again at once; the status answer
    that follows asks nothing more."""
    run = opened(tmp_path, "q-poker")
    refused(run)
    run.device(done(0.1))
    assert run.table.state == "shuffling"
    assert irregular(run) == [] and not published(run, "shuffle")
    assert asked(run) == ["deck_check", "status", "deck_check"]
    status_answer(run, "ready", 0.2)            # the answer to the status asked before
    assert asked(run) == ["deck_check", "status", "deck_check"]
    run.device(checked(0.3))
    assert asked(run)[-1] == "shuffle" and run.table.state == "shuffling"
    shuffled(run, 0.4)
    assert run.table.state == "bets_open"
    assert order(run) == ["deck_check", "deck_check", "result", "shuffle"]
    assert irregular(run) == []
    run.journal.close()


def test_a_shuffle_started_and_done_after_the_refusal_are_the_busy_work(tmp_path):
    run = opened(tmp_path)
    refused(run)
    shuffled(run, 0.1)
    assert run.table.state == "shuffling" and irregular(run) == []
    assert not published(run, "shuffle")
    assert asked(run)[-1] == "deck_check"
    # Once asked again, a shuffle reported before its result is irregular as ever.
    run.device(done(0.2))
    assert irregular(run) == ["shuffle_done"] and run.table.state == "shuffling"
    run.device(checked(0.3))
    shuffled(run, 0.4)
    assert run.table.state == "bets_open"
    assert order(run) == ["deck_check", "deck_check", "result", "shuffle"]
    run.journal.close()


def test_the_check_of_the_gathered_deck_refused_as_busy_is_asked_again(tmp_path):
    """Between rounds (no shuffle owed yet): the ShuffleDone of the busy work is not irregular
    and makes no deck ready; the check is asked again, and the next round shuffles on its
    result."""
    run = opened(tmp_path)
    run.device(checked(0.1))
    shuffled(run, 0.2)
    one_round(run)
    assert asked(run)[-1] == "deck_check"       # the deck gathered: checked now
    refused(run, ts=1.0)
    assert asked(run)[-1] == "status"
    run.device(done(1.1))                       # the busy work over
    assert irregular(run) == [] and asked(run)[-1] == "deck_check"
    run.device(checked(1.2))
    run.command("next_round")
    assert asked(run)[-1] == "shuffle" and run.table.state == "shuffling"
    shuffled(run, 1.3)
    assert run.table.state == "bets_open"
    assert order(run) == ["deck_check", "result", "shuffle",
                          "deck_check", "deck_check", "result", "shuffle"]
    run.journal.close()


def test_the_next_round_asks_again_for_a_check_still_refused(tmp_path):
    """The croupier starts the next round before the shuffler said it is free: the check is
    asked again then, not skipped."""
    run = opened(tmp_path)
    run.device(checked(0.1))
    shuffled(run, 0.2)
    one_round(run)
    refused(run, ts=1.0)
    run.command("next_round")
    assert asked(run)[-2:] == ["status", "deck_check"] and run.table.state == "shuffling"
    run.device(checked(1.1))
    shuffled(run, 1.2)
    assert run.table.state == "bets_open"
    assert order(run)[-4:] == ["deck_check", "deck_check", "result", "shuffle"]
    run.journal.close()


def test_the_status_asked_after_busy_refusals_is_bounded(tmp_path):
    """A firmware that says busy to every check while its status says free is not asked in a
    loop: BUSY_STATUS_ASKS status requests a round; after that the check waits for the
    shuffler's own word that it is free (its ShuffleDone here)."""
    run = opened(tmp_path)
    for i in range(BUSY_STATUS_ASKS):
        refused(run, ts=i)
        assert asked(run)[-1] == "status"
        status_answer(run, "idle", i + 0.5)
        assert asked(run)[-1] == "deck_check"
    refused(run, ts=10.0)
    assert asked(run)[-1] == "deck_check"      # no more status asked
    assert asked(run).count("status") == BUSY_STATUS_ASKS
    assert run.table.state == "shuffling"
    run.device(done(11.0))                      # its work over: the check again
    assert asked(run)[-1] == "deck_check" and irregular(run) == []
    assert asked(run).count("deck_check") == BUSY_STATUS_ASKS + 2
    run.device(checked(12.0))
    shuffled(run, 13.0)
    assert run.table.state == "bets_open"
    run.journal.close()


@pytest.mark.parametrize("after", ["refusal", "shuffle_done", "gathered"])
def test_a_restart_rebuilds_the_check_refused_as_busy(tmp_path, after):
    run = opened(tmp_path)
    if after == "gathered":
        run.device(checked(0.1))
        shuffled(run, 0.2)
        one_round(run)
    refused(run, ts=1.0)
    if after == "shuffle_done":
        run.device(done(1.1))
    live = {k: getattr(run.table, k) for k in DECK_STATE}
    run.journal.close()
    again = restarted(tmp_path, tmp_path / "journal.db")
    assert {k: getattr(again.table, k) for k in DECK_STATE} == live
    mark = again.journal.head()[0]
    again.device(ev.LinkUp(device="shuffler", ts=2.0, identity=IDENT))
    assert asked(again, mark) == ["deck_check"]     # still owed: asked, not skipped
    assert irregular(again) == []
    again.device(checked(2.1))
    if after == "gathered":
        assert asked(again, mark) == ["deck_check"]
        again.command("next_round")
    assert asked(again, mark) == ["deck_check", "shuffle"]
    shuffled(again, 2.2)
    assert again.table.state == "bets_open"
    again.journal.close()


@pytest.mark.parametrize("held", [False, True])
def test_a_check_not_sent_is_asked_again_at_link_up_before_the_shuffle(tmp_path, held):
    """``not-connected``: nothing was sent, and the link coming up asks for the check again,
    not for the shuffle it held back (which went unchecked). ``held``: the round waits for its
    shuffle with betting open (a hand came out before the deal: the deck is short of it)."""
    run = opened(tmp_path)
    if held:
        run.device(checked(0.05))
        shuffled(run, 0.06)
        run.device(ev.HandDispensed(device="shuffler", ts=0.07,
                                    cards=(Card.parse("As"), Card.parse("Kd"),
                                           Card.parse("Qh"))))
        assert run.table.state == "bets_open" and asked(run)[-1] == "deck_check"
    refused(run, "not-connected")
    assert asked(run)[-1] == "deck_check"
    run.device(ev.LinkUp(device="shuffler", ts=0.1, identity=IDENT))
    assert asked(run)[-1] == "deck_check"
    run.device(checked(0.2))
    assert asked(run)[-1] == "shuffle"
    shuffled(run, 0.3)
    assert run.table.state == "bets_open"
    assert order(run)[-4:] == ["deck_check", "deck_check", "result", "shuffle"]
    run.journal.close()


@pytest.mark.parametrize("reason", ["jammed", "door-open"])
def test_any_other_refusal_of_the_check_is_a_failure_of_the_shuffler(tmp_path, reason):
    run = opened(tmp_path)
    refused(run, reason)
    assert "status" not in asked(run)
    alarms = [r.payload for r in run.journal.records(kinds=["alarm"])
              if r.payload.get("device") == "shuffler"]
    assert alarms and reason in alarms[-1]["what"]
    run.journal.close()


def test_a_status_refused_as_busy_after_the_check_was_is_asked_again_then_alarmed(tmp_path):
    """The status asked after the busy refusal is itself refused as busy: asked again after a
    wait, STATUS_BUSY_WAITS times; then the supervisor is told what the table waits for (the
    deck check) and the way out that works while the table is shuffling. The check is still
    owed: the shuffler's report of its work done asks it again."""
    from controller.inputs import TIMER, WaitOver
    from controller.table.machine import STATUS_BUSY_WAITS

    run = opened(tmp_path)
    refused(run)
    for i in range(STATUS_BUSY_WAITS):
        refused(run, action="status", ts=1.0 + i)
        wait = [r.payload for r in run.journal.records(kinds=["device_command"])
                if r.payload["action"] == "wait"][-1]
        run.device(WaitOver(device=TIMER, ts=1.5 + i, what=wait["what"], about=wait["about"],
                            ask=wait["ask"], after_s=wait["after_s"]))
        assert asked(run)[-1] == "status"
    refused(run, action="status", ts=9.0)
    assert asked(run)[-1] == "status" and run.table.state == "shuffling"
    alarm = [r.payload for r in run.journal.records(kinds=["table", "alarm"])
             if r.payload.get("kind") == "device_condition"
             and r.payload.get("refused") == "status"][-1]
    assert "deck check" in alarm["what"] and "refused the hand" not in alarm["what"]
    assert "void_round" in alarm["what"]
    assert "clear_malfunction" not in alarm["what"]     # not in malfunction: it would fail
    run.device(done(10.0))
    assert asked(run)[-1] == "deck_check" and irregular(run) == []
    run.device(checked(11.0))
    shuffled(run, 12.0)
    assert run.table.state == "bets_open"
    run.journal.close()


def test_a_closed_table_asks_no_check_until_it_opens_again(tmp_path):
    """The gathered deck's check refused as busy, then the table closed: the shuffler's word
    that it is free asks nothing of it; opening the table asks the check first."""
    run = opened(tmp_path)
    run.device(checked(0.1))
    shuffled(run, 0.2)
    one_round(run)
    refused(run, ts=1.0)
    run.command("close_table", "supervisor")
    assert run.table.state == "out_of_service"
    status_answer(run, "ready", 1.1)
    run.device(done(1.2))
    assert asked(run)[-1] == "status"
    run.command("open_table", "supervisor")
    assert asked(run)[-1] == "deck_check" and run.table.state == "shuffling"
    run.device(checked(1.3))
    shuffled(run, 1.4)
    assert run.table.state == "bets_open"
    run.journal.close()
