"""``tablectl journal rounds`` lists each ``device_refused`` record in words, and the words
are a refused unit's own: its hello's serial number, vendor and model, which its firmware
chose. They were printed raw: an escape sequence cleared the reader's terminal, a line break
forged a line of the list, a right-to-left override turned the rest of the line around.
``journal show`` already printed them escaped; ``rounds`` now does the same (docs/controller.md,
"Text from devices and persons")."""
from __future__ import annotations

import pytest

from controller.cli import main

from test_device_refused_journal import APPROVED, hello, journal_with

SERIAL = "S-\x1b[2J\x1b]0;pwned\x07\u202e\x9b2J"
VENDOR = "Acme\r\nDevice refused: record 1 at 2026-01-01 00:00:00 UTC: nothing"
RAW = "\x1b\x07\r\u202e\x9b"


@pytest.mark.parametrize("reason", ["firmware_hash", "a_reason_of_a_later_version"])
def test_rounds_prints_a_refused_units_own_words_escaped(tmp_path, capsys, reason):
    """A known reason names the unit's serial number; any other lists all it gave (its
    vendor too)."""
    payload = {"device": "shuffler", "device_class": "shuffler", "port": "/dev/x",
               "reason": reason, "text": "…",
               "given": hello(serial=SERIAL, vendor=VENDOR),
               "expected": {"firmware_hash": APPROVED}}
    path, before, during = journal_with(tmp_path, payload)
    assert main(["journal", "rounds", "--journal", path]) == 0
    out = capsys.readouterr().out
    assert not {ch for ch in RAW if ch in out}, repr(out)
    listed = [ln for ln in out.splitlines() if ln.startswith("Device refused")]
    assert len(listed) == 2, out                              # no forged third line
    assert all("S-\\x1b[2J\\x1b]0;pwned\\x07\\u202e\\x9b2J" in ln for ln in listed), listed
