"""A controller that stalls (SIGSTOP, a swap storm, an SD card's write stall, a paused VM) longer
than a link's timeout does not blame its devices (docs/protocol.md 3.5): a device that spoke all
along, its frames waiting in the port, keeps its link; one that died meanwhile is still found
lost, over the time the controller ran again. The scriptable device of tests/test_link.py on a
real pseudo-terminal through the real pyserial path; the stall is a blocking call on the event
loop, the device writing its heartbeats into the port all the while."""
import asyncio
import os
import re
import sys
import time

import structlog

from drivers.protocol import messages as m
from test_link import FAST, Peer, link_path, next_event, run  # noqa: F401
from test_link import started as started_with

STALL_S = 4 * FAST["link_timeout_s"]


class Steady(Peer):
    """A device whose heartbeats count one uptime, whether the test's loop sends them or
    the device goes on while that loop is stalled."""

    uptime = 0

    async def _heartbeats(self):
        while True:
            self.beat()
            await asyncio.sleep(0.05)

    def beat(self):
        if not self.silent:
            self.send_now(m.Heartbeat(self.uptime))
        self.uptime += 50

    def stall_controller(self, seconds):
        """Block the event loop (the controller's, here shared with the device's script) for
        ``seconds``, the device writing a heartbeat into the port every 50 ms meanwhile."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.beat()
            time.sleep(0.05)


async def started(link_path):
    peer, drv, q, up = await started_with(link_path)
    peer.__class__ = Steady
    peer._hb_task.cancel()          # Peer's own heartbeats count their uptime apart
    peer._hb_task = asyncio.get_running_loop().create_task(peer._heartbeats())
    await asyncio.sleep(4 * FAST["heartbeat_s"])    # the link's heartbeat loop is running
    return peer, drv, q


async def stalled(peer):
    """Stall the loop once, from a callback of its own, and wait for it to run again."""
    done = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_soon(
        lambda: (peer.stall_controller(STALL_S), done.set_result(None)))
    await done


async def no_loss(q, seconds):
    """No lost link within ``seconds``."""
    try:
        lost, _ = await next_event(q, "link_lost", timeout=seconds)
    except TimeoutError:
        return
    raise AssertionError(f"link declared lost: {lost.reason}")


def test_a_stall_of_the_controller_does_not_lose_a_device_that_spoke_all_along(link_path):
    async def main():
        peer, drv, q = await started(link_path)
        with structlog.testing.capture_logs() as logs:
            for _ in range(3):      # wherever in the heartbeat loop's turn the stall falls
                await stalled(peer)
                await no_loss(q, 2 * FAST["link_timeout_s"])
        assert drv.is_up
        await drv.dispense_card()       # and it serves on
        await drv.close()
        peer.unplug()
        stalls = [e for e in logs if e["event"].startswith("controller stalled")]
        assert len(stalls) == 3, logs   # once a stall, with how long
        assert all(e["stalled_s"] >= STALL_S / 2 for e in stalls), stalls
    run(main())


def test_a_device_that_died_during_the_stall_is_found_lost_after_it(link_path):
    async def main():
        peer, drv, q = await started(link_path)
        peer.silent = True              # it dies as the controller stalls
        await stalled(peer)
        lost, _ = await next_event(q, "link_lost", timeout=STALL_S)
        # its silence is reckoned from the stall's end: one timeout, not the stall's length
        quiet = float(re.search(r"no heartbeat for ([\d.]+) s", lost.reason)[1])
        assert FAST["link_timeout_s"] <= quiet < STALL_S, lost.reason
        peer.silent = False
        await next_event(q, "link_restored")
        await drv.close()
        peer.unplug()
    run(main())


# The device's side of a real stop of the controller's process: the process is stopped and
# continued by a child, which writes the device's heartbeats into the port meanwhile (in the
# stopped process nothing, the device's script included, runs).
STOPPER = """
import os, signal, sys, time
pid, fd, gap, frames = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
os.kill(pid, signal.SIGSTOP)
for frame in frames:
    os.write(fd, bytes.fromhex(frame))
    time.sleep(gap)
os.kill(pid, signal.SIGCONT)
"""


def test_a_process_stopped_and_continued_keeps_a_device_that_spoke_all_along(link_path):
    async def main():
        peer, drv, q = await started(link_path)
        with structlog.testing.capture_logs() as logs:
            for _ in range(2):
                # Its uptime counts on from the script's by a millisecond a beat: the script's
                # beats around the stop, before and after the child's, never go back a second.
                base, beats = peer.uptime, int(STALL_S / 0.05)
                frames = [peer.codec.encode(m.Heartbeat(base + i), 0).hex()
                          for i in range(beats)]
                stopper = await asyncio.create_subprocess_exec(
                    sys.executable, "-c", STOPPER, str(os.getpid()), str(peer.master), "0.05",
                    *frames, pass_fds=(peer.master,))
                await stopper.wait()
                await no_loss(q, 2 * FAST["link_timeout_s"])
        assert drv.is_up
        await drv.dispense_card()
        await drv.close()
        peer.unplug()
        assert [e for e in logs if e["event"].startswith("controller stalled")], logs
    run(main())
