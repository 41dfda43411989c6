"""The device's link layer: the firmware side of docs/protocol.md around one firmware model.

:class:`DeviceRuntime` takes bytes from the host (``receive``), decodes them with the project's
codec (``drivers.protocol``), answers the hello exchange (a new session, or a resumed one that
keeps the sequence numbers), acknowledges and de-duplicates commands, hands them to the firmware
model, and sends the model's events as reliable frames, stop-and-wait, sent again every ack
timeout until acknowledged (a device never gives up on an event), with heartbeats in between.
It does no I/O of its own: bytes go out through ``port.write`` and time comes in as ``now``
arguments, so the asyncio side (``firmware_sim.table``) drives it from the real clock and a test
can drive it by hand. Link-level faults (a dropped, duplicated, delayed or corrupted frame,
garbage, heartbeats stopping, a disconnect, a reboot) are applied here, on the bytes the host
will see.
"""
from __future__ import annotations

import collections
import hashlib
import random
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from drivers.events import DeviceIdentity
from drivers.protocol import CodecError, Received, Rejected, get_codec
from drivers.protocol import messages as m

from .faults import Fault, FaultSchedule
from .models import MODELS, FirmwareModel, Refused
from .models.base import Emit
from .wire import COMMANDS, to_message

ACK_TIMEOUT_S = 0.2          # docs/protocol.md 3.5; a device resends at this pace for ever
DEFAULT_HEARTBEAT_S = 0.25
DUPLICATE_MEMORY = 32

VENDOR = "tablectl-sim"
MODELS_NAMES = {"shuffler": "SIM-SHUFFLER", "shoe": "SIM-SHOE", "dice": "SIM-DICE",
                "box-sensors": "SIM-BOXES"}
FIRMWARE_VERSION = "1.0.0"


def firmware_hash(device_class: str) -> bytes:
    """SHA-256 of the simulated firmware's source: the same code reports the same hash."""
    import inspect
    h = hashlib.sha256()
    for obj in (MODELS[device_class], DeviceRuntime):
        h.update(inspect.getsource(inspect.getmodule(obj)).encode())
    return h.digest()


@dataclass(frozen=True)
class SimIdentity:
    """What the simulated device says of itself in HelloInfo."""

    device_class: str
    serial: str
    vendor: str = VENDOR
    model: str = ""
    firmware_version: str = FIRMWARE_VERSION
    firmware_hash: bytes = b""
    recognises_cards: bool = True
    units: int = 0

    def hello_info(self, boot: bool, resumed: bool = False) -> m.HelloInfo:
        flags = ((m.FLAG_RECOGNISES_CARDS if self.recognises_cards else 0)
                 | (m.FLAG_BOOT if boot else 0) | (m.FLAG_RESUMED if resumed else 0))
        return m.HelloInfo(m.PROTOCOL_VERSION, m.DEVICE_CLASS_CODES[self.device_class], flags,
                           self.units, self.vendor, self.model, self.serial,
                           self.firmware_version, self.firmware_hash)

    def as_device_identity(self) -> DeviceIdentity:
        """The identity a driver reports in LinkUp (drivers.events)."""
        return DeviceIdentity(self.device_class, self.vendor, self.model, self.serial,
                              self.firmware_version, self.firmware_hash.hex(),
                              self.recognises_cards)


class Port(Protocol):
    """What the runtime needs of a transport (pty, TCP, USB)."""

    def write(self, data: bytes) -> None: ...
    def disconnect(self) -> None: ...
    def reconnect(self) -> None: ...
    def on_reboot(self) -> None: ...


class NullPort:
    """A port that goes nowhere (a runtime driven by hand in a test)."""

    def __init__(self) -> None:
        self.sent = bytearray()
        self.connected = True

    def write(self, data: bytes) -> None:
        if self.connected:
            self.sent += data

    def disconnect(self) -> None:
        self.connected = False

    def reconnect(self) -> None:
        self.connected = True

    def on_reboot(self) -> None:
        pass


