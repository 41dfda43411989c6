"""A device the daemon cannot open, through the real daemon (``tablectl run`` as a process, the
simulator's devices on pseudo-terminals): the shoe's configured port is a path that is not
there, then a directory, then the shoe's pseudo-terminal. The journal holds one
``device_not_opened`` per class of cause (``missing``, ``not_a_port``) once the openings have
failed for the grace (10 s), however often the daemon tries, and ``device_opened`` when the
shoe opens at last; the health showed the problem meanwhile. ``journal show`` and ``rounds``
say them in words, the chain verifies, and a restart on that journal replays past them."""
import os
import signal
import time

import pytest

from controller.cli import main
from controller.journal import Journal
from controller.journal_cli import describe
from controller.rig import Rig
from drivers.link import OPEN_GRACE_S
from drivers.transport import causes
from rig_helpers import times_logged

pytestmark = pytest.mark.hil


def openings(rig):
    with Journal.open(rig.journal_path, readonly=True) as journal:
        return list(journal.records(kinds=["device_not_opened", "device_opened"]))


def tries_logged(rig):
    """How many of the shoe's openings the daemon's log says failed."""
    return times_logged(rig, "device not reachable", "shoe")


def wait_for(rig, n, timeout):
    deadline = time.monotonic() + timeout
    while len(recs := openings(rig)) < n:
        assert time.monotonic() < deadline, f"{n} opening records not journaled: {recs}"
        time.sleep(0.1)
    return recs


def test_a_port_not_opened_is_journaled_per_cause_and_its_opening_at_last(tmp_path, capsys):
    with Rig(tmp_path, "q-poker", "shoe") as rig:
        rig.start_devices()
        shoe = rig.devices["shoe"]
        port = rig.dir / "shoe-port"                      # not there yet
        rig.config_path.write_text(rig.config_path.read_text().replace(
            f'port = "{shoe.port}"', f'port = "{port}"'))
        rig.start_controller()
        # Within the grace: logged at each attempt, not journaled (udev may be at work).
        time.sleep(2)
        assert tries_logged(rig) >= 2 and openings(rig) == []
        [missing] = wait_for(rig, 1, OPEN_GRACE_S + 15)
        port.mkdir()                                      # a directory where the port is
        [_, folder] = wait_for(rig, 2, 15)
        tried = tries_logged(rig)
        while tries_logged(rig) < tried + 1:              # tried again: journaled once
            time.sleep(0.1)
        assert len(openings(rig)) == 2
        port.rmdir()
        os.symlink(shoe.port, port)                       # the shoe at last
        [*_, opened] = wait_for(rig, 3, 15)
        rig.wait_links()
        rig.must("open_table", "supervisor")
        # Started again on the journal that holds them: it replays past them.
        rig.kill(signal.SIGTERM)
        rig.start_controller()
        rig.wait_links()
        assert rig.state() == "shuffling"

    assert [r.kind for r in (missing, folder, opened)] == [
        "device_not_opened", "device_not_opened", "device_opened"]
    for rec in (missing, folder, opened):
        assert rec.source == "service" and rec.round_id is None
        p = rec.payload
        assert (p["device"], p["device_class"], p["port"]) == ("shoe", "shoe", str(port))
        assert "Errno" not in str(p) and "Is a directory" not in str(p)
    assert missing.payload["cause"] == causes.MISSING
    assert missing.payload["failing_s"] >= OPEN_GRACE_S and missing.payload["attempts"] >= 2
    assert missing.payload["way_out"] == causes.WAY_OUT[causes.MISSING]
    assert folder.payload["cause"] == causes.NOT_A_PORT
    assert opened.payload["not_opened"] == folder.seq
    assert opened.payload["attempts"] > folder.payload["attempts"]

    journal = str(rig.journal_path)
    assert main(["journal", "verify", "--journal", journal]) == 0
    capsys.readouterr()
    said = {rec.seq: describe(rec) for rec in (missing, folder, opened)}
    assert f"shoe ({port}) could not be opened for" in said[missing.seq]
    assert "(missing): plug the device in" in said[missing.seq]
    assert "(not_a_port): the port named is a directory" in said[folder.seq]
    assert "opened at last, after" in said[opened.seq]
    assert f"not opened since record {folder.seq}" in said[opened.seq]
    assert main(["journal", "rounds", "--journal", journal]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split(":")[0] for ln in lines if ln.startswith("Device")] == [
        "Device not opened", "Device not opened", "Device opened"]
    text = "\n".join(lines)
    assert f"Device not opened: record {missing.seq} at " in text
    assert said[missing.seq] in text and said[opened.seq] in text
