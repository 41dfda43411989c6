"""Automatic card shuffler: shuffle, dispense a card or a hand, deck check, status."""
from __future__ import annotations

import asyncio
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator

from controller.errors import TablectlError
from controller.rules.cards import Card, full_deck

from . import events as ev
from .driver import Driver, card_or_none, deck_or_none
from .link import LinkDown
from .protocol import messages as m
from .protocol.codec import Codec, Received, Rejected, get_codec


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusAnswer(ev.Status):
    """The shuffler's report that answers the host's status request ``ask`` (the name the
    table gave the request; None when the caller gave none): the first report after the
    shuffler accepted that request, on the same link. A report no request was owed (one the
    firmware sends on its own, one answering a request asked before the link was lost) is a
    plain :class:`~drivers.events.Status` (docs/protocol.md 3.7)."""

    kind: ClassVar[str] = "status_answer"
    ask: str | None = None


ev.EVENT_TYPES.setdefault(StatusAnswer.kind, StatusAnswer)


class _Ask:
    """One status request of the host's, from its call to its answer."""

    __slots__ = ("ask", "answer")

    def __init__(self, ask: str | None) -> None:
        self.ask = ask
        self.answer: asyncio.Future = asyncio.get_running_loop().create_future()


class _Watched(Codec):
    """The shuffler's codec, with the status requests it encodes and their acknowledgements
    told to the driver in the order of the byte stream: an acknowledgement and the report
    after it often come in one read, and both are handled before the command's coroutine
    learns of the acknowledgement."""

    def __init__(self, inner: Codec, driver: "ShufflerDriver") -> None:
        super().__init__(inner.receive_from)
        self.inner, self.driver = inner, driver
        self.name, self.sequenced, self.classes = inner.name, inner.sequenced, inner.classes

    def encode(self, message: m.Message, seq: int = 0) -> bytes:
        data = self.inner.encode(message, seq)
        if isinstance(message, m.StatusRequest):
            self.driver._numbered(seq)
        return data

    def feed(self, data: bytes) -> Iterator[Received | Rejected]:   # type: ignore[override]
        items = self.inner.feed(data)      # decoded now: the link counts the garbage at once
        return self._told(items)

    def _told(self, items: list[Received | Rejected]) -> Iterator[Received | Rejected]:
        for item in items:
            if isinstance(item, Received) and isinstance(item.message, m.Ack):
                self.driver._acknowledged(item.message)
            yield item

    def reset(self) -> None:
        self.inner.reset()

    @property
    def garbage_bytes(self) -> int:
        return self.inner.garbage_bytes

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class ShufflerDriver(Driver):
    """Commands return when the shuffler accepted them; results arrive on the queue:
    ShuffleStarted / ShuffleDone, CardDispensed, HandDispensed, DeckCheckResult, and Jam,
    Malfunction, DoorOpened / DoorClosed, Empty whenever they happen."""

    device_class = "shuffler"

    def __init__(self, spec: Any, queue: asyncio.Queue, *args: Any,
                 codec: Codec | None = None, **kw: Any) -> None:
        # Status requests of this link: called, not yet numbered (in the order they take the
        # link, which sends one command at a time, first come first served); numbered and
        # not yet acknowledged, by their sequence number; accepted and owed their report,
        # oldest first (the shuffler answers them in order).
        self._unsent: deque[_Ask] = deque()
        self._numbered_asks: dict[int, _Ask] = {}
        self._owed: deque[_Ask] = deque()
        inner = codec or get_codec(spec.codec, receive_from="device")
        super().__init__(spec, queue, *args, codec=_Watched(inner, self), **kw)

    async def shuffle(self) -> None:
        await self._command(m.Shuffle(), "shuffle", "shuffle")

    async def dispense_card(self) -> None:
        await self._command(m.DispenseCard(), "dispense card", "dispense_card")

    async def dispense_hand(self, n: int) -> None:
        """Dispense one hand of ``n`` cards (1-255)."""
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 255:
            raise TablectlError(f"a hand has 1 to 255 cards, not {n!r}")
        await self._command(m.DispenseHand(n), f"dispense hand of {n}", "dispense_hand")

    async def deck_check(self) -> None:
        await self._command(m.DeckCheck(), "deck check", "deck_check")

    async def status(self, ask: str | None = None,
                     timeout: float | None = None) -> ev.Status:
        """Ask the shuffler's state; returns its answer, a :class:`StatusAnswer` naming
        ``ask`` (also put on the queue). A report that comes before the shuffler accepted the
        request, or that answers an earlier one, is not taken for it (it reaches the queue as
        a plain Status).

        A shuffler that accepts the request but sends no report within ``timeout`` (twice
        the link-loss timeout by default) has a stuck event stream although its heartbeats
        flow: the link is declared lost and reopened, and LinkDown is raised, as it is when
        the link is lost before the answer came."""
        request = _Ask(ask)
        self._unsent.append(request)
        try:
            return await self._ask_status(asyncio.shield(request.answer), timeout)
        finally:
            if request in self._unsent:     # refused before it was numbered (no link)
                self._unsent.remove(request)
            # Never acknowledged (a NAK): its number must not name it when the acknowledgement
            # of another command comes under that number.
            for seq in [s for s, r in self._numbered_asks.items() if r is request]:
                del self._numbered_asks[seq]

    # -- which report answers which request ------------------------------------------------
    def _numbered(self, seq: int) -> None:
        """A StatusRequest is being sent under ``seq``: the oldest request called."""
        if self._unsent:
            self._numbered_asks[seq] = self._unsent.popleft()

    def _acknowledged(self, ack: m.Ack) -> None:
        request = self._numbered_asks.pop(ack.seq, None)
        if request is not None and ack.code == m.ACK_OK:
            self._owed.append(request)      # its report is the next one not owed before it

    def _forget_requests(self, reason: str) -> None:
        """The link went down or came up: a request of the last link is answered no more on
        this one (a report it still brings, sent again, is as old as that link)."""
        self._numbered_asks.clear()
        owed, self._owed = self._owed, deque()
        for request in owed:
            if not request.answer.done():
                request.answer.set_exception(LinkDown(
                    f"device {self.spec.id!r}: {reason} before the status report came"))
                request.answer.exception()  # retrieved: a caller gone raises no warning

    def _emit(self, event: ev.DeviceEvent) -> None:
        if isinstance(event, (ev.LinkLost, ev.LinkUp, ev.LinkRestored)):
            self._forget_requests("the link was lost" if isinstance(event, ev.LinkLost)
                                  else "the link was opened again")
        super()._emit(event)

    def _translate(self, msg: m.Message) -> ev.DeviceEvent | None:
        if isinstance(msg, m.StatusReport) and self._owed:
            request = self._owed.popleft()
            answer = self._event(StatusAnswer, state=msg.state, detail=dict(msg.detail),
                                 ask=request.ask)
            if not request.answer.done():
                request.answer.set_result(answer)
            return answer
        if isinstance(msg, m.ShuffleStarted):
            return self._event(ev.ShuffleStarted)
        if isinstance(msg, m.ShuffleDone):
            return self._event(ev.ShuffleDone, count=msg.count)
        if isinstance(msg, m.CardDispensed):
            return self._event(ev.CardDispensed, card=card_or_none(msg.card),
                               deck_id=deck_or_none(msg.deck))
        if isinstance(msg, m.HandDispensed):
            return self._event(ev.HandDispensed,
                               cards=tuple(card_or_none(c) for c, _ in msg.cards),
                               deck_ids=tuple(deck_or_none(d) for _, d in msg.cards))
        if isinstance(msg, m.DeckCheckResult):
            return self._event(ev.DeckCheckResult, **deck_check_fields(msg))
        return super()._translate(msg)


