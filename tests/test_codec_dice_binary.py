"""The dice-binary vendor codec: fixed 8-byte frames with a two's-complement checksum."""
from hypothesis import given, strategies as st
import pytest

from drivers.protocol import messages as m
from drivers.protocol.codec import CodecError, Received
from drivers.protocol.dice_binary import DiceBinaryCodec, checksum


def test_frame_by_hand():
    # Result 3 5 1 6: 'r' + faces, checksum making the byte sum 0 mod 256.
    body = b"r\x03\x05\x01\x06"
    chk = (256 - sum(body) % 256) % 256
    wire = b"\x02" + body + bytes((chk,)) + b"\x03"
    assert DiceBinaryCodec().encode(m.DiceResult((3, 5, 1, 6))) == wire
    assert DiceBinaryCodec("device").feed(wire) == [Received(0, m.DiceResult((3, 5, 1, 6)))]
    assert checksum(body) == chk


@pytest.mark.parametrize("msg", [
    m.ShakeStarted(), m.DiceResult((1, 2, 3, 4)), m.DiceResult((6, 6, 6)), m.DieNotFlat(2),
    m.DieOutOfCup(0), m.Malfunction(0x0102), m.Door(True), m.Door(False), m.Ack(0, 3),
    m.StatusReport("shaking", (("shakes", 17),)), m.Heartbeat(123456),
])
def test_device_messages_round_trip(msg):
    dev, host = DiceBinaryCodec("host"), DiceBinaryCodec("device")
    assert host.feed(dev.encode(msg)) == [Received(0, msg)]


@pytest.mark.parametrize("msg", [m.Shake(), m.StatusRequest(), m.Hello(heartbeat_ms=300),
                                 m.Heartbeat(9)])
def test_host_messages_round_trip(msg):
    host, dev = DiceBinaryCodec("device"), DiceBinaryCodec("host")
    assert dev.feed(host.encode(msg)) == [Received(0, msg)]


def test_hello_info_maps_to_identity_fields():
    info = m.HelloInfo(1, 3, m.FLAG_BOOT, 4, "vendor-7", "model-2", "", "1.3", b"")
    out = DiceBinaryCodec("device").feed(DiceBinaryCodec("host").encode(info))
    assert out == [Received(0, info)]
    assert out[0].message.class_name == "dice" and out[0].message.boot


def test_commands_the_protocol_lacks_are_refused():
    with pytest.raises(CodecError, match="no frame for Shuffle"):
        DiceBinaryCodec().encode(m.Shuffle())


def test_bad_checksum_and_garbage_are_skipped_and_reported_once_a_burst():
    # Nothing is acknowledged, so the device never sends a damaged frame again: the damage is
    # reported, once until a good frame, before the frames that follow it.
    c = DiceBinaryCodec("device")
    good = DiceBinaryCodec("host").encode(m.DieNotFlat(1))
    bad = bytearray(good)
    bad[3] ^= 1
    out = c.feed(b"\x02\x02zz" + bytes(bad) + good)
    assert [getattr(i, "reason", i) for i in out] == ["damaged", Received(0, m.DieNotFlat(1))]
    assert out[0].type is None and c.garbage_bytes > 0
    assert c.feed(bytes(bad)[:5]) == []                # a frame's start: wait for the rest
    assert [getattr(i, "reason", i) for i in c.feed(bytes(bad)[5:])] == ["damaged"]
    assert c.feed(b"zz\x02z") == []                     # the same burst, not reported again
    assert [getattr(i, "reason", i) for i in c.feed(good)] == [Received(0, m.DieNotFlat(1))]


def test_invalid_content_is_rejected_not_raised():
    body = b"r\x03\x00\x05\x00"   # a gap between dice
    c = DiceBinaryCodec("device")
    out = c.feed(b"\x02" + body + bytes((checksum(body),)) + b"\x03")
    assert out[0].reason == "bad-payload" and c.rejected == 1
    assert out[0].type == m.DiceResult.TYPE          # named by its command letter


@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_crash(data):
    c = DiceBinaryCodec("device")
    for item in c.feed(data):
        if isinstance(item, Received):
            # Re-encoded as the device would send it, the frame is found in the input.
            assert DiceBinaryCodec("host").encode(item.message) in data
