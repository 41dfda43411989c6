"""The table's view lists the devices of the configuration in force, not every one the journal knows.

A device removed from table.toml between two runs of the controller is still in the journal
(its links, its identity, its conditions), so the rebuilt table knew it and showed it
``connecting`` for good, and a link it had lost could stop every next round. A round in play
at the restart keeps the configuration it was played under, its devices included; the removed
device leaves the view (and stops nothing) when the new configuration takes effect: at the
next round, or at once when no round is in play.
"""
import signal

import pytest

from controller.config import parse_text
from controller.journal import Journal
from controller.panel import Light
from controller.rig import Rig
from controller.rules import get_game
from controller.rules.cards import Card
from controller.table import Table
from controller.table.runner import TableRunner
from controller.tower import tower_light
from drivers import events as ev

SHOE = ev.DeviceIdentity("shoe", "sim", "R1", "0002", "1.0", "cd" * 16, True)
SPARE = ev.DeviceIdentity("shoe", "sim", "R1", "0003", "1.0", "cd" * 16, True)
SHUFFLER = ev.DeviceIdentity("shuffler", "sim", "S1", "0001", "1.0", "ab" * 16, True)


def runner(path, devices):
    t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices=devices)
    return TableRunner(t, Journal.open(path / "journal.db", "T1"))


def shown(table):
    view = table.public_view()
    return {d: v["link"] for d, v in view["devices"].items()}, view["conditions"]


def test_a_device_removed_while_no_round_is_in_play_leaves_the_view_at_once(tmp_path):
    run = runner(tmp_path, {"shoe": "shoe", "shuffler": "shuffler"})
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    run.device(ev.LinkLost(device="shuffler", ts=0.0, reason="unplugged"))
    assert shown(run.table) == ({"shoe": "up", "shuffler": "lost"},
                                {"shuffler": ["link_lost"]})
    run.journal.close()

    again = runner(tmp_path, {"shoe": "shoe"})
    again.recover()
    assert shown(again.table) == ({"shoe": "connecting"}, {})
    again.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    assert shown(again.table) == ({"shoe": "up"}, {})
    again.journal.close()


def test_a_lost_shoe_replaced_under_another_name_stops_no_round(tmp_path):
    """The shoe lost its link and was taken out of table.toml; a spare is configured as
    ``shoe-2``. The old one's lost link (its id is its class) stopped the table for good:
    nothing would ever link as ``shoe`` again to clear it."""
    run = runner(tmp_path, {"shoe": "shoe"})
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.device(ev.LinkLost(device="shoe", ts=0.0, reason="unplugged"))
    run.journal.close()

    again = runner(tmp_path, {"shoe-2": "shoe"})
    again.recover()
    again.device(ev.LinkUp(device="shoe-2", ts=0.0, identity=SPARE))
    t = again.table
    assert shown(t) == ({"shoe-2": "up"}, {})
    assert t.blocking_conditions() == {}
    again.command("open_table", role="supervisor")
    again.command("deck_ready")
    assert t.state == "bets_open" and tower_light(t) is Light.READY
    again.journal.close()


# --- a round in play keeps its configuration ----------------------------------------------

TABLE = """
[table]
id = "T1"
game = "q-poker"
mode = "shoe"
boxes = 7

{devices}
[journal]
path = "{journal}"
"""
DEVICE = '[devices.{id}]\nclass = "shoe"\ntransport = "serial"\nport = "/dev/tty-{id}"\n\n'


def as_the_service_builds_it(tmp_path, *ids):
    """The runner on the test's journal with a table.toml of shoes ``ids``, its settings
    journaled first as the daemon journals them (the round names them; recovery rebuilds it
    under them)."""
    from controller.service import build_table, table_settings

    cfg = parse_text(TABLE.format(devices="".join(DEVICE.format(id=i) for i in ids),
                                  journal=tmp_path / "j.db"))
    journal = Journal.open(tmp_path / "j.db", cfg.table_id)
    settings = table_settings(cfg)
    config = journal.append("config", {"table": settings}, source="service")
    return TableRunner(build_table(cfg.table_id, settings), journal, settings=settings,
                       config_seq=config.seq, build=lambda s: build_table(cfg.table_id, s))


def test_the_round_in_play_keeps_its_devices_and_the_next_round_drops_the_removed_one(tmp_path):
    run = as_the_service_builds_it(tmp_path, "shoe", "shoe-2")
    for device, unit in (("shoe", SHOE), ("shoe-2", SPARE)):
        run.device(ev.LinkUp(device=device, ts=0.0, identity=unit))
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.device(ev.LinkLost(device="shoe-2", ts=0.0, reason="unplugged"))
    assert run.table.state == "malfunction"       # a shoe of the table lost: held
    run.journal.close()

    again = as_the_service_builds_it(tmp_path, "shoe")       # shoe-2 taken out of the file
    report = again.recover()
    assert report["configuration"]["changed"] == ["devices"]
    t = again.table
    # The round in play and the table until the next round: the devices it was played with.
    assert shown(t)[0] == {"shoe": "connecting", "shoe-2": "lost"}
    again.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    again.command("void_round", role="supervisor", reason="shoe-2 taken out of service")
    assert t.state == "round_void"
    assert shown(t)[0] == {"shoe": "up", "shoe-2": "lost"}
    # The next round is the first under the new file: shoe-2's lost link does not stop it
    # (nothing will ever link as shoe-2 to clear it), and it is gone from the view.
    again.command("next_round")
    assert shown(t) == ({"shoe": "up"}, {})
    assert t.blocking_conditions() == {} and tower_light(t) is not Light.MALFUNCTION
    again.journal.close()


@pytest.mark.hil
def test_the_daemon_restarted_without_the_shuffler_in_its_file_does_not_list_it(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shoe", seed=3)
    rig.start_devices()
    try:
        rig.start_controller()
        rig.wait_links()
        assert set(rig.view()["devices"]) == {"shoe", "shuffler"}
        rig.kill(signal.SIGKILL)
        rig.devices.pop("shuffler").disconnect()
        rig.write_config()                      # table.toml without [devices.shuffler]
        rig.start_controller()
        rig.wait_links()
        assert {d: v["link"] for d, v in rig.view()["devices"].items()} == {"shoe": "up"}
        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
    finally:
        rig.stop()
