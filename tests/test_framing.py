"""Framing: CRC check values, frame layout, streaming deframing and resynchronisation."""
import random

from hypothesis import given, settings, strategies as st
import pytest

from drivers.protocol.framing import (MAX_PAYLOAD, SOF, BadFrame, Deframer, Frame, FramingError,
                                      crc8, crc16, encode_frame)


def test_crc_check_values():
    # The catalogue check values of CRC-16/CCITT-FALSE and CRC-8/SMBUS over "123456789".
    assert crc16(b"123456789") == 0x29B1
    assert crc8(b"123456789") == 0xF4


def bitwise_crc(data, width, poly, crc):
    """The CRC as its definition states it, one bit at a time: the reference that the
    table-driven CRC-8 and the standard library's CRC-16 are held to."""
    top, mask = 1 << (width - 1), (1 << width) - 1
    for b in data:
        crc ^= b << (width - 8)
        for _ in range(8):
            crc = ((crc << 1) ^ poly) & mask if crc & top else (crc << 1) & mask
    return crc


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=1100), st.integers(0, 0xFF), st.integers(0, 0xFFFF))
def test_crcs_equal_their_bitwise_definition(data, start8, start16):
    assert crc8(data) == bitwise_crc(data, 8, 0x07, 0x00)
    assert crc8(data, start8) == bitwise_crc(data, 8, 0x07, start8)
    assert crc16(data) == bitwise_crc(data, 16, 0x1021, 0xFFFF)
    assert crc16(data, start16) == bitwise_crc(data, 16, 0x1021, start16)


def test_frame_layout_by_hand():
    # A heartbeat-sized frame built independently of encode_frame.
    payload = b"\x00\x00\x01\x00"
    head = bytes((0x00, 0x04, 0x00, 0x05))
    expected = bytes((SOF,)) + head + bytes((crc8(head),)) + payload
    expected += crc16(head + bytes((crc8(head),)) + payload).to_bytes(2, "big")
    assert encode_frame(0, 0x05, payload) == expected
    assert len(expected) == 6 + 4 + 2


def test_empty_payload_and_max_payload():
    d = Deframer()
    big = bytes(range(256)) * 4
    assert len(big) == MAX_PAYLOAD
    out = d.feed(encode_frame(7, 0x20) + encode_frame(9, 0x34, big))
    assert out == [Frame(7, 0x20, b""), Frame(9, 0x34, big)]
    with pytest.raises(FramingError, match="exceeds"):
        encode_frame(1, 1, big + b"x")
    with pytest.raises(FramingError):
        encode_frame(256, 1)


def test_byte_by_byte_feed():
    d = Deframer()
    data = encode_frame(1, 0x40, b"\x05\x01\xff\xff") + encode_frame(2, 0x41)
    out = []
    for b in data:
        out += d.feed(bytes((b,)))
    assert out == [Frame(1, 0x40, b"\x05\x01\xff\xff"), Frame(2, 0x41, b"")]
    assert d.garbage_bytes == 0 and d.pending == 0


def test_garbage_between_frames_is_counted_and_skipped():
    d = Deframer()
    junk = b"\x00\xa5\xa5\xff\x13hello\xa5"
    out = d.feed(junk + encode_frame(3, 0x31, b"\x00\x34") + b"zz")
    assert out == [Frame(3, 0x31, b"\x00\x34")]
    out = d.feed(encode_frame(4, 0x13))
    assert out == [Frame(4, 0x13, b"")]
    assert d.garbage_bytes == len(junk) + 2


def test_false_start_with_huge_length_does_not_stall():
    # SOF then LEN=0xFFFF: rejected by the header check at once, the next frame is found.
    d = Deframer()
    out = d.feed(b"\xa5\xff\xff\x01\x02\x03" + encode_frame(5, 0x30))
    assert out == [Frame(5, 0x30, b"")]


