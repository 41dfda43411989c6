"""A device that refuses a command: the refusal is journaled as a device input and the table
acts on it (drivers put ``command_refused`` on the queue). A busy shuffler is asked again
when it reports its work done; the agitator's refused shake may be given again; any other
refusal of the shuffler is a failure of it, ruled by the game."""
import pytest

from controller.errors import TablectlError
from drivers import events as ev

from test_table_deck_check import BEGIN, DECK, IDENT, actions, make, pan9_round, restarted


def refused(run, device, action, reason):
    run.device(ev.CommandRefused(device=device, ts=0.0, action=action, reason=reason,
                                 text=f"{device} refused {action}: {reason}; wait"))


def conditions(run, since=0):
    return [r.payload for r in run.journal.records(since=since, kinds=["alarm"])
            if r.payload.get("refused")]


def open_q_poker(tmp_path):
    run, dev = make(tmp_path, "q-poker")
    run.command("open_table", "supervisor")
    dev.answer()
    assert run.table.state == "bets_open"
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.command("close_bets")
    assert actions(run)[-1] == "dispense_hand"
    return run, dev


# What lets the shuffler take the hand again: the work that kept it busy ends (here a deck
# check); or its link comes up (after a restart the croupier closed betting before the
# shuffler was linked again, and the hand asked then was never sent).
FREED = {
    "busy": ev.DeckCheckResult(device="shuffler", ts=0.0, count=52, cards=tuple(DECK),
                               deck_ids=(1,)),
    "not-connected": ev.LinkUp(device="shuffler", ts=1.0, identity=IDENT),
}


@pytest.mark.parametrize("reason", sorted(FREED))
def test_a_hand_not_dispensed_is_asked_again_when_the_shuffler_can_take_it(tmp_path, reason):
    run, dev = open_q_poker(tmp_path)
    dev.inbox.clear()                   # the shuffler refused it: nothing comes of it
    mark = run.journal.head()[0]
    refused(run, "shuffler", "dispense_hand", reason)
    shown = conditions(run, mark)
    assert [(c["device"], c["refused"], c["reason"]) for c in shown] == [
        ("shuffler", "dispense_hand", reason)]
    # Busy: the table asks whether the work it was busy with is over (a status request).
    asked = ["status"] if reason == "busy" else []
    assert run.table.state == "bets_closed" and actions(run, mark) == asked
    run.device(FREED[reason])           # the hand is asked again and dealt
    assert actions(run, mark) == asked + ["dispense_hand"]
    dev.answer()
    assert run.table.state == "player_decisions"
    # The refusal is in the journal as the device's input, before what it led to.
    kinds = [(r.kind, r.payload.get("event", {}).get("kind"))
             for r in run.journal.records(since=mark)]
    assert kinds[0] == ("device", "command_refused")
    run.journal.close()


def test_the_refusal_is_replayed_on_recovery(tmp_path):
    run, dev = open_q_poker(tmp_path)
    refused(run, "shuffler", "dispense_hand", "busy")
    live = (run.table.state, run.table._dispensing)
    seq = [r.seq for r in run.journal.records(kinds=["device"])
           if r.payload["event"]["kind"] == "command_refused"]
    run.journal.close()
    again, _ = restarted(tmp_path, "q-poker")
    report = again.journal.records(kinds=["recovery"])
    report = list(report)[-1].payload["report"]
    # Replayed to where the live table was: the hand refused, none on its way.
    assert report["state_at_crash"] == "bets_closed" and len(seq) == 1
    assert seq[0] > report["from_seq"]          # replayed, not skipped
    assert live == ("bets_closed", False)
    unknown = [r for r in again.journal.records(kinds=["table"])
               if r.payload.get("kind") == "irregular_event"]
    assert unknown == []
    again.journal.close()


def test_a_shuffle_refused_while_busy_is_asked_again_on_the_check_result(tmp_path):
    run, dev = make(tmp_path)                        # Super Pan 9: a deck check first
    run.command("open_table", "supervisor")
    assert actions(run) == ["deck_check"]
    dev.answer()                                     # check, then the shuffle: bets open
    assert run.table.state == "bets_open"
    pan9_round(run, dev)
    dev.answer()                                     # the gathered deck is checked
    run.command("next_round")
    assert run.table.state == "shuffling" and actions(run)[-1] == "shuffle"
    dev.inbox.clear()
    mark = run.journal.head()[0]
    refused(run, "shuffler", "shuffle", "busy")
    assert run.table.state == "shuffling" and actions(run, mark) == ["status"]
    dev.inbox.clear()                                # its answer: still checking
    run.device(ev.Status(device="shuffler", ts=0.0, state="checking"))
    assert actions(run, mark) == ["status"]
    run.device(ev.DeckCheckResult(device="shuffler", ts=0.0, count=52, cards=tuple(DECK),
                                  deck_ids=(2,)))
    assert actions(run, mark) == ["status", "shuffle"]
    dev.answer()
    assert run.table.state == "bets_open"
    run.journal.close()