class DeviceRuntime:
    """One simulated device: a firmware model behind the protocol's link rules."""

    def __init__(self, model: FirmwareModel, identity: SimIdentity, *, codec: str = "tablectl",
                 port: Port | None = None, now: float = 0.0, link_seed: int = 0,
                 on_emit: Callable[[float, Emit], None] | None = None) -> None:
        self.model = model
        self.identity = identity
        self.device_class = model.device_class
        self.codec_name = codec
        self.codec = get_codec(codec, receive_from="host")
        self.sequenced = self.codec.sequenced
        self.port: Port = port or NullPort()
        self.schedule: FaultSchedule = model.schedule
        self.on_emit = on_emit
        #: called just before a frame goes on the wire: (kind, message type name, seq)
        self.on_transmit: Callable[[str, str, int], None] | None = None
        self._rng = random.Random(link_seed)
        self.stats: collections.Counter[str] = collections.Counter()
        #: recent frames, newest last: (now, "tx"|"rx", message type name, seq, note)
        self.frames: collections.deque[tuple[float, str, str, int, str]] = collections.deque(
            maxlen=2000)
        #: the events the host acknowledged, oldest first: what it promised to keep (3.6)
        self.acked: collections.deque[m.Message] = collections.deque(maxlen=1_000_000)
        self.started = now
        self._boot(now)

    # --- state --------------------------------------------------------------------------

    def _boot(self, now: float) -> None:
        self.boot_time = now
        self.hello_done = False
        # A session since this boot: only then can a Hello(resume=1) resume (docs 3.2).
        self.in_session = False
        self.heartbeat_s = DEFAULT_HEARTBEAT_S
        self.tx_seq = 0
        self.inflight: list[Any] | None = None   # [seq, message, bytes, sent_at, tries]
        self.queue: collections.deque[m.Message] = collections.deque()
        self.seen: collections.OrderedDict[int, int] = collections.OrderedDict()
        self.last_rx = now
        self.last_hb = now
        self.heartbeats_on = True
        self.heartbeats_resume_at: float | None = None
        self.silent_until: float | None = None
        self.silent = False
        self.reconnect_at: float | None = None
        self.out_faults: dict[str, list[Any]] = {}      # name -> [count, frames, extra]
        self.delayed: list[tuple[float, bytes]] = []
        self.codec.reset()
        self._send(self.identity.hello_info(boot=True), now)

    # --- input ------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> None:
        """Bytes from the host."""
        for item in self.codec.feed(data):
            if isinstance(item, Rejected):
                self.stats["rejected"] += 1
                self.stats[f"rejected_{item.reason}"] += 1
                self._log(now, "rx", f"rejected:{item.reason}", item.seq or 0, item.detail)
                if item.nak is not None and self.sequenced:
                    self._send(m.Nak(item.seq, item.nak), now)
                continue
            self.last_rx = now
            self._on_message(item, now)
        self.pump(now)

    def _on_message(self, item: Received, now: float) -> None:
        msg, seq = item.message, item.seq
        self.stats["frames_received"] += 1
        self._log(now, "rx", type(msg).__name__, seq)
        if isinstance(msg, m.Hello):
            self._hello(msg, now)
        elif isinstance(msg, m.Heartbeat):
            pass
        elif isinstance(msg, m.Ack):
            if self.inflight is not None and msg.seq == self.inflight[0]:
                self.acked.append(self.inflight[1])
                self.inflight = None
        elif isinstance(msg, m.Nak):
            if self.inflight is not None and msg.seq == self.inflight[0]:
                if msg.reason == m.NAK_CRC:
                    self.stats["nak_retransmissions"] += 1
                    self._retransmit(now, "after nak")
                else:
                    self.inflight = None          # not understood: never send it again
        elif not self.hello_done:
            # After power-on or a reboot a device sends only heartbeats until a Hello
            # (docs/protocol.md 3.2): a command sent before the reboot and retransmitted is
            # neither answered nor acted on (a late dispense would be worse than none).
            self.stats["commands_before_hello"] += 1
            self._log(now, "rx", type(msg).__name__, seq, "before hello: ignored")
        else:
            self._command(msg, seq, now)

    def _hello(self, msg: m.Hello, now: float) -> None:
        # Resume only what this boot remembers: after a reboot there is nothing to keep.
        resumed = bool(msg.resume) and self.in_session and self.sequenced
        if not resumed:
            # A new session: forget the host's numbers, number from 1 again; the event in
            # flight goes first, renumbered.
            self.seen.clear()
            self.tx_seq = 0
            if self.inflight is not None:
                self.queue.appendleft(self.inflight[1])
                self.inflight = None
        self.in_session = True
        self.heartbeat_s = min(10.0, max(0.05, msg.heartbeat_ms / 1000))
        self.hello_done = True
        self.stats["hellos"] += 1
        self.stats["resumed_sessions" if resumed else "new_sessions"] += 1
        self._send(self.identity.hello_info(boot=False, resumed=resumed), now)
        if resumed and self.inflight is not None:
            # The same bytes under the same number: a host that already has it says so.
            self._retransmit(now, "after resume")

    def _command(self, msg: m.Message, seq: int, now: float) -> None:
        if self.sequenced and seq in self.seen:
            # A duplicate (our ack was lost, or the frame was late): same verdict, no action.
            self.stats["duplicate_commands"] += 1
            self._send(m.Ack(seq, self.seen[seq]), now, kind="acks")
            return
        self.stats["commands"] += 1
        for f in self.schedule.count("at_command"):
            self.inject(f, now)
        code = m.ACK_OK
        emits: list[Emit] = []
        spec = COMMANDS.get(type(msg))
        if spec is None or not msg.for_class(self.device_class):
            code = m.REFUSAL_NUMBERS["unknown-command"]
        else:
            name, args = spec
            try:
                emits = self.model.command(name, now, **args(msg))
            except Refused as r:
                code = m.REFUSAL_NUMBERS[r.code]
                self.stats["refused"] += 1
        if self.sequenced:
            self.seen[seq] = code
            while len(self.seen) > DUPLICATE_MEMORY:
                self.seen.popitem(last=False)
        self._send(m.Ack(seq, code), now, kind="acks")
        self._emit_all(emits, now)

    # --- output -----------------------------------------------------------------------

    def _emit_all(self, emits: list[Emit], now: float) -> None:
        for e in emits:
            if self.on_emit is not None:
                self.on_emit(now, e)
            msg = to_message(e)
            if not msg.for_class(self.device_class):
                continue
            if self.sequenced:
                self.queue.append(msg)
            else:
                self._send(msg, now, kind="events")
        for f in self.model.take_link_faults():
            self._link_fault(f, now)
        self.pump(now)

    def pump(self, now: float) -> None:
        """Send the next queued event when nothing is in flight (stop-and-wait)."""
        if (not self.sequenced or not self.hello_done or self.inflight is not None
                or not self.queue):
            return
        msg = self.queue.popleft()
        self.tx_seq = self.tx_seq % 255 + 1
        data = self.codec.encode(msg, self.tx_seq)
        self.inflight = [self.tx_seq, msg, data, now, 0]
        self._transmit(data, now, "events", type(msg).__name__, self.tx_seq)

    def _retransmit(self, now: float, why: str = "retransmission") -> None:
        assert self.inflight is not None
        # Never given up (docs/protocol.md 3.1): a device that stopped and waited for a Hello
        # would wait for ever, as its heartbeats give the host no reason to send one.
        seq, msg, data, _, tries = self.inflight
        self.inflight[3] = now
        self.inflight[4] = tries + 1
        self.stats["retransmissions"] += 1
        self._transmit(data, now, "events", type(msg).__name__, seq, why)

    def _send(self, msg: m.Message, now: float, kind: str = "link") -> None:
        """An unsequenced frame (ack, nak, hello info, heartbeat) or, for a codec without
        sequence numbers, any frame."""
        try:
            data = self.codec.encode(msg, 0)
        except CodecError:
            self.stats["not_encodable"] += 1     # this codec has no frame for it
            return
        self._transmit(data, now, kind, type(msg).__name__, 0)

    def _transmit(self, data: bytes, now: float, kind: str, name: str, seq: int,
                  note: str = "") -> None:
        """Put one frame on the wire, through the output faults that are armed."""
        if self.silent:
            self.stats["silenced"] += 1
            return
        for fault in ("drop", "corrupt_crc", "delay", "duplicate"):
            armed = self.out_faults.get(fault)
            if not armed or armed[0] <= 0 or not (armed[1] == "any" or armed[1] == kind):
                continue
            armed[0] -= 1
            self.stats[f"fault_{fault}"] += 1
            self._log(now, "tx", name, seq, fault)
            if fault == "drop":
                return
            if fault == "corrupt_crc":
                b = bytearray(data)
                b[-2] ^= 0x5A      # the frame's checksum byte (CRC-16 high byte; dice: CHK)
                data = bytes(b)
            elif fault == "delay":
                self.delayed.append((now + armed[2], data))
                return
            elif fault == "duplicate":
                self.port.write(data)
        self.stats["frames_sent"] += 1
        self._log(now, "tx", name, seq, note)
        if self.on_transmit is not None:
            self.on_transmit(kind, name, seq)
        self.port.write(data)

    def _log(self, now: float, way: str, name: str, seq: int, note: str = "") -> None:
        self.frames.append((now, way, name, seq, note))

    # --- the clock --------------------------------------------------------------------

    def poll(self, now: float) -> None:
        """Do everything due at ``now``: firmware timers, retransmission, heartbeats, faults."""
        for f in self.schedule.due_by_time(now - self.started):
            self.inject(f, now)
        self._emit_all(self.model.advance(now), now)
        if self.reconnect_at is not None and now >= self.reconnect_at:
            self.reconnect_at = None
            self.port.reconnect()
        if self.heartbeats_resume_at is not None and now >= self.heartbeats_resume_at:
            self.heartbeats_resume_at = None
            self.heartbeats_on = True
        if self.silent_until is not None and now >= self.silent_until:
            self.silent_until = None
            self.silent = False
        due = [d for d in self.delayed if d[0] <= now]
        if due:
            self.delayed = [d for d in self.delayed if d[0] > now]
            for _, data in due:
                if not self.silent:
                    self.port.write(data)
        if self.inflight is not None and now - self.inflight[3] >= ACK_TIMEOUT_S:
            self._retransmit(now)
        if self.heartbeats_on and now - self.last_hb >= self.heartbeat_s:
            self.last_hb = now
            uptime = int((now - self.boot_time) * 1000) & 0xFFFFFFFF
            self._send(m.Heartbeat(uptime), now, kind="heartbeats")
        self.pump(now)

    def next_deadline(self, now: float) -> float:
        """When :meth:`poll` next has something to do."""
        times = [self.last_hb + self.heartbeat_s if self.heartbeats_on else now + 1.0]
        for t in (self.model.next_deadline(), self.reconnect_at, self.heartbeats_resume_at,
                  self.silent_until):
            if t is not None:
                times.append(t)
        if self.inflight is not None:
            times.append(self.inflight[3] + ACK_TIMEOUT_S)
        times.extend(d for d, _ in self.delayed)
        nt = self.schedule.next_time()
        if nt is not None:
            times.append(self.started + nt)
        return min(times)

    # --- faults and physical actions ----------------------------------------------------

    def inject(self, fault: Fault, now: float) -> None:
        """Apply a fault now (device- or link-level)."""
        self.stats["faults"] += 1
        if fault.level == "link":
            self._link_fault(fault, now)
        else:
            self._emit_all(self.model.inject(fault, now), now)

    def act(self, action: str, now: float, *args: Any, **kw: Any) -> Any:
        """A physical action on the model (``draw``, ``place_card``…); its events go out."""
        result = getattr(self.model, action)(now, *args, **kw)
        emits = self.model._flush() if result is None else result
        self._emit_all(list(emits), now)

    def _link_fault(self, fault: Fault, now: float) -> None:
        a = fault.args
        name = fault.name
        if name == "disconnect":
            self.port.disconnect()
            self.reconnect_at = None if a["duration_s"] is None else now + a["duration_s"]
        elif name == "reconnect":
            self.reconnect_at = None
            self.port.reconnect()
        elif name == "reboot":
            self.stats["reboots"] += 1
            self.model.reboot(now)
            self.port.on_reboot()
            self._boot(now)
        elif name == "garbage":
            junk = bytes(self._rng.randrange(256) for _ in range(a["nbytes"]))
            self._log(now, "tx", "garbage", 0, f"{len(junk)} bytes")
            if not self.silent:
                self.port.write(junk)
        elif name in ("corrupt_crc", "drop", "duplicate", "delay"):
            self.out_faults[name] = [a["count"], a.get("frames", "events"), a.get("seconds", 0)]
        elif name == "heartbeat_stop":
            self.heartbeats_on = False
            self.heartbeats_resume_at = (None if a["duration_s"] is None
                                         else now + a["duration_s"])
        elif name == "heartbeat_resume":
            self.heartbeats_on = True
            self.heartbeats_resume_at = None
        elif name == "silence":
            self.silent = True
            self.silent_until = None if a["duration_s"] is None else now + a["duration_s"]
        elif name == "resume":
            self.silent = False
            self.silent_until = None

    def status(self) -> dict[str, Any]:
        """The firmware's status and the link's counters, for tests and the control channel."""
        return {"firmware": self.model.status(), "hello_done": self.hello_done,
                "queued": len(self.queue) + (self.inflight is not None),
                "in_session": self.in_session,
                "unacknowledged": None if self.inflight is None else self.inflight[0],
                "stats": dict(self.stats)}
