"""The simulator as a host sees it: raw pyserial over a pseudo-terminal, the project's codec,
and every fault's effect on the frames that arrive."""
from __future__ import annotations

import os
import time

import pytest
import serial

from controller.rules.cards import Card
from drivers.protocol import Rejected
from drivers.protocol import messages as m
from firmware_sim import SimulatorError, start_device
from firmware_sim.rawhost import RawHost

FAST = 500.0          # a 30 s shuffle takes 60 ms


@pytest.fixture
def open_host():
    opened = []

    def make(device_class, hello=True, auto_ack=True, **kw):
        dev = start_device(device_class, speed=kw.pop("speed", FAST), **kw)
        port = serial.Serial(dev.port, timeout=0.05)
        host = RawHost.over_serial(port, auto_ack=auto_ack)
        host.serial_port = port
        opened.append((dev, port))
        if hello:
            host.hello()
        return dev, host
    yield make
    for dev, port in opened:
        port.close()
        dev.stop()


def of(items, cls):
    return [r for r in items if not isinstance(r, Rejected) and isinstance(r.message, cls)]


def until(host, cond, timeout=10.0):
    """Read until ``cond(host.received)`` holds: all received so far, unlike ``host.wait``,
    which passes by what an earlier wait went over."""
    deadline = time.monotonic() + timeout
    while not cond(host.received):
        assert time.monotonic() < deadline, f"not within {timeout} s: {host.received[-12:]}"
        host.pump()


# --- hello, commands, acknowledgement ----------------------------------------------------

def test_hello_reports_the_identity(open_host):
    dev, host = open_host("shuffler", hello=False, seed=5)
    info = host.hello()
    ident = dev.identity
    assert info.device_class == m.DEVICE_CLASS_CODES["shuffler"] and not info.boot
    assert info.recognises_cards and info.protocol == m.PROTOCOL_VERSION
    assert (info.vendor, info.model, info.serial, info.firmware_version) == (
        ident.vendor, ident.model, ident.serial, ident.firmware_version)
    assert info.firmware_hash.hex() == ident.firmware_hash and len(info.firmware_hash) == 32
    assert host.wait_for(m.Heartbeat).uptime_ms > 0


def test_shuffler_session_and_refusals(open_host):
    dev, host = open_host("shuffler", seed=6)
    refused = m.REFUSAL_NUMBERS
    assert host.command(m.DispenseCard()) == refused["not-ready"]
    assert host.command(m.Shake()) == refused["unknown-command"]      # not a shuffler's
    assert host.command(m.Shuffle()) == 0
    host.wait_for(m.ShuffleStarted)
    assert host.wait_for(m.ShuffleDone).count == 52
    assert host.command(m.DispenseHand(0)) == refused["bad-argument"]
    assert host.command(m.DispenseHand(3)) == 0
    hand = host.wait_for(m.HandDispensed).cards
    assert len(hand) == 3 and len({c for c, _ in hand}) == 3
    assert all(0 <= c < 52 and d == 1 for c, d in hand)
    # The cards on the wire are the ones the firmware put out, in order.
    assert [c for c, _ in hand] == [Card.parse(t).code
                                    for t in dev.emitted("hand_dispensed")[0]["cards"]]
    assert host.command(m.StatusRequest()) == 0
    st = host.wait_for(m.StatusReport)
    assert st.state == "ready" and dict(st.detail)["cards"] == 49


def test_events_are_numbered_from_one_and_sent_one_at_a_time(open_host):
    dev, host = open_host("box-sensors")
    for box in (1, 3, 7):
        dev.place_card(box)
    got = [host.wait_for(m.CardPlaced) for _ in range(3)]
    assert [g.box for g in got] == [0, 2, 6]             # boxes from 0 on the wire
    seqs = [r.seq for r in host.events()]
    assert seqs == [1, 2, 3]


