"""The WAL's reserved space: written at open by a rolled-back transaction, so that no commit
has to grow the WAL file; it changes no record and survives a SIGKILL without a trace."""
import hashlib
import os
import signal
import sqlite3
import subprocess
import sys

from controller.journal import WAL_RESERVE_PAGES, Journal

PAYLOAD = {"device": "shoe", "card": "As", "link": {"session": "9f2c41d07b", "seq": 12},
           "note": "x" * 150}


def wal_size(path):
    return os.path.getsize(f"{path}-wal")


def test_the_wal_is_reserved_at_open_and_commits_never_grow_it(tmp_path):
    path = tmp_path / "j.db"
    with Journal.open(path, "T1") as j:
        page = j._conn.execute("PRAGMA page_size").fetchone()[0]
        reserved = wal_size(path)
        assert reserved >= WAL_RESERVE_PAGES * page * 0.95, reserved
        sizes = set()
        for i in range(200):
            j.append_many([("device", dict(PAYLOAD, i=i), str(i // 10), "shoe")] * 4)
            sizes.add(wal_size(path))
        # 200 commits of 4 records (about 1,000 pages, up to SQLite's own checkpoint point)
        # were written over the reserve: the file never grew.
        assert sizes == {reserved}
        assert len(j) == 800
        assert j.verify().ok


def test_the_reserve_changes_no_record_and_no_byte_of_the_database(tmp_path):
    path = tmp_path / "j.db"
    with Journal.open(path, "T1") as j:
        for i in range(50):
            j.append("device", dict(PAYLOAD, i=i), "1", "shoe")
        head = j.head()
    assert not os.path.exists(f"{path}-wal")      # closed: checkpointed and removed
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with Journal.open(path, "T1") as j:
        assert wal_size(path) > 0
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before
        assert j.head() == head and len(j) == 50
        keys = [k for (k,) in j._conn.execute("SELECT key FROM meta")]
        assert "wal-reserve" not in keys
        # A reader of its own sees the same 50 records, not the reserved pages.
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        assert con.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 50
        con.close()


WRITER = r"""
import os, signal, sys
from controller.journal import Journal
j = Journal.open(sys.argv[1], "T1")
for i in range(int(sys.argv[2])):
    j.append("device", {"i": i, "note": "x" * 300}, str(i // 10), "shoe")
    print(i + 1, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_writer_leaves_every_record_and_no_reserved_page(tmp_path):
    """SIGKILL with the reserved pages still in the WAL behind the last commit: the journal
    reopens with exactly the records acknowledged, the chain verifies, and the reserve is
    taken again."""
    path = tmp_path / "j.db"
    for total, n in ((0, 0), (137, 137), (137 + 5, 5)):
        proc = subprocess.run([sys.executable, "-c", WRITER, str(path), str(n)],
                              capture_output=True, text=True)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        acked = int(proc.stdout.split()[-1]) if n else 0
        assert acked == n
        with Journal.open(path, "T1", readonly=True) as j:
            assert len(j) == total
            report = j.verify()
            assert report.ok, report
            assert [r.payload["i"] for r in j.records()][-n:] == list(range(n))[-n:] \
                if n else True
