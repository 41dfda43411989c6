"""`tablectl journal verify` against edits a person can make with the sqlite3 shell beyond
changing a value: a value stored as another type, a body that is no longer ASCII, a table
rebuilt without its column types. Each is named as the record it touches, never a traceback,
and the file is left as it was."""
import hashlib

import pytest

from controller.journal import Journal
from test_journal import fill, sql, tablectl

# The records table rebuilt without types or constraints (as `CREATE TABLE ... AS SELECT`
# makes it), so that a sequence number can hold anything.
UNTYPED = ("PRAGMA journal_mode = DELETE; "
           "CREATE TABLE r2 (seq, wall_ns, mono_ns, table_id, round_id, kind, source, article, "
           "payload, body, prev_hash, hash); INSERT INTO r2 SELECT * FROM records; "
           "DROP TABLE records; ALTER TABLE r2 RENAME TO records; {edit}; "
           "PRAGMA journal_mode = WAL;")

EDITS = {
    "non-ASCII body": ("UPDATE records SET body = replace(body, 'q-poker', 'q-pokér') "
                       "WHERE seq = 2", 2),
    "body stored as a blob": ("UPDATE records SET body = CAST(body AS BLOB) WHERE seq = 3", 3),
    "payload stored as a blob": ("UPDATE records SET payload = CAST(payload AS BLOB) "
                                 "WHERE seq = 3", 3),
    "sequence number NULL": (UNTYPED.format(edit="UPDATE records SET seq = NULL WHERE seq = 5"),
                             None),
    "sequence number as text": (UNTYPED.format(edit="UPDATE records SET seq = '5' "
                                                    "WHERE seq = 5"), 5),
    "sequence number as a real": (UNTYPED.format(edit="UPDATE records SET seq = 5.0 "
                                                      "WHERE seq = 5"), 5),
    "monotonic time as a real": (UNTYPED.format(edit="UPDATE records SET mono_ns = "
                                                     "mono_ns + 0.0 WHERE seq = 5"), 5),
}


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_of_a_values_type_is_named_not_a_traceback(tmp_path, edit):
    path = tmp_path / "journal.db"
    fill(path)
    statement, bad = EDITS[edit]
    sql(path, statement)
    with Journal.open(path, readonly=True) as j:
        report = j.verify()
    assert not report.ok, edit
    if bad is not None:
        assert report.bad_seq == bad, report
    assert "edited" in report.reason, report
    before = digest(path)
    out = tablectl("journal", "verify", "--journal", str(path))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "NOT VERIFIED" in out.stderr and "edited" in out.stderr
    assert digest(path) == before


@pytest.mark.parametrize("spelling", ["a key given twice", "spaces"])
def test_a_payload_column_spelled_otherwise_than_its_record_is_named(tmp_path, spelling):
    """The payload column is the record's canonical JSON, character for character. Spelled
    otherwise it says something else to whoever reads it: with a key given twice, SQLite's
    json_extract (and so any query) takes the first value, Python's json the last."""
    path = tmp_path / "journal.db"
    fill(path)
    if spelling == "a key given twice":
        sql(path, "UPDATE records SET payload = replace(payload, '\"game\":\"q-poker\"', "
                  "'\"game\":\"texas-holdem\",\"game\":\"q-poker\"') WHERE seq = 2")
        import sqlite3
        con = sqlite3.connect(path)
        read = con.execute("SELECT json_extract(payload, '$.game') FROM records "
                           "WHERE seq = 2").fetchone()[0]
        con.close()
        assert read == "texas-holdem"       # what a query of the column now says
    else:
        sql(path, "UPDATE records SET payload = replace(payload, ',', ', ') WHERE seq = 2")
    with Journal.open(path, readonly=True) as j:
        report = j.verify()
    assert (report.ok, report.bad_seq) == (False, 2), report
    assert "payload column differs" in report.reason


@pytest.mark.parametrize("where", ["at the end", "in the middle"])
def test_a_duplicated_record_is_named_as_a_copy(tmp_path, where):
    path = tmp_path / "journal.db"
    fill(path)
    cols = "wall_ns, mono_ns, table_id, round_id, kind, source, article, payload, body, " \
           "prev_hash, hash"
    if where == "at the end":
        sql(path, f"INSERT INTO records SELECT 13, {cols} FROM records WHERE seq = 12")
        bad, copied = 13, 12
    else:       # records 6.. moved up by one, and a copy of record 5 put in the gap
        sql(path, "UPDATE records SET seq = seq + 1000 WHERE seq >= 6; "
                  "UPDATE records SET seq = seq - 999 WHERE seq >= 1006; "
                  f"INSERT INTO records SELECT 6, {cols} FROM records WHERE seq = 5")
        bad, copied = 6, 5
    with Journal.open(path, readonly=True) as j:
        report = j.verify()
    assert (report.ok, report.bad_seq) == (False, bad), report
    assert f"a copy of record {copied}" in report.reason and "duplicated" in report.reason


def test_verify_says_what_the_chain_still_vouches_for_and_the_way_out(tmp_path):
    path = tmp_path / "journal.db"
    fill(path)
    sql(path, "DELETE FROM records WHERE seq = 8")
    out = tablectl("journal", "verify", "--journal", str(path))
    assert out.returncode == 1 and out.stdout == ""
    assert "record 8" in out.stderr and "records 1-7" in out.stderr
    assert "export --verified-only" in out.stderr
    assert "restore the journal from a backup" in out.stderr


@pytest.mark.parametrize("cut", [100, 4096])
def test_a_journal_cut_short_is_named_as_cut_short(tmp_path, cut):
    """A copy that did not finish, or a disk that failed, leaves the file shorter than its
    own header says: that is what is wrong, not a record edited or inserted."""
    whole = tmp_path / "whole.db"
    fill(whole)
    path = tmp_path / "journal.db"
    data = whole.read_bytes()
    path.write_bytes(data[:len(data) - cut])
    out = tablectl("journal", "verify", "--journal", str(path))
    assert out.returncode in (1, 2) and "Traceback" not in out.stderr
    assert "cut short" in out.stderr, out.stderr
    assert f"{len(data) - cut} bytes" in out.stderr and f"{len(data)}" in out.stderr
    assert "restore" in out.stderr and "backup" in out.stderr
    assert "inserted" not in out.stderr and "not a tablectl journal" not in out.stderr


def test_a_journal_whose_own_table_id_was_edited_is_named_so_not_its_records(tmp_path):
    """The table id in the journal's meta table changed: every record is still the one table's
    and verifies against the chain. The report names the edit where it is, not record 1 as
    "another table's" with nothing vouched for."""
    path = tmp_path / "journal.db"
    fill(path)
    sql(path, "UPDATE meta SET value = 'T9' WHERE key = 'table_id'")
    with Journal.open(path, readonly=True) as j:
        report = j.verify()
    assert (report.ok, report.bad_seq) == (False, 1), report
    assert "'T1'" in report.reason and "'T9'" in report.reason
    assert "table id" in report.reason and "meta" in report.reason
    assert "the records were not" in report.reason
    out = tablectl("journal", "verify", "--journal", str(path))
    assert out.returncode == 1
    assert "put it back to 'T1'" in out.stderr and "verify once the table id" in out.stderr
