"""The event stream's fan-out: every public table event to every connected client.

The table publishes :class:`~controller.table.secrecy.PublicEvent` only (no face-down card can
be in one); the hub numbers them and hands each to every subscriber's queue. A slow client
never holds the table up: its queue is bounded, and when it overflows the client is told to
reload (``resync``) instead of the table waiting for it.
"""
from __future__ import annotations

import asyncio
import collections
import threading
from typing import Any

from controller.table.secrecy import PublicEvent

QUEUE_SIZE = 1000
RECENT = 300          # events kept for a client that joins in the middle of a round


class Subscription:
    """One client's queue of ``(id, event document)``."""

    def __init__(self, hub: "EventHub") -> None:
        self.hub = hub
        self.queue: asyncio.Queue[tuple[int, dict[str, Any]]] = asyncio.Queue(QUEUE_SIZE)
        self.overflowed = False
        self.ended: str | None = None    # why the API ended it (its token was revoked)

    def _put(self, item: tuple[int, dict[str, Any]]) -> None:
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.overflowed = True

    async def get(self) -> tuple[int, dict[str, Any]]:
        return await self.queue.get()

    def end(self, why: str) -> None:
        """End this client's stream (its token is no longer in force): it is sent nothing
        more but ``why``. What waits in its queue is dropped."""
        self.ended = why
        self.close()
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)  # type: ignore[arg-type]

    def close(self) -> None:
        self.hub._subs.discard(self)


class EventHub:
    """Numbers public events and fans them out. ``publish`` may be called from any thread
    (it hops onto the API's event loop); subscribers live in that loop."""

    def __init__(self) -> None:
        self._subs: set[Subscription] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self.last_id = 0
        self.recent: collections.deque[tuple[int, dict[str, Any]]] = \
            collections.deque(maxlen=RECENT)

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop the subscribers wait in (set when the application starts)."""
        self._loop = loop
        self._thread = threading.get_ident()

    def subscribe(self) -> Subscription:
        sub = Subscription(self)
        self._subs.add(sub)
        return sub

    @property
    def subscribers(self) -> int:
        return len(self._subs)

    def publish(self, event: PublicEvent) -> None:
        """Hand one public event to every subscriber. Only a PublicEvent is accepted: its
        constructor is where the table vets that no face-down card is in it."""
        if not isinstance(event, PublicEvent):
            raise TypeError(f"the hub publishes table PublicEvents only, not {type(event).__name__}")
        doc = event.to_json()
        if self._loop is not None and self._thread != threading.get_ident() \
                and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._fan_out, doc)
        else:
            self._fan_out(doc)

    def replay(self, round_no: int | None, upto: int) -> list[tuple[int, dict[str, Any]]]:
        """The events of round ``round_no`` kept so far (numbers up to ``upto``), so a display
        opened mid-round can list what happened in it."""
        if round_no is None:
            return []
        return [(i, d) for i, d in self.recent if i <= upto and d.get("round") == round_no]

    def _fan_out(self, doc: dict[str, Any]) -> None:
        self.last_id += 1
        self.recent.append((self.last_id, doc))
        for sub in list(self._subs):
            sub._put((self.last_id, doc))
