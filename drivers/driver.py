"""The base of every device driver: one link, one translation from wire messages to events.

A driver owns a :class:`~drivers.link.Link` and puts the vendor-neutral, timestamped events of
:mod:`drivers.events` on the controller's one asyncio queue. Commands are async methods that
return once the device accepted them (its results arrive as events on the queue) and raise
:class:`~drivers.link.LinkDown` or :class:`DeviceRefused` otherwise.

A driver opened with ``confirm=True`` puts a :class:`Delivery` on the queue for each event
that arrived in a sequenced frame, and for the malfunction (code 0) that reports a sequenced
frame the host could not read: the device's acknowledgement, or that frame's NAK, waits until
the consumer made the event durable and called ``Delivery.confirm()`` (docs/protocol.md 3.6).
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, ClassVar

import structlog

from controller.errors import TablectlError
from controller.rules.cards import Card
from controller.shown import shown

from . import events as ev
from .link import (LOST_EVENT_CODE, Link, LinkDown, LinkStats, NotSent, NotUnderstood, Receipt,
                   SessionMemory)
from .protocol import messages as m
from .protocol.codec import Codec, get_codec
from .spec import DeviceSpec
from .transport import Transport

__all__ = ["CONTROLLER_ERROR", "Driver", "Delivery", "DeviceRefused", "LinkDown", "Receipt",
           "SessionMemory", "card_or_none", "deck_or_none"]

# The reason of a CommandRefused for a command that failed in the controller itself: neither
# the device's refusal (a refusal code's name) nor a command not sent for want of a link.
CONTROLLER_ERROR = "controller-error"


@dataclass(frozen=True, slots=True)
class Delivery:
    """A device event whose frame is answered (acknowledged, or refused with its NAK when it
    could not be read) only when the consumer says it is durable: journal ``event`` with
    ``receipt.to_json()``, then call :meth:`confirm`."""

    event: ev.DeviceEvent
    receipt: Receipt
    _confirm: Callable[[Receipt], None] = field(repr=False, compare=False)

    def confirm(self) -> None:
        """The event is durable: let the link answer its frame to the device."""
        self._confirm(self.receipt)


class DeviceRefused(TablectlError):
    """The device refused a command (busy, door open, jammed…); nothing was done."""

    def __init__(self, device: str, command: str, code: int, advice: str | None = None) -> None:
        self.device, self.command, self.code = device, command, code
        self.reason = m.REFUSAL_CODES.get(code, f"code {code}")
        if advice is not None:
            super().__init__(f"{device} refused {command}: {self.reason}; {advice}")
            return
        advice = {
            "busy": "wait for the current action to finish",
            "not-ready": "shuffle first",
            "empty": "load cards",
            "door-open": "close the door (or lid)",
            "jammed": "clear the jam and close the device",
            "fault": "the device reported a malfunction; call a technician",
            "bad-argument": "check the number asked for",
            "unknown-command": "this device does not do that",
        }.get(self.reason, "see the device's manual")
        super().__init__(f"{device} refused {command}: {self.reason}; {advice}")


def card_or_none(code: int) -> Card | None:
    """The card of a wire code, None for UNKNOWN_CARD."""
    return None if code == m.UNKNOWN_CARD else Card.from_code(code)


def deck_or_none(deck: int) -> int | None:
    return None if deck == m.NO_DECK else deck


class Driver:
    """One device. Subclasses set ``device_class`` and add their commands and events.

    ``spec`` says how the device is reached, ``queue`` is the controller's event queue and
    ``clock`` stamps the events. ``transport`` and ``codec`` default to what the spec names.
    ``confirm``, ``memory``, ``on_session``, ``on_refused`` and ``on_opening`` go to the
    :class:`~drivers.link.Link`: with ``confirm`` the queue gets a :class:`Delivery` for every
    sequenced device event (the malfunction reporting a sequenced frame the host could not
    read among them).
    """

    device_class: ClassVar[str] = ""

    def __init__(self, spec: DeviceSpec, queue: asyncio.Queue,
                 clock: Callable[[], float] = time.monotonic, *,
                 transport: Transport | None = None, codec: Codec | None = None,
                 confirm: bool = False, memory: SessionMemory | None = None,
                 on_session: Callable[[dict[str, Any]], None] | None = None,
                 on_refused: Callable[[dict[str, Any]], None] | None = None,
                 on_opening: Callable[[bool, dict[str, Any]], None] | None = None) -> None:
        if spec.device_class != self.device_class:
            raise TablectlError(f"device {spec.id!r} is a {spec.device_class}, not a "
                                f"{self.device_class}; use drivers.factory.open_driver")
        codec = codec or get_codec(spec.codec, receive_from="device")
        if codec.classes and spec.device_class not in codec.classes:
            raise TablectlError(f"device {spec.id!r}: codec {codec.name!r} speaks only for "
                                f"{', '.join(codec.classes)}, not a {spec.device_class}; use "
                                "codec = \"tablectl\"")
        self.spec, self.queue, self.clock = spec, queue, clock
        self.log = structlog.get_logger("tablectl.drivers").bind(device=spec.id)
        self.link = Link(spec, emit=self._emit, on_message=self._on_message, clock=clock,
                         transport=transport, codec=codec, log=self.log, confirm=confirm,
                         memory=memory, on_session=on_session, on_refused=on_refused,
                         on_opening=on_opening)
        self.link.transport.log = self.log
        self._status_waiters: list[asyncio.Future] = []

    # -- lifecycle and state --------------------------------------------------------------
    def start(self) -> None:
        """Begin connecting; events follow on the queue (LinkUp first)."""
        self.link.start()

    async def close(self) -> None:
        """Stop and release the port."""
        await self.link.close()

    @property
    def identity(self) -> ev.DeviceIdentity | None:
        """What the device said of itself at the last hello exchange."""
        return self.link.identity

    @property
    def is_up(self) -> bool:
        return self.link.state == "up"

    @property
    def last_heard(self) -> float | None:
        """Seconds since the device was last heard (its heartbeat or any frame), None if it
        never was. Read in the event loop the driver runs in."""
        return self.link.last_heard

    @property
    def problem(self) -> str | None:
        """The latest plain reason the link cannot come up, with what to check (a device of
        another class, bytes at another baud rate, no answer); None once it is up."""
        return self.link.problem

    @property
    def stats(self) -> LinkStats:
        return self.link.stats

    async def wait_up(self, timeout: float | None = None) -> ev.DeviceIdentity:
        """Wait until the link is up; raises TimeoutError."""
        await asyncio.wait_for(self.link.up.wait(), timeout)
        assert self.link.identity is not None
        return self.link.identity

    # -- commands ------------------------------------------------------------------------
    async def _command(self, msg: m.Message, what: str, action: str) -> None:
        """Send a command; return once the device accepted it. A refusal is put on the
        queue as CommandRefused (``action`` is the method's name) and raised as
        DeviceRefused; a command not sent because the link is not up, as CommandRefused
        (``not-connected``) and NotSent."""
        try:
            code = await self.link.request(msg)
        except NotSent as exc:
            # Nothing was sent: as good as refused, and asked again once the link is up.
            self._tell_refused(action, "not-connected", exc)
            raise
        except NotUnderstood as exc:
            # A NAK of a type or a payload the device does not know: it did nothing, as when
            # it refuses a command it does not do (or a number it cannot take).
            code = m.REFUSAL_NUMBERS["unknown-command" if exc.reason == m.NAK_UNKNOWN_TYPE
                                     else "bad-argument"]
            refused = DeviceRefused(self.spec.id, what, code,
                                    "its firmware may be too old for this controller")
            self.log.warning("command not understood", command=what, reason=refused.reason)
            self._tell_refused(action, refused.reason, refused)
            raise refused from None
        if code != m.ACK_OK:
            refused = DeviceRefused(self.spec.id, what, code)
            self.log.warning("command refused", command=what, reason=refused.reason)
            self._tell_refused(action, refused.reason, refused)
            raise refused
        self.log.info("command accepted", command=what)

    def _tell_refused(self, action: str, reason: str, exc: Exception) -> None:
        self._emit(self._event(ev.CommandRefused, action=action, reason=reason, text=str(exc)))

    def command_failed(self, action: str, exc: BaseException) -> None:
        """Command ``action`` (the method's name) failed with ``exc``, neither refused by the
        device (DeviceRefused) nor lost with the link (LinkDown), which the queue already hears
        of: a bad argument, a fault of the controller's. Put it on the queue as a
        CommandRefused with the reason ``controller-error`` naming the problem, so the table
        rules on what it asked instead of waiting for it. The caller logs the traceback."""
        problem = str(exc) or type(exc).__name__
        self._emit(self._event(
            ev.CommandRefused, action=action, reason=CONTROLLER_ERROR,
            text=f"{self.spec.id} {action}: the controller could not carry it out ({problem}); "
                 "report this with the service's log, which holds the details"))

    async def status(self, timeout: float | None = None) -> ev.Status:
        """Ask the device's state; returns the Status event (also put on the queue).

        A device that accepts the request but sends no report within ``timeout`` (twice the
        link-loss timeout by default) has a stuck event stream although its heartbeats flow:
        the link is declared lost and reopened, and LinkDown is raised."""
        fut = asyncio.get_running_loop().create_future()
        self._status_waiters.append(fut)
        try:
            return await self._ask_status(fut, timeout)
        finally:
            if fut in self._status_waiters:
                self._status_waiters.remove(fut)

    async def _ask_status(self, answer: Awaitable[ev.Status],
                          timeout: float | None) -> ev.Status:
        """Send a StatusRequest and await ``answer``, the report that answers it. None within
        ``timeout`` (twice the link-loss timeout by default) of its acceptance: the event
        stream is stuck, the link is dropped and LinkDown raised."""
        wait = timeout if timeout is not None else self.link.timing.link_timeout_s * 2
        await self._command(m.StatusRequest(), "status", "status")
        try:
            return await asyncio.wait_for(answer, wait)
        except TimeoutError:
            reason = f"no status report {wait} s after the request was accepted"
            self.link.drop(reason)
            raise LinkDown(f"device {shown(self.spec.id)}: {reason}; the link is reopened") \
                from None

    # -- events --------------------------------------------------------------------------
    def _emit(self, event: ev.DeviceEvent) -> None:
        receipt = self.link.take_receipt()     # only while a frame awaiting one is delivered
        item: Any = event if receipt is None else Delivery(event, receipt, self.link.confirm)
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            # The controller's queue is meant to be unbounded; never block the link on it.
            self.log.error("event queue full, event dropped", kind=event.kind)

    def _event(self, cls: type[ev.DeviceEvent], **fields: Any) -> ev.DeviceEvent:
        return cls(device=self.spec.id, ts=self.clock(), **fields)

    def _on_message(self, msg: m.Message) -> None:
        if not msg.for_class(self.device_class):
            # Acknowledged by the link, so never sent again: what it reported (a card, a jam)
            # is lost, and a device that sends what its class does not is out of order
            # (docs/protocol.md 3.1). The table rules on it as the device's malfunction; the
            # message's fields stay out of the text (a card in them may be face down).
            self.log.warning("message of another device class dropped",
                             message=type(msg).__name__)
            self.link.stats.rejected += 1
            self._emit(self._event(
                ev.Malfunction, code=LOST_EVENT_CODE,
                text=f"sent {m.a_frame(type(msg))}, which no {self.device_class} "
                     "sends; what it reported is lost: check the device before the next "
                     "round"))
            return
        event = self._translate(msg)
        if event is None:
            self.log.warning("message without an event dropped", message=type(msg).__name__)
            return
        # Debug, not info: the journal holds every device event and the service logs what the
        # table made of it; a line here cost each card ~15 µs before its commit.
        self.log.debug("event", kind=event.kind)
        self._emit(event)
        if isinstance(event, ev.Status):
            for fut in self._status_waiters:
                if not fut.done():
                    fut.set_result(event)
            self._status_waiters.clear()

    def _translate(self, msg: m.Message) -> ev.DeviceEvent | None:
        """The event of a message every class may send; subclasses handle their own first."""
        if isinstance(msg, m.Malfunction):
            text = msg.text or m.MALFUNCTION_CODES.get(msg.code, "")
            return self._event(ev.Malfunction, code=msg.code, text=text)
        if isinstance(msg, m.Jam):
            return self._event(ev.Jam, where=msg.where)
        if isinstance(msg, m.Door):
            return self._event(ev.DoorOpened if msg.open else ev.DoorClosed)
        if isinstance(msg, m.Empty):
            return self._event(ev.Empty)
        if isinstance(msg, m.StatusReport):
            return self._event(ev.Status, state=msg.state, detail=dict(msg.detail))
        return None
