"""``Journal.write_many``: the table's write, which builds no Record, writes exactly what
``append_many`` writes; the writer chains each record to the last one it committed without
reading it back, and a failed write changes neither the file nor the next record's place."""
import itertools
import sqlite3

import pytest

from controller.journal import Entry, Journal, JournalError


class Clock:
    """The same instants for two journals, so their records can be compared byte for byte."""

    def __init__(self):
        self.t = itertools.count(1_700_000_000_000_000_000, 1000)

    def time_ns(self):
        return next(self.t)

    def monotonic_ns(self):
        return 42


BATCHES = [
    [Entry("device", {"event": {"kind": "card_drawn", "card": "Qd"}}, "1", "shoe"),
     Entry("table", {"kind": "card", "hand": [None]}, "1", "table")],
    [Entry("state", {"dest": "player_decisions", "ü": "é"}, "1", "table")],
    [Entry("command", {"name": "decide", "args": {"box": 1}}, "1", "dealer"),
     Entry("decision", {"irregularity": "x"}, "1", "table", "89/2004 art. 11(5)"),
     Entry("table", [1, 2.5, True, None], None, None)],
]


def rows(path):
    """Every stored column of every record, body and hashes included."""
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM records ORDER BY seq").fetchall()


def test_write_many_writes_what_append_many_writes(tmp_path):
    a = Journal.open(tmp_path / "a.db", "T1", clock=Clock())
    b = Journal.open(tmp_path / "b.db", "T1", clock=Clock())
    lasts = []
    for batch in BATCHES:
        got = a.append_many(batch)
        lasts.append(b.write_many(batch))
        assert lasts[-1] == got[-1].seq
    assert lasts == [2, 3, 6] and b.write_many([]) == 0
    assert b.verify().ok
    a.close()
    b.close()
    assert len(rows(tmp_path / "a.db")) == 6
    assert rows(tmp_path / "a.db") == rows(tmp_path / "b.db")


def test_the_chain_goes_on_across_a_reopening_and_a_failed_write(tmp_path):
    path = tmp_path / "j.db"
    with Journal.open(path, "T1") as j:
        j.write_many(BATCHES[0])
    with Journal.open(path, "T1") as j:
        assert j.write_many(BATCHES[1]) == 3          # read from the file once
        j._conn.execute("PRAGMA query_only = ON")     # the next INSERT fails
        with pytest.raises(JournalError, match="NOT recorded"):
            j.write_many(BATCHES[2])
        j._conn.execute("PRAGMA query_only = OFF")
        assert [r.seq for r in j.records()] == [1, 2, 3]
        assert j.write_many(BATCHES[2]) == 6          # no gap, no repeat
        report = j.verify()
        assert report.ok and [r.seq for r in j.records()] == [1, 2, 3, 4, 5, 6]