def test_a_repeated_command_is_acknowledged_again_but_not_done_twice(open_host):
    dev, host = open_host("shuffler")
    host.command(m.Shuffle())
    host.wait_for(m.ShuffleDone)
    seq = host.send(m.DispenseCard())
    host.send(m.DispenseCard(), seq=seq)                  # as if our first ack was lost

    def acks(items):
        return [r for r in of(items, m.Ack) if r.message.seq == seq]
    # The card may come out before the repeat is read, between the two acks: look at all
    # that arrived, not past each wait.
    until(host, lambda got: len(acks(got)) == 2 and of(got, m.CardDispensed))
    assert [a.message.code for a in acks(host.received)] == [0, 0]
    assert dev.status()["stats"]["duplicate_commands"] == 1
    # The status comes after every event before it: one card out, and none on its way.
    assert host.command(m.StatusRequest()) == 0
    st = host.wait_for(m.StatusReport)
    assert st.state == "ready" and dict(st.detail)["cards_out"] == 1
    assert len(dev.emitted("card_dispensed")) == 1
    # One card on the wire: a copy the device sent again, our ack being late, has its number.
    assert len({r.seq for r in of(host.received, m.CardDispensed)}) == 1


def test_unacknowledged_event_is_sent_again_until_acknowledged_without_a_hello(open_host):
    dev, host = open_host("shoe", auto_ack=False)
    dev.draw()
    dev.draw()                                  # queued behind the first (stop-and-wait)
    got = host.collect(1.5)                     # 200 ms ack timeout: 7 or 8 transmissions
    drawn = of(got, m.CardDrawn)
    assert len(drawn) > 4                       # past the host's limit of 4 transmissions
    assert {(r.seq, r.message) for r in drawn} == {(1, drawn[0].message)}
    assert dev.status()["unacknowledged"] == 1
    host.auto_ack = True                        # acks flow again; no hello needed
    first = host.wait(lambda r: isinstance(r.message, m.CardDrawn))
    second = host.wait(lambda r: isinstance(r.message, m.CardDrawn) and r.seq != 1)
    assert (first.seq, first.message) == (1, drawn[0].message)
    assert second.seq == 2                      # nothing lost, nothing reordered
    cards = [Card.parse(e["card"]).code for e in dev.emitted("card_drawn")]
    assert [first.message.card, second.message.card] == cards


def test_an_unacknowledged_event_keeps_its_number_over_a_resumed_session(open_host):
    dev, host = open_host("shoe", auto_ack=False)
    dev.draw()
    lost = host.wait(lambda r: isinstance(r.message, m.CardDrawn))   # its ack never leaves
    dev.disconnect()                            # unplugged before the host acknowledged
    host.serial_port.close()
    dev.draw()                                  # drawn while unplugged: kept
    dev.reconnect()
    port = serial.Serial(dev.port, timeout=0.05)
    try:
        again = RawHost.over_serial(port)
        info = again.hello(resume=True)
        assert info.resumed and not info.boot
        first = again.wait(lambda r: isinstance(r.message, m.CardDrawn))
        second = again.wait(lambda r: isinstance(r.message, m.CardDrawn))
        assert (first.seq, first.message) == (lost.seq, lost.message)   # recognisable
        assert second.seq == lost.seq + 1
        assert dev.status()["stats"]["resumed_sessions"] == 1
    finally:
        port.close()


def test_nak_makes_the_device_resend_at_once(open_host):
    dev, host = open_host("shoe", auto_ack=False)
    dev.draw()
    first = host.wait(lambda r: isinstance(r.message, m.CardDrawn))
    host.send(m.Nak(first.seq, m.NAK_CRC))
    again = host.wait(lambda r: isinstance(r.message, m.CardDrawn))
    assert again.seq == first.seq and again.message == first.message
    assert dev.status()["stats"]["nak_retransmissions"] == 1
    assert any(f[1:] == ("tx", "CardDrawn", first.seq, "after nak") for f in dev.frames())


def test_a_damaged_command_is_nakked(open_host):
    dev, host = open_host("shuffler")
    frame = bytearray(host.codec.encode(m.Shuffle(), 9))
    frame[-1] ^= 0xFF
    host.send_raw(bytes(frame))
    nak = host.wait_for(m.Nak)
    assert (nak.seq, nak.reason) == (9, m.NAK_CRC)
    assert dev.emitted("shuffle_started") == []


# --- link faults --------------------------------------------------------------------------

def test_corrupt_crc_is_rejected_then_retransmitted_once(open_host):
    dev, host = open_host("shoe")
    dev.inject("corrupt_crc")
    dev.draw()
    good = host.wait(lambda r: isinstance(r.message, m.CardDrawn))
    host.collect(0.3)
    bad = [r for r in host.received if isinstance(r, Rejected)]
    assert [(b.reason, b.seq) for b in bad] == [("crc", good.seq)]
    assert len(of(host.received, m.CardDrawn)) == 1


