"""Helpers for the tests that run the daemon's service in their own event loop."""
import asyncio

from controller.sdnotify import Notifier
from controller.service import Service

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
