"""A device whose firmware is not the approved one is not linked (`firmware_hash` of its
section, docs/protocol.md 3.2): the scriptable device of tests/test_link.py, over a real
pseudo-terminal through the real pyserial path, gives another hash, none, or the right one."""
import asyncio

import pytest
import structlog

from drivers.factory import open_driver
from drivers.protocol import messages as m
from drivers.spec import DeviceSpec
from test_link import FAST, Peer, link_path, next_event, run  # noqa: F401

APPROVED = bytes(range(32))
OTHER = bytes(range(1, 33))


class FirmwarePeer(Peer):
    """The scriptable device with a firmware hash of the test's choosing."""

    def __init__(self, *a, firmware_hash=APPROVED, **kw):
        super().__init__(*a, **kw)
        self.firmware_hash = firmware_hash

    def hello_info(self, boot=False, resumed=False):
        info = super().hello_info(boot, resumed)
        return m.HelloInfo(info.protocol, info.device_class, info.flags, info.units,
                           info.vendor, info.model, info.serial, info.firmware_version,
                           self.firmware_hash)


@pytest.mark.parametrize("given", [OTHER, b""], ids=["another", "none"])
def test_a_device_with_other_firmware_is_not_linked(link_path, given):
    async def main():
        peer = FirmwarePeer(link_path, "shoe", firmware_hash=given)
        peer.plug()
        q = asyncio.Queue()
        spec = DeviceSpec(id="shoe", device_class="shoe", port=link_path,
                          firmware_hash=APPROVED.hex(), **FAST)
        with structlog.testing.capture_logs() as logs:
            drv = open_driver(spec, q)
            # Asked twice (refused, backed off, asked again): never up.
            while sum(isinstance(msg, m.Hello) for _, msg in peer.received) < 2:
                await asyncio.sleep(0.05)
            assert q.empty() and not drv.is_up
            problem = drv.problem
            await drv.close()
        peer.unplug()
        assert problem is not None
        assert "'shoe'" in problem or "shoe" in problem
        assert (given.hex() if given else "no firmware hash") in problem, problem
        assert APPROVED.hex() in problem, problem
        assert "install the approved firmware" in problem, problem
        assert "firmware_hash" in problem and "supervisor" in problem, problem
        refused = [e for e in logs if e["event"] == "device refused"]
        assert refused and refused[0]["problem"] == problem
    run(main())


def test_the_approved_firmware_is_linked(link_path):
    async def main():
        peer = FirmwarePeer(link_path, "shoe", firmware_hash=APPROVED)
        peer.plug()
        q = asyncio.Queue()
        spec = DeviceSpec(id="shoe", device_class="shoe", port=link_path,
                          firmware_hash=APPROVED.hex().upper(), **FAST)
        drv = open_driver(spec, q)
        up, _ = await next_event(q, "link_up")
        assert up.identity.firmware_hash == APPROVED.hex() and drv.problem is None
        await drv.close()
        peer.unplug()
    run(main())


def test_an_approved_hash_that_is_not_hex_is_refused_by_the_spec():
    from controller.errors import TablectlError
    with pytest.raises(TablectlError, match="firmware_hash"):
        DeviceSpec(id="shoe", device_class="shoe", port="/dev/null", firmware_hash="xyz")
