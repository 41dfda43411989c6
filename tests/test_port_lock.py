"""A local serial port is opened exclusively (pyserial's ``exclusive=True``: flock): the lock is
the port's open file's, and the kernel drops it only when the last call on that file returns.

Real pyserial over real pseudo-terminals: a write waiting in its thread for room in a full port
(nobody reads the master) must not keep the port locked once close() returned, or the link's
reopening finds its own port "in use".
"""
import asyncio
import os
import tty

from drivers.transport import SerialTransport

from test_link import run

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
