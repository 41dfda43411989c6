"""A commit writes a few pages whatever the journal's size: inserting a record touches the
end of the table, never a random page (an index on the random digests did, one page per
record, and it grew with the journal), and no index page unless the record marks a round or a
link (indexes on every record's round and kind added two pages to every commit). Counted in
the WAL's frames."""
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
    # Four records of ~1 kB (payload and body): the table's last leaves and a split now and
    # then (about 3 pages); about the same for a journal of 12,000 records as for one of 40.
    # Indexes on every record's round and kind made it 5.3-5.7, a unique index on the digests
    # 8 and 11.
    assert small <= 4, small
    assert large <= 4, large
    assert large <= small + 1, (small, large)


def test_a_one_record_commit_writes_the_tables_last_page_and_no_index(tmp_path):
    # A device event of a card on its own: the leaf it goes in, and the next one about every
    # other commit (1.5 pages); with indexes on every record's round and kind it was 3.5.
    one = frames_per_commit(tmp_path / "one.db", 3000, 200, per_commit=1)
    assert one <= 2, one


def test_round_marks_are_indexed_and_found_by_the_index(tmp_path):
    path = tmp_path / "marks.db"
    with Journal.open(path, "pages-1") as j:
        for r in range(40):
            j.append("round_open", {"r": r}, str(r), "table")
            j.append_many([("device", dict(PAYLOAD, i=i), str(r), "shoe") for i in range(20)])
            j.append("round_close", {"outcome": "settled"}, str(r), "table")
        con = sqlite3.connect(path)
        plan = con.execute("EXPLAIN QUERY PLAN SELECT seq FROM records WHERE kind = "
                           "'round_open' ORDER BY seq DESC LIMIT 1").fetchall()
        con.close()
        assert any("records_marks" in row[-1] for row in plan), plan
        assert j.last(kind="round_open").round_id == "39"
        assert [r.kind for r in j.last_round().records][::21] == ["round_open", "round_close"]
