"""An opening of a URL port (pyserial's ``socket://``) cancelled while it is still in its
thread, then the same transport opened again: the abandoned opening ends in its thread all the
same, and must neither take the handle of the new opening nor release it. A TCP server stands
for the device's serial-to-Ethernet converter: it counts the connections it holds open, and
keeps each opening waiting in its thread until the test lets it in (its queue of connections
not yet accepted is full, so the kernel retries the connection a moment later)."""
import asyncio
import socket
import threading
import time

from drivers.transport.serialport import SerialTransport


def _closed(conn):
    try:
        while conn.recv(4096):
            pass
    except BlockingIOError:
        return False            # nothing more to read, and no end: open
    except OSError:
        return True             # reset
    return True                 # the end of the stream: the host closed it


class Converter:
    """A TCP port whose queue is full until :meth:`let_in`; then it accepts every connection
    and says which are still open."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(0)                 # one connection waiting fills the queue
        self.url = f"socket://127.0.0.1:{self.sock.getsockname()[1]}"
        self.filler = socket.create_connection(self.sock.getsockname(), timeout=10)
        self.conns = []

    def let_in(self):
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            conn.setblocking(False)
            if peer != self.filler.getsockname():
                self.conns.append(conn)

    def open_connections(self):
        """How many connections the host has not closed (what it sent is read and dropped)."""
        return sum(1 for c in self.conns if not _closed(c))

    def close(self):
        self.sock.close()
        self.filler.close()
        for c in self.conns:
            c.close()


def test_a_reopen_after_a_cancelled_opening_keeps_one_connection_and_releases_it():
    conv = Converter()

    async def main():
        port = SerialTransport(conv.url)
        first = asyncio.create_task(port.open())
        for _ in range(3):
            await asyncio.sleep(0)              # the opening is in its thread, held there
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        second = asyncio.create_task(port.open())
        for _ in range(3):
            await asyncio.sleep(0)
        # Let in while the event loop is busy a moment (a round's work): the openings in
        # their threads end before the loop hears of either.
        conv.let_in()
        deadline = time.monotonic() + 10
        while not conv.conns and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)
        await second
        try:
            async with asyncio.timeout(20):
                while len(conv.conns) < 2:      # the reopening connected too
                    await asyncio.sleep(0.01)
            assert port.is_open
            await port.write(b"\x00")           # the reopened port holds its connection
            assert conv.open_connections() == 1
        finally:
            await port.close()
        async with asyncio.timeout(10):         # and close() lets it go: none is left
            while conv.open_connections():
                await asyncio.sleep(0.01)

    try:
        asyncio.run(main())
    finally:
        conv.close()


def test_a_reopen_while_a_close_runs_in_its_thread_keeps_one_connection():
    # The close waits in its thread (the reader thread to end, then the release); an opening
    # meanwhile must not have its handle released by that close, nor its queue taken away,
    # and the closed connection must be let go all the same.
    conv = Converter()
    conv.let_in()

    async def main():
        port = SerialTransport(conv.url)
        await port.open()
        async with asyncio.timeout(20):
            while len(conv.conns) < 1:
                await asyncio.sleep(0.01)
        closing = asyncio.create_task(port.close())
        await asyncio.sleep(0)                  # the close is in its thread
        await port.open()
        await closing
        try:
            async with asyncio.timeout(20):
                while len(conv.conns) < 2:      # the reopening connected
                    await asyncio.sleep(0.01)
            assert port.is_open
            await port.write(b"\x00")           # the reopened port holds its connection
            async with asyncio.timeout(20):     # and the first one was let go
                while conv.open_connections() != 1:
                    await asyncio.sleep(0.01)
            conv.conns[1].send(b"\x01")        # and it reads what the device sends
            async with asyncio.timeout(20):
                assert await port.read() == b"\x01"
        finally:
            await port.close()
        async with asyncio.timeout(10):
            while conv.open_connections():
                await asyncio.sleep(0.01)

    try:
        asyncio.run(main())
    finally:
        conv.close()
