"""The link layer: the rules of docs/protocol.md section 3 over one transport and one codec.

Sequence numbers, acknowledgement and retransmission (stop-and-wait), duplicate suppression,
heartbeats, link-loss detection, and reconnection with back-off by the same stable name. A
:class:`Link` hands every good device message to its driver and reports the link's own
events (LinkUp, LinkLost, LinkRestored) through ``emit``; garbage and malformed frames are
counted, logged and dropped, never raised.

A consumer that journals what it takes opens the link with ``confirm=True``: a device event
is then acknowledged only once the consumer hands its :class:`Receipt` back to
:meth:`Link.confirm` (it is durable), and a reliable frame the host cannot read is refused
(NAK 2 or 3) only once the malfunction that records its loss is durable the same way. With the
:class:`SessionMemory` it kept the link resumes the device's session after the consumer
restarted, so a frame that was taken but not answered before the restart is recognised when
the device sends it again (docs/protocol.md 3.6).

Timing uses the event loop's clock; ``clock`` (injectable) only stamps events.
"""
from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import structlog

from controller.errors import TablectlError, error_text
from controller.shown import shown

from . import events as ev
from .protocol import messages as m
from .protocol.codec import Codec, CodecError, Received, Rejected, get_codec
from .transport import Transport, TransportClosed, make_transport
from .transport import causes
from .transport.base import TransportError
from .transport.usbport import SerialNumberShared

RECENT_SEQS = 32
# Malfunction.code of a malfunction the host finds in what a device sent (no device sends 0).
LOST_EVENT_CODE = 0
# Commands numbered ahead in one go when the numbering must outlive the process (confirm mode):
# one, so each command's number is recorded before it is sent and a restarted host numbers on
# right after the last one it may have used, never onto one of the 32 the device remembers
# (protocol.md 3.6).
TX_RESERVE = 1
# A link that lasts fewer link-loss timeouts than this counts, for the back-off, as an attempt
# that failed: a device that answers hello and then drops the link is retried like one that
# does not answer, not every few tenths of a second for ever (protocol.md 3.4).
STABLE_TIMEOUTS = 4
# Line noise comes by the read, hundreds a second: it is logged at once, then summed and logged
# at most once per this many seconds.
NOISE_LOG_S = 10.0
# How long a device's opening must have failed before the consumer is told (``on_opening``,
# journaled as ``device_not_opened``). udev gives a device node its group (the rule's
# GROUP="tablectl") a moment after the node appears: at boot, or when the device is plugged
# in, the first openings may be refused for a second or two, and a device powered with the
# Pi may enumerate a few seconds late. Ten seconds is well past that (five or six openings,
# by the back-off), and short beside a table kept from its round by a device left unopened.
OPEN_GRACE_S = 10.0
# A heartbeat tick that comes later than this fraction of the link-loss timeout means the
# controller itself was not running (SIGSTOP, a swap storm, an SD card's write stall, a paused
# VM): the frames the devices sent meanwhile wait in the port, so the silence clock restarts
# at the stall's end rather than blame the devices for it (protocol.md 3.5).
STALL_FRACTION = 0.5
# When the last stall was logged (the event loop's clock): the links of one process notice
# the same stall, and it is logged once.
_stall_logged_at = float("-inf")


class LinkDown(TablectlError):
    """A command could not reach the device: the link is down or went down meanwhile."""


class NotUnderstood(TablectlError):
    """The device answered a command with a NAK it must not be sent again for (section 3.1:
    a type it does not know, or a payload not of the type's layout): it did nothing."""

    def __init__(self, device: str, reason: int) -> None:
        self.reason = reason
        super().__init__(f"device {shown(device)} did not understand the command "
                         f"({m.NAK_REASONS.get(reason, reason)}); its firmware may be too "
                         "old for this controller")


class NotSent(LinkDown):
    """The link was not up when the command was asked: nothing of it was sent (unlike a
    command left unacknowledged, which the device may have received)."""


@dataclass(frozen=True, slots=True)
class LinkTiming:
    """The timing limits of docs/protocol.md, section 3.5."""

    heartbeat_s: float = 0.25
    link_timeout_s: float = 1.0
    ack_timeout_s: float = 0.2
    retries: int = 3
    hello_timeout_s: float = 0.5
    hello_attempts: int = 4
    backoff_min_s: float = 0.1
    backoff_max_s: float = 5.0
    stable_s: float = STABLE_TIMEOUTS * 1.0     # how long a link must last to reset the back-off
    open_grace_s: float = OPEN_GRACE_S  # how long openings fail before on_opening is told

    @classmethod
    def from_spec(cls, spec: Any) -> "LinkTiming":
        return cls(heartbeat_s=spec.heartbeat_s, link_timeout_s=spec.link_timeout_s,
                   ack_timeout_s=spec.link_timeout_s / 5, hello_timeout_s=spec.link_timeout_s / 2,
                   stable_s=STABLE_TIMEOUTS * spec.link_timeout_s)


@dataclass(slots=True)
class LinkStats:
    """Counters a supervisor can read (``driver.stats``)."""

    frames_in: int = 0
    frames_out: int = 0
    rejected: int = 0            # malformed, damaged or unexpected frames dropped
    duplicates: int = 0          # reliable frames received again and suppressed
    retransmissions: int = 0     # commands sent again (timeout or NAK)
    naks_sent: int = 0
    links_lost: int = 0
    garbage_bytes: int = 0       # bytes that were no part of any frame

    def as_dict(self) -> dict[str, int]:
        return {f: getattr(self, f) for f in self.__slots__}


@dataclass(frozen=True, slots=True)
class Receipt:
    """Which frame of which session an event arrived in. A consumer in confirm mode journals
    it with the event, then hands it to :meth:`Link.confirm`."""

    device: str
    serial: str
    session: str
    seq: int

    def to_json(self) -> dict[str, Any]:
        return {"serial": self.serial, "session": self.session, "seq": self.seq}


