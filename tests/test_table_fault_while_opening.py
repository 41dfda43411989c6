"""The controller's own fault in the input that begins a round, after the round's start is
in the journal and before the machine entered it (``open_table``, ``next_round``).

The round is ended at once as the game rules a machine failure before the deal: void, citing
that article, with nothing to return (no bet was placed, no card is out). The journal then
holds the round opened and closed once; ``journal rounds`` and the replay after a restart see
it closed, and the next round opens as usual.
"""
import pytest

from controller.rules import get_game
from controller.rules.base import Phase
from controller.table.machine import DEVICE_FAILURE, Table as Machine
from drivers import events as ev

from table_helpers import LAYOUT, deck_checked, shuffler_runner

GAMES = sorted(LAYOUT)


def broken(self, *args, **kwargs):
    raise RuntimeError("bug while opening the round")


def broken_leaving(self, event_data):
    """Leaving for the round's first state (not for malfunction, which the fault takes)."""
    if event_data.transition.dest in ("shuffling", "bets_open"):
        broken(self)


def article(game: str, mode: str) -> str:
    """The article the game's ruling on its dealing machine's failure before the deal cites."""
    return get_game(game).ruling(DEVICE_FAILURE[mode], Phase.BETTING).article


def runner(tmp_path, game, mode):
    run = shuffler_runner(tmp_path, game)
    if mode == "shoe":
        run.command("switch_mode", "supervisor", mode="shoe")
    return run


def records(run, kind):
    return [r.payload for r in run.journal.records(kinds=[kind])]


def fail_while_opening(monkeypatch, run, mode, name="open_table", role="supervisor"):
    """``name`` faults after the round's start: in ``_request_shuffle`` (the shuffler's deck
    asked for) or, by the shoe, as the machine leaves its state for the round's first."""
    with monkeypatch.context() as bug:
        if mode == "shuffler":
            bug.setattr(Machine, "_request_shuffle", broken)
        else:
            bug.setattr(Machine, "_leaving", broken_leaving)
        run.command(name, role)


def open_void(run, number):
    """Round ``number`` was opened and closed once, void as a machine failure before the
    deal, with nothing returned."""
    opened = [p for p in records(run, "round_open") if p["round"] == number]
    closed = [p for p in records(run, "round_close") if p["round"] == number]
    assert len(opened) == 1 and len(closed) == 1
    assert closed[0]["outcome"] == "void" and closed[0]["returned"] == []
    return closed[0]


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
@pytest.mark.parametrize("game", GAMES)
def test_a_fault_while_the_table_opens_ends_the_round_it_began(monkeypatch, tmp_path, game,
                                                                mode):
    run = runner(tmp_path, game, mode)
    fail_while_opening(monkeypatch, run, mode)
    assert run.table.state == "malfunction"
    void = open_void(run, 1)
    assert void["article"] == article(game, mode) and void["cause"] == "controller fault"
    assert run.journal.open_round_state() is None
    assert [(s.round_id, s.closed, s.outcome) for s in run.journal.rounds()] == [
        ("1", True, "void")]
    # The clear leaves the table out of service, as it was; the supervisor opens it again.
    run.command("clear_malfunction", "supervisor")
    assert run.table.state == "out_of_service"
    run.command("open_table", "supervisor")
    assert run.table.round.round_id == 2 and run.table.state == "shuffling"
    assert len(records(run, "round_close")) == 1


def test_after_a_restart_the_round_stays_closed_and_the_table_waits_as_before(monkeypatch,
                                                                               tmp_path):
    run = runner(tmp_path, "q-poker", "shuffler")
    fail_while_opening(monkeypatch, run, "shuffler")
    run.journal.close()
    run = runner(tmp_path, "q-poker", "shuffler")
    report = run.recover()
    assert report["state_now"] == "malfunction" and report["void"]
    assert run.table.round.round_id == 1 and run.table.round.void is not None
    assert run.journal.open_round_state() is None
    assert len(records(run, "round_close")) == 1           # not closed a second time


def test_a_fault_while_the_next_round_begins_ends_that_round(monkeypatch, tmp_path):
    run = runner(tmp_path, "q-poker", "shuffler")
    run.command("open_table", "supervisor")
    run.device(deck_checked())
    run.device(ev.ShuffleDone(device="shuffler", ts=0.1, count=52))
    run.command("void_round", "supervisor", reason="no player came")
    fail_while_opening(monkeypatch, run, "shuffler", name="next_round", role="dealer")
    assert run.table.state == "malfunction"
    open_void(run, 2)
    assert run.journal.open_round_state() is None
    # The clear begins the next round, as from round_void (docs/controller.md).
    run.command("clear_malfunction", "supervisor")
    assert run.table.round.round_id == 3 and run.table.state == "shuffling"
