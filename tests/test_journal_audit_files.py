"""A journal path that is not a file: a named pipe (opening it waits for a writer that never
comes, so a reader hung there for good), a device (/dev/null read as "an empty file"), or a
-wal beside the journal that is a directory (SQLite only said "unable to open database file",
with "restore it from a backup" for a sound journal). Each is named with the way out, at once,
by the readers and by the daemon's opening of its journal."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal import Journal, JournalError
# the journal fixture (a copy of a real run's journal)
from test_journal_audit import journal, played  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]


def tablectl(*args):
    # A short timeout: before, a named pipe held the command for good.
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=30)


@pytest.mark.parametrize("command", [("journal", "verify"), ("journal", "export"),
                                     ("integrity", "report")])
def test_a_named_pipe_is_named_not_waited_on(tmp_path, command):
    pipe = tmp_path / "journal.db"
    os.mkfifo(pipe)
    out = tablectl(*command, "--journal", str(pipe))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "is a named pipe (FIFO), not a file" in out.stderr, out.stderr
    assert "--journal PATH" in out.stderr


def test_the_daemon_does_not_wait_on_a_named_pipe_either(tmp_path):
    pipe = tmp_path / "journal.db"
    os.mkfifo(pipe)
    with pytest.raises(JournalError, match=r"named pipe \(FIFO\), not a file"):
        Journal.open(pipe, "t1")


def test_a_device_is_not_read_as_an_empty_journal():
    out = tablectl("journal", "verify", "--journal", os.devnull)
    assert out.returncode == 2
    assert "is a character device, not a file" in out.stderr, out.stderr
    assert "empty file" not in out.stderr


def test_a_wal_that_is_a_directory_is_named_with_the_way_out(journal):
    wal = Path(f"{journal}-wal")
    wal.mkdir()
    out = tablectl("journal", "verify", "--journal", str(journal))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{wal}, is a directory" in out.stderr and "remove it" in out.stderr, out.stderr
    assert "restore" not in out.stderr
    shutil.rmtree(wal)
    assert tablectl("journal", "verify", "--journal", str(journal)).returncode == 0


HOT = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode = DELETE")
conn.execute("PRAGMA cache_size = 1")              # the change spills into the file itself
conn.execute("BEGIN")
conn.execute("UPDATE records SET payload = payload || ' '")
conn.execute("INSERT INTO meta VALUES ('pad', zeroblob(200000))")
os._exit(0)                                        # cut off before COMMIT
"""


def test_an_edit_by_another_program_cut_off_is_named_not_as_a_permission(journal, tmp_path):
    """A rollback journal beside the journal: another program's transaction, cut off. The
    reader may not roll it back (that writes the file); it is not a matter of permissions."""
    subprocess.run([sys.executable, "-c", HOT, str(journal)], check=True)
    hot = Path(f"{journal}-journal")
    assert hot.stat().st_size > 0
    before = journal.read_bytes()
    out = tablectl("journal", "verify", "--journal", str(journal))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"rollback journal beside it ({hot})" in out.stderr, out.stderr
    assert "may not write" not in out.stderr and "sudo" not in out.stderr
    assert journal.read_bytes() == before and hot.exists()
    # the way out it gives: a copy, rolled back by sqlite3, reads as the journal it was
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in (journal, hot):
        shutil.copy(f, copy / f.name)
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("no sqlite3 shell to follow the way out with")
    subprocess.run([shell, str(copy / journal.name), "PRAGMA integrity_check"], check=True,
                   capture_output=True)
    assert tablectl("journal", "verify", "--journal", str(copy / journal.name)).returncode == 0


@pytest.mark.parametrize("command", [("journal", "rounds"), ("integrity", "report")])
def test_a_configuration_that_is_a_named_pipe_is_named_not_waited_on(tmp_path, command):
    pipe = tmp_path / "table.toml"
    os.mkfifo(pipe)
    out = tablectl(*command, "--config", str(pipe))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"configuration {pipe} is a named pipe (FIFO), not a file" in out.stderr, out.stderr
