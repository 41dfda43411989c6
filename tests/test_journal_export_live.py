"""`tablectl journal export` of the journal the real daemon is writing: each export, taken
while bets are placed, is a whole prefix of the journal (no record half there, none out of
order), and its lines are checked on their own, as docs/journal.md says an auditor checks
them, chained from record 1 or from the hash of the last record a previous export gave."""
import hashlib
import json
import subprocess
import sys
import threading

import pytest

from controller.journal import Journal
from controller.rig import Rig
from rig_helpers import open_for_bets
from test_journal_auditor import GENESIS, canonical

pytestmark = pytest.mark.hil


def export(journal, since=0):
    out = subprocess.run([sys.executable, "-m", "controller.cli", "journal", "export",
                          "--journal", str(journal), "--open-round", "--since", str(since)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def chain(lines, prev):
    """Each line's body (the line without wall, prev_hash and hash) hashed after the previous
    line's hash; returns the last hash."""
    for doc in lines:
        body = canonical({k: v for k, v in doc.items() if k not in ("wall", "prev_hash",
                                                                      "hash")})
        assert doc["prev_hash"] == prev, doc["seq"]
        assert hashlib.sha256((prev + body).encode("ascii")).hexdigest() == doc["hash"]
        prev = doc["hash"]
    return prev


def test_exports_beside_the_running_daemon_are_whole_prefixes_that_verify(tmp_path):
    with Rig(tmp_path, "q-poker") as rig:
        open_for_bets(rig)
        stop = threading.Event()

        def bets():
            while not stop.is_set():
                for box in range(1, 8):
                    rig.command("place_bet", box=box, wager="pair_bonus", amount=10)

        better = threading.Thread(target=bets)
        better.start()
        try:
            exports = [export(rig.journal_path) for _ in range(4)]
            last = exports[-1][-1]
            more = export(rig.journal_path, since=last["seq"])
        finally:
            stop.set()
            better.join()
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert j.verify().ok
        stored = {r.seq: r.hash for r in j.records()}
    sizes = [len(lines) for lines in exports]
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0], sizes     # written meanwhile
    for lines in exports:
        assert [d["seq"] for d in lines] == list(range(1, len(lines) + 1))
        chain(lines, GENESIS)
        assert all(stored[d["seq"]] == d["hash"] for d in lines)
    assert more and more[0]["seq"] == last["seq"] + 1
    chain(more, last["hash"])