def test_corrupted_payload_gives_bad_frame_with_its_seq():
    frame = bytearray(encode_frame(42, 0x40, b"\x05\x00\x00\x07"))
    frame[7] ^= 0x10
    d = Deframer()
    out = d.feed(bytes(frame) + encode_frame(43, 0x41))
    assert out[0] == BadFrame(42, 0x40, len(frame))
    assert out[1:] == [Frame(43, 0x41, b"")]
    assert d.bad_frames == 1


def test_truncated_frame_then_good_frame_resyncs():
    good = encode_frame(2, 0x33, b"\x00\x01\x05\xff\xff")
    cut = encode_frame(1, 0x34, bytes(40))[:20]
    d = Deframer()
    out = d.feed(cut + good + encode_frame(3, 0x13) * 3)
    assert [f for f in out if isinstance(f, Frame)][:2] == [Frame(2, 0x33, good[6:-2]),
                                                             Frame(3, 0x13, b"")]


@given(st.lists(st.tuples(st.integers(0, 255), st.integers(0, 255),
                          st.binary(max_size=300)), max_size=8),
       st.lists(st.integers(1, 64), max_size=20))
def test_round_trip_any_chunking(frames, cuts):
    data = b"".join(encode_frame(s, t, p) for s, t, p in frames)
    d = Deframer()
    out, pos = [], 0
    for c in cuts:
        out += d.feed(data[pos:pos + c])
        pos += c
    out += d.feed(data[pos:])
    assert out == [Frame(s, t, p) for s, t, p in frames]
    assert d.garbage_bytes == 0


@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_crash_nor_yield_a_frame_failing_its_crc(data):
    for f in Deframer().feed(data):
        if isinstance(f, Frame):
            # Re-encoding must give back bytes that are present in the input: the frame's
            # CRCs held.
            assert encode_frame(f.seq, f.type, f.payload) in data


@given(st.binary(max_size=64), st.integers(0, 255), st.binary(max_size=64),
       st.binary(max_size=64))
def test_frame_survives_garbage_around_it(pre, seq, payload, post):
    frame = encode_frame(seq, 0x61, payload)
    out = Deframer().feed(pre + frame + post)
    assert Frame(seq, 0x61, payload) in out


@pytest.mark.long
@settings(max_examples=20000, deadline=None)
@given(st.binary(max_size=4000))
def test_fuzz_long(data):
    for f in Deframer().feed(data):
        if isinstance(f, Frame):
            assert encode_frame(f.seq, f.type, f.payload) in data


def test_random_bit_flips_never_deliver_a_wrong_frame():
    rng = random.Random(1)
    frames = [encode_frame(i % 255 + 1, 0x32, bytes((i % 52, 0, 7))) for i in range(300)]
    data = bytearray(b"".join(frames))
    for _ in range(60):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    good = set(frames)
    out = Deframer().feed(bytes(data))
    delivered = [encode_frame(f.seq, f.type, f.payload) for f in out if isinstance(f, Frame)]
    assert all(f in good for f in delivered)
    assert len(delivered) >= 300 - 2 * 60


@given(st.binary(max_size=300))
def test_crc16_agrees_with_the_standard_library(data):
    # binascii.crc_hqx is CRC-CCITT (poly 0x1021, unreflected); with init 0xFFFF it is
    # CRC-16/CCITT-FALSE: an implementation independent of ours.
    import binascii
    assert crc16(data) == binascii.crc_hqx(data, 0xFFFF)


def test_examples_of_docs_protocol_md():
    import binascii
    head = bytes.fromhex("00011122")
    assert crc8(head) == 0xC7
    assert binascii.crc_hqx(head + b"\xc7\x03", 0xFFFF) == 0x9E54
    assert encode_frame(0x11, 0x22, b"\x03") == bytes.fromhex("A5 00 01 11 22 C7 03 9E 54")
    assert encode_frame(0, 0x05, (1000).to_bytes(4, "big")) == \
        bytes.fromhex("A5 00 04 00 05 B0 00 00 03 E8 53 55")
