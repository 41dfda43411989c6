"""The rig's wait for a state (controller.rig.Rig.wait_state, which the hardware-in-the-loop
tests and the bench use between rounds) sleeps until a new state change: a change to that
state earlier on the stream, since left, must neither end the wait nor wake it again and
again to ask the daemon."""
import threading
import time

from controller.rig import Rig


def test_an_old_state_change_neither_ends_the_wait_nor_spins_it(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shoe")
    rig.events += [{"kind": "state", "dest": "malfunction"},      # an earlier jam, cleared
                   {"kind": "state", "dest": "bets_open"}]
    table = {"state": "dealing"}
    asked = []

    def state():
        asked.append(time.monotonic())
        return table["state"]
    rig.state = state

    def jam_later():
        time.sleep(0.4)
        table["state"] = "malfunction"
        with rig._cond:
            rig.events.append({"kind": "state", "dest": "malfunction"})
            rig._cond.notify_all()
    threading.Thread(target=jam_later).start()
    t0 = time.monotonic()
    assert rig.wait_state("malfunction", timeout=5.0) == "malfunction"
    assert time.monotonic() - t0 >= 0.35
    # Asked on entry, at most once more on the wait's own 0.5 s timeout, and after the change
    # (an old change made it ask in a loop, thousands of times in 0.4 s).
    assert len(asked) <= 3, len(asked)


def test_a_rig_in_a_relative_folder_names_its_journal_absolutely(tmp_path, monkeypatch):
    """[journal] path must be absolute (docs/configuration.md): `tablectl demo --dir DIR`
    with a relative DIR still writes a configuration the controller takes."""
    monkeypatch.chdir(tmp_path)
    rig = Rig("bench", "q-poker")
    assert rig.journal_path == tmp_path / "bench" / "journal.db"
