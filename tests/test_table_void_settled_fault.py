"""A controller fault in confirm_result after the round was paid: the round stays settled and
paid, never voided by the fault (the journal would say both), as a fault in round_complete."""
import pytest

from controller.errors import TablectlError
from controller.table.machine import Table as Machine

from test_table_void_settled import GAMES, settled


@pytest.mark.parametrize("game", GAMES)
def test_a_fault_after_the_payment_does_not_void_the_paid_round(monkeypatch, tmp_path, game):
    run = settled(tmp_path, game)

    release, calls = Machine._release_alarms, []

    def broken(self):
        # a bug on the first call, the one right after the payment
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("bug after the payment")
        release(self)
    monkeypatch.setattr(Machine, "_release_alarms", broken)
    run.command("confirm_result")
    assert run.table.state == "malfunction"
    assert run.table.round.paid and run.table.round.void is None
    closes = [c.payload["outcome"] for c in run.journal.records(kinds=["round_close"])]
    assert closes == ["settled"]
    with pytest.raises(TablectlError, match="round 1 was settled and paid"):
        run.command("void_round", "supervisor", reason="test")
    monkeypatch.undo()
    run.command("clear_malfunction", "supervisor")
    assert run.table.round.round_id == 2
