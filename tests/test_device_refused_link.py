"""A device refused at hello is told to the link's consumer, once per distinct refusal
(``on_refused``, which journals it: docs/journal.md ``device_refused``), before the refusal is
shown or logged. The scriptable device of tests/test_link.py, on a real pseudo-terminal through
the real pyserial path, gives another firmware hash, another class or protocol version."""
import asyncio

import structlog

from drivers.factory import open_driver
from drivers.protocol import messages as m
from drivers.spec import DeviceSpec
from test_firmware_approval_link import APPROVED, OTHER, FirmwarePeer
from test_link import FAST, Peer, link_path, next_event, run, until  # noqa: F401


def hellos(peer):
    return sum(isinstance(msg, m.Hello) for _, msg in peer.received)


def other_firmware(link_path):
    """A shoe plugged in that gives another firmware hash than the one approved for it: the
    device, the consumer's queue and the shoe's section."""
    peer = FirmwarePeer(link_path, "shoe", firmware_hash=OTHER)
    peer.plug()
    spec = DeviceSpec(id="shoe", device_class="shoe", port=link_path,
                      firmware_hash=APPROVED.hex(), **FAST)
    return peer, asyncio.Queue(), spec


def test_a_device_with_other_firmware_is_told_once_however_often_it_answers(link_path):
    async def main():
        peer, q, spec = other_firmware(link_path)
        told = []
        with structlog.testing.capture_logs() as logs:
            def on_refused(refusal):
                # Before the refusal is acted on: not shown on the health, not logged yet.
                told.append((refusal, drv.problem,
                             [e for e in logs if e["event"] == "device refused"]))
            drv = open_driver(spec, q, on_refused=on_refused)
            await until(lambda: hellos(peer) >= 5)
            assert q.empty() and not drv.is_up
            problem = drv.problem
            await drv.close()
        peer.unplug()
        assert len(told) == 1, [t[0] for t in told]
        refusal, shown_then, logged_then = told[0]
        assert shown_then is None and logged_then == []
        assert refusal["device"] == "shoe" and refusal["device_class"] == "shoe"
        assert refusal["reason"] == "firmware_hash"
        assert refusal["text"] == problem
        assert refusal["given"]["firmware_hash"] == OTHER.hex()
        assert refusal["given"]["serial"] == peer.serial_no
        assert refusal["given"]["firmware_version"] == "2.1.0"
        assert refusal["given"]["device_class"] == "shoe"
        assert refusal["expected"] == {"firmware_hash": APPROVED.hex()}
        assert refusal["port"] == link_path
        refused = [e for e in logs if e["event"] == "device refused"]
        assert len(refused) >= 4            # each hello is still logged and refused
    run(main())


def test_a_changed_refusal_is_told_again_and_so_is_one_after_the_device_linked(link_path):
    async def main():
        peer, q, spec = other_firmware(link_path)
        told = []
        drv = open_driver(spec, q, on_refused=told.append)
        await until(lambda: len(told) == 1)
        peer.firmware_hash = b""                      # now it gives none
        await until(lambda: len(told) == 2)
        seen = hellos(peer)
        await until(lambda: hellos(peer) >= seen + 2)
        peer.firmware_hash = OTHER                    # the first one again: changed again
        await until(lambda: len(told) == 3)
        peer.firmware_hash = APPROVED                 # the approved firmware installed
        await next_event(q, "link_up")
        peer.firmware_hash = OTHER                    # and the other put back
        peer.unplug()
        peer.plug()
        await until(lambda: len(told) == 4)
        seen = hellos(peer)
        await until(lambda: hellos(peer) >= seen + 2)
        await drv.close()
        peer.unplug()
        assert [t["given"]["firmware_hash"] for t in told] == [
            OTHER.hex(), "", OTHER.hex(), OTHER.hex()]
        assert "gives no firmware hash" in told[1]["text"]
    run(main())


def test_a_device_of_another_class_or_protocol_is_told_once(link_path):
    async def main():
        told = {}
        for given, protocol in (("shoe", m.PROTOCOL_VERSION),
                                ("shuffler", m.PROTOCOL_VERSION + 1)):
            peer = Peer(link_path, given)
            peer.protocol = protocol
            peer.plug()
            calls = told[protocol] = []
            drv = open_driver(DeviceSpec(id="shuffler", device_class="shuffler",
                                         port=link_path, **FAST), asyncio.Queue(),
                              on_refused=calls.append)
            await until(lambda: hellos(peer) >= 4)
            await drv.close()
            peer.unplug()
        [cls] = told[m.PROTOCOL_VERSION]
        assert cls["reason"] == "device_class" and cls["device_class"] == "shuffler"
        assert cls["given"]["device_class"] == "shoe" and cls["given"]["serial"] == "00421"
        assert cls["expected"] == {"device_class": "shuffler"}
        assert "configured as a shuffler" in cls["text"]
        [proto] = told[m.PROTOCOL_VERSION + 1]
        assert proto["reason"] == "protocol_version"
        assert proto["given"]["protocol"] == m.PROTOCOL_VERSION + 1
        assert proto["expected"] == {"protocol": m.PROTOCOL_VERSION}
    run(main())


def test_a_refusal_that_could_not_be_recorded_still_refuses_and_is_told_again(link_path):
    async def main():
        peer, q, spec = other_firmware(link_path)
        calls = []

        def failing(refusal):
            calls.append(refusal)
            raise RuntimeError("disk full")
        with structlog.testing.capture_logs() as logs:
            drv = open_driver(spec, q, on_refused=failing)
            await until(lambda: len(calls) >= 2)
            assert q.empty() and not drv.is_up
            assert "not the approved" in drv.problem
            await drv.close()
        peer.unplug()
        assert [e for e in logs if e["event"] == "device refused"]
        assert [e for e in logs if e["event"] == "device refusal not recorded"]
    run(main())
