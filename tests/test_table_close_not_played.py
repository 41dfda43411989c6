"""A round the table is taken out of service over before any bet (``close_table`` from
``shuffling``, or from ``bets_open`` with nothing on the layout) ends in the journal: its
``round_close`` says it was closed before play (outcome ``not_played``), by whom, with
nothing to return. ``journal rounds`` says so in words, and a restart finds no round to end.
The table is left as before: out of service, with no round."""
import pytest

import controller.cli
from controller.integrity import IntegrityMonitor
from controller.journal import Journal
from controller.rules import get_game
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES, LAYOUT, deck_checked

GAMES = ("q-poker", "fortune-3-card-poker", "texas-holdem", "super-pan-9")


def build(game: str, mode: str) -> Table:
    return Table("T1", get_game(game), mode, layout_boxes=LAYOUT[game], devices=DEVICES,
                 holdem={"small_blind": 5, "big_blind": 10} if game == "texas-holdem" else None,
                 integrity=IntegrityMonitor(deck_per_round=game == "super-pan-9"))


def deck_ready(run: TableRunner) -> None:
    """The round's deck made ready the way the mode does it: betting opens."""
    if run.table.mode.value == "shoe":
        run.command("deck_ready")
    else:
        run.device(deck_checked(0.05))
        run.device(ev.ShuffleDone(device="shuffler", ts=0.1, count=52))
    assert run.table.state == "bets_open"


