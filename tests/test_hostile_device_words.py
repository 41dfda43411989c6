"""A device's own words (its serial number, a malfunction's text) are its firmware's, and a
firmware can say anything: HTML, escape sequences that clear or retitle a terminal, a carriage
return and a line break that would start a forged line, a C1 control, a right-to-left
override. Through the real daemon (the simulator reporting them over pseudo-terminals, the
real drivers), each output shows them harmlessly and the journal keeps them exactly: the log
(JSON lines for journald, or readable lines on a terminal), the HTTP API's JSON, the event
stream's frames, and ``tablectl journal show`` and ``export`` (docs/controller.md, "Text from
devices and persons")."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.request

import pytest

from controller.journal import Journal
from controller.rig import Rig
from test_api_support import TOKENS, DaemonTable

pytestmark = pytest.mark.hil

# No card in any spelling (a device's words are masked for cards, controller.table.secrecy):
# the words reach every output unmasked, so each can be compared with them exactly.
WORDS = ('<img src=x onerror="window.__xss=1">\x1b[2J\x1b]0;pwned\x07\r\n'
         '{"event": "forged", "level": "error"}\u202e\x9b2J\u2028\x85 jammed')
# A serial number of one word (no space, quote or "="): a readable log line would print it
# bare, not quoted.
SERIAL = "SIM-\x1b[2J\x1b]0;pwned\x07\u202e\x9b2J\x85\u2028"
# What must never reach a terminal or a log line raw.
RAW = "\x1b\x07\r\n\u202e\x9b\u2028\x85"


def raw_in(text: str) -> set[str]:
    return {ch for ch in RAW if ch in text}


def swap_in_a_spare_shoe(rig: Rig, serial: str = SERIAL) -> None:
    """The shoe unplugged and another unit, whose serial number is ``serial``, put in on its
    port (docs/protocol.md 3.4): its identity reaches every output as it said it."""
    mark = rig.mark()
    first = rig.devices["shoe"]
    first.disconnect()
    rig.wait_event(lambda e: e["kind"] == "device_link" and e["device"] == "shoe"
                   and e["link"] == "lost", since=mark)
    rig.devices["shoe"] = rig.sim.add("shoe", name="spare", link=first.port, serial=serial)
    rig.wait_event(lambda e: e["kind"] == "device_replaced" and e["device"] == "shoe",
                   since=mark, timeout=30)


def malfunction(rig: Rig) -> None:
    """The shoe's firmware reports a malfunction in WORDS."""
    mark = rig.mark()
    rig.devices["shoe"].inject("malfunction", text=WORDS)
    rig.wait_event(lambda e: e["kind"] == "device_condition" and e["device"] == "shoe"
                   and WORDS in e.get("what", ""), since=mark)


class Stream:
    """The raw bytes of /api/events, read on a thread from before the words are said."""

    def __init__(self, url: str) -> None:
        req = urllib.request.Request(url + "/api/events",
                                     headers={"Authorization": f"Bearer {TOKENS['display']}"})
        self.resp = urllib.request.urlopen(req, timeout=30)
        self.data = b""
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while chunk := self.resp.read1(65536):
                with self.lock:
                    self.data += chunk
        except (OSError, ValueError):
            pass

    def frames(self) -> list[str]:
        with self.lock:
            return self.data.decode("utf-8").split("\n\n")


