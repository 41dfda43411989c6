"""A device built from docs/protocol.md alone, as a device maker's firmware engineer would.

Standard library only: nothing here comes from drivers/, firmware_sim/ or controller/, so
what it gets right the document said, and what it needed and could not find is a fix to the
document. It sits on the master side of a real pseudo-terminal; the host opens the slave.

:class:`DocDevice` keeps the link rules of section 3 (BOOT notice, hello, heartbeats, its
own stop-and-wait events resent every ack timeout, the host's commands acknowledged once
each) and records every frame the host sends, for the tests to check against the document.
:func:`frame` builds any frame, well formed or not, for the attacks.
"""
from __future__ import annotations

import errno
import os
import select
import struct
import threading
import time
import tty
from typing import Callable

# --- section 2: framing ---------------------------------------------------------------------

SOF = 0xA5
MAX_PAYLOAD = 1024
ACK, NAK, HELLO, HELLO_INFO, HEARTBEAT, STATUS_REQUEST, STATUS_REPORT = range(1, 8)
UNSEQUENCED = {ACK, NAK, HELLO, HELLO_INFO, HEARTBEAT}
CARD_DRAWN, CUT_CARD_REACHED, MISREAD = 0x40, 0x41, 0x42
SHAKE, SHAKE_STARTED, DICE_RESULT = 0x50, 0x60, 0x61
# 5.4 and 5.6: commands of other classes, answered Ack(seq, 1) (section 5.7)
OTHER_COMMANDS = {0x20, 0x21, 0x22, 0x23, 0x50}
ACK_TIMEOUT_S = 0.2     # 3.5: "device: 200 ms"
SHOE, DICE = 2, 3       # HelloInfo.device_class
FLAG_RECOGNISES, FLAG_BOOT, FLAG_RESUMED = 0x01, 0x02, 0x04


def crc8(data: bytes) -> int:
    """CRC-8/SMBUS as section 2 gives it: poly 0x07, init 0x00, not reflected, no xor."""
    crc = 0x00
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not reflected, no xor."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def frame(seq: int, typ: int, payload: bytes = b"", *, length: int | None = None,
          hcrc: int | None = None, crc: int | None = None) -> bytes:
    """One frame; ``length``, ``hcrc`` or ``crc`` given override the honest value (the
    other CRCs are still computed over what is sent)."""
    n = len(payload) if length is None else length
    head = struct.pack(">HBB", n, seq, typ)
    head += bytes([crc8(head) if hcrc is None else hcrc])
    body = head + payload
    return bytes([SOF]) + body + struct.pack(">H", crc16(body) if crc is None else crc)


def pstr(text: str) -> bytes:
    raw = text.encode("utf-8")
    return bytes([len(raw)]) + raw


