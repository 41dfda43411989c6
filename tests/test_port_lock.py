"""A local serial port is opened exclusively (pyserial's ``exclusive=True``: flock): the lock is
the port's open file's, and the kernel drops it only when the last call on that file returns.

Real pyserial over real pseudo-terminals: a write waiting in its thread for room in a full port
(nobody reads the master) must not keep the port locked once close() returned, or the link's
reopening finds its own port "in use"; a port another program holds is named so, with the
process that holds it, and the link opens it by itself once it is free.
"""
import asyncio
import os
import subprocess
import sys
import tty

from drivers.spec import DeviceSpec
from drivers.transport import SerialTransport, TransportError

from test_link import FAST, Peer, next_event, run

# Enough to fill a pseudo-terminal nobody reads (about 20 KB here), so the write waits.
MORE_THAN_A_PTY_HOLDS = 256 * 1024
# The race between a write's thread and the reopening goes either way: enough rounds that
# a close which does not wait for the write fails at least one of them.
ROUNDS = 100


def pty_nobody_reads():
    master, slave = os.openpty()
    tty.setraw(slave)
    return master, slave, os.ttyname(slave)


def test_a_write_waiting_in_its_thread_does_not_keep_the_port_locked_after_close():
    async def one_round():
        master, slave, name = pty_nobody_reads()
        port = SerialTransport(name)
        again = SerialTransport(name)
        await port.open()
        writing = asyncio.create_task(port.write(b"x" * MORE_THAN_A_PTY_HOLDS))
        try:
            await asyncio.sleep(0.02)       # the write fills the pty and waits for room
            await port.close()
            await again.open()              # the link's reopening of the same port
            assert again.is_open
        finally:
            await asyncio.gather(writing, return_exceptions=True)
            await again.close()
            os.close(master)
            os.close(slave)

    async def main():
        for _ in range(ROUNDS):
            await one_round()
    run(main())


HOLDER = ("import serial, sys\n"
          "port = serial.Serial(sys.argv[1], exclusive=True)\n"
          "print('held', flush=True)\n"
          "sys.stdin.read()\n")


def hold(port):
    """Another program that opens ``port`` exclusively and keeps it until its stdin closes."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, port], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "held\n"
    return proc


def release(proc):
    proc.stdin.close()
    proc.wait(20)


def test_a_port_another_program_holds_is_named_in_use_with_the_process():
    async def main():
        master, slave, name = pty_nobody_reads()
        holder = hold(name)
        try:
            port = SerialTransport(name)
            try:
                await port.open()
                raise AssertionError("opened a port another program holds")
            except TransportError as exc:
                text = str(exc)
            assert "in use" in text and "another program" in text
            assert f"process {holder.pid}" in text
            assert f"fuser {name}" in text or f"lsof {name}" in text
            assert "plugged in" not in text     # not the advice for an absent device
        finally:
            release(holder)
            os.close(master)
            os.close(slave)
    run(main())


def test_the_link_opens_a_port_another_program_held_once_it_is_free(tmp_path):
    from drivers.factory import open_driver

    async def main():
        link_path = str(tmp_path / "ttyACME0")
        peer = Peer(link_path, "shoe")
        peer.plug()
        holder = hold(link_path)
        q = asyncio.Queue()
        drv = open_driver(DeviceSpec(id="shoe", device_class="shoe", port=link_path, **FAST), q)
        try:
            async with asyncio.timeout(10):
                while not (drv.problem and "in use" in drv.problem):
                    await asyncio.sleep(0.01)
            assert f"process {holder.pid}" in drv.problem
            assert q.empty()                # not linked while the other program has it
            release(holder)
            up, _ = await next_event(q, "link_up", timeout=15)
            assert up.device == "shoe" and drv.problem is None
        finally:
            if holder.returncode is None:
                release(holder)
            await drv.close()
            peer.unplug()
    run(main())


def test_an_opening_cancelled_in_its_thread_does_not_leave_the_port_locked():
    """Link.close() (the service stopping, a link replaced) cancels an opening that is still
    in its thread: the thread opens the port all the same, and that opening must not be left
    holding the port with no one to close it."""
    async def main():
        master, slave, name = pty_nobody_reads()
        port = SerialTransport(name)
        again = SerialTransport(name)
        try:
            opening = asyncio.create_task(port.open())
            await asyncio.sleep(0)          # the opening is in its thread
            opening.cancel()
            await asyncio.gather(opening, return_exceptions=True)
            await port.close()
            assert not port.is_open
            async with asyncio.timeout(10):     # a ceiling for a loaded machine
                while not again.is_open:
                    try:
                        await again.open()
                    except TransportError:
                        await asyncio.sleep(0.05)
        finally:
            await again.close()
            os.close(master)
            os.close(slave)
    run(main())