def test_dropped_frame_arrives_by_retransmission(open_host):
    dev, host = open_host("shoe")
    dev.inject("drop", count=1)
    dev.draw()
    host.wait_for(m.CardDrawn)
    host.collect(0.3)
    assert len(of(host.received, m.CardDrawn)) == 1
    st = dev.status()["stats"]
    assert st["fault_drop"] == 1 and st["retransmissions"] >= 1


def test_duplicated_frame_arrives_twice_with_one_number(open_host):
    dev, host = open_host("shoe")
    dev.inject("duplicate")
    dev.draw()
    host.collect(0.3)
    drawn = of(host.received, m.CardDrawn)
    assert len(drawn) == 2 and drawn[0].seq == drawn[1].seq and drawn[0].message == drawn[1].message


def test_delayed_frame_arrives_late_after_its_retransmission(open_host):
    dev, host = open_host("shoe")
    dev.inject("delay", seconds=1.0)
    dev.draw()
    host.collect(1.4)
    drawn = of(host.received, m.CardDrawn)
    assert len(drawn) == 2 and drawn[0].seq == drawn[1].seq   # retransmitted, then the late one


def test_lost_ack_makes_the_host_retry_and_the_device_not_act_twice(open_host):
    dev, host = open_host("shuffler")
    host.command(m.Shuffle())
    host.wait_for(m.ShuffleDone)
    dev.inject("drop", frames="acks", at_command=2)       # the 2nd command's ack is lost
    seq = host.send(m.DispenseCard())
    assert host.wait(lambda r: isinstance(r.message, m.Ack) and r.message.seq == seq,
                     timeout=0.3, fail=False) is None
    host.send(m.DispenseCard(), seq=seq)                  # the host's retransmission
    ack = host.wait(lambda r: isinstance(r.message, m.Ack) and r.message.seq == seq)
    assert ack.message.code == 0
    host.collect(0.3)
    assert len(dev.emitted("card_dispensed")) == 1
    assert len(of(host.received, m.CardDispensed)) == 1


def test_garbage_is_skipped_and_the_stream_goes_on(open_host):
    dev, host = open_host("shoe", seed=1)
    before = host.codec.garbage_bytes
    dev.inject("garbage", nbytes=40)
    dev.draw()
    host.wait_for(m.CardDrawn)
    assert host.codec.garbage_bytes > before


def test_heartbeats_stop_and_resume(open_host):
    dev, host = open_host("dice")
    host.collect(0.1)
    dev.inject("heartbeat_stop")
    host.collect(0.05)                           # one may have been on its way
    assert of(host.collect(0.8), m.Heartbeat) == []
    dev.set_next_dice([1, 2, 3, 4])
    assert host.command(m.Shake()) == 0           # everything else still works
    assert host.wait_for(m.DiceResult).dice == (1, 2, 3, 4)
    dev.inject("heartbeat_resume")
    host.wait_for(m.Heartbeat, timeout=1.0)


def test_silence_stops_everything_until_resume(open_host):
    dev, host = open_host("box-sensors")
    dev.inject("silence")
    host.collect(0.05)
    dev.place_card(2)
    assert host.collect(0.6) == []
    dev.inject("resume")
    host.hello()                                   # the host would have lost the link
    assert host.wait_for(m.CardPlaced).box == 1


def test_disconnect_removes_the_port_and_reconnect_brings_it_back_by_name(open_host):
    dev, host = open_host("shoe", seed=2)
    link = dev.port
    old_tty = dev.tty
    assert os.path.realpath(link) == old_tty
    dev.disconnect()
    assert not os.path.lexists(link) and dev.tty is None
    with pytest.raises(serial.SerialException):
        host.collect(0.3)                          # the host's read fails: port gone
    events = dev.draw()                            # a card drawn while unplugged
    dev.reconnect()
    assert os.path.realpath(link) == dev.tty
    port = serial.Serial(link, timeout=0.05)       # the same stable name
    try:
        again = RawHost.over_serial(port)
        assert again.hello().serial == dev.serial
        drawn = again.wait_for(m.CardDrawn)        # not lost while the link was down
        assert drawn.card == Card.parse(events[0]["card"]).code
    finally:
        port.close()