@dataclass(frozen=True, slots=True)
class SessionMemory:
    """What a consumer kept durably of a device's session, to resume it after a restart.

    ``serial`` and ``firmware_hash`` name the device (another unit gets a new session),
    ``session`` is the host's name of the session, ``rx_seqs`` the device's sequence numbers
    the consumer made durable in it (the last is the one that may come again), and
    ``tx_reserved`` the last command count the link reported through ``on_session``."""

    serial: str
    firmware_hash: str
    session: str
    rx_seqs: tuple[int, ...] = ()
    tx_reserved: int = 0

    def mark(self) -> dict[str, Any]:
        """What ``on_session`` gets: everything but ``rx_seqs`` (those are in the receipts)."""
        return {"serial": self.serial, "firmware_hash": self.firmware_hash,
                "session": self.session, "tx_reserved": self.tx_reserved}


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why the link refuses a device that answered its hello, or was found on the bus
    (docs/protocol.md 1 and 3.2): ``reason``, a short key (``firmware_hash``, ``device_class``,
    ``protocol_version``, ``duplicate_serial``); ``text``, the problem the pit and the log
    get, with the way out; ``given``, what the device said of itself (or the units found
    gave); ``expected``, what the configuration approves."""

    reason: str
    text: str
    given: dict[str, Any]
    expected: dict[str, Any]

    def key(self) -> tuple[str, str]:
        """What makes two refusals the same one: the same reason for the same identity."""
        return self.reason, json.dumps(self.given, sort_keys=True, default=str)

    def record(self, spec: Any, port: str) -> dict[str, Any]:
        """What ``on_refused`` gets (the journal's ``device_refused``): the device id and its
        configured class, the stable name it was reached by, and the refusal."""
        return {"device": spec.id, "device_class": spec.device_class, "port": port,
                "reason": self.reason, "text": self.text, "given": dict(self.given),
                "expected": dict(self.expected)}


def _given(info: m.HelloInfo) -> dict[str, Any]:
    """A refused device's identity as its HelloInfo gave it."""
    return {"device_class": info.class_name, "vendor": info.vendor, "model": info.model,
            "serial": info.serial, "firmware_version": info.firmware_version,
            "firmware_hash": info.firmware_hash.hex(), "protocol": info.protocol}


@dataclass(slots=True)
class _Pending:
    seq: int
    data: bytes
    future: asyncio.Future
    sent: int = 0           # copies sent first and on the ack timeouts (the retries)
    on_nak: int = 0         # copies sent again at once on a NAK 1 (bounded, no retries)


@dataclass(slots=True)
class _Recent:
    """The sequence numbers of the last reliable frames accepted (duplicate suppression)."""

    order: deque = field(default_factory=lambda: deque(maxlen=RECENT_SEQS))

    def seen(self, seq: int) -> bool:
        return seq in self.order

    def add(self, seq: int) -> None:
        self.order.append(seq)

    def clear(self) -> None:
        self.order.clear()


class _Tally:
    """A warning that may come by the hundred (line noise): the first is written at once, the
    ones after it are summed and written as one line per interval, so the log keeps every count
    but not a line per read. ``write(**sums)`` writes the line."""

    def __init__(self, write: Callable[..., None], interval_s: float) -> None:
        self._write, self.interval_s = write, interval_s
        self._sums: dict[str, int] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, first: dict[str, Any] | None = None, **counts: int) -> None:
        """Count one occurrence (in the running event loop); ``first``, what the line
        written at once says of it besides its counts."""
        if self._timer is None:
            self._write(**(first or {}), **counts)
            self._timer = asyncio.get_running_loop().call_later(self.interval_s, self._flush)
            return
        for name, n in counts.items():
            self._sums[name] = self._sums.get(name, 0) + n

    def _flush(self) -> None:
        sums, self._sums = self._sums, {}
        if not sums:
            self._timer = None          # a quiet interval: the next one is written at once
            return
        self._write(**sums, over_s=self.interval_s)
        self._timer = asyncio.get_running_loop().call_later(self.interval_s, self._flush)

    def close(self) -> None:
        """Write what was summed and not yet written."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        sums, self._sums = self._sums, {}
        if sums:
            self._write(**sums)


def _frame_name(item: Rejected) -> str:
    """A refused frame in words, with no field of it (a field may be a card face down)."""
    if item.reason == "damaged":
        return item.detail          # the codec's words, with no field of any frame
    if item.type is None:
        return f"a frame of unknown type ({item.reason})"
    if item.type in m.MESSAGE_TYPES:
        return f"{m.a_frame(m.MESSAGE_TYPES[item.type])} ({item.reason})"
    return f"a type 0x{item.type:02x} frame ({item.reason})"


class Link:
    """One device's link. ``emit(event)`` receives LinkUp / LinkLost / LinkRestored;
    ``on_message(msg)`` every other device message, once, in order.

    By default a device's frame is acknowledged as it arrives. With ``confirm=True`` (a
    sequenced codec) it is acknowledged only after :meth:`confirm`: during ``on_message`` the
    frame's :class:`Receipt` is offered by :meth:`take_receipt`; a frame whose receipt nobody
    takes is acknowledged at once. A reliable frame the host cannot read (NAK 2 or 3) is
    handled alike: its receipt is offered while ``emit`` gets the device's malfunction that
    reports it, and the NAK goes at :meth:`confirm`. ``on_session(mark)`` (confirm mode) is
    called, before the session serves anything, with ``SessionMemory.mark()`` each time a
    session starts or resumes and each time commands are numbered ahead; it must make the
    mark durable before it returns. ``memory`` is the last such mark with the receipts'
    numbers: the first hello then asks to resume that session.

    ``on_refused(record)`` (optional) is told of a device the link refuses (another firmware
    hash than the approved one, another class or protocol version, a USB serial number two
    units give): :meth:`Refusal.record`, before the refusal is shown (``problem``) or logged,
    so that it can be made durable first. It is told once per distinct refusal (the same
    reason for the same identity) until the device links or the refusal changes: a device
    that keeps answering so is not told of at every hello. A refusal it raises on is still
    made, and told again at the next attempt.

    ``on_opening(opened, record)`` (optional) is told of a device the link cannot open (the
    port missing, permission refused, held by another program, gone during the opening, not
    a device) once its openings have failed for ``timing.open_grace_s``, and again for each
    other class of cause, each once until it opens, never per attempt: ``opened`` False, the record the device id, its
    class, the port, the ``cause`` (drivers.transport.causes), its ``way_out``, how long
    (``failing_s``) and how many ``attempts``; then, when it opens at last, ``opened`` True
    with how long and how many. Told before the link logs it; nothing of the device's or the
    library's own words is in it (those are in the log and ``problem``)."""

    def __init__(self, spec: Any, *, emit: Callable[[ev.DeviceEvent], None],
                 on_message: Callable[[m.Message], None],
                 clock: Callable[[], float] = time.monotonic,
                 transport: Transport | None = None, codec: Codec | None = None,
                 log: Any = None, timing: LinkTiming | None = None, confirm: bool = False,
                 memory: SessionMemory | None = None,
                 on_session: Callable[[dict[str, Any]], None] | None = None,
                 on_refused: Callable[[dict[str, Any]], None] | None = None,
                 on_opening: Callable[[bool, dict[str, Any]], None] | None = None) -> None:
        self.spec = spec
        self.timing = timing or LinkTiming.from_spec(spec)
        self.transport = transport or make_transport(spec)
        self.codec = codec or get_codec(spec.codec, receive_from="device")
        self.clock = clock
        self.log = log or structlog.get_logger("tablectl.drivers").bind(device=spec.id)
        self.stats = LinkStats()
        self.identity: ev.DeviceIdentity | None = None
        self.state = "closed"        # closed | connecting | hello | up | down
        self._problem: str | None = None
        self._emit, self._on_message = emit, on_message
        self._ever_up = False
        self._new_session = False   # set when a resume must be refused (another device)
        self._rebooted = False      # the loss being declared is the device's own restart
        self._task: asyncio.Task | None = None
        self._out: asyncio.Queue[bytes] | None = None
        self._writing = False       # the write loop has bytes in hand (order: wait behind)
        self._lost: asyncio.Future | None = None
        self._hello_wait: asyncio.Future | None = None
        self._pending: _Pending | None = None
        self._cmd_lock = asyncio.Lock()
        self._recent = _Recent()
        self._tx_count = 0           # commands numbered in this session (seq = count mod 255)
        self._confirm = confirm and self.codec.sequenced
        if memory is not None and on_session is None:
            raise TablectlError(f"device {shown(spec.id)}: resuming a remembered session needs "
                                "on_session to keep the command numbering")
        self._memory = memory if self._confirm else None
        self._on_session = on_session if self._confirm else None
        self._on_refused = on_refused
        self._refused: tuple[str, str] | None = None    # the refusal last told, until linked
        self._on_opening = on_opening
        # The openings failing in a row: since when, how many, the causes told (a device
        # flapping between two causes, rebooting over and over, is told of each once).
        self._failing_since: float | None = None
        self._failing_attempts = 0
        self._failing_told: set[str] = set()
        self.session: str | None = None
        self._tx_reserved = 0
        # Frames taken but not yet durable, by number: the answer each gets at confirm()
        # (an Ack, or the NAK of a frame the host cannot read).
        self._unconfirmed: dict[int, m.Ack | m.Nak] = {}
        self._delivering: Receipt | None = None
        # The device's frame last received unreadable (damaged, or past the maximum length),
        # and how many times in a row (sections 2 and 3.1).
        self._damaged: tuple[Any, int] = (None, 0)
        self._damaged_since = 0.0       # when its first copy in a row came
        self._damaged_told = False      # its malfunction was reported
        self._last_rx = 0.0
        # Frames that came whole but could not be read, the last of each type and when: a
        # device whose every frame is so is not silent, and is not told to check its power.
        self._unread: dict[int | None, tuple[float, Rejected]] = {}
        self._last_uptime = -1
        self._t0 = 0.0
        self._backoff = self.timing.backoff_min_s
        self._short_links = 0       # links in a row that lasted less than timing.stable_s
        self._up_at: float | None = None     # when the link of this session came up
        self._heard = False         # a good frame came after the HelloInfo of this session
        self._served = False        # the device's work went over this session's link
        # The last link was lost before the device sent anything after its HelloInfo (it
        # answers hello but keeps no heartbeat): the next one is not called up until it does.
        self._mute = False
        self._held: m.HelloInfo | None = None    # that HelloInfo, waiting for the device
        # This opening's hello attempt, its HelloInfos and boot notices among them, and the
        # attempt a boot notice was last answered in (once an attempt).
        self._attempt, self._infos, self._boots = 0, 0, 0
        self._boot_asked: int | None = None
        self._noise = _Tally(self._log_garbage, NOISE_LOG_S)
        self._dropped = _Tally(self._log_dropped, NOISE_LOG_S)
        # A device that missed the answers sends each reliable frame again, by the hundred
        # when the line is bad: the copies are summed as the dropped frames are.
        self._suppressed = _Tally(lambda **c: self._log_duplicates("duplicate suppressed", c),
                                  NOISE_LOG_S)
        self._awaiting = _Tally(
            lambda **c: self._log_duplicates("duplicate awaiting confirmation", c), NOISE_LOG_S)
        self.up = asyncio.Event()
        if self.timing.link_timeout_s < 2 * self.timing.heartbeat_s:
            self.log.warning("link timeout shorter than two heartbeat intervals: one late "
                             "heartbeat will drop the link", heartbeat_s=self.timing.heartbeat_s,
                             link_timeout_s=self.timing.link_timeout_s)

    @property
    def last_heard(self) -> float | None:
        """Seconds since the last frame from the device (a heartbeat or any other), None
        before the first one or outside the running event loop. Read only."""
        if not self._last_rx:
            return None
        try:
            now = asyncio.get_running_loop().time()    # the clock _last_rx is taken on
        except RuntimeError:
            return None
        return max(0.0, now - self._last_rx)

    @property
    def problem(self) -> str | None:
        """The latest plain reason the link cannot come up (the port cannot be opened, no
        answer to hello, bytes that make no frame, a device refused), with what to check;
        None once the link is up. What the log says, for the pit display."""
        return self._problem

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        """Begin connecting (in the running event loop); returns at once."""
        if self._task is None:
            self._t0 = asyncio.get_running_loop().time()
            self._task = asyncio.get_running_loop().create_task(
                self._supervise(), name=f"link {self.spec.id}")

    async def close(self) -> None:
        """Stop the link and release the port. Emits nothing."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        await self.transport.close()
        self._noise.close()
        self._dropped.close()
        self._suppressed.close()
        self._awaiting.close()
        self.state = "closed"
        self.up.clear()

    async def _supervise(self) -> None:
        """Open, hello, serve until lost, close; again and again with back-off."""
        while True:
            try:
                await self._session()
            except Exception:  # noqa: BLE001 - the link must outlive any one failure
                self._go_down("internal error")
                self.log.exception("link session failed")
            await asyncio.sleep(self._backoff)
            self._backoff = min(self._backoff * 2, self.timing.backoff_max_s)

    async def _session(self) -> None:
        loop = asyncio.get_running_loop()
        self.state = "connecting"
        # Bytes are decoded in the callback that read them; the read loop waits only for
        # the port's closing (and takes bytes from a transport that queues them).
        self.transport.deliver_to(self._received)
        try:
            await self.transport.open()
        except Exception as exc:  # noqa: BLE001 - whatever the library raises, retry
            refusal = self._found_refused(exc)
            if refusal is not None:
                self._refuse(refusal)
                return
            # A TransportError names the port and what to check; whatever else the library
            # raises may carry no words (a timeout's are empty).
            words = str(exc) if isinstance(exc, TablectlError) else error_text(
                exc, f"the device's cable and power, and its port {shown(self.transport.name)}")
            self._not_opened(exc, loop.time())
            self.log.info("device not reachable", error=words, retry_in_s=self._backoff)
            self._problem = f"the device is not reachable: {words}"
            return
        self._opened(loop.time())
        self.codec.reset()
        self._lost = loop.create_future()
        self._out = asyncio.Queue()
        self._writing = False
        self._up_at, self._heard, self._served, self._held = None, False, False, None
        tasks = [loop.create_task(self._read_loop()), loop.create_task(self._write_loop())]
        try:
            if await self._hello():
                tasks.append(loop.create_task(self._heartbeat_loop()))
                reason = await self._lost
                self._reckon(loop.time())
                if self.state != "up":
                    self.log.info("link not restored: the device was not heard after its "
                                  "hello", reason=reason, retry_in_s=self._backoff)
                self._go_down(reason)
            else:
                self.state = "down"
        finally:
            # Nothing read from here on is handled: it stays queued and goes with the port,
            # as it did when only the read loop (now cancelled) took bytes.
            self.transport.deliver_to(None)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._fail_pending("the link closed")
            await self.transport.close()

    async def _hello(self) -> bool:
        self.state = "hello"
        loop = asyncio.get_running_loop()
        self._hello_wait = loop.create_future()
        assert self._lost is not None
        garbage, frames = self.stats.garbage_bytes, self.stats.frames_in + self.stats.rejected
        started = loop.time()
        self._boots, self._infos, self._boot_asked = 0, 0, None
        for attempt in range(self.timing.hello_attempts):
            self._attempt = attempt
            self._send(self._hello_message())
            await asyncio.wait({self._hello_wait, self._lost},
                               timeout=self.timing.hello_timeout_s,
                               return_when=asyncio.FIRST_COMPLETED)
            if self._lost.done():
                self.log.info("port closed during hello", reason=self._lost.result())
                return False
            if self._hello_wait.done():
                problem = self._hello_wait.result()
                if isinstance(problem, Refusal):
                    self._refuse(problem)
                    return False
                if problem:
                    self.log.error("device refused", problem=problem)
                    self._problem = problem
                    return False
                return True
        garbage = self.stats.garbage_bytes - garbage
        unread = self._unread_since(started, prefer=m.HelloInfo.TYPE)
        if unread is not None:
            # It answers, in frames that check but that no version-1 device sends so.
            self._problem = (f"the device answers hello, but with {unread} that the "
                             f"controller cannot read: {self._unread_advice()}")
            self.log.warning("no answer to hello", attempts=self.timing.hello_attempts,
                             problem=self._problem)
        elif self._boots and self._boots == self._infos:
            # It answers, but each time as a device that just started.
            self._problem = (f"the device answers every hello with a boot notice ({self._boots} "
                             f"in {self.timing.hello_attempts} attempts): it restarts at each "
                             "one, or its firmware flags every HelloInfo as BOOT; check its "
                             "power supply, then its firmware")
            self.log.warning("no answer to hello but boot notices", problem=self._problem)
        elif garbage and self.stats.frames_in + self.stats.rejected == frames:
            # Not silence: what the device sends cannot be framed (most often another baud).
            self._problem = (f"{garbage} bytes arrive but none is a frame: "
                             f"{self._unframed_advice()}")
            self.log.warning("no answer to hello", attempts=self.timing.hello_attempts,
                             problem=self._problem)
        else:
            self.log.info("no answer to hello", attempts=self.timing.hello_attempts)
            self._problem = (f"no answer to hello ({self.timing.hello_attempts} attempts): check "
                             "that the device is powered, its cable, and the port or USB "
                             "settings in the table configuration")
        return False

    def _refuse(self, refusal: Refusal) -> None:
        """Refuse the device: tell ``on_refused`` first (once per distinct refusal), then
        show and log the problem."""
        if self._on_refused is not None and refusal.key() != self._refused:
            try:
                self._on_refused(refusal.record(self.spec, self.transport.name))
                self._refused = refusal.key()
            except Exception as exc:  # noqa: BLE001 - refused all the same
                self.log.error("device refusal not recorded", reason=refusal.reason,
                               error=error_text(exc, "the journal's disk"))
        self.log.error("device refused", problem=refusal.text, reason=refusal.reason)
        self._problem = refusal.text

    def _opening_record(self, now: float) -> dict[str, Any]:
        assert self._failing_since is not None
        return {"device": self.spec.id, "device_class": self.spec.device_class,
                "port": self.transport.name, "failing_s": round(now - self._failing_since, 1),
                "attempts": self._failing_attempts}

    def _not_opened(self, exc: BaseException, now: float) -> None:
        """An opening failed: once they have failed for the grace, tell ``on_opening`` of
        this class of cause (once until the device opens, however often it comes back)."""
        if self._failing_since is None:
            self._failing_since, self._failing_attempts = now, 0
        self._failing_attempts += 1
        cause = exc.cause if isinstance(exc, TransportError) else causes.of_errno(exc)
        if cause not in causes.WAY_OUT:
            cause = causes.OTHER
        if self._on_opening is None or cause in self._failing_told or \
                now - self._failing_since < self.timing.open_grace_s:
            return
        record = {**self._opening_record(now), "cause": cause, "way_out": causes.WAY_OUT[cause]}
        try:
            self._on_opening(False, record)
        except Exception as err:  # noqa: BLE001 - told again at the next attempt
            self.log.error("device not opened, and that was not recorded", cause=cause,
                           error=error_text(err, "the journal's disk"))
            return
        self._failing_told.add(cause)
        self.log.warning("device not opened", cause=cause, failing_s=record["failing_s"],
                         attempts=record["attempts"], way_out=record["way_out"])

    def _opened(self, now: float) -> None:
        """The device opened: after openings that failed past the grace, ``on_opening`` is
        told it opened at last."""
        told, since = self._failing_told, self._failing_since
        if since is not None and told and self._on_opening is not None:
            self._failing_attempts += 1
            record = self._opening_record(now)
            try:
                self._on_opening(True, record)
            except Exception as exc:  # noqa: BLE001 - the link goes on; the journal failed
                self.log.error("device opened, and that was not recorded",
                               error=error_text(exc, "the journal's disk"))
            self.log.info("device opened at last", failing_s=record["failing_s"],
                          attempts=record["attempts"])
        self._failing_since, self._failing_attempts, self._failing_told = None, 0, set()

    @staticmethod
    def _found_refused(exc: BaseException) -> Refusal | None:
        """A transport that could not choose the device because two units give the stable
        name it is found by (the USB serial number): a refusal of what it found. None for
        any other failure to open."""
        if not isinstance(exc, SerialNumberShared):
            return None
        return Refusal(exc.reason, str(exc), {"serial": exc.serial, "units": exc.units},
                       {"serial": exc.serial, "units": 1})

    def _unframed_advice(self) -> str:
        """What to check when bytes arrive and none makes a frame, for this transport."""
        codec = f"codec = \"{self.spec.codec}\""
        if getattr(self.spec, "transport", "serial") == "usb":
            return (f"a USB link has no baud rate, so check that the device speaks the "
                    f"configured protocol ({codec} in the table configuration) and its firmware")
        return (f"check the baud rate (baudrate = {self.spec.baudrate} in the table "
                "configuration must be the device's own), the cable, and that the device speaks "
                f"the configured protocol ({codec})")

    def _reckon(self, now: float) -> None:
        """The link of this session is lost: how it counts for the back-off (a link that died
        soon after it came up is an attempt that failed) and for the next hello."""
        lasted = now - self._up_at if self._up_at is not None else 0.0
        # A link that carried the device's work was no failed attempt, however short it was:
        # a device unplugged between rounds is reopened at once.
        worked = self._served or lasted >= self.timing.stable_s
        self._short_links = 0 if worked else self._short_links + 1
        self._backoff = min(self.timing.backoff_min_s * 2 ** max(0, self._short_links - 1),
                            self.timing.backoff_max_s)
        self._mute = not self._heard

    def drop(self, reason: str) -> None:
        """Declare the link lost now (LinkLost follows) and reopen it: for a driver that sees
        the device stuck although heartbeats flow."""
        self._set_lost(reason)

    def _hello_message(self) -> m.Hello:
        # Ask to resume once we have had a session: then a frame the device sent before the
        # loss and sends again keeps its number, and is recognised if it already arrived.
        # A remembered session (memory from the consumer's journal) is asked for likewise.
        return m.Hello(heartbeat_ms=max(1, min(0xFFFF, round(self.timing.heartbeat_s * 1000))),
                       resume=(self._ever_up or self._memory is not None)
                       and not self._new_session)

    def _go_down(self, reason: str) -> None:
        was_up = self.state == "up"
        self.state = "down"
        self.up.clear()
        # Why it is down, for the pit until the next opening says better (or the link is up):
        # a device that answers every hello and then falls silent fails no opening.
        self._problem = f"link lost: {reason}" + ("" if "check" in reason else
                                                  "; it is reopened by itself: check the "
                                                  "device's cable and power")
        self._fail_pending(reason)
        if was_up:
            self.stats.links_lost += 1
            self.log.warning("link lost", reason=reason, retry_in_s=self._backoff)
            self._emit(ev.LinkLost(device=self.spec.id, ts=self.clock(), reason=reason,
                                   rebooted=self._rebooted))
        self._rebooted = False

    def _set_rebooted(self, reason: str) -> None:
        self._rebooted = True
        self._set_lost(reason)

    def _set_lost(self, reason: str) -> None:
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(reason)

    def _fail_pending(self, reason: str) -> None:
        p = self._pending
        if p is not None and not p.future.done():
            p.future.set_exception(LinkDown(
                f"device {shown(self.spec.id)} is not connected ({reason}); the command was not "
                "confirmed. The driver reconnects by itself; check the device's cable and power"))

    # -- I/O tasks -----------------------------------------------------------------------
    def _send(self, msg: m.Message, seq: int = 0) -> None:
        try:
            data = self.codec.encode(msg, seq)
        except CodecError as exc:
            self.log.debug("not sent", message=type(msg).__name__, why=str(exc))
            return
        self._queue_bytes(data)

    def _queue_bytes(self, data: bytes) -> None:
        if self._out is None:
            return
        if not self._writing and self._out.empty():
            # Nothing ahead of it: the port may take it now (an ack, as soon as it is
            # due); order is kept, as the write loop has nothing in hand.
            n = self.transport.write_now(data)
            if n == len(data):
                self.stats.frames_out += 1
                return
            data = data[n:]
        self._out.put_nowait(data)

    async def _write_loop(self) -> None:
        assert self._out is not None
        while True:
            data = await self._out.get()
            self._writing = True
            try:
                await self.transport.write(data)
            except TransportClosed as exc:
                self._set_lost(f"port closed: {exc}")
                return
            finally:
                self._writing = False
            self.stats.frames_out += 1

    async def _read_loop(self) -> None:
        while True:
            try:
                data = await self.transport.read()
            except TransportClosed as exc:
                self._set_lost(f"port closed: {exc}")
                return
            self._received(data)

    def _received(self, data: bytes) -> None:
        """Bytes from the port: decode them and handle each frame they complete."""
        before = self.codec.garbage_bytes
        items = self.codec.feed(data)
        garbage = self.codec.garbage_bytes - before
        if garbage:
            self.stats.garbage_bytes += garbage
            self._noise.add(bytes=garbage, reads=1)
        for item in items:
            self._handle(item)

    def _log_dropped(self, **counts: Any) -> None:
        self.log.warning("frame dropped", **counts, total=self.stats.rejected)

    def _log_duplicates(self, event: str, counts: dict[str, Any]) -> None:
        self.log.info(event, **counts, total=self.stats.duplicates)

    def _log_garbage(self, **counts: Any) -> None:
        self.log.warning("garbage dropped", **counts, total=self.stats.garbage_bytes)

    async def _heartbeat_loop(self) -> None:
        loop = asyncio.get_running_loop()
        t = self.timing
        tick = min(t.heartbeat_s, t.link_timeout_s / 4)
        next_beat = 0.0
        # The device's silence is judged only over time the controller ran and could read:
        # from its last frame, or from the end of a stall of the controller's own, whichever
        # is later. Frames it sent meanwhile wait in the port until the loop reads them.
        judged_from = last_tick = loop.time()
        while True:
            now = loop.time()
            late, last_tick = now - last_tick - tick, now
            if late > t.link_timeout_s * STALL_FRACTION:
                judged_from = now
                self._stalled(late, now)
            quiet = now - max(self._last_rx, judged_from)
            if quiet > t.link_timeout_s:
                self._set_lost(self._silence(quiet))
                return
            if now >= next_beat:
                uptime = int((now - self._t0) * 1000) & 0xFFFFFFFF
                self._send(m.Heartbeat(uptime))
                next_beat = now + t.heartbeat_s
            await asyncio.sleep(tick)

    def _unread_since(self, since: float, prefer: int | None = None) -> str | None:
        """A frame that came whole after ``since`` but could not be read (of type ``prefer``
        if one did, else the last), in words with no field of it; None when none came."""
        came = [(at, item) for at, item in self._unread.values() if at >= since]
        if not came:
            return None
        return _frame_name(min(came, key=lambda c: (c[1].type != prefer, -c[0]))[1])

    @staticmethod
    def _unread_advice() -> str:
        return ("check the device's firmware against docs/protocol.md (the log's \"frame "
                "dropped\" line says what is wrong with the frame)")

    def _stalled(self, late: float, now: float) -> None:
        """The heartbeat loop's tick came ``late`` seconds late: the controller itself did
        not run (stopped, swapping, its storage stalled). Logged once per stall, by whichever
        link of the process notices it first."""
        global _stall_logged_at
        if now - _stall_logged_at <= late:
            return          # the same stall, noticed by another link
        _stall_logged_at = now
        self.log.warning("controller stalled: the device links are judged from its end",
                         stalled_s=round(late, 2), link_timeout_s=self.timing.link_timeout_s)

    def _silence(self, quiet: float) -> str:
        """Why the link is lost when the device fell silent, in words the operator can act
        on when it never spoke after its HelloInfo."""
        t = self.timing
        why = f"no heartbeat for {quiet:.2f} s (limit {t.link_timeout_s} s)"
        unread = self._unread_since(self._last_rx)
        if unread is not None:
            return (f"{why}: frames arrive, but {unread} among them that the controller "
                    f"cannot read; {self._unread_advice()}")
        if self._heard:
            return why
        return (f"{why}: the device answers hello but sends no heartbeat after it; check its "
                f"firmware, which must send one at least every {t.heartbeat_s} s (the interval "
                "the hello asks for)")

    # -- receiving -----------------------------------------------------------------------
    def _handle(self, item: Received | Rejected) -> None:
        if isinstance(item, Rejected):
            self.stats.rejected += 1
            # A frame that checked but cannot be read (no line noise) is remembered: a
            # device that sends only such frames is not taken for a silent one.
            if item.reason not in ("crc", "too-long"):
                self._unread[item.type] = (asyncio.get_running_loop().time(), item)
            # The first in full, then summed by reason: a device may send such frames by
            # the hundred (each heartbeat, each copy of an event).
            self._dropped.add(first={"reason": item.reason, "seq": item.seq,
                                     "type": item.type, "detail": item.detail},
                              **{item.reason.replace("-", "_"): 1})
            if item.reason == "too-long":
                item = self._too_long_again(item)   # the device's frame, or noise (None)
                if item is None:
                    return
            if item.nak is not None and self.codec.sequenced and self.state == "up":
                if item.nak == m.NAK_CRC:           # sent again: nothing is lost
                    if self._damaged_again(item):
                        self._answer(m.Nak(item.seq, item.nak))
                elif self._confirm:
                    self._refuse_after_record(item)
                else:
                    self._answer(m.Nak(item.seq, item.nak))
                    if item.reason != "too-long" or self._damaged[1] == self.timing.retries + 1:
                        self._lost_event(item)
            elif not self.codec.sequenced and self.state == "up":
                # Its events are not acknowledged: the device never sends one again.
                self._lost_event(item)
            elif self._unnumbered(item) and self.state == "up":
                # A report whose frame checked but carries no number: no answer can name
                # it, so what it reported is lost. Told once while the device keeps sending
                # such frames (it may send each again every ack timeout, unanswered).
                if self._again(("unnumbered", item.type)) == 1:
                    self._lost_event(item)
            return
        msg = item.message
        self.stats.frames_in += 1
        if item.seq:
            self._damaged = (None, 0)   # a reliable frame came whole
        self._last_rx = asyncio.get_running_loop().time()
        if self._held is not None and not self._take_held():
            return
        if self.state == "up":
            self._heard = True
        if isinstance(msg, m.Ack):
            self._on_ack(msg)
        elif isinstance(msg, m.Nak):
            self._on_nak(msg)
        elif isinstance(msg, m.HelloInfo):
            self._on_hello_info(msg)
        elif isinstance(msg, m.Heartbeat):
            self._on_heartbeat(msg)
        elif self.state != "up":
            # Before the hello exchange nothing is acknowledged: the device sends it again.
            self.log.info("message before hello ignored", message=type(msg).__name__)
        else:
            if self.codec.sequenced:
                if self._recent.seen(item.seq):
                    self._duplicate(item.seq, m.Ack(item.seq), type(msg).__name__)
                    return
                self._recent.add(item.seq)
                if self._confirm:
                    self._take(item.seq, m.Ack(item.seq))
                else:
                    self._send(m.Ack(item.seq))
            self._served = True
            try:
                self._on_message(msg)
            except Exception:  # noqa: BLE001 - one bad message must not stop the link
                self.stats.rejected += 1
                # Its kind only: a card message's fields are cards still face down.
                self.log.exception("message not understood", message=type(msg).__name__)
            finally:
                left = self.take_receipt()
                if left is not None:      # nothing of it to keep: acknowledge it now
                    self.confirm(left)

    def _unnumbered(self, item: Rejected) -> bool:
        """Whether ``item`` is a whole frame of a reliable type sent with SEQ 0 (section 3.1:
        malformed, never answered), as a device does that numbers none of its reports."""
        cls = m.MESSAGE_TYPES.get(item.type) if item.type is not None else None
        return (self.codec.sequenced and item.seq == 0 and cls is not None and cls.RELIABLE
                and item.reason in ("bad-payload", "wrong-sender"))

    def _damaged_again(self, item: Rejected) -> bool:
        """A reliable frame of the device's arrived damaged (its CRC): whether to ask for it
        again at once (NAK 1). It is asked for as often as a command of the host's is sent
        again (section 3.1); a frame that comes damaged that many times in a row is the
        device's or the cable's fault, not noise: the table hears once, as the device's
        malfunction, that what the device reports does not reach it, and the frame is asked for
        no more (the device still sends it every ack timeout, no longer as fast as the line
        goes, and a copy that comes whole is taken)."""
        n = self._again(("crc", item.seq))
        # As long as a command of the host's is tried (its retries, an ack timeout each): a
        # burst of noise damages the copies sent back to back on the NAKs, not those after.
        lasted = asyncio.get_running_loop().time() - self._damaged_since
        if (n > self.timing.retries and not self._damaged_told
                and lasted >= (self.timing.retries + 1) * self.timing.ack_timeout_s
                and not self._recent.seen(item.seq)):
            self._damaged_told = True
            what = _frame_name(item).replace(" (crc)", "")
            self.log.error("frame damaged again and again", seq=item.seq, copies=n)
            self._emit(ev.Malfunction(
                device=self.spec.id, ts=self.clock(), code=LOST_EVENT_CODE,
                text=f"sent {what} damaged {n} times in a row over {lasted:.1f} s, so what it "
                     "reports does not reach the controller: check the cable, then the device"))
        return n <= self.timing.retries

    def _too_long_again(self, item: Rejected) -> Rejected | None:
        """A checked header naming a frame past the maximum length. Once it is as likely
        line noise that looks like a header (a NAK would then refuse the frame of that number
        the device has in flight): None, nothing to answer. It is the device's reliable frame
        when it comes again under the same number and type as often as a command of the
        host's is sent: then it is refused (NAK 3) and reported as a frame the host cannot
        read, and so is each copy after it (the NAK may be lost; it is reported once)."""
        cls = m.MESSAGE_TYPES.get(item.type) if item.type is not None else None
        if not self.codec.sequenced or not item.seq or (cls is not None and not cls.RELIABLE):
            return None         # an unsequenced frame is never sent again
        if self._again(("too-long", item.seq, item.type)) <= self.timing.retries:
            return None
        return Rejected(item.reason, item.seq, item.type, item.detail,
                        m.NAK_UNKNOWN_TYPE if cls is None else m.NAK_BAD_PAYLOAD)

    def _again(self, key: tuple) -> int:
        """How many times in a row the device's frame ``key`` came unreadable."""
        last, n = self._damaged
        if last != key:
            self._damaged_since = asyncio.get_running_loop().time()
            self._damaged_told = False
        self._damaged = (key, n + 1 if last == key else 1)
        return self._damaged[1]

    def _duplicate(self, seq: int, answer: m.Ack | m.Nak, what: str) -> None:
        """A reliable frame whose number was taken already (its answer was lost, or it was
        late): answered again, unless it is not durable yet (the answer waits for confirm())."""
        self.stats.duplicates += 1
        # The first in full, then the copies summed per NOISE_LOG_S (_Tally).
        if seq in self._unconfirmed:
            self._awaiting.add(first={"seq": seq, "message": what}, copies=1)
            return
        self._suppressed.add(first={"seq": seq, "message": what}, copies=1)
        self._answer(answer)

    def _take(self, seq: int, answer: m.Ack | m.Nak) -> None:
        """Confirm mode: frame ``seq`` is being delivered; ``answer`` goes at confirm()."""
        assert self.session is not None and self.identity is not None
        self._unconfirmed[seq] = answer
        self._delivering = Receipt(self.spec.id, self.identity.serial, self.session, seq)

    def _refuse_after_record(self, item: Rejected) -> None:
        """Confirm mode: a reliable frame to refuse with NAK 2 or 3. The device never sends
        it again once refused, so the malfunction that records its loss carries the frame's
        receipt and the NAK waits for confirm(), as an Ack does; a copy sent meanwhile is
        neither refused nor reported again, and one sent after is refused again."""
        assert item.seq is not None and item.nak is not None
        nak = m.Nak(item.seq, item.nak)
        if self._recent.seen(item.seq):
            self._duplicate(item.seq, nak, _frame_name(item))
            return
        self._recent.add(item.seq)
        self._take(item.seq, nak)
        try:
            self._lost_event(item)
        finally:
            left = self.take_receipt()
            if left is not None:      # nothing of it kept: refuse it now
                self.confirm(left)

    def _answer(self, answer: m.Ack | m.Nak) -> None:
        if isinstance(answer, m.Nak):
            self.stats.naks_sent += 1
        self._send(answer)

    def take_receipt(self) -> Receipt | None:
        """During ``on_message`` in confirm mode: the receipt of the frame being delivered,
        which the caller now owns (it must :meth:`confirm` it). None otherwise."""
        r, self._delivering = self._delivering, None
        return r

    def confirm(self, receipt: Receipt) -> None:
        """The event of ``receipt`` is durable: acknowledge its frame to the device (or, for
        a frame the host could not read, send its NAK). A receipt of an earlier session is
        ignored (the device numbered the frame anew and sends it again); while the link is
        down the device sends the frame again after the resume and the answer goes then."""
        answer = (self._unconfirmed.pop(receipt.seq, None) if receipt.session == self.session
                  else None)
        if answer is None:
            self.log.info("confirmation of another session ignored", seq=receipt.seq,
                          session=receipt.session)
            return
        if self.state == "up":
            self._answer(answer)

    def _on_ack(self, ack: m.Ack) -> None:
        p = self._pending
        if p is not None and not p.future.done() and (not self.codec.sequenced
                                                      or ack.seq == p.seq):
            p.future.set_result(ack.code)
            if self.state == "up":
                self._served = True

    def _lost_event(self, item: Rejected) -> None:
        """A frame the device will not send again: a reliable one refused with NAK 2 or 3
        (section 3.1), or, with a codec whose events are not acknowledged, any frame damaged
        or unreadable. Whatever it reported, a card out of the shoe or a throw of the dice
        among others, is lost to the table, and a device that sends what the protocol does not
        allow is out of order. The table hears
        of it as the device's malfunction, which its regulation rules on; the frame's detail
        stays in the log (it may name a field's value)."""
        what = _frame_name(item)
        self._emit(ev.Malfunction(
            device=self.spec.id, ts=self.clock(), code=LOST_EVENT_CODE,
            text=f"sent {what}, which the controller cannot read; what it reported is lost: "
                 "check the device before the next round"))

    def _on_nak(self, nak: m.Nak) -> None:
        p = self._pending
        if p is None or p.future.done() or nak.seq != p.seq:
            return
        if not self.codec.sequenced:
            # Without sequence numbers a NAK names no frame: it may be of a heartbeat, of
            # noise, or come after the command was acted on. The command is sent once (a copy
            # could act twice) and ends only on its acknowledgement or the time bound.
            self.log.info("NAK without a sequence number: the command waits for its answer",
                          reason=m.NAK_REASONS.get(nak.reason, nak.reason))
            return
        if nak.reason == m.NAK_CRC:
            # The copy came damaged: send it again at once, as often as the host asks for a
            # damaged frame of the device's (section 3.1). These copies are no retries: a
            # burst of noise damages the ones sent back to back, so the command fails on the
            # ack timeouts alone. Past them the next copy waits for the ack timeout, and the
            # two sides do not trade the frame as fast as the line goes.
            if p.on_nak < self.timing.retries:
                self.stats.retransmissions += 1
                p.on_nak += 1
                self.log.info("resent after NAK", seq=p.seq)
                self._queue_bytes(p.data)
            else:
                self.log.info("NAK not answered at once: resent at the ack timeout", seq=p.seq)
        else:
            self.log.warning("command not understood by the device, not sent again", seq=p.seq,
                             reason=m.NAK_REASONS.get(nak.reason, nak.reason))
            p.future.set_exception(NotUnderstood(self.spec.id, nak.reason))

    def _on_heartbeat(self, hb: m.Heartbeat) -> None:
        if self.state != "up":
            return
        if 0 <= hb.uptime_ms + 1000 < self._last_uptime and self._last_uptime < 0xFFFF0000:
            self._set_rebooted(f"device rebooted (uptime went back to {hb.uptime_ms} ms)")
        self._last_uptime = hb.uptime_ms

    def _on_hello_info(self, info: m.HelloInfo) -> None:
        if self.state == "up":
            if info.boot:
                self._set_rebooted("device rebooted")
            return
        if self.state != "hello" or self._hello_wait is None or self._hello_wait.done():
            return
        self._infos += 1
        if info.boot:
            # The device just started and waits for our Hello: ask at once, once an attempt
            # (a device that answers every hello so would have the two trade them as fast as
            # the line goes; the next attempt asks again).
            self._boots += 1
            if self._boot_asked != self._attempt:
                self._boot_asked = self._attempt
                self._send(self._hello_message())
            return
        problem = self._check(info)
        if problem:
            self._hello_wait.set_result(problem)
            return
        remembered = self._ever_up or self._memory is not None
        if info.resumed and remembered and not self._new_session and not self._same_device(info):
            # Another unit behind the same port offers to resume ITS session: its numbers and
            # ours have nothing in common, so insist on a new session (protocol §3.2).
            self.log.warning("different device behind the port: new session",
                             serial=info.serial, previous=self.identity and self.identity.serial)
            self._new_session = True
            self._send(self._hello_message())
            return
        if self._mute:
            # The last link died before the device said a word after its HelloInfo: this one
            # is not called up (nor restored, nor lost again) until the device is heard, so a
            # device that keeps no heartbeat is not reported up and lost every few seconds.
            self._held = info
            self._hello_wait.set_result(None)
            return
        self._hello_wait.set_result(self._accept(info))

    def _take_held(self) -> bool:
        """The device is heard after the HelloInfo held back: the link comes up on it now.
        False when the session could not be recorded (the link is then lost)."""
        info, self._held = self._held, None
        assert info is not None
        problem = self._accept(info)
        if problem:
            self.log.error("device refused", problem=problem)
            self._problem = problem
            self._set_lost(problem)
            return False
        return True

    def _accept(self, info: m.HelloInfo) -> str | None:
        """Take the device's HelloInfo (checked): start or resume the session, and call the
        link up (or restored). The problem that keeps it down, or None."""
        # RESUMED answers only a hello that asked to resume: a device that says it to one
        # asking for a new session (another unit behind the port) gets a new session.
        asked, self._new_session = not self._new_session, False
        remembered = self._ever_up or self._memory is not None
        memory, self._memory = self._memory, None
        resumed = bool(info.resumed and remembered and asked)
        if not resumed:
            # A new session: both sides number from 1 and forget what they saw.
            self._recent.clear()
            self._unconfirmed.clear()
            self._tx_count = self._tx_reserved = 0
            self._damaged = (None, 0)
            self.session = secrets.token_hex(8)
        elif memory is not None and not self._ever_up:
            # The session of a host that restarted: the device's frame that may come again
            # is known durable; commands go on after every number the old host may have used.
            self._recent.clear()
            for seq in memory.rx_seqs[-RECENT_SEQS:]:
                self._recent.add(seq)
            self._unconfirmed.clear()
            self._tx_count = self._tx_reserved = memory.tx_reserved
            self.session = memory.session
        ident = ev.DeviceIdentity(
            device_class=info.class_name, vendor=info.vendor, model=info.model,
            serial=info.serial, firmware_version=info.firmware_version,
            firmware_hash=info.firmware_hash.hex(), recognises_cards=info.recognises_cards)
        if self._on_session is not None and (not resumed or memory is not None):
            try:
                # The session is recorded; numbers are recorded as commands need them.
                self._reserve(ident, self._tx_count)
            except Exception as exc:  # noqa: BLE001 - no session the consumer cannot record
                return f"the session could not be recorded: {exc}"
        self._last_uptime = -1
        self._last_rx = self._up_at = asyncio.get_running_loop().time()
        self.identity = ident
        self.state = "up"
        self._problem = None
        self._refused = None        # a refusal after this link is told again
        self.up.set()
        cls = ev.LinkRestored if self._ever_up else ev.LinkUp
        self._ever_up = True
        self.log.info("link up" if cls is ev.LinkUp else "link restored",
                      vendor=info.vendor, model=info.model, serial=info.serial,
                      firmware=info.firmware_version)
        if cls is ev.LinkRestored:
            self._emit(cls(device=self.spec.id, ts=self.clock(), identity=self.identity,
                           resumed=resumed))
        else:
            self._emit(cls(device=self.spec.id, ts=self.clock(), identity=self.identity))
        return None

    def _same_device(self, info: m.HelloInfo) -> bool:
        ident = self.identity
        if ident is None and self._memory is not None:
            return (info.serial == self._memory.serial
                    and info.firmware_hash.hex() == self._memory.firmware_hash)
        return (ident is not None and info.serial == ident.serial
                and info.firmware_hash.hex() == ident.firmware_hash)

    def _reserve(self, ident: ev.DeviceIdentity, upto: int) -> None:
        """Have the consumer record the session and the commands numbered up to ``upto``
        before any of them is sent."""
        assert self._on_session is not None and self.session is not None
        self._on_session(SessionMemory(ident.serial, ident.firmware_hash, self.session,
                                       tx_reserved=upto).mark())
        self._tx_reserved = upto

    def _check(self, info: m.HelloInfo) -> Refusal | None:
        if info.protocol != m.PROTOCOL_VERSION:
            return Refusal(
                "protocol_version",
                f"device speaks protocol version {info.protocol}, this controller "
                f"{m.PROTOCOL_VERSION}; update the device firmware or the controller",
                _given(info), {"protocol": m.PROTOCOL_VERSION})
        if info.class_name != self.spec.device_class:
            return Refusal(
                "device_class",
                f"device says it is a {info.class_name}, configured as a "
                f"{self.spec.device_class}; {self._other_device_advice(info)}",
                _given(info), {"device_class": self.spec.device_class})
        approved = getattr(self.spec, "firmware_hash", "")
        if approved and info.firmware_hash.hex() != approved:
            # The regulator approves the firmware by its hash: another one is not linked.
            given = (f"gives firmware hash {info.firmware_hash.hex()}" if info.firmware_hash
                     else "gives no firmware hash")
            return Refusal(
                "firmware_hash",
                f"device {shown(self.spec.id)} (serial number {info.serial}, firmware "
                f"{info.firmware_version}) {given}, not the approved {approved}: install "
                "the approved firmware on the device, or a supervisor sets firmware_hash "
                f"of [devices.{self.spec.id}] in the table configuration to the newly "
                "approved firmware's hash",
                _given(info), {"firmware_hash": approved})
        return None

    def _other_device_advice(self, info: m.HelloInfo) -> str:
        """How to reach the configured device instead of the one found, for this transport:
        a USB device is chosen by its vendor, product and serial number, not by a port."""
        spec = self.spec
        if getattr(spec, "transport", "serial") == "usb":
            return (f"the USB device found (usb_vendor 0x{spec.usb_vendor:04x}, usb_product "
                    f"0x{spec.usb_product:04x}, serial number {info.serial}) is that "
                    f"{info.class_name}: set usb_serial (or usb_vendor / usb_product) of this "
                    f"device in the table configuration to the {spec.device_class}'s")
        return (f"port = \"{spec.port}\" in the table configuration reaches that "
                f"{info.class_name} (serial number {info.serial}): check the port, and which "
                "cable goes to which device")

    # -- commands ------------------------------------------------------------------------
    async def request(self, msg: m.Message) -> int:
        """Send a command and wait for its acknowledgement; return the device's verdict
        (0 accepted, else a refusal code). Raises LinkDown when the link is down or the device
        does not acknowledge after the retries (which also declares the link lost): 4 ack
        timeouts after the first copy, however many copies the device's NAKs asked for."""
        async with self._cmd_lock:
            if self.state != "up":
                raise NotSent(f"device {shown(self.spec.id)} is not connected ({self.state}); the "
                              f"{type(msg).__name__} command was not sent. The driver "
                              "reconnects by itself; check the device's cable and power")
            seq = 0
            if self.codec.sequenced:
                if self._on_session is not None and self._tx_count >= self._tx_reserved:
                    assert self.identity is not None
                    self._reserve(self.identity, self._tx_count + TX_RESERVE)
                self._tx_count += 1
                seq = (self._tx_count - 1) % 255 + 1
            data = self.codec.encode(msg, seq)
            p = _Pending(seq, data, asyncio.get_running_loop().create_future())
            asked = asyncio.get_running_loop().time()
            self._pending = p
            # Without sequence numbers a resent command could act twice: send it once and
            # wait as long as all the retries would have taken. Either way the command fails
            # only when that long (4 ack timeouts) passed after its first copy: copies sent
            # again at once on NAKs (_on_nak) move no timeout and use up no retry.
            tries = 1 + self.timing.retries if self.codec.sequenced else 1
            timeout = self.timing.ack_timeout_s * (1 if self.codec.sequenced
                                                   else 1 + self.timing.retries)
            try:
                while True:
                    if p.sent >= tries:
                        reason = (f"no acknowledgement of {type(msg).__name__} after "
                                  f"{p.sent} attempts in {tries * timeout:.2f} s")
                        if p.on_nak:
                            reason += (f" (and {p.on_nak} more sent at once on NAKs of "
                                       "damaged copies)")
                        unread = self._unread_since(asked, prefer=m.Ack.TYPE)
                        if unread is not None:     # answered, maybe, but unreadably
                            reason += (f": the device answers, but with {unread} that the "
                                       f"controller cannot read; {self._unread_advice()}")
                        self._set_lost(reason)
                        raise LinkDown(f"device {shown(self.spec.id)}: {reason}; the link is "
                                       "declared lost and will be reopened")
                    if p.sent:
                        self.stats.retransmissions += 1
                        self.log.info("resent", seq=seq, message=type(msg).__name__)
                    p.sent += 1
                    self._queue_bytes(data)
                    try:
                        return await asyncio.wait_for(asyncio.shield(p.future), timeout)
                    except TimeoutError:
                        continue
            finally:
                self._pending = None
