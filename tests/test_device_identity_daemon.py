"""Another unit on the same port, through the real daemon (docs/protocol.md 3.4): two simulated
shufflers of different serial numbers take turns behind one stable port name. The spare put in
while the table waits for bets is published as a replacement, held for the supervisor, and the
round's deck is shuffled again by it once accepted; the first unit put back while the
controller is down is compared with the identity last journaled (the spare's) when it links."""
import signal

import pytest

from controller.journal import Journal
from controller.rig import Rig

pytestmark = pytest.mark.hil


def replaced(e):
    return e["kind"] == "device_replaced" and e["device"] == "shuffler"


def test_another_shuffler_on_the_port_waits_for_the_supervisor(tmp_path):
    with Rig(tmp_path, "q-poker", "shuffler") as rig:
        rig.start_devices()
        first = rig.devices["shuffler"]
        rig.start_controller()
        rig.wait_links()
        rig.must("open_table", "supervisor")
        rig.wait_state("bets_open", timeout=30)
        mark = rig.mark()
        port = first.port                      # the stable name the daemon opens
        first.disconnect()
        rig.wait_event(lambda e: e["kind"] == "device_link" and e["device"] == "shuffler"
                       and e["link"] == "lost", since=mark)
        spare = rig.sim.add("shuffler", name="spare", link=port, serial="SIM-SHF-SPARE")
        rep = rig.wait_event(replaced, since=mark, timeout=30)
        assert (rep["was"]["serial"], rep["now"]["serial"]) == (first.serial, "SIM-SHF-SPARE")
        view = rig.view()
        assert view["state"] == "malfunction"
        assert "replaced" in view["conditions"]["shuffler"]
        assert view["devices"]["shuffler"]["serial"] == "SIM-SHF-SPARE"
        cleared = rig.mark()
        rig.must("clear_malfunction", "supervisor")
        # The spare holds no deck the round was shuffled for: it shuffles one first.
        rig.wait_event(lambda e: e["kind"] == "shuffle" and e.get("status") == "done",
                       since=cleared, timeout=30)
        rig.wait_state("bets_open", timeout=30)
        assert "replaced" not in rig.view()["conditions"].get("shuffler", [])

        # The first unit put back while the controller is down: at its link-up the controller
        # compares it with the identity it last journaled for the shuffler, the spare's.
        rig.kill(signal.SIGTERM)
        spare.disconnect()
        first.reconnect()
        rig.start_controller()
        # (It may link before the event stream is subscribed to: the view and the journal
        # tell.)
        assert rig.wait_state("malfunction", timeout=30) == "malfunction"
        view = rig.view()
        assert "replaced" in view["conditions"]["shuffler"]
        assert view["devices"]["shuffler"]["serial"] == first.serial

    journal = Journal.open(tmp_path / "journal.db", "bench-1")
    recs = [r.payload for r in journal.records(kinds=["alarm"])
            if r.payload.get("kind") == "device_replaced"]
    assert [(p["was"]["serial"], p["now"]["serial"]) for p in recs] == [
        (first.serial, "SIM-SHF-SPARE"), ("SIM-SHF-SPARE", first.serial)]
