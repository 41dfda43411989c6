"""Helpers for the tests that run the daemon's service in their own event loop."""
import asyncio

from controller.config import parse_text
from controller.sdnotify import Notifier
from controller.service import Service

def journal_only(journal, table="T1"):
    """table.toml for a Q Poker table with no device, journaled at ``journal``."""
    return JOURNAL_ONLY.format(table=table, journal=journal)


JOURNAL_ONLY = """
[table]
id = "{table}"
game = "q-poker"
mode = "shoe"
boxes = 7

[journal]
path = "{journal}"
"""

# A Q Poker table dealt from a shuffler on the serial port {port}, journaled at {journal}.
SERIAL_SHUFFLER = """
[table]
id = "sf-1"
game = "q-poker"
mode = "shuffler"
boxes = 7

[devices.shuffler]
class = "shuffler"
transport = "serial"
port = "{port}"

[journal]
path = "{journal}"
"""


async def start_with_control(cfg, control):
    """Start the service with its control socket at ``control`` and wait until the socket is
    there: (the service, its task)."""
    svc = Service(cfg, control=control, notifier=Notifier(None), open_panel=False)
    task = asyncio.create_task(svc.run())
    while svc.runner is None or not control.exists():
        await asyncio.sleep(0.01)
    return svc, task


async def until(pred, timeout=20.0):
    """Wait until ``pred()`` holds, looking every 10 ms; the ceiling is for a loaded machine,
    a condition that holds comes long before it."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not pred():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


def with_serial_shuffler(tmp_path, body):
    """Run the service of a SERIAL_SHUFFLER table in this test's event loop, its shuffler the
    scriptable device of tests/test_link.py on a real pseudo-terminal; once the shuffler's
    link is up, await ``body(svc, peer)``, then stop the service and unplug the device."""
    from test_link import Peer

    port = str(tmp_path / "tty-shuffler")
    cfg = parse_text(SERIAL_SHUFFLER.format(port=port, journal=tmp_path / "j.db"))

    async def main():
        peer = Peer(port, "shuffler")
        peer.plug()
        svc = Service(cfg, notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        try:
            await until(lambda: "shuffler" in svc.drivers and svc.drivers["shuffler"].is_up,
                        timeout=15)
            await body(svc, peer)
        finally:
            svc.stop()
            await asyncio.wait_for(task, 30)
            peer.unplug()
    asyncio.run(asyncio.wait_for(main(), 60))


async def linked(svc, *devices):
    """``devices`` (ids of the service's table) link: their link-up in the service's input
    queue, as a driver puts it there, each awaited until the table has taken it. Every start
    is a restart, and no round opens while a device it needs has not linked since."""
    from drivers import events as ev

    await until(lambda: svc.runner is not None)
    classes = svc.runner.table.devices
    for n, device in enumerate(devices):
        cls = classes.get(device, device)
        svc.queue.put_nowait(ev.LinkUp(device=device, ts=0.0, identity=ev.DeviceIdentity(
            cls, "sim", f"SIM-{cls.upper()}", f"{n:04d}", "1.0", "ab" * 16,
            cls in ("shoe", "shuffler"))))
    await until(lambda: all(svc.runner.table.link_of(d) == "up" for d in devices))
