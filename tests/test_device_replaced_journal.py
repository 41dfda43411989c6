"""A device that came back as another unit is an alarm in the journal, as a device's condition
and its link are: a regulator reading the journal's alarms (``tablectl journal show``, the
``alarm`` records) finds the spare put in beside the jams and the links lost. It was journaled
as ``table``, among the bets and the cards."""
from controller.cli import main
from drivers import events as ev

from table_helpers import shuffler_runner


def ident(serial):
    return ev.DeviceIdentity(device_class="shuffler", vendor="v", model="m", serial=serial,
                             firmware_version="1", firmware_hash="aa11", recognises_cards=True)


def replaced(tmp_path):
    run = shuffler_runner(tmp_path, "q-poker")
    run.command("open_table", role="supervisor")
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident("S1")))
    run.device(ev.LinkLost(device="shuffler", ts=0.0, reason="port closed"))
    run.device(ev.LinkRestored(device="shuffler", ts=0.0, identity=ident("S2"), resumed=False))
    return run


def test_device_replaced_is_journaled_as_an_alarm_like_the_link_and_the_condition(tmp_path):
    run = replaced(tmp_path)
    recs = [r for r in run.journal.records() if isinstance(r.payload, dict)
            and r.payload.get("kind") in ("device_link", "device_replaced")]
    assert [(r.kind, r.payload["kind"], r.source) for r in recs] == [
        ("alarm", "device_link", "shuffler"), ("alarm", "device_link", "shuffler"),
        ("alarm", "device_replaced", "shuffler"), ("alarm", "device_link", "shuffler")]
    [rec] = [r for r in recs if r.payload["kind"] == "device_replaced"]
    assert (rec.payload["was"]["serial"], rec.payload["now"]["serial"]) == ("S1", "S2")


def test_journal_show_lists_it_as_an_alarm_with_both_units(tmp_path, capsys):
    run = replaced(tmp_path)
    [rec] = [r for r in run.journal.records() if isinstance(r.payload, dict)
             and r.payload.get("kind") == "device_replaced"]
    run.journal.close()
    assert main(["journal", "show", str(rec.round_id), "--open-round",
                 "--journal", str(tmp_path / "journal.db")]) == 0
    [line] = [ln for ln in capsys.readouterr().out.splitlines() if "device_replaced" in ln]
    assert line.split()[3] == "alarm"
    assert "was serial S1" in line and "now serial S2" in line


def test_a_unit_swapped_is_logged_as_a_warning_like_a_device_condition():
    """journald shows warnings to the operator (priority 4): a device that came back as
    another unit is one, as a jam or a lost link is; a round opening is not."""
    from controller.service import public_log_level
    assert public_log_level("device_replaced") == "warning"
    assert public_log_level("device_condition") == "warning"
    assert public_log_level("round_open") == "info"
