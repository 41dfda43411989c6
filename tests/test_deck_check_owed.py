"""A ShuffleDone that comes while the deck check the table asked for is still owed (asked, no
result yet) is not the round's shuffle.

In shuffler mode the table asks for the gathered deck's check before its shuffle, and commands
that shuffle only once the check's result is journaled (docs/integrity.md, "The deck check in
shuffler mode"). No shuffle is commanded while a check is owed, so a report of a shuffle then
is none the table asked for: the report of an earlier shuffle sent again under a new session's
number (docs/protocol.md 3.2), or a shuffle the firmware made on its own. Taken as the round's
shuffle, the round would open on a deck nobody counted, and the late result would then leave
the next round's deck unchecked as well. Like a ShuffleDone no shuffle is owed for
(tests/test_device_audit.py), it is an irregular event: journaled (as every device event),
published, and the check stays owed; the shuffle is asked once its result is in (Super Pan 9
261/96/M art. 2(1): each round's deck is the used cards shuffled again with the rest; in the
three other games the shuffler's shuffle of the round's cards, 89/2004 and 78/2008 art. 3(2),
11/2008 art. 3(1)(2)).
"""
import shutil

import pytest

from controller.integrity import IntegrityMonitor
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import Card
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES, LAYOUT, asked, shuffler_runner

IDENT = ev.DeviceIdentity("shuffler", "sim", "S1", "0001", "1.0", "ab" * 16, True)


def published(run, kind, since=0):
    return [r.payload for r in run.journal.records(since=since, kinds=["table"])
            if r.payload.get("kind") == kind]


def checked(ts=0.0):
    """The shuffler's deck check: a whole deck."""
    return ev.DeckCheckResult(device="shuffler", ts=ts, count=52, cards=(), missing=(),
                              extra=(), duplicate=(), deck_ids=(), card_deck_ids=())


def done(ts=0.0):
    return ev.ShuffleDone(device="shuffler", ts=ts, count=52)


def started(ts=0.0):
    return ev.ShuffleStarted(device="shuffler", ts=ts)


def shuffled(run, ts=0.0):
    run.device(started(ts))
    run.device(done(ts))


def order(run):
    """The journal's deck checks asked, their results and the shuffles asked, in order."""
    seen = []
    for r in run.journal.records(kinds=["device_command", "device"]):
        if r.kind == "device_command" and r.payload["action"] in ("deck_check", "shuffle"):
            seen.append(r.payload["action"])
        elif r.kind == "device" and r.payload["event"]["kind"] == "deck_check_result":
            seen.append("result")
    return seen


def one_round(run):
    """A Fortune 3 Card Poker round from bets open to the result confirmed."""
    run.command("place_bet", box=1, wager="ante", amount=10)
    run.command("close_bets")
    for cards in (("As", "Kd", "Qh"), ("2c", "3c", "4c")):
        run.device(ev.HandDispensed(device="shuffler", ts=1.0,
                                    cards=tuple(Card.parse(c) for c in cards)))
    run.command("decide", box=1, decision="play")
    run.command("confirm_result")
    assert run.table.state == "round_complete"


def test_a_shuffle_done_while_the_opening_check_is_owed_does_not_open_the_bets(tmp_path):
    run = shuffler_runner(tmp_path, "fortune-3-card-poker")
    run.command("open_table", "supervisor")
    assert asked(run) == ["deck_check"] and run.table.state == "shuffling"
    run.device(done(0.1))                       # before the check's result
    assert run.table.state == "shuffling"
    assert published(run, "irregular_event")[-1]["event"] == "shuffle_done"
    assert not published(run, "shuffle")        # not shown as the round's shuffle
    assert asked(run) == ["deck_check"]         # the check is still owed: nothing else asked
    run.device(checked(0.2))                    # the result: now the shuffle
    assert asked(run) == ["deck_check", "shuffle"] and run.table.state == "shuffling"
    shuffled(run, 0.3)
    assert run.table.state == "bets_open"
    assert order(run) == ["deck_check", "result", "shuffle"]
    run.journal.close()


def test_a_shuffle_of_the_firmwares_own_while_the_check_is_owed_is_not_taken(tmp_path):
    """Started and done, with no shuffle commanded: the check stays owed all the same."""
    run = shuffler_runner(tmp_path, "q-poker")
    run.command("open_table", "supervisor")
    shuffled(run, 0.1)
    assert run.table.state == "shuffling"
    assert [e["event"] for e in published(run, "irregular_event")] == [
        "shuffle_started", "shuffle_done"]
    assert asked(run) == ["deck_check"]
    run.device(checked(0.2))
    assert asked(run) == ["deck_check", "shuffle"]
    shuffled(run, 0.3)
    assert run.table.state == "bets_open"
    run.journal.close()


