"""The transport interface and the reader-thread plumbing shared by serial and USB."""
from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from typing import Any, Callable

from controller.errors import TablectlError


class TransportError(TablectlError):
    """The device cannot be opened (absent, unplugged, no permission, bad address).
    ``cause`` is its class of cause (drivers.transport.causes: ``missing``, ``denied``,
    ``busy``, ``gone``, ``not_a_port``, ``other``), what the journal may say of it."""

    def __init__(self, text: str, cause: str = "other") -> None:
        super().__init__(text)
        self.cause = cause


class TransportClosed(ConnectionError):
    """The open port went away (unplugged, the peer closed it)."""


class Transport(ABC):
    """Bytes to and from one device. ``name`` is the stable name it is found by again."""

    name: str = ""
    #: How long close() waits for a write still in its thread before it releases the device
    #: (0: it does not wait). A transport whose library must not have a handle released under
    #: a transfer sets its write timeout here.
    close_wait_s: float = 0.0
    #: The driver's logger (bound to its device id), for what a transport gets over by itself.
    log: Any = None

    def __init__(self) -> None:
        self._inbox: asyncio.Queue[bytes | BaseException] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._opened = False
        self._watched: int | None = None     # the descriptor the event loop reads
        self._sink: Callable[[bytes], None] | None = None
        self._writing = threading.Lock()     # held by a blocking write while it runs
        self._abandoned: asyncio.Future | None = None   # an opening cancelled, still running
        self._closing: asyncio.Future | None = None     # a close's release, in its thread

    # -- to implement: blocking calls, run in threads -----------------------------------
    @abstractmethod
    def _open_blocking(self) -> None:
        """Open the device; raise TransportError naming the problem."""

    @abstractmethod
    def _read_blocking(self) -> bytes:
        """Return the bytes available (b"" after a short timeout); raise TransportClosed."""

    @abstractmethod
    def _write_blocking(self, data: bytes) -> None:
        """Write all of ``data``; raise TransportClosed if the device went away."""

    @abstractmethod
    def _close_blocking(self) -> None:
        """Release the device; never raises."""

    def _loop_fd(self) -> int | None:
        """A descriptor the event loop may watch and read without blocking, or None (the
        default): then a thread reads with :meth:`_read_blocking`."""
        return None

    def _read_ready(self) -> bytes:
        """The event loop's read when :meth:`_loop_fd` is readable: the bytes there (b"" on
        a spurious wake-up); raise TransportClosed when the device went away."""
        raise NotImplementedError

    # -- asyncio side --------------------------------------------------------------------
    def deliver_to(self, sink: Callable[[bytes], None] | None) -> None:
        """Hand the bytes read to ``sink`` in the event loop's callback that read them (or
        that took them from the reader thread), instead of queuing them for :meth:`read`,
        which then reports only the port's closing: one hop of the event loop less between a
        frame and its decoding. Set it before :meth:`open`, so that no bytes wait in the
        queue behind the ones handed over. ``None`` queues again."""
        self._sink = sink

    def _deliver(self, data: bytes) -> None:
        if not self._opened:
            return          # read before close() (from the reader thread): goes with the port
        sink = self._sink
        if sink is not None:
            sink(data)
        elif self._inbox is not None:
            self._inbox.put_nowait(data)
    @property
    def is_open(self) -> bool:
        return self._opened

    async def open(self) -> None:
        """Open the device and start reading. Raises TransportError."""
        if self._opened:
            return
        # An opening cancelled before still runs in its thread, and sets the handle this one
        # would: ended and released first, it can neither take this opening's handle (which
        # would stay open, with no one to close it) nor release it. So with a close still
        # releasing the device in its thread (even one whose caller gave up waiting).
        running = [f for f in (self._abandoned, self._closing) if f is not None and not f.done()]
        if running:
            await asyncio.wait(running)
        opening = asyncio.ensure_future(asyncio.to_thread(self._open_blocking))
        try:
            await asyncio.shield(opening)
        except asyncio.CancelledError:
            # The thread opens the device all the same: what it opened is released as it
            # ends, or it stays held (a local port locked) with no one left to close it.
            opening.add_done_callback(self._release_abandoned)
            self._abandoned = opening
            raise
        self._loop = asyncio.get_running_loop()
        self._inbox = asyncio.Queue()
        self._stop.clear()
        self._opened = True
        self._watched = self._loop_fd()
        if self._watched is not None:
            # Read by the event loop itself: a frame wakes one thread, not a reader thread
            # that then wakes the loop (and they no longer take turns at the interpreter).
            self._loop.add_reader(self._watched, self._on_readable)
            return
        self._thread = threading.Thread(target=self._reader, name=f"reader {self.name}",
                                        daemon=True)
        self._thread.start()

    def _release_abandoned(self, opening: asyncio.Future) -> None:
        if opening.cancelled() or opening.exception() is not None or self._opened:
            return
        self._forget_fd()
        self._close_blocking()

    def _on_readable(self) -> None:
        inbox = self._inbox
        assert inbox is not None
        try:
            data = self._read_ready()
        except TransportClosed as exc:
            self._unwatch()
            inbox.put_nowait(exc)
            return
        if data:
            self._deliver(data)

    def _unwatch(self) -> None:
        fd, self._watched = self._watched, None
        if fd is not None and self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(fd)

    def _reader(self) -> None:
        loop, inbox = self._loop, self._inbox
        assert loop is not None and inbox is not None
        while not self._stop.is_set():
            try:
                data = self._read_blocking()
            except BaseException as exc:  # noqa: BLE001 - handed to the event loop
                if not self._stop.is_set():
                    loop.call_soon_threadsafe(inbox.put_nowait, TransportClosed(str(exc)))
                return
            if data:
                loop.call_soon_threadsafe(self._deliver, data)

    async def read(self) -> bytes:
        """Wait for the next bytes. Raises TransportClosed when the device went away."""
        if self._inbox is None:
            raise TransportClosed(f"{self.name} is not open")
        item = await self._inbox.get()
        if isinstance(item, BaseException):
            raise item
        return item

    async def write(self, data: bytes) -> None:
        """Write bytes. Raises TransportClosed when the device went away."""
        if not self._opened:
            raise TransportClosed(f"{self.name} is not open")
        try:
            await asyncio.to_thread(self._write_held, data)
        except TransportClosed:
            raise
        except Exception as exc:  # noqa: BLE001 - any library error means the port is gone
            raise TransportClosed(f"write to {self.name} failed: {exc}") from exc

    def _write_held(self, data: bytes) -> None:
        with self._writing:
            self._write_blocking(data)

    def write_now(self, data: bytes) -> int:
        """Write what the device takes at once without blocking, from the event loop; the
        bytes written (0: none, write the rest with :meth:`write`). By default none: a
        transport whose writes may block writes only through its thread."""
        return 0

    def _forget_fd(self) -> None:
        """Called as close() begins: write_now must not touch the descriptor any more."""

    def _wake_write(self) -> None:
        """Called (in close's thread) before close() waits for a write still in its thread:
        end that write's wait where the library can, so the device is released soon after
        it rather than at its timeout. By default nothing."""

    async def close(self) -> None:
        """Stop reading and release the device; safe to call twice."""
        if not self._opened:
            return
        self._opened = False
        self._unwatch()
        self._forget_fd()
        thread, self._thread = self._thread, None
        self._stop.set()
        # One thread ends the reader and releases the device; an opening waits for it (open),
        # even when this close is cancelled: the thread goes on all the same.
        self._closing = asyncio.ensure_future(asyncio.to_thread(self._release, thread))
        await asyncio.shield(self._closing)
        if not self._opened:            # not opened again meanwhile: its queue is its own
            self._inbox = None

    def _release(self, reader: threading.Thread | None) -> None:
        if reader is not None:
            reader.join(2.0)
        self._close_after_write()

    def _close_after_write(self) -> None:
        # A write cancelled with its task goes on in its thread until its own timeout: the
        # device is released after it (up to close_wait_s), never under it.
        if self.close_wait_s > 0:
            self._wake_write()
        held = self.close_wait_s > 0 and self._writing.acquire(timeout=self.close_wait_s)
        try:
            self._close_blocking()
        finally:
            if held:
                self._writing.release()
