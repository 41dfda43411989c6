"""``tablectl run`` as its own process, its wall clock behind the journal it is given: the
records before it were stamped two hours ahead (a clock that went back across a restart, as a
Pi without a real-time clock does after a power cut). The start journals how far behind the
clock is, the pit sees it in the health, and the table plays on. (The process's own clock is
not shifted: libfaketime is not relied on; the journal's records are put ahead instead.)"""
import json
import urllib.request

import pytest

from controller.journal import Journal

from test_api_support import TOKENS, DaemonTable
from test_clock_service import HOUR_NS, ShiftedClock

pytestmark = pytest.mark.hil


def get(table, path):
    req = urllib.request.Request(table.url + path,
                                 headers={"Authorization": f"Bearer {TOKENS['display']}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def test_the_daemon_started_behind_its_journal_says_so_and_the_table_opens(tmp_path):
    with Journal.open(tmp_path / "journal.db", "T1", clock=ShiftedClock(2 * HOUR_NS)) as j:
        j.append("service", {"event": "start", "pid": 1}, source="service")
        last = j.append("service", {"event": "stop"}, source="service")
    table = DaemonTable(tmp_path, "q-poker", "shoe")
    try:
        health = get(table, "/api/health")
        opened = table.rig.command("open_table", "supervisor")
    finally:
        table.close()
    clock = [d for d in health["devices"] if d["class"] == "clock"]
    assert len(clock) == 1 and clock[0]["conditions"] == ["clock_behind"]
    assert f"record {last.seq}" in clock[0]["problem"]
    assert {d["device"]: d["link"] for d in health["devices"] if d["class"] != "clock"} == \
        {"shoe": "up", "shuffler": "up"}
    assert opened["ok"] and opened["state"] == "shuffling"
    with Journal.open(tmp_path / "journal.db", readonly=True) as j:
        behind = [r for r in j.records(kinds=["clock_behind"])]
        start = next(r for r in j.records(kinds=["service"]) if r.seq > last.seq)
        assert j.verify().ok
    assert len(behind) == 1 and behind[0].seq == start.seq + 1
    p = behind[0].payload
    assert p["last_seq"] == last.seq and p["behind_ns"] == last.wall_ns - p["wall_ns"]
    assert HOUR_NS < p["behind_ns"] <= 2 * HOUR_NS
    assert start.wall_ns < last.wall_ns       # the records of this start are stamped behind
