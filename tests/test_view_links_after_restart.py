"""The table's view says a device is linked only once it is linked to the running controller.

After a restart the table is rebuilt from the journal, which holds the links the earlier
process had. The new process has opened no port yet: the view (``/api/table``, the control
socket) must not show those devices as ``up`` until each links again; it shows them
``connecting``. A device whose link was lost stays ``lost``.
"""
import signal

import pytest

from controller.journal import Journal
from controller.rig import Rig
from drivers import events as ev
from table_helpers import shuffler_runner

SHUFFLER = ev.DeviceIdentity("shuffler", "sim", "S1", "0001", "1.0", "ab" * 16, True)
SHOE = ev.DeviceIdentity("shoe", "sim", "R1", "0002", "1.0", "cd" * 16, True)


NEVER = {"dice": "connecting", "sensors": "connecting"}   # configured, never linked


def links(table):
    return {d: v["link"] for d, v in table.public_view()["devices"].items()}


def test_a_restart_shows_the_devices_connecting_until_each_links_again(tmp_path):
    run = shuffler_runner(tmp_path / "j.db", "q-poker")
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.device(ev.LinkLost(device="shoe", ts=0.0, reason="unplugged"))
    assert links(run.table) == {"shuffler": "up", "shoe": "lost"}
    run.journal.close()

    again = shuffler_runner(tmp_path / "j.db", "q-poker")
    again.recover()
    # (the dice and the box sensors, configured, never linked: connecting too)
    assert links(again.table) == {"shuffler": "connecting", "shoe": "lost", **NEVER}
    again.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    assert links(again.table) == {"shuffler": "up", "shoe": "lost", **NEVER}
    again.journal.close()

    # Rebuilt once more, the journal replays to the same: the earlier process's links, then
    # this process's restart (a fresh one clears them again).
    third = shuffler_runner(tmp_path / "j.db", "q-poker")
    third.recover()
    assert links(third.table) == {"shuffler": "connecting", "shoe": "lost", **NEVER}
    third.journal.close()


@pytest.mark.hil
def test_the_daemon_restarted_with_a_device_unplugged_does_not_show_it_linked(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shoe", seed=3)
    rig.start_devices()
    try:
        rig.start_controller()
        rig.wait_links()
        assert rig.view()["devices"]["shoe"]["link"] == "up"
        rig.kill(signal.SIGKILL)
        rig.devices["shoe"].disconnect()        # its port is gone while the daemon is down
        rig.start_controller()
        assert rig.view()["devices"]["shoe"]["link"] == "connecting"
        rig.devices["shoe"].reconnect()
        rig.wait_links()
        assert rig.view()["devices"]["shoe"]["link"] == "up"
        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
    finally:
        rig.stop()


def test_the_health_of_a_device_with_no_driver_agrees_with_the_view(tmp_path):
    """With no driver of the running process behind a device (a device a round in play keeps
    from the configuration it was played under), the health says its link as the view does:
    connecting after a restart, never up from the earlier process's link."""
    from controller.api.health import device_health

    run = shuffler_runner(tmp_path / "j.db", "q-poker")
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.device(ev.LinkLost(device="shoe", ts=0.0, reason="unplugged"))
    run.journal.close()
    again = shuffler_runner(tmp_path / "j.db", "q-poker")
    again.recover()
    health = {d["device"]: d["link"] for d in device_health(again.table)}
    # (the table's other configured devices never linked: connecting in both)
    assert health == links(again.table) == {"shuffler": "connecting", "shoe": "lost", **NEVER}
    again.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    assert {d["device"]: d["link"] for d in device_health(again.table)}["shuffler"] == "up"
    again.journal.close()