def test_between_rounds_the_next_round_waits_for_the_check_and_the_next_deck_is_checked(
        tmp_path):
    """The check asked when the deck is gathered is owed when the croupier starts the next
    round; a ShuffleDone then is no shuffle of that deck, and the late result asks for it. The
    round after is checked and shuffled in order too (the late result, taken before, left the
    check "done" and the next deck went unchecked)."""
    run = shuffler_runner(tmp_path, "fortune-3-card-poker")
    run.command("open_table", "supervisor")
    run.device(checked(0.1))
    shuffled(run, 0.2)
    for i in range(2):
        one_round(run)
        assert asked(run)[-1] == "deck_check"   # the deck gathered: checked now
        run.command("next_round")
        assert run.table.state == "shuffling"
        run.device(done(1.0 + i))               # no shuffle was asked: the check is owed
        assert run.table.state == "shuffling"
        assert published(run, "irregular_event")[-1]["event"] == "shuffle_done"
        run.device(checked(1.1 + i))
        assert asked(run)[-1] == "shuffle"
        shuffled(run, 1.2 + i)
        assert run.table.state == "bets_open"
    assert order(run) == ["deck_check", "result", "shuffle"] * 3
    run.journal.close()


def test_a_shuffle_done_before_the_check_that_gathered_the_deck_answers_is_irregular(tmp_path):
    """Before the croupier starts the next round (no shuffle owed yet): irregular as before,
    and the check asked at the gathering is still the one the shuffle waits for."""
    run = shuffler_runner(tmp_path, "fortune-3-card-poker")
    run.command("open_table", "supervisor")
    run.device(checked(0.1))
    shuffled(run, 0.2)
    one_round(run)
    shuffled(run, 2.0)                          # a shuffle of its own before the result
    assert [e["event"] for e in published(run, "irregular_event")] == [
        "shuffle_started", "shuffle_done"]
    run.command("next_round")
    assert asked(run)[-1] == "deck_check" and run.table.state == "shuffling"
    run.device(checked(2.1))
    assert asked(run)[-1] == "shuffle"
    shuffled(run, 2.2)
    assert order(run) == ["deck_check", "result", "shuffle"] * 2
    run.journal.close()


def restarted(tmp_path, src):
    """A second controller started on a copy of ``src``'s journal, recovered."""
    path = tmp_path / "again"
    path.mkdir()
    shutil.copy(src, path / "journal.db")
    table = Table("T1", get_game("fortune-3-card-poker"), "shuffler",
                  layout_boxes=LAYOUT["fortune-3-card-poker"], devices=DEVICES,
                  integrity=IntegrityMonitor())
    run = TableRunner(table, Journal.open(path / "journal.db", "T1"))
    run.sent = []
    run.send = run.sent.append
    run.recover()
    return run


DECK_STATE = ("state", "_deck_check", "_shuffle_after_check", "_awaiting_shuffle",
              "_deck_ready", "_needs_shuffle")


@pytest.mark.parametrize("at", ["opening", "next_round"])
def test_a_restart_after_the_irregular_shuffle_done_rebuilds_the_owed_check(tmp_path, at):
    run = shuffler_runner(tmp_path, "fortune-3-card-poker")
    run.command("open_table", "supervisor")
    if at == "next_round":
        run.device(checked(0.1))
        shuffled(run, 0.2)
        one_round(run)
        run.command("next_round")
    run.device(done(3.0))
    assert run.table.state == "shuffling"
    live = {k: getattr(run.table, k) for k in DECK_STATE}
    assert live["_deck_check"] == "asked" and not live["_deck_ready"]
    run.journal.close()
    again = restarted(tmp_path, tmp_path / "journal.db")
    assert {k: getattr(again.table, k) for k in DECK_STATE} == live
    mark = again.journal.head()[0]
    again.device(ev.LinkUp(device="shuffler", ts=4.0, identity=IDENT))
    assert asked(again, mark) == ["deck_check"]   # the check may have been lost: again
    again.device(checked(4.1))
    assert asked(again, mark) == ["deck_check", "shuffle"]
    shuffled(again, 4.2)
    assert again.table.state == "bets_open"
    again.journal.close()
