"""A start refused because the journal does not hold the daemon's head (status 65) leaves the
journal's files as they were, byte for byte: the journal kept as the evidence of a loss or an
edit is not changed by the very start that reported it. The real daemon (`tablectl run`) on a
journal whose WAL still holds records no checkpoint has copied into the main file (what a
crash leaves), so closing a writer's connection would have moved them."""
import hashlib
import subprocess
import sys
import textwrap

from controller.journal import Journal
from controller.journal_head import Head, head_path, write_head
from controller.service import EXIT_UNRECOVERABLE
from service_helpers import journal_only

# A writer that appends and dies without closing: its records stay in the WAL.
CRASHED_WRITER = textwrap.dedent("""
    import os, sys
    from controller.journal import Journal
    j = Journal.open(sys.argv[1], "T1")
    for n in range(int(sys.argv[2])):
        j.append("service", {"event": "note", "n": n}, source="service")
    print(*j.head(), flush=True)
    os._exit(0)
""")


def files(path):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.parent.glob(path.name + "*")) if not p.name.endswith((".head", ".lock"))}


def test_a_refused_start_leaves_the_journal_its_wal_and_its_index_as_they_were(tmp_path):
    path = tmp_path / "journal.db"
    out = subprocess.run([sys.executable, "-c", CRASHED_WRITER, str(path), "12"], check=True,
                         capture_output=True, text=True, timeout=60).stdout.split()
    seq, digest = int(out[0]), out[1]
    wal = tmp_path / "journal.db-wal"
    assert wal.stat().st_size and (tmp_path / "journal.db-shm").exists()
    # The head says the journal had records it no longer has (cut short, an older copy).
    write_head(head_path(path), Head("T1", seq + 5, "ab" * 32))
    config = tmp_path / "table.toml"
    config.write_text(journal_only(path))
    before = files(path)
    assert set(before) == {"journal.db", "journal.db-wal", "journal.db-shm"}

    done = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config",
                           str(config)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == EXIT_UNRECOVERABLE, done.stdout + done.stderr
    assert f"ends at record {seq}" in done.stdout + done.stderr
    assert files(path) == before, "the refused start changed the journal's files"
    with Journal.open(path, readonly=True) as j:
        assert j.head() == (seq, digest) and j.verify().ok


def test_a_refused_start_on_a_journal_closed_cleanly_makes_no_files_beside_it(tmp_path):
    # Closed cleanly, the journal is one file: the check reads it without making a -wal or
    # a -shm beside it.
    path = tmp_path / "journal.db"
    with Journal.open(path, "T1") as j:
        j.append("service", {"event": "note"}, source="service")
        seq, _ = j.head()
    write_head(head_path(path), Head("T1", seq + 5, "ab" * 32))
    config = tmp_path / "table.toml"
    config.write_text(journal_only(path))
    before = files(path)
    assert set(before) == {"journal.db"}
    done = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config",
                           str(config)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == EXIT_UNRECOVERABLE, done.stdout + done.stderr
    assert files(path) == before


def test_a_refused_start_on_a_journal_with_an_index_but_no_wal_makes_no_wal(tmp_path):
    # A -shm left beside a journal whose -wal is gone (a reader outlived the writer, and the
    # empty -wal was removed, or a copy took the journal and its index only): the check reads
    # the main file alone, and makes no -wal beside it.
    path = tmp_path / "journal.db"
    writer = Journal.open(path, "T1")
    writer.append("service", {"event": "note"}, source="service")
    seq, _ = writer.head()
    reader = Journal.open(path, readonly=True)
    writer.close()
    reader.close()
    (tmp_path / "journal.db-wal").unlink()
    write_head(head_path(path), Head("T1", seq + 5, "ab" * 32))
    config = tmp_path / "table.toml"
    config.write_text(journal_only(path))
    before = files(path)
    assert set(before) == {"journal.db", "journal.db-shm"}
    done = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config",
                           str(config)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == EXIT_UNRECOVERABLE, done.stdout + done.stderr
    assert f"ends at record {seq}" in done.stdout + done.stderr
    assert files(path) == before
