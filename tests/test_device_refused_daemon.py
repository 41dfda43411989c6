"""A device refused at link-up, through the real daemon (``tablectl run`` as a process, the
simulator's devices on pseudo-terminals): the journal holds a ``device_refused`` record, once
per distinct refusal however often the device answers, written before the pit is told (the
event stream's ``device_refused``); a restart after a SIGKILL recovers past it and may journal
it once again; the journal's readers say it in words and the chain still verifies."""
import signal
import time

import pytest

from controller.cli import main
from controller.journal import Journal
from controller.rig import Rig
from rig_helpers import times_logged

pytestmark = pytest.mark.hil

APPROVED_ELSEWHERE = "ab" * 32          # a hash no simulated firmware gives


def refusals_logged(rig, device):
    """How many times the daemon's log says it refused ``device`` (one per hello answered)."""
    return times_logged(rig, "device refused", device)


def wait_refused(rig, device, at_least, timeout=30.0):
    deadline = time.monotonic() + timeout
    while refusals_logged(rig, device) < at_least:
        assert time.monotonic() < deadline, f"{device} was not refused {at_least} times"
        time.sleep(0.05)


def journaled(tmp_path):
    with Journal.open(tmp_path / "journal.db", readonly=True) as journal:
        return [r for r in journal.records(kinds=["device_refused"])]


def test_a_shuffler_with_unapproved_firmware_is_journaled_once_per_run(tmp_path, capsys):
    from firmware_sim.runtime import firmware_hash

    with Rig(tmp_path, "q-poker", "shoe") as rig:
        rig.start_devices()
        shuffler = rig.devices["shuffler"]
        text = rig.config_path.read_text().replace(
            f'port = "{shuffler.port}"\n',
            f'port = "{shuffler.port}"\nfirmware_hash = "{APPROVED_ELSEWHERE}"\n')
        rig.config_path.write_text(text)
        shuffler.disconnect()                # plugged in once the pit's stream is read
        rig.start_controller()
        mark = rig.mark()
        shuffler.reconnect()
        event = rig.wait_event(lambda e: e["kind"] == "device_refused", since=mark, timeout=30)
        before = refusals_logged(rig, "shuffler")
        wait_refused(rig, "shuffler", before + 3)
        [first] = journaled(tmp_path)
        view = rig.view()
        assert view["devices"].get("shuffler", {}).get("link") != "up"

        # Killed, and started again on the journal that holds it: recovered, and the device
        # still refused is journaled once more (a restart may), then no more.
        rig.kill(signal.SIGKILL)
        rig.start_controller()
        assert rig.view()["state"] == view["state"]
        start = refusals_logged(rig, "shuffler")
        wait_refused(rig, "shuffler", start + 4)
        recs = journaled(tmp_path)
        assert "ok" in rig.command("open_table", "supervisor")   # it takes commands after it

    given = firmware_hash("shuffler").hex()
    assert len(recs) == 2 and recs[0].seq == first.seq
    for rec in recs:
        p = rec.payload
        assert rec.source == "service" and rec.kind == "device_refused"
        assert (p["device"], p["device_class"], p["reason"]) == (
            "shuffler", "shuffler", "firmware_hash")
        assert p["given"]["firmware_hash"] == given
        assert p["given"]["serial"] == shuffler.serial
        assert p["given"]["firmware_version"]
        assert p["expected"] == {"firmware_hash": APPROVED_ELSEWHERE}
        assert "install the approved firmware" in p["text"]
        assert '"shuffler"' in p["text"] and "'shuffler'" not in p["text"]
    # Journaled before the pit heard of it, and what the pit heard is the record.
    assert {k: event[k] for k in first.payload} == first.payload
    assert "snapshot" not in event and "card" not in event

    journal = str(tmp_path / "journal.db")
    assert main(["journal", "verify", "--journal", journal]) == 0
    capsys.readouterr()
    assert main(["journal", "rounds", "--journal", journal]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "Device refused" in ln]
    assert len(lines) == 2, lines
    assert f"record {first.seq}" in lines[0]
    assert "shuffler refused (firmware_hash)" in lines[0]
    assert f"serial {shuffler.serial}" in lines[0] and given in lines[0]
    assert f"not the approved hash {APPROVED_ELSEWHERE}" in lines[0]
    with Journal.open(tmp_path / "journal.db", readonly=True) as j:
        services = [r.payload.get("event") for r in j.records(kinds=["service"])]
        recovered = list(j.records(kinds=["recovery"]))
    assert services[:2] == ["start", "start"] and recovered      # the kill left no stop


def test_devices_on_each_others_ports_are_journaled_as_another_class(tmp_path):
    with Rig(tmp_path, "q-poker", "shoe") as rig:
        rig.start_devices()
        shoe, shuffler = rig.devices["shoe"], rig.devices["shuffler"]
        # The cables crossed: each section's port reaches the other device.
        text = rig.config_path.read_text()
        text = text.replace(f'port = "{shoe.port}"', "port = \"@SHOE@\"").replace(
            f'port = "{shuffler.port}"', f'port = "{shoe.port}"').replace(
            "port = \"@SHOE@\"", f'port = "{shuffler.port}"')
        rig.config_path.write_text(text)
        rig.start_controller()
        for device in ("shoe", "shuffler"):
            wait_refused(rig, device, 4)
        recs = journaled(tmp_path)
        state = rig.view()["state"]
        rig.kill(signal.SIGKILL)
        rig.start_controller()
        for device in ("shoe", "shuffler"):
            wait_refused(rig, device, refusals_logged(rig, device) + 3)
        again = journaled(tmp_path)
        assert rig.view()["state"] == state

    by_device = {r.payload["device"]: r.payload for r in recs}
    assert len(recs) == 2 and set(by_device) == {"shoe", "shuffler"}
    assert by_device["shuffler"]["reason"] == "device_class"
    assert by_device["shuffler"]["given"]["device_class"] == "shoe"
    assert by_device["shuffler"]["given"]["serial"] == shoe.serial
    assert by_device["shuffler"]["expected"] == {"device_class": "shuffler"}
    assert by_device["shoe"]["given"]["device_class"] == "shuffler"
    assert by_device["shuffler"]["port"] == shoe.port
    assert len(again) == 4
