"""The tablectl codec: every message round-trips; damaged or foreign input is rejected."""
import dataclasses

from hypothesis import given, settings, strategies as st
import pytest

from drivers.protocol import messages as m
from drivers.protocol.codec import CodecError, Received, Rejected, TablectlCodec, get_codec
from drivers.protocol.framing import crc8, crc16, encode_frame

CARD = st.one_of(st.integers(0, 51), st.just(m.UNKNOWN_CARD))
WIRE_STRATEGIES = {
    "u8": st.integers(0, 0xFF), "u16": st.integers(0, 0xFFFF),
    "u32": st.integers(0, 0xFFFFFFFF), "i32": st.integers(-2**31, 2**31 - 1),
    "bool": st.booleans(), "card": CARD, "deck": st.integers(0, 0xFFFF),
    "str": st.text(max_size=40), "blob": st.binary(max_size=64),
    "cards": st.lists(st.tuples(CARD, st.integers(0, 0xFFFF)), max_size=60).map(tuple),
    "dice": st.lists(st.integers(1, 6), max_size=6).map(tuple),
    "kv": st.lists(st.tuples(st.text(max_size=12), st.integers(-2**31, 2**31 - 1)),
                   max_size=8).map(tuple),
}


def message_strategy(cls):
    return st.builds(cls, **{name: WIRE_STRATEGIES[w] for name, w in cls.WIRE})


ALL = sorted(m.MESSAGE_TYPES.values(), key=lambda c: c.TYPE)
any_message = st.one_of(*[message_strategy(c) for c in ALL])


def test_every_device_class_has_its_commands_and_events():
    names = lambda cs: {c.__name__ for c in cs}
    assert names(m.commands_for("shuffler")) == {"Shuffle", "DispenseCard", "DispenseHand",
                                                 "DeckCheck", "StatusRequest"}
    assert names(m.commands_for("dice")) == {"Shake", "StatusRequest"}
    assert {"CardDrawn", "CutCardReached", "Misread", "Jam", "Door", "Empty",
            "Malfunction"} <= names(m.events_for("shoe"))
    assert {"ShakeStarted", "DiceResult", "DieNotFlat", "DieOutOfCup", "Door",
            "Malfunction"} <= names(m.events_for("dice"))
    assert {"CardPlaced", "CardRemoved"} <= names(m.events_for("box-sensors"))
    assert {"ShuffleStarted", "ShuffleDone", "CardDispensed", "HandDispensed", "Jam",
            "Malfunction", "Door", "Empty", "DeckCheckResult"} <= names(m.events_for("shuffler"))


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
@settings(max_examples=40)
@given(data=st.data())
def test_round_trip_each_type(cls, data):
    msg = data.draw(message_strategy(cls))
    seq = data.draw(st.integers(1, 255)) if cls.RELIABLE else 0
    wire = TablectlCodec().encode(msg, seq)
    assert TablectlCodec().feed(wire) == [Received(seq, msg)]


def test_known_payload_bytes():
    # Layouts written out in docs/protocol.md, built by hand here.
    assert m.CardDrawn(card=51, face_up=True, deck=7).pack() == b"\x33\x01\x00\x07"
    assert m.HandDispensed(((12, 1), (m.UNKNOWN_CARD, m.NO_DECK))).pack() == \
        b"\x00\x02" + b"\x0c\x00\x01" + b"\xff\xff\xff"
    assert m.Ack(9, 3).pack() == b"\x09\x00\x03"
    assert m.StatusReport("ready", (("cards", 52),)).pack() == \
        b"\x05ready\x01\x05cards\x00\x00\x00\x34"
    info = m.HelloInfo(1, 1, 3, 1, "Acme", "S1", "0001", "1.2", b"\xab\xcd")
    assert info.pack() == b"\x01\x01\x03\x01\x04Acme\x02S1\x040001\x031.2\x02\xab\xcd"
    assert info.class_name == "shuffler" and info.recognises_cards and info.boot


def test_full_frame_of_a_command_by_hand():
    head = bytes((0x00, 0x01, 0x11, 0x22))
    body = head + bytes((crc8(head),)) + b"\x03"
    wire = bytes((0xA5,)) + body + crc16(body).to_bytes(2, "big")
    assert TablectlCodec().encode(m.DispenseHand(3), 0x11) == wire


@pytest.mark.parametrize("bad", [
    lambda: m.CardDrawn(card=52), lambda: m.DiceResult((0, 3)), lambda: m.DiceResult((7,)),
    lambda: m.DispenseHand(256), lambda: m.Door(open=1), lambda: m.CardDispensed(card=-1),
    lambda: m.HandDispensed(((1, 70000),)), lambda: m.StatusReport("x", (("k", 2**31),)),
])
def test_out_of_range_fields_are_refused(bad):
    with pytest.raises(m.PayloadError):
        bad()


