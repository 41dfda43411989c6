"""The daemon's opening of its journal (Journal.open for writing) on a file that is not a
whole tablectl journal: another program's SQLite database, a journal whose records table was
dropped, records whose journal lost its table id. Before, the writer made its tables in the
other program's file and wrote its chain there, began a new chain at record 1 in the journal
that lost its records (as SQLite would in an empty file), and gave the records a table id
again. Each is refused, naming it and the way out, and the file is left as it was."""
import hashlib
import sqlite3

import pytest

from controller.journal import Journal, JournalError
# the journal fixture (a copy of a real run's journal)
from test_journal_audit import journal, played  # noqa: F401

TABLE = "demo-q-poker-shoe"


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sql(path, *statements):
    conn = sqlite3.connect(path, isolation_level=None)
    for s in statements:
        conn.execute(s)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def test_another_programs_database_is_not_written_into(tmp_path):
    path = tmp_path / "journal.db"
    sql(path, "CREATE TABLE accounts (id INTEGER, balance INTEGER)",
        "INSERT INTO accounts VALUES (1, 100)")
    before = digest(path)
    with pytest.raises(JournalError, match=r"SQLite file of another program \(tables "
                                           r"'accounts'\), not a tablectl journal"):
        Journal.open(path, "t1")
    assert digest(path) == before


def test_a_journal_that_lost_its_records_table_begins_no_new_chain(journal):
    sql(journal, "DROP TABLE records")
    before = digest(journal)
    with pytest.raises(JournalError, match=rf"of table '{TABLE}' has lost its records table.*"
                                           "restore the journal from a backup"):
        Journal.open(journal, TABLE)
    assert digest(journal) == before


@pytest.mark.parametrize("edit", ["DROP TABLE meta", "DELETE FROM meta WHERE key = 'table_id'"])
def test_records_whose_journal_lost_its_table_id_are_not_given_one(journal, edit):
    sql(journal, edit)
    before = digest(journal)
    with pytest.raises(JournalError, match="holds records but no table id"):
        Journal.open(journal, TABLE)
    assert digest(journal) == before


def test_a_journal_cut_off_while_its_tables_were_made_is_made_whole(tmp_path):
    # a crash between the first table and the table id: nothing recorded yet, nothing lost
    path = tmp_path / "journal.db"
    sql(path, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    with Journal.open(path, "t1") as j:
        assert j.append("service", {"event": "start"}).seq == 1
        assert j.verify().ok
