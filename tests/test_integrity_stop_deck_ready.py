"""Under ``[integrity] alarm = "stop"`` a deck alarm pending when the round's deck is ready
holds that round's betting in ``shuffling`` until ``clear_integrity`` (docs/integrity.md), the
same with the shoe (the croupier's ``deck_ready``) as with the shuffler (its shuffle done);
under ``warn`` betting opens at once. The alarm is raised after the round opened, before any
bet: with the shuffler by the deck check of the gathered deck, with the shoe by the shoe
reporting itself empty while the round waits for its next deck (the deck it dealt from ended
with cards never seen)."""
import pytest

from controller.errors import TablectlError
from controller.integrity import IntegrityMonitor
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import Card
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES, LAYOUT, deck_checked


def build(mode: str, action: str) -> Table:
    return Table("T1", get_game("q-poker"), mode, layout_boxes=LAYOUT["q-poker"],
                 devices=DEVICES, integrity=IntegrityMonitor(), integrity_action=action)


def alarm_in_shuffling(run: TableRunner) -> None:
    """A round waits in ``shuffling`` for its deck, and a deck alarm is raised there."""
    if run.table.mode.value == "shuffler":
        run.command("open_table", "supervisor")
        assert run.table.state == "shuffling"
        run.device(ev.DeckCheckResult(device="shuffler", ts=0.0, count=51,
                                      missing=(Card.parse("As"),)))
    else:
        # A round dealt from the shoe and voided: the next waits for a new deck, and the
        # shoe, unloaded, reports itself empty with 50 cards of its deck never seen.
        run.command("open_table", "supervisor")
        run.command("deck_ready")
        run.command("place_bet", box=1, wager="versus_croupier", amount=10)
        run.command("close_bets")
        for c in ("2h", "3h"):
            run.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c), face_up=False))
        run.command("void_round", "supervisor", reason="the croupier dropped the deck")
        run.command("next_round")
        assert run.table.state == "shuffling" and run.table.gate.may_open_round()
        run.device(ev.Empty(device="shoe", ts=0.1))
    assert run.table.state == "shuffling" and run.table.round.round_id == 2 - (
        run.table.mode.value == "shuffler")


def deck_made_ready(run: TableRunner) -> None:
    """The round's deck is ready, the mode's way: the shuffle done, or the croupier's word."""
    if run.table.mode.value == "shuffler":
        run.device(ev.ShuffleDone(device="shuffler", ts=0.2, count=51))
    else:
        run.command("deck_ready")


def kinds(journal: Journal, since: int) -> list[str]:
    return [r.payload.get("kind") for r in journal.records(since=since)
            if isinstance(r.payload, dict)]


@pytest.mark.parametrize("mode", ("shoe", "shuffler"))
def test_under_stop_the_ready_deck_waits_in_shuffling_until_the_clear(tmp_path, mode):
    with Journal.open(tmp_path / "journal.db", "T1") as journal:
        run = TableRunner(build(mode, "stop"), journal)
        alarm_in_shuffling(run)
        assert not run.table.gate.may_open_round()
        head = journal.head()[0]
        deck_made_ready(run)
        assert run.table.state == "shuffling"
        assert "integrity_stop" in kinds(journal, head)
        with pytest.raises(TablectlError, match="cannot place a bet while the table is in "
                                                "shuffling"):
            run.command("place_bet", box=1, wager="versus_croupier", amount=10)
        with pytest.raises(TablectlError, match="integrity"):
            run.command("clear_integrity", "supervisor", supervisor="")
        assert run.table.state == "shuffling"
        run.command("clear_integrity", "supervisor", supervisor="S. Lam")
        assert run.table.state == "bets_open"
        run.command("place_bet", box=1, wager="versus_croupier", amount=10)
        assert journal.verify().ok


@pytest.mark.parametrize("mode", ("shoe", "shuffler"))
def test_under_warn_the_ready_deck_opens_betting_at_once(tmp_path, mode):
    with Journal.open(tmp_path / "journal.db", "T1") as journal:
        run = TableRunner(build(mode, "warn"), journal)
        alarm_in_shuffling(run)
        assert "integrity_alarm" in kinds(journal, 0)
        head = journal.head()[0]
        deck_made_ready(run)
        assert run.table.state == "bets_open"
        assert "integrity_stop" not in kinds(journal, head)


def test_a_shoe_held_by_the_stop_is_held_again_by_a_second_deck_ready_and_after_a_restart(
        tmp_path):
    """The croupier declaring the deck ready again (a deck put in the shoe anew) does not get
    past the stop; a restart rebuilds the round held in shuffling, and the clear opens it."""
    path = tmp_path / "journal.db"
    with Journal.open(path, "T1") as journal:
        run = TableRunner(build("shoe", "stop"), journal)
        alarm_in_shuffling(run)
        deck_made_ready(run)
        deck_made_ready(run)
        assert run.table.state == "shuffling"
        assert kinds(journal, 0).count("integrity_stop") == 2
    with Journal.open(path, "T1") as journal:
        run = TableRunner(build("shoe", "stop"), journal)
        run.recover()
        assert run.table.state == "shuffling" and not run.table.gate.may_open_round()
        run.device(ev.LinkUp(device="shoe", ts=0.0, identity=ev.DeviceIdentity(
            "shoe", "sim", "R1", "0002", "1.0", "cd" * 16, True)))
        run.command("clear_integrity", "supervisor", supervisor="S. Lam")
        assert run.table.state == "bets_open" and run.table.round.round_id == 2