class Deframer:
    """Section 2, *Receiving*, step by step."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.garbage = 0

    def feed(self, data: bytes) -> list[tuple[str, int, int, bytes]]:
        """(``good`` or ``bad``, seq, type, payload) for each frame ``data`` completes."""
        self.buf += data
        out = []
        while True:
            start = self.buf.find(SOF)
            if start < 0:
                self.garbage += len(self.buf)
                self.buf.clear()
                return out
            self.garbage += start
            del self.buf[:start]
            if len(self.buf) < 6:
                return out
            length, seq, typ, hcrc = struct.unpack(">HBBB", self.buf[1:6])
            if crc8(bytes(self.buf[1:5])) != hcrc or length > MAX_PAYLOAD:
                self.garbage += 1
                del self.buf[:1]
                continue
            total = 6 + length + 2
            if len(self.buf) < total:
                return out
            (crc,) = struct.unpack(">H", self.buf[total - 2:total])
            if crc16(bytes(self.buf[1:total - 2])) == crc:
                out.append(("good", seq, typ, bytes(self.buf[6:total - 2])))
                del self.buf[:total]
            else:
                out.append(("bad", seq, typ, b""))
                del self.buf[:1]


# --- the device -----------------------------------------------------------------------------

class DocDevice:
    """A shoe (``device_class`` 2) or a dice agitator (3) on a pseudo-terminal. The
    agitator answers a ``Shake`` with ``ShakeStarted``, then ``DiceResult`` of ``dice``.

    ``port`` is the path the host opens. ``received`` lists every good frame the host sent,
    as (seq, type, payload); ``acked`` the numbers of this device's events the host
    acknowledged, with their codes; ``naked`` its NAKs, as (seq, reason).
    """

    def __init__(self, device_class: int = SHOE, *, serial: str = "DOC-0001",
                 units: int = 1) -> None:
        self.device_class, self.serial, self.units = device_class, serial, units
        master, slave = os.openpty()
        tty.setraw(slave)       # no echo of the device's own bytes (a UART has none)
        os.set_blocking(master, False)
        self.master, self.slave = master, slave
        self.port = os.ttyname(slave)
        self.t0 = time.monotonic()
        self.lock = threading.Condition()
        self.deframer = Deframer()
        self.received: list[tuple[int, int, bytes]] = []
        self.acked: dict[int, int] = {}
        self.naked: list[tuple[int, int]] = []
        self.heartbeat_s = 0.25
        self.in_session = False
        self.next_seq = 1
        self.queue: list[tuple[int, bytes]] = []          # (type, payload) not yet sent
        self.in_flight: tuple[int, int, bytes] | None = None   # (seq, type, payload)
        self.sent_at = 0.0
        self.host_seen: dict[int, bytes] = {}       # host seq -> the answer frame given
        self.host_order: list[int] = []
        self.dice = (3, 5, 6, 2)        # what the next shake shows (5.6), in die order
        self.heartbeats = True
        self.answer_hello = True
        # A firmware's mistake: the SEQ it gives its HelloInfo and heartbeats (3.1: 0).
        self.unsequenced_seq = 0
        self.cut = False            # the cable is cut: nothing the device sends arrives
        self.deaf_to_acks = False   # the host's acknowledgements are lost on the way
        # For the attacks: answer(seq, type) gives what to send for each copy of a host's
        # reliable frame instead of the firmware's own answer (b"": nothing).
        self.answer: Callable[[int, int], bytes] | None = None
        self.running = True
        self.write(self.hello_info(FLAG_BOOT))      # 3.2: a BOOT notice at power-on
        self.threads = [threading.Thread(target=self._read, daemon=True),
                        threading.Thread(target=self._tick, daemon=True)]
        for t in self.threads:
            t.start()

    # -- output ------------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        """Send bytes, waiting for room while the host reads; nothing goes while the
        cable is ``cut``."""
        view = memoryview(data)
        while view and self.running and not self.cut:
            try:
                n = os.write(self.master, view)
            except BlockingIOError:
                time.sleep(0.001)
                continue
            except OSError as exc:
                if exc.errno == errno.EIO:
                    return
                raise
            view = view[n:]

    def hello_info(self, flags: int) -> bytes:
        recognises = FLAG_RECOGNISES if self.device_class == SHOE else 0
        payload = (bytes([1, self.device_class, flags | recognises, self.units])
                   + pstr("DocMaker") + pstr("From-the-doc") + pstr(self.serial)
                   + pstr("0.1") + bytes([32]) + bytes(range(32)))
        return frame(self.unsequenced_seq, HELLO_INFO, payload)

    def uptime_ms(self) -> int:
        return int((time.monotonic() - self.t0) * 1000) & 0xFFFFFFFF

    # -- events (3.1: stop-and-wait, resent every ack timeout until acknowledged) ------------
    def event(self, typ: int, payload: bytes = b"") -> None:
        with self.lock:
            self.queue.append((typ, payload))
            self._send_next()

    def _send_next(self) -> None:
        if self.in_flight is not None or not self.queue or not self.in_session:
            return
        typ, payload = self.queue.pop(0)
        seq = self.next_seq
        self.next_seq = 1 if seq == 255 else seq + 1
        self.in_flight = (seq, typ, payload)
        self.sent_at = time.monotonic()
        self.write(frame(seq, typ, payload))

    def wait_answered(self, seq: int, timeout: float = 10.0) -> None:
        """Until the host acknowledged (or refused) this device's frame ``seq``."""
        with self.lock:
            assert self.lock.wait_for(
                lambda: seq in self.acked or any(s == seq for s, _ in self.naked), timeout), (
                f"frame {seq} never answered")

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Until every event queued was answered."""
        with self.lock:
            assert self.lock.wait_for(lambda: self.in_flight is None and not self.queue,
                                      timeout), f"still in flight: {self.in_flight}"

    def wait_session(self, timeout: float = 20.0) -> None:
        with self.lock:
            assert self.lock.wait_for(lambda: self.in_session, timeout), "no hello came"

    def draw(self, code: int, deck: int = 7, face_up: bool = False) -> int:
        """The croupier draws card ``code`` (section 4: suit x 13 + rank - 2): the number
        of its frame, once the host has acknowledged it."""
        self.wait_idle()
        with self.lock:
            self.event(CARD_DRAWN, struct.pack(">BBH", code, int(face_up), deck))
            assert self.in_flight is not None
            seq = self.in_flight[0]
        self.wait_answered(seq)
        return seq

    # -- input -------------------------------------------------------------------------------
    def _read(self) -> None:
        while self.running:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self.master, 4096)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                return          # the device is unplugged
            with self.lock:
                for kind, seq, typ, payload in self.deframer.feed(data):
                    if kind == "bad":
                        if seq:
                            self.write(frame(0, NAK, bytes([seq, 1])))
                        continue
                    self._handle(seq, typ, payload)
                self.lock.notify_all()

    def _handle(self, seq: int, typ: int, payload: bytes) -> None:
        self.received.append((seq, typ, payload))
        if typ == HELLO:
            _protocol, heartbeat_ms, resume = struct.unpack(">BHB", payload)
            self.heartbeat_s = heartbeat_ms / 1000
            if self.answer_hello:
                self._new_session(bool(resume))
        elif typ == ACK:
            acked, code = struct.unpack(">BH", payload)
            if self.deaf_to_acks:
                pass
            elif self.in_flight is not None and self.in_flight[0] == acked:
                self.acked[acked] = code
                self.in_flight = None
                self._send_next()
        elif typ == NAK:
            naked, reason = struct.unpack(">BB", payload)
            if self.in_flight is not None and self.in_flight[0] == naked:
                if reason == 1:
                    self.write(frame(naked, self.in_flight[1], self.in_flight[2]))
                else:           # 2, 3: never sent again
                    self.naked.append((naked, reason))
                    self.in_flight = None
                    self._send_next()
        elif typ in UNSEQUENCED:
            pass                # a heartbeat: a sign of life
        elif self.answer is not None:
            self.write(self.answer(seq, typ))
        elif seq in self.host_seen:
            self.write(self.host_seen[seq])     # a duplicate: the same answer, no action
        else:
            if typ == STATUS_REQUEST or (typ == SHAKE and self.device_class == DICE):
                answer = frame(0, ACK, struct.pack(">BH", seq, 0))
            elif typ in OTHER_COMMANDS:
                answer = frame(0, ACK, struct.pack(">BH", seq, 1))
            else:
                answer = frame(0, NAK, bytes([seq, 2]))
            self.host_seen[seq] = answer
            self.host_order.append(seq)
            if len(self.host_order) > 32:
                del self.host_seen[self.host_order.pop(0)]
            self.write(answer)
            if typ == STATUS_REQUEST:
                self.queue.append((STATUS_REPORT, pstr("ready") + bytes([0])))
            elif typ == SHAKE and self.device_class == DICE:
                self.queue.append((SHAKE_STARTED, b""))
                self.queue.append((DICE_RESULT, bytes([len(self.dice), *self.dice])))
            self._send_next()

    def _new_session(self, resume: bool) -> None:
        flags = 0
        if resume and self.in_session:
            flags = FLAG_RESUMED        # same numbering, in-flight event under its number
        else:
            self.host_seen.clear()
            self.host_order.clear()
            if self.in_flight is not None:   # renumbered: back at the head of the queue
                self.queue.insert(0, self.in_flight[1:])
                self.in_flight = None
            self.next_seq = 1
        self.write(self.hello_info(flags))
        self.in_session = True
        if self.in_flight is not None:
            self.sent_at = time.monotonic()
            self.write(frame(*self.in_flight))
        self._send_next()

    # -- time --------------------------------------------------------------------------------
    def _tick(self) -> None:
        next_beat = 0.0
        while self.running:
            now = time.monotonic()
            with self.lock:
                if self.heartbeats and now >= next_beat:
                    self.write(frame(self.unsequenced_seq, HEARTBEAT,
                                     struct.pack(">I", self.uptime_ms())))
                    next_beat = now + self.heartbeat_s
                if self.in_flight is not None and now - self.sent_at >= ACK_TIMEOUT_S:
                    self.sent_at = now
                    self.write(frame(*self.in_flight))
            time.sleep(0.01)

    # -- for the attacks ---------------------------------------------------------------------
    def raw(self, data: bytes) -> None:
        """Send ``data`` as it is, between whole frames of the device's own."""
        with self.lock:
            self.write(data)

    def take_seq(self) -> int:
        """A number of the device's own sequence for a frame sent by hand (once nothing is
        in flight), so that no later event of its own reuses it."""
        self.wait_idle()
        with self.lock:
            seq = self.next_seq
            self.next_seq = 1 if seq == 255 else seq + 1
            return seq

    def answers(self, seq: int) -> list[tuple[str, int]]:
        """The host's answers to this device's frame ``seq``: (``ack``, code) or (``nak``,
        reason), in order."""
        with self.lock:
            return [("ack" if typ == ACK else "nak", int.from_bytes(payload[1:], "big"))
                    for _, typ, payload in self.received
                    if typ in (ACK, NAK) and payload[0] == seq]

    def wait_answer(self, seq: int, count: int = 1, timeout: float = 10.0
                    ) -> list[tuple[str, int]]:
        """The host's first ``count`` answers to frame ``seq``, once they came."""
        with self.lock:
            assert self.lock.wait_for(lambda: len(self.answers(seq)) >= count, timeout), (
                f"frame {seq} answered {self.answers(seq)}")
            return self.answers(seq)[:count]

    def reboot(self) -> None:
        """The device restarts: its uptime and numbering start again, its BOOT notice goes
        out, and it waits for a Hello (answered only while ``answer_hello``)."""
        with self.lock:
            self.in_session = False
            self.in_flight = None
            self.queue.clear()
            self.next_seq = 1
            self.t0 = time.monotonic()
            self.write(self.hello_info(FLAG_BOOT))

    def hellos(self) -> int:
        return len(self.answers_to(HELLO))

    def answers_to(self, typ: int) -> list[tuple[int, int, bytes]]:
        with self.lock:
            return [r for r in self.received if r[1] == typ]

    def close(self) -> None:
        self.running = False
        for t in self.threads:
            t.join(2)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
