"""The test vectors of docs/protocol.md (section 10) are what the host's codec sends and reads.

A device maker checks its firmware against those rows; if the codec and the document part,
this fails, so the vectors cannot drift from the wire the host speaks.
"""
import re
from pathlib import Path

from drivers.protocol import Received, get_codec
from drivers.protocol import messages as m
from drivers.protocol.framing import crc8, crc16

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
ROW = re.compile(r"^\| `(?P<message>(?P<name>\w+)\(.*\))` \| (?P<seq>\d+) \| "
                 r"`(?P<frame>[0-9A-F]{2}(?: [0-9A-F]{2})*)` \|$")


def vectors() -> list[tuple[str, str, int, bytes]]:
    """(message as written, its type's name, SEQ, frame) for each row of section 10."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## 10. Test vectors"):]
    return [(r["message"], r["name"], int(r["seq"]), bytes.fromhex(r["frame"]))
            for r in map(ROW.match, section.splitlines()) if r]


def test_every_message_type_has_a_vector():
    named = {name for _, name, _, _ in vectors()}
    assert named == {cls.__name__ for cls in m.MESSAGE_TYPES.values()}


def test_the_codec_reads_each_vector_as_the_message_written_and_sends_it_so():
    codec = get_codec("tablectl")
    for written, _, seq, data in vectors():
        got = codec.feed(data)
        assert len(got) == 1 and isinstance(got[0], Received), (written, got)
        assert (got[0].seq, repr(got[0].message)) == (seq, written)
        assert codec.encode(got[0].message, seq) == data, written


def test_the_documented_check_values_are_the_codecs():
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## 10. Test vectors"):]
    assert "`CRC8(\"123456789\") = 0x%02X`" % crc8(b"123456789") in section
    assert "`CRC16(\"123456789\") = 0x%04X`" % crc16(b"123456789") in section