def test_a_devices_hostile_words_reach_the_log_api_stream_and_journal_harmlessly(tmp_path):
    live = DaemonTable(tmp_path, "q-poker", "shoe")
    try:
        stream = Stream(live.url)
        live.rig.must("open_table", "supervisor")       # round 1 holds what follows
        live.rig.wait_state("shuffling")
        swap_in_a_spare_shoe(live.rig)
        malfunction(live.rig)
        req = urllib.request.Request(live.url + "/api/table",
                                     headers={"Authorization": f"Bearer {TOKENS['dealer']}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read().decode("utf-8")
        # The API's JSON: the exact words, every control escaped by JSON.
        assert not raw_in(body) - {"\u202e", "\u2028", "\x9b", "\x85"}, body
        shoe = [d for d in json.loads(body)["devices"] if d["device"] == "shoe"]
        assert shoe[0]["identity"]["serial"] == SERIAL, shoe
        in_json = json.dumps(WORDS, ensure_ascii=False)[1:-1]
        live.wait(lambda: any(in_json in frame for frame in stream.frames()))
    finally:
        live.close()
    # The event stream: each frame is its id, event and one data line, whatever the words;
    # the data is the exact words.
    said = []
    for frame in stream.frames():
        if not frame.strip():
            continue
        lines = frame.split("\n")
        fields = [line.split(":", 1)[0] for line in lines]
        assert fields in (["event", "data"], ["id", "event", "data"]), frame
        assert "\r" not in frame, frame
        doc = json.loads(lines[-1][len("data: "):])
        if doc.get("kind") == "device_condition":
            said.append(doc["what"])
    assert any(WORDS in what for what in said), said

    # The log: one JSON object a line, nothing a terminal or journald would act on, and the
    # exact words for a JSON reader.
    text = live.rig.log_path.read_text(encoding="utf-8")
    assert not raw_in(text.replace("\n", "")), sorted(map(ascii, raw_in(text)))
    lines = [json.loads(line) for line in text.splitlines()]
    assert not [d for d in lines if d.get("event") == "forged"]
    assert any(d.get("serial") == SERIAL for d in lines)
    assert any(WORDS in str(d.get("what", "")) for d in lines)

    # The journal keeps the device's exact words: the record of truth.
    with Journal.open(live.rig.journal_path, readonly=True) as journal:
        records = [r.payload for r in journal.records()]
    assert any(p.get("now", {}).get("serial") == SERIAL for p in records
               if p.get("kind") == "device_replaced")
    assert any(isinstance(p.get("event"), dict) and p["event"].get("text") == WORDS
               for p in records)

    # tablectl journal show and export: nothing raw on the terminal; export gives a program
    # the exact words back.
    def tablectl(*args):
        out = subprocess.run([sys.executable, "-m", "controller.cli", "journal", *args,
                              "--journal", str(live.rig.journal_path)],
                             capture_output=True, text=True, encoding="utf-8", timeout=60)
        assert out.returncode == 0, out.stderr
        assert not raw_in(out.stdout.replace("\n", "") + out.stderr.replace("\n", "")), args
        return out.stdout
    shown = tablectl("show", "1")
    assert r"\x1b[2J\x1b]0;pwned\x07\r\n" in shown, shown
    exported = [json.loads(line) for line in tablectl("export").splitlines()]
    # (the round is open: its device records are held back, its alarms are not)
    assert any(isinstance(r["payload"], dict) and WORDS in str(r["payload"].get("what"))
               for r in exported)


class ConsoleLogRig(Rig):
    """A daemon logging readable lines (``[logging] format = "console"``), as on a terminal."""

    def write_config(self) -> None:
        super().write_config()
        text = self.config_path.read_text(encoding="utf-8")
        self.config_path.write_text(text.replace('format = "json"', 'format = "console"'),
                                    encoding="utf-8")


def test_a_devices_hostile_words_forge_no_readable_log_line(tmp_path):
    with ConsoleLogRig(tmp_path, "q-poker", "shoe") as rig:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        swap_in_a_spare_shoe(rig)
        malfunction(rig)
    text = rig.log_path.read_text(encoding="utf-8")
    assert not raw_in(text.replace("\n", "")), sorted(map(ascii, raw_in(text)))
    assert not [line for line in text.splitlines() if line.lstrip().startswith('{"event"')]
    # Named as what they are: each control written as its escape, on the line that says it.
    said = [line for line in text.splitlines() if "pwned" in line]
    assert [line for line in said if "device_link" in line
            and r"serial='SIM-\x1b[2J\x1b]0;pwned\x07\u202e\x9b2J\x85\u2028" in line], said
    assert [line for line in said if "device_condition" in line
            and r"\x1b[2J\x1b]0;pwned\x07\r\n" in line and "jammed" in line], said
