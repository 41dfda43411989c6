"""After a restart of the real daemon, the bench waits for the new process to reopen its ports.

The table's view rebuilt from the journal shows every device it last saw as linked ("up")
until a link loss is recorded, and a daemon killed with SIGKILL records none: waiting on that
view returned at once, before the restarted process had opened a single port, and a test then
ran on against links still coming up (on a loaded machine, timing out later on). The wait is
for the links of the running process, as its journal records them.
"""
import signal

import pytest

from controller.rig import Rig

pytestmark = pytest.mark.hil


def test_wait_links_after_a_restart_waits_for_the_new_process_to_link(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shoe", seed=3)
    rig.start_devices()
    try:
        rig.start_controller()
        rig.wait_links()
        rig.kill(signal.SIGKILL)
        rig.devices["shoe"].disconnect()        # its port is gone while the daemon is down
        rig.start_controller()
        with pytest.raises(TimeoutError, match="shoe"):
            rig.wait_links(timeout=3)
        rig.devices["shoe"].reconnect()
        rig.wait_links()
        assert rig.view()["devices"]["shoe"]["link"] == "up"
    finally:
        rig.stop()
