"""Where the supervisor's clear of a malfunction takes the table, from every state a
malfunction can come from.

A malfunction (here the controller's own fault, ``controller_fault``, the one way into it
from a table with no round in play) is cleared by ``clear_malfunction``. A table that was out
of service stays out of service: opening it is ``open_table``. A round held before the deal
goes on as it was (the same round, not a new one); between rounds the clear begins the next
round, as ``next_round`` would. Journals written when a clear from out of service opened a
round replay as they were played.
"""
import pytest

from controller.errors import TablectlError
from controller.journal import Journal
from controller.rules import get_game
from controller.table import Table
from controller.table.machine import Table as Machine
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES, draw, faulty, ready  # noqa: F401 - faulty: a fixture


def report(t) -> None:
    t.handle_device(ev.Malfunction(device="shoe", ts=0.0, code=7, text="reader"))


def new_table(mode: str) -> Table:
    return Table("T1", get_game("q-poker"), mode, layout_boxes=7, devices=DEVICES)


def every_device_linked(send) -> None:
    """Give ``send`` (a table's or a runner's device input) a link-up of every device."""
    for device, cls in DEVICES.items():
        send(ev.LinkUp(device=device, ts=1.0, identity=ev.DeviceIdentity(
            device, "sim", cls, "S1", "1.0", "ab" * 16, True)))


def kinds(t) -> list[str]:
    return [e.kind for e in t.outbox]


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_a_table_never_opened_stays_out_of_service_after_the_clear(faulty, mode):
    t = new_table(mode)
    report(t)
    assert t.state == "malfunction" and "controller_fault" in kinds(t)
    t.outbox.clear()
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "out_of_service" and t.round is None
    assert "round_started" not in kinds(t) and not t.commands
    with pytest.raises(TablectlError):
        t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("open_table", role="supervisor")           # the supervisor opens it
    ready(t)
    assert t.state == "bets_open" and t.round.round_id == 1


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_a_table_closed_after_a_round_stays_closed_after_the_clear(faulty, mode):
    t = new_table(mode)
    t.command("open_table", role="supervisor")
    ready(t)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("void_round", role="supervisor", reason="test")
    t.command("close_table", role="supervisor")
    report(t)
    assert t.state == "malfunction"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "out_of_service" and t.round.round_id == 1
    t.command("open_table", role="supervisor")
    assert t.round.round_id == 2


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_a_round_waiting_for_its_shuffle_goes_on_after_the_clear(faulty, mode):
    """Not a second round opened over the first, which was never closed."""
    t = new_table(mode)
    t.command("open_table", role="supervisor")
    assert t.state == "shuffling" and t.round.round_id == 1
    report(t)
    t.outbox.clear()
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "shuffling" and t.round.round_id == 1
    assert "round_started" not in kinds(t)
    ready(t)
    assert t.state == "bets_open" and t.round.round_id == 1


def test_a_round_still_betting_goes_on_with_its_bets_after_the_clear(faulty):
    t = new_table("shoe")
    t.command("open_table", role="supervisor")
    ready(t)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    report(t)
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_open" and t.round.round_id == 1 and t.round.bets


@pytest.mark.parametrize("end", ["void", "complete"])
def test_between_rounds_the_clear_begins_the_next_round(faulty, end):
    t = new_table("shoe")
    t.command("open_table", role="supervisor")
    ready(t)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    if end == "void":
        t.command("void_round", role="supervisor", reason="test")
    else:
        t.command("close_bets")
        draw(t, "As", "Kd", "2c", "3c", "4h", "5s")
        t.command("decide", box=1, decision="play")
        t.command("confirm_result")
    assert t.state == f"round_{end}"
    report(t)
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "shuffling" and t.round.round_id == 2


def _runner(path):
    journal = Journal.open(path, "T1")
    return TableRunner(new_table("shoe"), journal), journal


def test_a_clear_that_kept_the_table_closed_replays_so(faulty, tmp_path):
    run, journal = _runner(tmp_path / "j.db")
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("close_table", role="supervisor")
    run.device(ev.Malfunction(device="shoe", ts=0.0, code=7, text="reader"))
    run.command("clear_malfunction", role="supervisor")
    with pytest.raises(TablectlError):
        run.command("deck_ready")                         # journaled as refused
    journal.close()
    run, journal = _runner(tmp_path / "j.db")             # the controller restarts
    report = run.recover()
    assert report["state_now"] == "out_of_service" and run.table.round is None
    assert len(list(journal.records(kinds=["round_open"]))) == 1


def test_a_journal_whose_clear_opened_a_round_from_out_of_service_still_replays(
        faulty, monkeypatch, tmp_path):
    """Written by a controller whose clear from out of service began a round: the round it
    opened is rebuilt from its snapshot and its inputs replay as they were played."""
    run, journal = _runner(tmp_path / "j.db")
    with monkeypatch.context() as old:
        old.setattr(Machine, "closed_table_held", lambda self, event_data=None: False,
                    raising=False)
        run.device(ev.Malfunction(device="shoe", ts=0.0, code=7, text="reader"))
        run.command("clear_malfunction", role="supervisor")
        assert run.table.state == "shuffling"
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    journal.close()
    run, journal = _runner(tmp_path / "j.db")
    report = run.recover()
    assert report["state_now"] == "bets_open"
    assert run.table.round.round_id == 1 and run.table.round.bets


