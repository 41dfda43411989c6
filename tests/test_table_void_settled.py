"""A round settled and paid cannot be voided afterwards.

``confirm_result`` says the settlement was paid: the journal holds the settlement and the
round's end. A void after it would make the journal say the round was both paid and void (wins
paid, or bets returned?), so ``void_round`` is refused for that round wherever the table is
afterwards: in ``malfunction`` after a controller fault in ``round_complete``, or after
``close_table`` and a fault, and after a restart. The refusal names the round, says it was
settled and paid and gives the way out; nothing else changes. A round in ``settlement`` (its
settlement computed, not yet confirmed as paid) is still voided, as before.

A journal written when such a void was accepted still starts: its replay takes the void as it
was played (the record of truth), and the round shows both its settlement and its void.

On the runner and a real journal; a restart is a real recovery from the journal.
"""
import pytest

from controller.errors import TablectlError
from controller.journal import Journal
from controller.rules.cards import Card
from controller.rules.base import Remedy, Ruling
from controller.table.machine import ROUND_STATES, Table as Machine
from drivers import events as ev

from table_helpers import (  # noqa: F401 - faulty: a fixture
    asked, bets_closed, deck_checked, faulty, shuffler_runner)

C = Card.parse
GAMES = ["q-poker", "fortune-3-card-poker", "texas-holdem", "super-pan-9"]
REFUSED = r"round 1 was settled and paid.*clear_malfunction"


def fault(run):
    run.device(ev.Malfunction(device="shuffler", ts=5.0, code=7, text="motor"))
    assert run.table.state == "malfunction"


def settled(path, game):
    """A round of ``game`` dealt by the shuffler and settled (table in ``settlement``)."""
    run = shuffler_runner(path, game)
    bets_closed(run, game)
    cards = iter(["As", "Kd", "Ah", "Kc", "2s", "3s", "4s", "5d", "7c", "8h", "9d", "Jc"])
    for _ in range(12):
        if run.table.state not in ("bets_closed", "dealing"):
            break
        action = asked(run)[-1]
        if action == "dispense_card":
            run.device(ev.CardDispensed(device="shuffler", ts=3.0, card=C(next(cards))))
        else:
            n = 2 if game == "super-pan-9" else 3
            run.device(ev.HandDispensed(device="shuffler", ts=3.0,
                                        cards=tuple(C(next(cards)) for _ in range(n))))
    if game == "texas-holdem":
        run.command("holdem_action", seat=run.table._holdem.to_act, action="fold")
    elif game != "super-pan-9":
        run.command("decide", box=2, decision="play", player="ana")
    assert run.table.state == "settlement", run.table.state
    assert run.table.round.settlement is not None
    return run


def paid(path, game):
    run = settled(path, game)
    run.command("confirm_result")
    assert run.table.state == "round_complete"
    return run


def restart(run, path, game):
    run.journal.close()
    again = shuffler_runner(path, game)
    again.recover()
    return again


def refused_void(run):
    """``void_round`` is refused, naming the round, its settlement and the way out; nothing
    but the refusal is journaled, and the round is neither void nor changed."""
    state, summary = run.table.state, run.table.round.summary()
    last = run.journal.last().seq
    with pytest.raises(TablectlError, match=REFUSED) as err:
        run.command("void_round", "supervisor", reason="player disputes the result")
    text = str(err.value)
    assert "settlement" in text and "outside the controller" in text
    after = [r.kind for r in run.journal.records(since=last)]
    assert after == ["command", "refused"], after
    assert run.table.state == state and run.table.round.summary() == summary
    assert run.table.round.void is None


@pytest.mark.parametrize("game", GAMES)
def test_a_round_paid_then_a_controller_fault_is_not_voided(faulty, tmp_path, game):
    run = paid(tmp_path, game)
    fault(run)
    refused_void(run)


@pytest.mark.parametrize("game", ["q-poker", "super-pan-9"])
def test_a_round_paid_then_the_table_closed_and_faulted_is_not_voided(faulty, tmp_path, game):
    run = paid(tmp_path, game)
    run.command("close_table", "supervisor")
    with pytest.raises(TablectlError):
        run.command("void_round", "supervisor", reason="x")     # out_of_service: by state
    fault(run)
    refused_void(run)
    run.command("clear_malfunction", "supervisor")              # the way out named
    assert run.table.state == "out_of_service"


@pytest.mark.parametrize("game", ["q-poker", "texas-holdem"])
def test_a_restart_between_the_payment_and_the_void_still_refuses_it(faulty, tmp_path, game):
    run = paid(tmp_path, game)
    fault(run)
    run = restart(run, tmp_path, game)
    assert run.table.state == "malfunction" and run.table.round.settlement is not None
    refused_void(run)
    run = restart(run, tmp_path, game)              # the refusal replays as a refusal
    assert run.table.state == "malfunction" and run.table.round.void is None


def test_a_restart_then_close_and_fault_still_refuses_it(faulty, tmp_path):
    run = paid(tmp_path, "super-pan-9")
    run = restart(run, tmp_path, "super-pan-9")
    run.command("close_table", "supervisor")
    fault(run)
    refused_void(run)


@pytest.mark.parametrize("game", GAMES)
def test_a_round_settled_but_not_yet_paid_is_still_voided(tmp_path, game):
    """Before ``confirm_result`` nothing is paid: the supervisor may still void the round."""
    run = settled(tmp_path, game)
    run.command("void_round", "supervisor", reason="wrong card read")
    assert run.table.state == "round_void" and run.table.round.void["cause"] == "supervisor"


def test_the_next_round_after_the_clear_is_voided_as_any(faulty, tmp_path):
    run = paid(tmp_path, "q-poker")
    fault(run)
    run.command("clear_malfunction", "supervisor")
    run.device(deck_checked(6.0))
    run.device(ev.ShuffleDone(device="shuffler", ts=6.1, count=52))
    assert run.table.round.round_id == 2
    run.command("void_round", "supervisor", reason="test")
    assert run.table.state == "round_void"


def voided_as_before(run, monkeypatch):
    """The paid round voided by the supervisor as an earlier version took it (the check then
    refused only a round already void, or none)."""
    def old_void(self, reason=""):
        self._require(*ROUND_STATES, "shuffling", "malfunction", what="void the round")
        if self.round is None or self.round.void is not None:
            raise TablectlError("there is no round in play to void")
        self._void(Ruling(Remedy.ROUND_VOID, "supervisor", str(reason)), "supervisor")
        self.void_round()
    with monkeypatch.context() as old:
        old.setattr(Machine, "_cmd_void_round", old_void)
        run.command("void_round", "supervisor", reason="player disputes the result")


def test_a_journal_that_voided_a_paid_round_still_starts(faulty, monkeypatch, tmp_path):
    """Written by a controller that took the void: its replay takes it as it was played, the
    service starts, and the round shows its settlement and its void."""
    game = "q-poker"
    run = paid(tmp_path, game)
    fault(run)
    voided_as_before(run, monkeypatch)
    assert run.table.state == "round_void"
    run = restart(run, tmp_path, game)
    assert run.broken is None
    assert not [r for r in run.journal.records(kinds=["alarm"])
                if r.payload.get("kind") == "replay_divergence"]
    assert run.table.state == "round_void"
    summary = run.table.round.summary()
    assert summary["settlement"] is not None and summary["void"]["cause"] == "supervisor"
    with pytest.raises(TablectlError, match="cannot void the round while the table is in round_void"):
        run.command("void_round", "supervisor", reason="again")
