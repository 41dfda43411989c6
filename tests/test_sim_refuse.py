"""The ``refuse`` fault: a firmware that refuses one host command with a given code, and does
nothing of it (a refusal the simulator's own state would not give)."""
from __future__ import annotations

import pytest

from controller.errors import TablectlError
from firmware_sim.faults import REFUSE_CODES, make_fault
from firmware_sim.models import DiceModel, Refused, ShufflerModel, SimulatorError

LONG = 10_000.0


def shuffled():
    m = ShufflerModel(seed=1, speed=1000)
    m.command("shuffle", 0)
    m.advance(LONG)
    assert m.state == "ready"
    return m


def test_the_next_command_is_refused_once_and_nothing_is_done():
    m = shuffled()
    m.inject(make_fault("refuse", "shuffler", code="jammed"), LONG)
    m.command("status", LONG)                     # status passes by: it waits for a command
    with pytest.raises(Refused) as exc:
        m.command("dispense_hand", LONG, n=3)
    assert exc.value.code == "jammed" and "injected" in exc.value.text
    assert m.state == "ready" and len(m.held) == 52     # no card left the shuffler
    m.command("dispense_hand", LONG, n=3)         # once only: the next one is taken
    assert m.state == "dispensing"


def test_a_refusal_naming_its_command_waits_for_it():
    m = shuffled()
    m.inject(make_fault("refuse", "shuffler", code="busy", action="deck_check"), LONG)
    m.command("dispense_card", LONG)              # another command: taken
    m.advance(2 * LONG)
    with pytest.raises(Refused) as exc:
        m.command("deck_check", 2 * LONG)
    assert exc.value.code == "busy"


def test_a_refused_shake_shakes_nothing():
    m = DiceModel(seed=1, speed=1000)
    m.inject(make_fault("refuse", "dice"), 0)
    with pytest.raises(Refused) as exc:
        m.command("shake", 0)
    assert exc.value.code == "not-ready"
    assert [e.kind for e in m.advance(LONG)] == []      # no shake started, no result
    m.command("shake", LONG)
    assert "dice_result" in [e.kind for e in m.advance(2 * LONG)]


def test_a_reboot_forgets_an_armed_refusal():
    m = shuffled()
    m.inject(make_fault("refuse", "shuffler"), LONG)
    m.reboot(LONG)
    m.command("shuffle", LONG)
    assert m.state == "shuffling"


@pytest.mark.parametrize("args,says", [
    ({"code": "unknown-command"}, "not a refusal a firmware sends; use busy"),
    ({"code": "tired"}, "'tired' is not a refusal"),
    ({"action": 3}, "action = 3 has the wrong type"),
])
def test_bad_arguments_are_named_with_the_way_out(args, says):
    with pytest.raises(TablectlError, match=says):
        make_fault("refuse", "shuffler", **args)


def test_a_command_the_device_lacks_is_named_with_its_commands():
    # Named when the fault is made, so a refusal armed for later fails at once, not when due.
    with pytest.raises(TablectlError, match="a dice has no command 'shuffle'; use shake"):
        make_fault("refuse", "dice", action="shuffle")
    # A fault made without its device class is still checked when it is applied.
    with pytest.raises(SimulatorError, match="a dice has no command 'shuffle'; use shake"):
        DiceModel(seed=1).inject(make_fault("refuse", action="shuffle"), 0)


def test_a_refusal_armed_for_later_with_a_wrong_command_is_refused_at_once():
    from firmware_sim.table import SimulatedTable
    with SimulatedTable(seed=1, speed=1000) as sim:
        dice = sim.add("dice")
        with pytest.raises(TablectlError, match="no command 'dispense_hand'"):
            dice.inject("refuse", action="dispense_hand", at_shake=2)
        assert dice.runtime.schedule.pending() == []          # nothing was armed
        dice.inject("refuse", action="shake", at_shake=1)     # a right one is armed
        [(trigger, fault)] = dice.runtime.schedule.pending()
        assert (str(trigger), fault.args["action"]) == ("at_shake=1", "shake")


def test_only_devices_that_take_commands_can_refuse():
    with pytest.raises(TablectlError, match="does not apply to a shoe"):
        make_fault("refuse", "shoe")
    assert "busy" in REFUSE_CODES and "bad-argument" not in REFUSE_CODES


def test_a_refusal_with_a_count_refuses_that_many_commands_then_takes_the_next():
    m = shuffled()
    m.inject(make_fault("refuse", "shuffler", code="busy", action="status", count=2), LONG)
    for _ in range(2):
        with pytest.raises(Refused) as exc:
            m.command("status", LONG)
        assert exc.value.code == "busy"
    assert [e.kind for e in m.command("status", LONG)] == ["status"]


def test_a_status_report_of_the_firmwares_own_says_its_state_or_the_state_given():
    m = shuffled()
    (own,) = m.inject(make_fault("status_report", "shuffler"), LONG)
    assert own.kind == "status" and own.fields["state"] == "ready"
    # One made earlier and sent late says what the firmware was then, not what it is now.
    (late,) = m.inject(make_fault("status_report", "shuffler", state="idle"), LONG)
    assert late.fields["state"] == "idle" and m.state == "ready"
    assert late.fields["cards"] == own.fields["cards"] == 52