def test_a_closed_tables_clear_waits_for_its_devices_as_the_clear_that_opened_it_did(faulty):
    """Refused while a device the table needs is not put right (the shuffler's door open), as
    when the clear began a round there: a journal of either replays with each clear accepted
    or refused as it was played. Nothing changes; once the door is closed it is cleared."""
    t = new_table("shuffler")
    t.handle_device(ev.DoorOpened(device="shuffler", ts=0.0))
    report(t)
    with pytest.raises(TablectlError, match="door_open.*close the door"):
        t.command("clear_malfunction", role="supervisor")
    assert t.state == "malfunction" and t.closed_table_held()
    t.handle_device(ev.DoorClosed(device="shuffler", ts=1.0))
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "out_of_service" and t.round is None


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_a_round_waiting_for_its_deck_after_a_fault_waits_for_its_devices_too(faulty, mode):
    """As the clear that opened a second round there did: refused while a device the round
    needs has not linked since the controller restarted (a journal of either version replays
    alike), then the same round goes on once it links."""
    t = new_table(mode)
    t.command("open_table", role="supervisor")
    report(t)
    t.apply({"source": "restart"})
    assert t.state == "malfunction"
    with pytest.raises(TablectlError, match="not linked since the controller restarted"):
        t.command("clear_malfunction", role="supervisor")
    every_device_linked(t.handle_device)
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "shuffling" and t.round.round_id == 1


@pytest.mark.parametrize("check", ["before", "during"])
def test_a_shuffle_done_while_in_malfunction_opens_betting_at_the_clear(faulty, check):
    """The shuffler finishes the shuffle asked while the table waits in malfunction: at the
    clear the round's deck is ready and betting opens on the same round, as when the shuffle
    is done in shuffling, rather than the table waiting in shuffling for a shuffle already
    done, with nothing asked."""
    from table_helpers import deck_checked
    t = new_table("shuffler")
    t.command("open_table", role="supervisor")
    if check == "before":
        t.handle_device(deck_checked())
    report(t)
    if check == "during":
        t.handle_device(deck_checked())
    t.handle_device(ev.ShuffleDone(device="shuffler", ts=1.0, count=52))
    assert t.state == "malfunction"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_open" and t.round.round_id == 1


def test_a_fault_in_the_input_that_opened_the_round_is_kept_by_its_snapshot(monkeypatch,
                                                                           tmp_path):
    """The controller's fault in the very input that opened the round (the round already in
    shuffling): the round's snapshot, taken after that input, is where a restart starts from,
    and the clear after the restart still waits for the devices (not linked since the
    restart) as it would have without one."""
    run, journal = _runner(tmp_path / "j.db")
    after = Machine._published_state

    def broken(self, event_data):
        if event_data.transition.dest == "shuffling":
            raise RuntimeError("bug in the open")
        after(self, event_data)
    with monkeypatch.context() as bug:
        bug.setattr(Machine, "_published_state", broken)
        run.command("open_table", role="supervisor")
    assert run.table.state == "malfunction" and run.table.round.round_id == 1
    journal.close()
    run, journal = _runner(tmp_path / "j.db")
    assert run.recover()["state_now"] == "malfunction"
    with pytest.raises(TablectlError, match="not linked since the controller restarted"):
        run.command("clear_malfunction", role="supervisor")
    every_device_linked(run.device)
    run.command("clear_malfunction", role="supervisor")
    assert run.table.state == "shuffling" and run.table.round.round_id == 1


def test_a_round_held_with_its_bets_is_not_closed_over(faulty):
    """close_table in malfunction over a round held with its bets would leave that round
    never ended, its bets neither settled nor returned: refused, nothing changed, naming the
    way out; voided first, the table closes."""
    t = new_table("shoe")
    t.command("open_table", role="supervisor")
    ready(t)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    report(t)
    assert t.state == "malfunction" and t.round_held()
    t.outbox.clear()
    with pytest.raises(TablectlError, match="round 1 is held in malfunction with its bets.*"
                                            "void_round"):
        t.command("close_table", role="supervisor")
    assert t.state == "malfunction" and t.round.bets and kinds(t) == []
    t.command("void_round", role="supervisor", reason="the table closes")
    assert [e.data["returned"] for e in t.outbox if e.kind == "round_void"] == [
        [{"box": 1, "wager": "versus_croupier", "player": None, "amount": 10}]]
    t.command("close_table", role="supervisor")
    assert t.state == "out_of_service"


def test_a_journal_that_closed_the_table_over_a_held_round_still_starts(faulty, tmp_path,
                                                                         monkeypatch):
    """Written by a controller that took close_table there (before it was refused), the table
    left out of service over the round, then restarted on this version (an upgrade while the
    table was closed): the replay takes the close as it was played, not as a divergence."""
    run, journal = _runner(tmp_path / "j.db")
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.device(ev.Malfunction(device="shoe", ts=0.0, code=7, text="reader"))
    assert run.table.state == "malfunction"
    refusing = Machine._cmd_close_table

    def closed_as_before(self):          # the check then refused nothing in malfunction
        bets, self.round.bets = self.round.bets, {}
        try:
            refusing(self)
        finally:
            if self.round is not None:
                self.round.bets = bets
    with monkeypatch.context() as old:
        old.setattr(Machine, "_cmd_close_table", closed_as_before)
        run.command("close_table", role="supervisor")
    assert run.table.state == "out_of_service"
    journal.close()
    run, journal = _runner(tmp_path / "j.db")             # the controller restarts
    report = run.recover()
    assert run.broken is None and report["state_now"] == "out_of_service"
    assert not [r for r in journal.records(kinds=["alarm"])
                if r.payload.get("kind") == "replay_divergence"]
    journal.close()
