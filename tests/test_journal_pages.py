"""A commit writes a few pages whatever the journal's size: inserting a record touches the
end of the table and of its indexes, never a random page (an index on the random digests
did, one page per record, and it grew with the journal). Counted in the WAL's frames."""
import sqlite3

from controller.journal import Journal

PAYLOAD = {"device": "shoe", "card": "As", "link": {"session": "9f2c41d07b", "seq": 12},
           "note": "x" * 150}


def frames_per_commit(path, before, commits, per_commit=4):
    with Journal.open(path, "pages-1") as j:
        for i in range(before):
            j.append_many([("device", dict(PAYLOAD, i=i), f"r{i // 30}", "shoe")] * per_commit)
        j._conn.execute("PRAGMA wal_autocheckpoint = 0")
        j._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        for i in range(commits):
            j.append_many([("device", dict(PAYLOAD, i=i), f"s{i // 30}", "shoe")] * per_commit)
        con = sqlite3.connect(path)
        (_, frames, _), = con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        con.close()
    return frames / commits


def test_a_commit_writes_a_few_pages_however_long_the_journal(tmp_path):
    small = frames_per_commit(tmp_path / "small.db", 10, 100)
    large = frames_per_commit(tmp_path / "large.db", 3000, 100)
    # Four records of ~1 kB (payload and body): the table's last leaves, the two indexes'
    # last leaves, and a split now and then (about 5 pages); about the same for a journal of
    # 12,000 records as for one of 40. A unique index on the digests made it 8 and 11.
    assert small <= 7, small
    assert large <= 7, large
    assert large <= small + 1.5, (small, large)