def test_disconnect_for_a_while_comes_back_by_itself(open_host):
    dev, host = open_host("dice")
    dev.disconnect(duration_s=0.2)
    assert not dev.connected
    deadline = time.monotonic() + 3
    while not dev.connected and time.monotonic() < deadline:
        time.sleep(0.02)
    assert dev.connected and os.path.exists(dev.port)


def test_reboot_sends_a_boot_notice_and_restarts_numbering(open_host):
    dev, host = open_host("shuffler")
    host.command(m.Shuffle())
    host.wait_for(m.ShuffleDone)
    # Uptime is the device's own clock, so "lower than before the reboot" raced the
    # scheduler: a starved simulator sends its first heartbeat after the reboot later than the
    # old count had reached. What holds under any load: the new count started no earlier than
    # the reboot was asked for (the simulator runs on this process's monotonic clock), so it
    # cannot exceed the time since then. A device that kept counting is a second past that
    # bound, as its count had reached a second before the reboot was asked for.
    host.wait(lambda r: isinstance(r.message, m.Heartbeat) and r.message.uptime_ms >= 1000,
              timeout=10)
    asked = time.monotonic()
    dev.reboot()
    boot = host.wait(lambda r: isinstance(r.message, m.HelloInfo))
    assert boot.message.boot
    uptime_ms = host.wait_for(m.Heartbeat).uptime_ms
    assert uptime_ms <= (time.monotonic() - asked) * 1000
    assert not host.hello(resume=True).resumed    # nothing of the old session survived
    # The shuffled order did not survive the reboot; sequence numbers start again at 1.
    assert host.command(m.DispenseCard()) == m.REFUSAL_NUMBERS["not-ready"]
    host.command(m.Shuffle())
    started = host.wait(lambda r: isinstance(r.message, m.ShuffleStarted))
    assert started.seq == 1


# --- device faults on the wire -------------------------------------------------------------

def test_jam_malfunction_and_door_on_the_wire(open_host):
    dev, host = open_host("shuffler")
    host.command(m.Shuffle())
    host.wait_for(m.ShuffleDone)
    dev.inject("jam", at_card=2, where="gate")
    host.command(m.DispenseCard())
    host.wait_for(m.CardDispensed)
    host.command(m.DispenseCard())
    assert host.wait_for(m.Jam).where == "gate"
    assert host.command(m.Shuffle()) == m.REFUSAL_NUMBERS["jammed"]
    dev.clear_jam()
    assert host.wait_for(m.StatusReport).state == "idle"
    dev.open_door()
    assert host.wait_for(m.Door).open is True
    assert host.command(m.Shuffle()) == m.REFUSAL_NUMBERS["door-open"]
    dev.close_door()
    assert host.wait_for(m.Door).open is False
    dev.inject("malfunction", code=0x8001, text="vendor fault")
    mf = host.wait_for(m.Malfunction)
    assert (mf.code, mf.text) == (0x8001, "vendor fault")
    assert host.command(m.Shuffle()) == m.REFUSAL_NUMBERS["fault"]


def test_shoe_face_up_misread_cut_card_and_empty(open_host):
    dev, host = open_host("shoe", deck=["As", "Kd", "Qh#2"], cut_at=2)
    dev.inject("misread", at_card=2)
    dev.draw(face_up=True)
    dev.draw()
    dev.draw()
    first = host.wait_for(m.CardDrawn)
    assert (first.card, first.face_up, first.deck) == (12, True, 1)
    host.wait_for(m.Misread)
    host.wait_for(m.CutCardReached)
    third = host.wait_for(m.CardDrawn)
    assert (third.card, third.deck) == (23, 2)    # Qh of another deck's back
    host.wait_for(m.Empty)
    with pytest.raises(SimulatorError, match="empty"):
        dev.draw()


def test_dice_not_flat_out_of_cup_and_lid(open_host):
    dev, host = open_host("dice")
    dev.inject("die_not_flat", die=2)
    host.command(m.Shake())
    host.wait_for(m.ShakeStarted)
    assert host.wait_for(m.DieNotFlat).die == 2
    dev.inject("die_out_of_cup", at_shake=2, die=0)
    host.command(m.Shake())
    assert host.wait_for(m.DieOutOfCup).die == 0
    assert host.command(m.Shake()) == m.REFUSAL_NUMBERS["not-ready"]
    dev.return_die()
    dev.open_lid()
    assert host.wait_for(m.Door).open is True
    assert host.command(m.Shake()) == m.REFUSAL_NUMBERS["door-open"]


