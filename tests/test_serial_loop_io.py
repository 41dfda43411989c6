"""A local serial port is read and (for short frames) written by the event loop itself, over
a real pseudo-terminal: no reader thread; write_now writes what the port takes without ever
blocking and leaves the rest to the thread's write; the peer's going away is TransportClosed;
a URL port keeps its reader thread and is never written to that way."""
import asyncio
import contextlib
import os
import socket
import threading
import tty

import pytest

from drivers.transport.base import TransportClosed
from drivers.transport.serialport import SerialTransport


@pytest.fixture
def pty():
    """A raw pseudo-terminal: (the device's end, the port name the transport opens)."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    yield master, os.ttyname(slave)
    for fd in (master, slave):
        try:
            os.close(fd)
        except OSError:
            pass                                # a test closed the device's end itself


@pytest.fixture
def tcp_server():
    """A listening TCP socket on localhost: (the socket, its port)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    yield server, server.getsockname()[1]
    server.close()


@contextlib.asynccontextmanager
async def opened(port):
    t = SerialTransport(port)
    await t.open()
    try:
        yield t
    finally:
        await t.close()


def read_all(fd, n, timeout=5.0):
    import select
    got = b""
    while len(got) < n:
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, f"only {len(got)} of {n} bytes arrived"
        got += os.read(fd, 65536)
    return got


def test_write_now_reaches_the_device_at_once(pty):
    master, name = pty

    async def go():
        async with opened(name) as t:
            assert t.write_now(b"\x02ack 1\x03") == 7
            assert read_all(master, 7) == b"\x02ack 1\x03"
        assert t.write_now(b"late") == 0        # closed: nothing is written any more
    asyncio.run(go())


def test_a_full_port_takes_part_and_the_thread_writes_the_rest_in_order(pty):
    master, name = pty

    async def go():
        async with opened(name) as t:
            # The device reads nothing: write_now fills the port's buffer, taking part of a
            # chunk, and then takes nothing, instead of blocking the event loop. (The kernel
            # moves bytes on between a pty's two buffers in its own time, so a call after a
            # short one may still take a few: what it leaves is offered again, in order.)
            sent, rest = b"", b""
            for i in range(10_000):
                chunk = rest or bytes([65 + i % 26]) * 1024
                n = t.write_now(chunk)
                sent += chunk[:n]
                rest = chunk[n:]
                if n == 0:
                    break
            else:
                raise AssertionError("the port never filled")
            # The rest goes through the blocking write; the device reads it all, in order.
            writer = asyncio.create_task(t.write(rest + b"end"))
            got = await asyncio.to_thread(read_all, master, len(sent) + len(rest) + 3)
            await writer
            assert got == sent + rest + b"end"
    asyncio.run(go())


def test_a_socket_url_never_writes_from_the_event_loop(tcp_server):
    server, port = tcp_server

    async def go():
        async with opened(f"socket://127.0.0.1:{port}") as t:
            assert readers() == [f"reader socket://127.0.0.1:{port}"]
            assert t.write_now(b"ack") == 0     # the write loop's thread sends it
            await t.write(b"ack")
    asyncio.run(go())
    conn, _ = server.accept()
    assert conn.recv(16) == b"ack"
    conn.close()


def readers():
    return [t.name for t in threading.enumerate() if t.name.startswith("reader ")]


def test_the_event_loop_reads_a_local_port_and_sees_its_peer_go(pty):
    master, name = pty

    async def go():
        async with opened(name) as t:
            assert readers() == []              # no thread polls the port
            os.write(master, b"\x02card As\x03")
            got = b""
            while len(got) < 9:
                got += await asyncio.wait_for(t.read(), 5)
            assert got == b"\x02card As\x03"
            os.close(master)                    # the device end goes away
            with pytest.raises(TransportClosed):
                while await asyncio.wait_for(t.read(), 5):
                    pass
        assert not t.is_open
    asyncio.run(go())


def test_bytes_go_to_the_sink_in_the_callback_that_read_them(pty):
    """With a sink, the event loop's read hands the bytes over at once (no task between):
    read() then reports only the port's closing; without one, bytes queue for read()."""
    master, name = pty

    async def go():
        t = SerialTransport(name)
        got, where = [], []

        def sink(data):
            got.append(data)
            where.append(asyncio.current_task())     # None: a callback, not a task
        t.deliver_to(sink)
        await t.open()
        try:
            reading = asyncio.ensure_future(t.read())
            os.write(master, b"\x02card As\x03")
            while sum(map(len, got)) < 9:
                await asyncio.sleep(0.01)
            assert b"".join(got) == b"\x02card As\x03" and set(where) == {None}
            assert not reading.done()                # nothing was queued for read()
            t.deliver_to(None)
            os.write(master, b"queued")
            queued = b""
            while len(queued) < 6:
                queued += await asyncio.wait_for(reading if not queued else t.read(), 5)
            assert queued == b"queued" and b"".join(got) == b"\x02card As\x03"
            t.deliver_to(sink)
            os.close(master)
            with pytest.raises(TransportClosed):
                while await asyncio.wait_for(t.read(), 5):
                    pass
        finally:
            await t.close()
    asyncio.run(go())


def test_a_reader_thread_hands_its_bytes_to_the_sink_and_nothing_after_close(tcp_server):
    server, port = tcp_server

    async def go():
        t = SerialTransport(f"socket://127.0.0.1:{port}")
        got = []
        t.deliver_to(got.append)
        await t.open()
        conn, _ = await asyncio.to_thread(server.accept)
        conn.sendall(b"frame one")
        for _ in range(500):
            if sum(map(len, got)) >= 9:
                break
            await asyncio.sleep(0.01)
        assert b"".join(got) == b"frame one"
        await t.close()
        conn.sendall(b"late")                        # after close: never handed over
        await asyncio.sleep(0.2)
        assert b"".join(got) == b"frame one"
        conn.close()
    asyncio.run(go())
