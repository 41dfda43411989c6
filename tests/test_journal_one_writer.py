"""One writer per journal, whatever name it is opened by. The writer's lock is
``<journal>.lock``: a journal reached through a symbolic link (the journal moved to another
disk and linked back) or a second hard link must not let a second controller write it beside
the first. SQLite keeps the -wal file beside the name a journal is opened by, so a second
hard link is a second WAL for one file."""
import os
import subprocess
import sys

import pytest

from controller.journal import Journal, JournalError

HOLD = ("import sys, time; from controller.journal import Journal; "
        "j = Journal.open(sys.argv[1], 'T1'); j.append('service', {'event': 'start'}); "
        "print('open', flush=True); time.sleep(60)")


@pytest.fixture
def holder(tmp_path):
    """A writer process holding tmp_path/journal.db."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "journal.db")],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "open"
        yield proc
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def test_a_second_writer_through_a_symbolic_link_is_refused(tmp_path, holder):
    link = tmp_path / "link.db"
    link.symlink_to(tmp_path / "journal.db")
    with pytest.raises(JournalError, match=rf"being written by pid {holder.pid}"):
        Journal.open(link, "T1")
    holder.kill()
    holder.wait()
    with Journal.open(link, "T1") as j:       # the one writer now, by either name
        assert j.append("service", {"event": "start"}).seq == 2
        assert j.verify().ok


def test_a_journal_with_a_second_hard_link_is_not_written(tmp_path, holder):
    other = tmp_path / "other.db"
    os.link(tmp_path / "journal.db", other)
    with pytest.raises(JournalError, match=r"2 names .*hard link") as info:
        Journal.open(other, "T1")
    assert "remove" in str(info.value)
    assert not (tmp_path / "other.db-wal").exists()      # nothing was begun by that name