def test_deck_check_shows_a_foreign_card_in_place_of_a_missing_one(open_host):
    dev, host = open_host("shuffler", seed=3)
    dev.inject("deck_extra", card="5c", deck_id=7, replace=True)
    host.command(m.Shuffle())
    host.wait_for(m.ShuffleDone)
    host.command(m.DeckCheck())
    res = host.wait_for(m.DeckCheckResult)
    assert res.count == 52 and res.recognised
    assert (29, 7) in res.cards                    # 5c = clubs (2) x 13 + (5 - 2)
    assert sum(1 for _, d in res.cards if d == 7) == 1
    faces = {c for c, d in res.cards if d == 1}
    assert len(faces) == 51


def test_dice_binary_codec_over_the_same_pty(open_host):
    dev = start_device("dice", speed=FAST, codec="dice-binary")
    port = serial.Serial(dev.port, timeout=0.05)
    try:
        host = RawHost.over_serial(port, codec="dice-binary")
        host.send(m.Hello(m.PROTOCOL_VERSION, 250))
        assert host.wait_for(m.HelloInfo).units == 4
        dev.set_next_dice([6, 5, 4, 3])
        host.send(m.Shake())
        assert host.wait_for(m.Ack).code == 0
        assert host.wait_for(m.DiceResult).dice == (6, 5, 4, 3)
    finally:
        port.close()
        dev.stop()


def test_deck_faults_as_the_shuffler_reports_them(open_host):
    dev, host = open_host("shuffler", seed=4)
    dev.inject("deck_missing", card="Qs")                 # Qs = code 10
    host.command(m.DeckCheck())
    res = host.wait_for(m.DeckCheckResult)
    assert res.count == 51 and 10 not in {c for c, _ in res.cards}

    dev.inject("deck_duplicate", card="2s")               # code 0, twice; another card gone
    host.command(m.DeckCheck())
    res = host.wait_for(m.DeckCheckResult)
    codes = [c for c, _ in res.cards]
    assert res.count == 51 and codes.count(0) == 2 and len(set(codes)) == 50

    dev.inject("deck_sorted")
    host.command(m.Shuffle())
    host.wait_for(m.ShuffleDone)
    host.command(m.DispenseHand(5))
    codes = [c for c, _ in host.wait_for(m.HandDispensed).cards]
    assert codes == sorted(codes)                         # code order: never shuffled


def test_sent_is_when_a_frame_went_on_the_wire_not_when_its_event_happened(open_host):
    """What the latency bench measures from: a card drawn while the previous one waits for
    its acknowledgement is written only after that acknowledgement (stop-and-wait)."""
    dev, host = open_host("shoe", auto_ack=False)
    start = time.monotonic()
    dev.draw()
    dev.draw()
    first = host.wait(lambda r: isinstance(r.message, m.CardDrawn))
    acked = time.monotonic()
    host.send(m.Ack(first.seq))
    second = host.wait(lambda r: isinstance(r.message, m.CardDrawn))
    host.send(m.Ack(second.seq))
    written = {}
    for t, name, seq in dev.sent("CardDrawn", since=start):
        assert name == "CardDrawn"
        written.setdefault(seq, t)          # a retransmission is not a new write
    assert list(written) == [first.seq, second.seq]
    assert start < written[first.seq] < acked < written[second.seq]
    assert len(dev.emitted("card_drawn")) == 2


def test_written_at_counts_frames_not_retransmissions(open_host):
    """The in-process latency bench finds the n-th card's frame by written_at: a frame the
    device sends again (no acknowledgement came) is still the same n-th frame."""
    dev, host = open_host("shoe", auto_ack=False)
    dev.draw()
    first = host.wait(lambda r: isinstance(r.message, m.CardDrawn))
    again = host.wait(lambda r: isinstance(r.message, m.CardDrawn))   # unanswered: resent
    assert again.seq == first.seq
    assert len([s for _, _, s in dev.sent("CardDrawn")]) >= 2
    host.send(m.Ack(first.seq))
    before = time.monotonic()
    dev.draw()
    second = host.wait(lambda r: isinstance(r.message, m.CardDrawn) and r.seq != first.seq)
    host.send(m.Ack(second.seq))
    assert dev.written_at("CardDrawn", 0) < before < dev.written_at("CardDrawn", 1)
    assert dev.written_at("CardDrawn", 2) is None
    assert dev.written_at("DiceResult", 0) is None
