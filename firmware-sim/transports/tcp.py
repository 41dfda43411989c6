"""A simulated device behind a TCP port on 127.0.0.1, for pyserial's ``socket://`` URLs.

It behaves like a serial-to-Ethernet converter: one host at a time (a new connection replaces
the old one), the same byte stream as the serial line. A disconnect closes the listening socket
and the connection; a reconnect listens again on the same port number, so the host's URL stays
the same.
"""
from __future__ import annotations

import asyncio
import socket
from typing import Callable


class TcpPort:
    kind = "tcp"

    def __init__(self, loop: asyncio.AbstractEventLoop, on_data: Callable[[bytes], None],
                 port: int = 0, host: str = "127.0.0.1") -> None:
        self.loop = loop
        self.on_data = on_data
        self.host = host
        self.number = port
        self.server: socket.socket | None = None
        self.client: socket.socket | None = None
        self.dropped_bytes = 0
        self._listen()

    @property
    def port(self) -> str:
        return f"socket://{self.host}:{self.number}"

    @property
    def connected(self) -> bool:
        return self.server is not None

    def _listen(self) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.host, self.number))
        s.listen(4)
        s.setblocking(False)
        self.number = s.getsockname()[1]
        self.server = s
        self.loop.add_reader(s.fileno(), self._accept)

    def _accept(self) -> None:
        try:
            conn, _ = self.server.accept()           # type: ignore[union-attr]
        except (BlockingIOError, OSError):
            return
        self._drop_client()
        conn.setblocking(False)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client = conn
        self.loop.add_reader(conn.fileno(), self._readable)

    def _readable(self) -> None:
        c = self.client
        if c is None:
            return
        try:
            data = c.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop_client()                      # the host hung up
            return
        self.on_data(data)

    def _drop_client(self) -> None:
        if self.client is not None:
            self.loop.remove_reader(self.client.fileno())
            self.client.close()
            self.client = None

    def write(self, data: bytes) -> None:
        if self.client is None:
            self.dropped_bytes += len(data)
            return
        try:
            n = self.client.send(data)
        except BlockingIOError:
            n = 0
        except OSError:
            self._drop_client()
            self.dropped_bytes += len(data)
            return
        self.dropped_bytes += len(data) - n

    def disconnect(self) -> None:
        self._drop_client()
        if self.server is not None:
            self.loop.remove_reader(self.server.fileno())
            self.server.close()
            self.server = None

    def reconnect(self) -> None:
        if self.server is None:
            self._listen()

    def on_reboot(self) -> None:
        pass                    # the converter stays up while the device behind it reboots

    def close(self) -> None:
        self.disconnect()

    def describe(self) -> str:
        return self.port
