"""A journal whose meta table gives another format than this version's: a newer one is
named as such, with the version to read it with, never as damage to restore from a backup;
one no tablectl writes is named as an edit. Neither is read as this format nor written."""
import sqlite3

import pytest

# the journal fixture (a copy of a real run's journal) and its helpers
from test_journal_audit import journal, played  # noqa: F401
from test_journal_audit import digest, tablectl


@pytest.mark.parametrize("command", [("journal", "verify"), ("journal", "show", "last"),
                                     ("journal", "export"), ("integrity", "report")])
def test_a_journal_of_a_newer_format_is_named_so_not_as_damaged(journal, command):
    conn = sqlite3.connect(journal)
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'format'")
    conn.commit()
    conn.close()
    before = digest(journal)
    out = tablectl(*command, "--journal", str(journal))
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    assert "format 2" in out.stderr and "newer tablectl" in out.stderr, out.stderr
    assert "read it with the tablectl that wrote it" in out.stderr
    assert "restore" not in out.stderr
    assert digest(journal) == before


def test_the_daemon_writes_no_record_into_a_journal_of_a_newer_format(journal):
    from controller.journal import Journal, JournalError
    conn = sqlite3.connect(journal)
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'format'")
    conn.commit()
    (table,) = conn.execute("SELECT value FROM meta WHERE key = 'table_id'").fetchone()
    count = conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    conn.close()
    with pytest.raises(JournalError, match="format 2, written by a newer tablectl"):
        Journal.open(journal, table)
    conn = sqlite3.connect(journal)
    assert conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == count
    conn.close()


def test_a_format_that_no_tablectl_writes_is_named_as_an_edit(journal):
    conn = sqlite3.connect(journal)
    conn.execute("UPDATE meta SET value = 'one\x1b' WHERE key = 'format'")
    conn.commit()
    conn.close()
    out = tablectl("journal", "verify", "--journal", str(journal))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "\x1b" not in out.stderr and "edited" in out.stderr and "format back to 1" in out.stderr