def test_reliable_needs_seq_and_unsequenced_forbids_it():
    c = TablectlCodec()
    with pytest.raises(CodecError, match="sequence number"):
        c.encode(m.Shuffle(), 0)
    with pytest.raises(CodecError, match="unsequenced"):
        c.encode(m.Heartbeat(1), 3)


def test_unknown_type_is_rejected_with_nak():
    out = TablectlCodec().feed(encode_frame(5, 0xEE, b"abc"))
    assert out == [Rejected("unknown-type", 5, 0xEE, "unknown message type 0xee",
                            m.NAK_UNKNOWN_TYPE)]


def test_bad_payload_is_rejected_and_stream_goes_on():
    c = TablectlCodec(receive_from="device")
    data = encode_frame(6, m.CardDrawn.TYPE, b"\x60\x00\xff\xff")  # card code 96
    data += encode_frame(7, m.DiceResult.TYPE, b"\x02\x01")         # truncated
    data += c.encode(m.CutCardReached(), 8)
    out = c.feed(data)
    assert [type(x) for x in out] == [Rejected, Rejected, Received]
    assert out[0].reason == out[1].reason == "bad-payload"
    assert out[0].nak == m.NAK_BAD_PAYLOAD and out[0].seq == 6
    assert out[2] == Received(8, m.CutCardReached())
    assert c.rejected == 2


def test_corrupted_frame_is_rejected_with_crc_nak():
    wire = bytearray(TablectlCodec().encode(m.CardDrawn(card=3), 9))
    wire[-3] ^= 0xFF
    out = TablectlCodec().feed(bytes(wire))
    assert out[0].reason == "crc" and out[0].seq == 9 and out[0].nak == m.NAK_CRC


def test_wrong_sender_is_rejected():
    host_side = TablectlCodec(receive_from="device")
    out = host_side.feed(TablectlCodec().encode(m.Shuffle(), 1))
    assert out[0].reason == "wrong-sender"
    device_side = TablectlCodec(receive_from="host")
    assert device_side.feed(TablectlCodec().encode(m.Shuffle(), 1)) == [Received(1, m.Shuffle())]
    assert device_side.feed(TablectlCodec().encode(m.Jam("x"), 2))[0].reason == "wrong-sender"


def test_seq_rule_checked_on_decode():
    # A reliable message type arriving with seq 0 is malformed; not answered (seq 0).
    out = TablectlCodec().feed(encode_frame(0, m.Shuffle.TYPE))
    assert out[0].reason == "bad-payload" and out[0].nak is None


def test_an_unsequenced_type_with_a_number_is_dropped_without_a_nak():
    # The number names no frame of its sender's that waits to be sent again (an unsequenced
    # type never is); a NAK would name another, reliable frame of that number, which its
    # sender would then give up (reason 2, 3) or send again (reason 1).
    host_side = TablectlCodec(receive_from="device")
    for msg in (m.Heartbeat(7), m.Ack(3, 0), m.Nak(3, 1), m.Hello()):
        out = host_side.feed(encode_frame(5, msg.TYPE, msg.pack()))
        assert len(out) == 1 and isinstance(out[0], Rejected), msg
        assert out[0].seq == 5 and out[0].nak is None, out[0]
    device_side = TablectlCodec(receive_from="host")
    info = m.HelloInfo(1, 1, 0, 0, "v", "m", "s", "1", b"")
    out = device_side.feed(encode_frame(9, info.TYPE, info.pack()))
    assert out[0].reason == "wrong-sender" and out[0].nak is None


def test_get_codec_names():
    assert get_codec("tablectl").name == "tablectl"
    assert get_codec("dice-binary").name == "dice-binary"
    with pytest.raises(CodecError, match="use one of dice-binary, tablectl"):
        get_codec("nope")


@given(st.binary(max_size=1500))
def test_arbitrary_bytes_never_crash_and_decoded_messages_reencode(data):
    c = TablectlCodec()
    for item in c.feed(data):
        if isinstance(item, Received):
            assert c.encode(item.message, item.seq) in data


@given(st.lists(st.tuples(any_message, st.binary(max_size=20)), max_size=10))
def test_stream_of_messages_with_garbage_between(pairs):
    c = TablectlCodec()
    data, sent = b"", []
    for i, (msg, junk) in enumerate(pairs):
        seq = i + 1 if msg.RELIABLE else 0
        data += c.encode(msg, seq) + junk.replace(b"\xa5", b"")
        sent.append(Received(seq, msg))
    got = [x for x in TablectlCodec().feed(data) if isinstance(x, Received)]
    assert got == sent


@pytest.mark.long
@settings(max_examples=20000, deadline=None)
@given(st.binary(max_size=3000))
def test_codec_fuzz_long(data):
    c = TablectlCodec()
    for item in c.feed(data):
        if isinstance(item, Received):
            assert c.encode(item.message, item.seq) in data


def test_message_fields_match_wire_layout():
    for cls in ALL:
        assert [f.name for f in dataclasses.fields(cls)] == [n for n, _ in cls.WIRE], cls