def test_a_deck_check_refused_while_busy_is_asked_again_before_the_shuffle(tmp_path):
    """The check stays owed: the ShuffleDone ending the work the shuffler was busy with is not
    the round's shuffle (nor an irregular event); the check is asked again, and the shuffle
    on its result (tests/test_deck_check_busy.py)."""
    run, dev = make(tmp_path)
    run.command("open_table", "supervisor")
    assert actions(run) == ["deck_check"] and run.table.state == "shuffling"
    dev.inbox.clear()
    mark = run.journal.head()[0]
    refused(run, "shuffler", "deck_check", "busy")       # e.g. still shuffling
    assert actions(run, mark) == ["status"]
    # Its own shuffle ends: not the round's; the check is asked again.
    run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    assert run.table.state == "shuffling"
    assert actions(run, mark) == ["status", "deck_check"]
    dev.answer()                        # its status (ready), the check, then the shuffle
    assert actions(run, mark) == ["status", "deck_check", "shuffle"]
    assert run.table.state == "bets_open"
    assert not [r for r in run.journal.records(kinds=["table"])
                if r.payload.get("kind") == "irregular_event"]
    run.journal.close()


def test_a_refused_shake_may_be_given_again(tmp_path):
    run, dev = make(tmp_path)
    run.command("open_table", "supervisor")
    dev.answer()
    for name, args in BEGIN["super-pan-9"]:          # the banker, a bet, the shake
        run.command(name, **args)
    assert run.table.state == "dice_shaking" and actions(run)[-1] == "shake"
    dev.inbox.clear()
    with pytest.raises(TablectlError):
        run.command("shake")             # shaking already: no second shake
    refused(run, "dice", "shake", "door-open")
    assert run.table.state == "dice_shaking"
    mark = run.journal.head()[0]
    run.command("shake")                 # nothing was shaken: the croupier shakes again
    assert actions(run, mark) == ["shake"]
    dev.answer()
    assert run.table.state == "settlement"
    run.journal.close()


@pytest.mark.parametrize("reason", ["not-ready", "empty", "jammed", "fault"])
def test_any_other_refusal_of_a_hand_asked_is_a_failure_while_dealing_and_the_round_is_void(
        tmp_path, reason):
    """The hand WAS asked (the deal had begun: it may be out, the refusal is the shuffler's
    word that it cannot deal it): a failure while dealing, 89/2004 art. 11(5). A failure
    before any hand is asked is one before the deal, and holds the round with its bets
    (tests/test_table_failure_before_the_deal.py)."""
    run, dev = open_q_poker(tmp_path)
    assert actions(run)[-1] == "dispense_hand"      # asked: the deal has begun
    dev.inbox.clear()
    refused(run, "shuffler", "dispense_hand", reason)
    rulings = [r.payload for r in run.journal.records(kinds=["decision"])]
    assert rulings and rulings[-1]["irregularity"] == "shuffler_malfunction"
    assert reason in rulings[-1]["detail"]
    closes = [r.payload for r in run.journal.records(kinds=["round_close"])]
    assert closes and closes[-1]["outcome"] == "void"
    assert run.table.state in ("round_void", "malfunction")
    run.journal.close()


def test_a_refused_status_request_changes_nothing(tmp_path):
    run, dev = open_q_poker(tmp_path)
    mark = run.journal.head()[0]
    refused(run, "shuffler", "status", "busy")
    assert [r.kind for r in run.journal.records(since=mark)] == ["device"]
    assert run.table.state == "bets_closed"
    run.journal.close()


def test_a_busy_shuffler_whose_status_says_free_is_asked_again_at_once(tmp_path):
    """Busy with work the table did not ask for (a self-test), which ends without a report:
    the status it is asked for says it is free, and the hand is asked again."""
    run, dev = open_q_poker(tmp_path)
    dev.inbox.clear()
    mark = run.journal.head()[0]
    refused(run, "shuffler", "dispense_hand", "busy")
    assert actions(run, mark) == ["status"]
    dev.inbox.clear()
    run.device(ev.Status(device="shuffler", ts=0.0, state="ready"))
    assert actions(run, mark) == ["status", "dispense_hand"]    # asked again at once
    dev.answer()                                               # and dealt
    assert run.table.state == "player_decisions"
    run.journal.close()


def test_a_shuffler_that_keeps_saying_busy_is_not_asked_in_a_loop(tmp_path):
    from controller.table.machine import BUSY_STATUS_ASKS

    run, dev = open_q_poker(tmp_path)
    dev.inbox.clear()
    mark = run.journal.head()[0]
    for _ in range(BUSY_STATUS_ASKS + 2):
        before = actions(run, mark).count("status")
        refused(run, "shuffler", "dispense_hand", "busy")
        if actions(run, mark).count("status") > before:
            # "ready", says its status: the hand is asked again, and refused again
            run.device(ev.Status(device="shuffler", ts=0.0, state="ready"))
    asked = actions(run, mark)
    assert asked.count("status") == BUSY_STATUS_ASKS
    assert asked.count("dispense_hand") == BUSY_STATUS_ASKS
    # The round waits, with the condition shown, for the work done or the supervisor.
    assert run.table.state == "bets_closed" and run.table.round.void is None
    run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    assert actions(run, mark)[-1] == "dispense_hand"
    run.journal.close()


def test_a_status_report_asks_nothing_of_a_shuffler_already_dealing(tmp_path):
    run, dev = open_q_poker(tmp_path)   # a hand asked and on its way
    mark = run.journal.head()[0]
    run.device(ev.Status(device="shuffler", ts=0.0, state="ready"))
    assert actions(run, mark) == []     # not a second hand
    run.journal.close()
