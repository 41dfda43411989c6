"""A device the link cannot open is told to its consumer (``on_opening``, which the daemon
journals as ``device_not_opened``) once its openings have failed for the grace, once per class
of cause however often the link tries again, and told again when it opens at last
(``device_opened``). The real pyserial path on a path that is not there, then a directory,
then a pseudo-terminal; the real pyusb path on a backend whose device the service may not
open, then may."""
import asyncio
import dataclasses
import json
import os

import structlog

from drivers.factory import make_driver
from drivers.spec import DeviceSpec
from drivers.transport import causes
from test_link import FAST, Peer, link_path, next_event, run, until  # noqa: F401
from test_usb_transport_faults import DeniedIntrBackend, HelloDevice
from usb_backends import BULK, INTERRUPT, PID, VID, ep, plugged

GRACE_S = 0.5


def failing_link(spec, q, told):
    """The driver of ``spec``, started, with a short grace and back-off (a test has no
    minutes to wait) and ``told`` getting what on_opening is told, with the log lines of the
    failures logged by then."""
    drv = make_driver(spec, q, on_opening=lambda opened, rec: told.append((opened, rec)))
    drv.link.timing = dataclasses.replace(drv.link.timing, open_grace_s=GRACE_S,
                                          backoff_max_s=0.1)
    drv.start()
    return drv


def failures(logs):
    return sum(e["event"] == "device not reachable" for e in logs)


def test_a_port_not_opened_is_told_once_per_cause_after_the_grace_then_opened(link_path):
    async def main():
        q, told = asyncio.Queue(), []
        spec = DeviceSpec(id="shoe", device_class="shoe", port=link_path, **FAST)
        with structlog.testing.capture_logs() as logs:
            drv = failing_link(spec, q, told)
            await until(lambda: told, 10)
            tried = failures(logs)
            await until(lambda: failures(logs) >= tried + 4)   # tried again and again
            assert len(told) == 1
            os.mkdir(link_path)                   # now a directory where the port was named
            await until(lambda: len(told) == 2, 10)
            tried = failures(logs)
            await until(lambda: failures(logs) >= tried + 3)
            assert len(told) == 2
            os.rmdir(link_path)
            peer = Peer(link_path, "shoe")
            peer.plug()                           # the device at last
            await next_event(q, "link_up")
            await drv.close()
            peer.unplug()
        assert [opened for opened, _ in told] == [False, False, True], told
        (_, missing), (_, folder), (_, opened) = told
        base = {"device": "shoe", "device_class": "shoe", "port": link_path}
        assert {k: missing[k] for k in base} == base and missing["cause"] == causes.MISSING
        assert missing["way_out"] == causes.WAY_OUT[causes.MISSING]
        assert missing["failing_s"] >= GRACE_S and missing["attempts"] >= 2
        assert folder["cause"] == causes.NOT_A_PORT and folder["attempts"] > missing["attempts"]
        assert set(opened) == {*base, "failing_s", "attempts"}
        assert opened["failing_s"] >= folder["failing_s"]
        for _, rec in told:
            # Only the controller's own words: nothing the system or a library answered.
            assert "Errno" not in json.dumps(rec) and "No such file" not in json.dumps(rec)
        # Each told before the link logged it.
        warned = [e for e in logs if e["event"] == "device not opened"]
        assert [e["cause"] for e in warned] == [causes.MISSING, causes.NOT_A_PORT]
    run(main())


def test_a_port_that_opens_within_the_grace_is_never_told(link_path):
    async def main():
        q, told = asyncio.Queue(), []
        drv = failing_link(DeviceSpec(id="shoe", device_class="shoe", port=link_path, **FAST),
                           q, told)
        drv.link.timing = dataclasses.replace(drv.link.timing, open_grace_s=30.0)
        await asyncio.sleep(0.3)                  # a node udev has not given its group yet
        peer = Peer(link_path, "shoe")
        peer.plug()
        await next_event(q, "link_up")
        await drv.close()
        peer.unplug()
        assert told == []
    run(main())


def test_a_usb_device_the_service_may_not_open_is_told_as_denied_then_opened():
    async def main(device):
        q, told = asyncio.Queue(), []
        spec = DeviceSpec(id="boxes", device_class="box-sensors", transport="usb",
                          usb_vendor=VID, usb_product=PID, usb_serial="INTR-1",
                          usb_backend="test_usb_transport_faults:get_denied_backend", **FAST)
        drv = failing_link(spec, q, told)
        try:
            await until(lambda: told, 10)
            device.denied = False               # the udev rule mended and applied
            await next_event(q, "link_up")
        finally:
            await drv.close()
        return told

    hello = HelloDevice("INTR-1", [ep(0x01, BULK), ep(0x82, INTERRUPT)])
    hello.denied = True
    with plugged(DeniedIntrBackend, hello):
        told = asyncio.run(asyncio.wait_for(main(hello), 30))
    assert [opened for opened, _ in told] == [False, True], told
    rec = told[0][1]
    assert rec["cause"] == causes.DENIED and rec["port"] == f"usb:{VID:04x}:{PID:04x}:INTR-1"
    assert "udev rule" in rec["way_out"] and "insufficient" not in json.dumps(rec)


def test_each_port_that_cannot_be_opened_is_named_by_its_class_of_cause(tmp_path):
    from drivers.transport import SerialTransport, TransportError

    (tmp_path / "file").write_text("")
    (tmp_path / "dir").mkdir()
    expected = {"absent": causes.MISSING, "file": causes.NOT_A_PORT, "dir": causes.NOT_A_PORT}

    async def cause(path):
        try:
            await SerialTransport(str(path)).open()
        except TransportError as exc:
            return exc.cause
        raise AssertionError(f"{path} opened")

    for name, want in expected.items():
        assert asyncio.run(cause(tmp_path / name)) == want, name


def test_a_cause_that_comes_back_is_not_told_again_while_the_openings_fail(link_path):
    """A device flapping between two causes (a node that comes and goes while the device
    reboots over and over) is told of each cause once, not at every attempt that finds the
    other one."""
    async def main():
        q, told = asyncio.Queue(), []
        spec = DeviceSpec(id="shoe", device_class="shoe", port=link_path, **FAST)
        with structlog.testing.capture_logs() as logs:
            drv = failing_link(spec, q, told)
            await until(lambda: told, 10)             # missing
            os.mkdir(link_path)
            await until(lambda: len(told) == 2, 10)   # not a port
            for _ in range(2):                        # missing, not a port, again and again
                os.rmdir(link_path)
                tried = failures(logs)
                await until(lambda: failures(logs) >= tried + 2)
                os.mkdir(link_path)
                tried = failures(logs)
                await until(lambda: failures(logs) >= tried + 2)
            os.rmdir(link_path)
            await drv.close()
        assert [rec["cause"] for _, rec in told] == [causes.MISSING, causes.NOT_A_PORT], told
    run(main())