def rounds_listed(path, capsys) -> str:
    capsys.readouterr()
    assert controller.cli.main(["journal", "rounds", "--journal", str(path)]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("mode", ("shoe", "shuffler"))
@pytest.mark.parametrize("where", ("shuffling", "bets_open"))
def test_a_round_closed_before_any_bet_ends_in_the_journal(tmp_path, capsys, game, mode, where):
    path = tmp_path / "journal.db"
    with Journal.open(path, "T1") as journal:
        run = TableRunner(build(game, mode), journal)
        run.command("open_table", "supervisor")
        assert run.table.state == "shuffling"
        if where == "bets_open":
            deck_ready(run)
        run.command("close_table", "supervisor")
        # The table as before: out of service, no round.
        assert run.table.state == "out_of_service" and run.table.round is None
        (close,) = journal.records(kinds=["round_close"])
        assert close.round_id == "1" and close.article is None
        assert {k: close.payload[k] for k in ("kind", "outcome", "reason", "by", "returned",
                                              "state")} == {
            "kind": "round_not_played", "outcome": "not_played",
            "reason": "table taken out of service", "by": "supervisor", "returned": [],
            "state": where}
        # Written in the commit of the command, after it and before the state it leads to.
        command = journal.last(kind="command")
        state = journal.last(kind="state")
        assert command.payload["name"] == "close_table" and command.seq < close.seq < state.seq
        assert state.payload["dest"] == "out_of_service"
        assert journal.open_round_state() is None

    listed = rounds_listed(path, capsys)
    (line,) = [ln for ln in listed.splitlines() if ln.split()[:1] == ["1"]]
    assert line.endswith("closed before play: table taken out of service"), listed
    assert "not closed" not in listed

    # A restart finds no round to end, and the table opens its next round as before.
    with Journal.open(path, "T1") as journal:
        run = TableRunner(build(game, mode), journal)
        report = run.recover()
        assert report["state_now"] == "out_of_service" and report["round"] is None
        assert not report["void"]
        assert len(list(journal.records(kinds=["round_close"]))) == 1
        assert journal.verify().ok
        for device in run.table.devices_connecting(next_round=True):
            run.device(ev.LinkUp(device=device, ts=0.0, identity=ev.DeviceIdentity(
                DEVICES[device], "sim", "R1", "0002", "1.0", "cd" * 16, True)))
        run.command("open_table", "supervisor")
        assert run.table.round.round_id == 2 and journal.open_round_state().round_id == "2"


@pytest.mark.parametrize("mode", ("shoe", "shuffler"))
@pytest.mark.parametrize("where", ("shuffling", "bets_open"))
def test_a_round_held_in_malfunction_before_any_bet_ends_when_the_table_closes(tmp_path, mode,
                                                                              where):
    """The device fails while the round waits for its deck or its bets, and the supervisor
    takes the table out of service rather than clear it: that round ends too, and the next
    one opens after it, not over it."""
    path = tmp_path / "journal.db"
    with Journal.open(path, "T1") as journal:
        run = TableRunner(build("q-poker", mode), journal)
        run.command("open_table", "supervisor")
        if where == "bets_open":
            deck_ready(run)
        run.device(ev.Jam(device=mode, ts=0.2, where="feed"))
        assert run.table.state == "malfunction"
        run.command("close_table", "supervisor")
        assert run.table.state == "out_of_service"
        (close,) = journal.records(kinds=["round_close"])
        assert close.round_id == "1" and close.payload["outcome"] == "not_played"
        assert close.payload["state"] == "malfunction"
        assert journal.open_round_state() is None
    with Journal.open(path, "T1") as journal:
        run = TableRunner(build("q-poker", mode), journal)
        run.recover()
        assert run.table.state == "out_of_service"
        assert len(list(journal.records(kinds=["round_close"]))) == 1
        assert journal.open_round_state() is None


def test_journal_show_says_the_round_was_closed_before_play(tmp_path, capsys):
    path = tmp_path / "journal.db"
    with Journal.open(path, "T1") as journal:
        run = TableRunner(build("q-poker", "shoe"), journal)
        run.command("open_table", "supervisor")
        run.command("close_table", "supervisor")
    capsys.readouterr()
    assert controller.cli.main(["journal", "show", "1", "--journal", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1] == ("Outcome: closed before play: table taken out "
                                             "of service")


def test_a_round_with_bets_returned_first_is_closed_before_play_too(tmp_path):
    """Bets placed and returned (remove_bet) leave nothing on the layout: the round closes
    with nothing to return; one with a bet still on it is refused as before, and nothing is
    written for it but the refusal."""
    with Journal.open(tmp_path / "journal.db", "T1") as journal:
        run = TableRunner(build("q-poker", "shoe"), journal)
        run.command("open_table", "supervisor")
        deck_ready(run)
        run.command("place_bet", box=2, wager="versus_croupier", amount=10)
        with pytest.raises(Exception, match="bets are on the layout"):
            run.command("close_table", "supervisor")
        assert not list(journal.records(kinds=["round_close"]))
        run.command("remove_bet", box=2, wager="versus_croupier")
        run.command("close_table", "supervisor")
        (close,) = journal.records(kinds=["round_close"])
        assert close.payload["outcome"] == "not_played" and close.payload["returned"] == []


def test_a_journal_written_before_the_close_still_verifies_replays_and_lists(tmp_path, capsys,
                                                                             monkeypatch):
    """A journal of an earlier version, where close_table left the round with no
    ``round_close``: it verifies, a restart rebuilds the table out of service from it with no
    round and writes no close for it, and ``rounds`` lists that round as not closed."""
    path = tmp_path / "journal.db"
    with monkeypatch.context() as m:
        m.setattr(Table, "_not_played", lambda self, r: None)    # as the earlier version did
        with Journal.open(path, "T1") as journal:
            run = TableRunner(build("q-poker", "shuffler"), journal)
            run.command("open_table", "supervisor")
            run.command("close_table", "supervisor")
            assert journal.open_round_state().round_id == "1"
    with Journal.open(path, "T1") as journal:
        assert journal.verify().ok
        run = TableRunner(build("q-poker", "shuffler"), journal)
        report = run.recover()
        assert report["state_now"] == "out_of_service" and report["round"] is None
        assert not list(journal.records(kinds=["round_close"]))
    (line,) = [ln for ln in rounds_listed(path, capsys).splitlines() if ln.split()[:1] == ["1"]]
    assert line.endswith("not closed")


@pytest.mark.parametrize("where", ("shuffling", "bets_open"))
def test_a_super_pan_9_round_closed_before_play_ends_its_deck(tmp_path, where):
    """deck_per_round: the deck checked and shuffled for the round is ended with it, as at any
    other round's end, so the round after the reopening is dealt from a deck of its own."""
    with Journal.open(tmp_path / "journal.db", "T1") as journal:
        run = TableRunner(build("super-pan-9", "shuffler"), journal)
        run.command("open_table", "supervisor")
        run.device(deck_checked(0.05))              # the deck's life begins with its check
        if where == "bets_open":
            run.device(ev.ShuffleDone(device="shuffler", ts=0.1, count=52))
            assert run.table.state == "bets_open"
        run.command("close_table", "supervisor")
        decks = [r.payload for r in journal.records(kinds=["integrity"])
                 if r.payload.get("record") == "deck"]
        assert [d["deck"] for d in decks] == [1], decks
        # Ended with no card out, as a round's deck is: no alarm of it.
        assert not [r for r in journal.records(kinds=["integrity"])
                    if r.payload.get("record") == "alarm"]
        run.command("open_table", "supervisor")
        deck_ready(run)
        assert run.table.integrity.ledger.current().number == 2