def deck_check_fields(msg: m.DeckCheckResult) -> dict:
    """Count, identities and the differences with one full deck of the table's back.

    The table's deck id is the one most cards carry; a card with another deck id is foreign
    (``extra``) whatever its face. ``missing`` are faces of a full deck not read among the
    table's own cards; ``duplicate`` lists each face read more than once (once per extra copy).
    ``card_deck_ids`` gives each read card's back id, in the order of ``cards``.
    Unread cards (code 0xFF) are counted but have no identity. The driver does not know how
    many decks the table uses, so these lists are against one deck; the integrity ledger
    counts ``cards`` against the table's decks itself and does not add this ``duplicate``.
    """
    if not msg.recognised:
        return {"count": msg.count}
    read = [(Card.from_code(c), deck_or_none(d)) for c, d in msg.cards if c != m.UNKNOWN_CARD]
    decks = Counter(d for _, d in read if d is not None)
    home = decks.most_common(1)[0][0] if decks else None
    own = [c for c, d in read if d is None or d == home]
    foreign = tuple(c for c, d in read if d is not None and d != home)
    counts = Counter(own)
    duplicate = tuple(c for c, n in sorted(counts.items()) for _ in range(n - 1))
    missing = tuple(c for c in full_deck() if c not in counts)
    return {"count": msg.count, "cards": tuple(c for c, _ in read), "missing": missing,
            "extra": foreign, "duplicate": duplicate, "deck_ids": tuple(sorted(decks)),
            "card_deck_ids": tuple(d for _, d in read)}
