"""A journal on a disk that cannot take what SQLite writes beside it: full (here the process's
file size limit at 0, RLIMIT_FSIZE, which fails every write that would grow a file as a full
disk does), or a read-only file system. Even a reader writes a -shm file beside a WAL journal.
The daemon and every reader say what is wrong with the disk and the way out, and never that
the journal is damaged and to restore it from a backup, which would throw away a sound record
of truth. Nothing is changed. Real processes: `tablectl run` and the journal commands."""
import hashlib
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal import Journal, Kind
from test_journal import fill

REPO = Path(__file__).resolve().parents[1]
READERS = [("journal", "verify"), ("journal", "show", "last"), ("journal", "rounds"),
           ("journal", "export"), ("integrity", "report")]
CONFIG = """
[table]
id = "T1"
game = "q-poker"
mode = "shuffler"
boxes = 7

[devices.shuffler]
class = "shuffler"
transport = "serial"
port = "/dev/tablectl/shuffler"

[journal]
path = "{journal}"
"""


def no_room():
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def tablectl(*args, preexec=None, wrap=()):
    return subprocess.run([*wrap, sys.executable, "-m", "controller.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, preexec_fn=preexec,
                          timeout=60)


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def journal(tmp_path):
    path = tmp_path / "journal.db"
    fill(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal.db", "journal.db.lock"]
    return path


def not_called_damaged(out):
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr and out.stdout == ""
    assert "damaged" not in out.stderr and "backup" not in out.stderr
    assert "not a tablectl journal" not in out.stderr


@pytest.mark.parametrize("command", READERS, ids=lambda c: " ".join(c))
def test_a_reader_on_a_disk_with_no_room_says_so(tmp_path, command):
    path = journal(tmp_path)
    before = digest(path)
    out = tablectl(*command, "--journal", path, preexec=no_room)
    not_called_damaged(out)
    assert "no room" in out.stderr and "-shm" in out.stderr
    assert "free space" in out.stderr and str(tmp_path) in out.stderr
    assert digest(path) == before


def test_the_daemon_on_a_disk_with_no_room_says_so_and_starts_nothing(tmp_path):
    path = journal(tmp_path)
    before = digest(path)
    config = tmp_path / "table.toml"
    config.write_text(CONFIG.format(journal=path))
    out = tablectl("run", "--config", config, preexec=no_room)
    not_called_damaged(out)
    assert "no room" in out.stderr and "free space" in out.stderr
    assert digest(path) == before
    with Journal.open(path, readonly=True) as j:     # the disk has room again
        assert j.verify().ok and j.last(kind=Kind.SERVICE).payload == {"event": "start"}


def _read_only_mount(tmp_path):
    """``(wrap, mounted)``: a command prefix that runs a command with ``tmp_path/ro`` a
    read-only view of ``tmp_path/rw`` (its own mount namespace), or skip."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a read-only mount needs root and unshare")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace here: {probe.stderr!r}")
    rw, ro = tmp_path / "rw", tmp_path / "ro"
    rw.mkdir()
    ro.mkdir()
    script = (f"mount --bind {rw} {ro} && mount -o remount,bind,ro {ro} && exec \"$@\"")
    return ["unshare", "-m", "sh", "-c", script, "sh"], rw, ro


def left_with_its_wal(path):
    """A journal whose writer died with records still in the -wal file beside it (a SIGKILL,
    a power loss, a card pulled from a running table), copied with its -wal only."""
    code = ("import os, sys; sys.path.insert(0, 'tests'); from test_journal import fill; "
            "from controller.journal import Journal, Kind; "
            f"fill({str(path)!r}); j = Journal.open({str(path)!r}, 'T1'); "
            "j.append(Kind.SERVICE, {'event': 'start'}, source='daemon'); os._exit(0)")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)
    wal = Path(f"{path}-wal")
    assert wal.exists() and wal.stat().st_size > 0
    # Copied as the journal and its -wal, without the -shm index (which is of no use once its
    # writer is gone, and SQLite makes again): a reader must make the -shm to read the -wal.
    Path(f"{path}-shm").unlink()


@pytest.mark.parametrize("command", READERS, ids=lambda c: " ".join(c))
def test_a_journal_on_read_only_media_is_read_where_nothing_waits_in_a_wal(tmp_path, command):
    """An inspector's copy on read-only media (a write-protected card, a read-only mount): a
    journal closed cleanly has no -wal file, so it is read as it is, without the -shm file
    SQLite would otherwise make beside it. Nothing is written."""
    wrap, rw, ro = _read_only_mount(tmp_path)
    fill(rw / "journal.db")
    assert not Path(f"{rw / 'journal.db'}-wal").exists()
    before = digest(rw / "journal.db")
    out = tablectl(*command, "--journal", ro / "journal.db", wrap=wrap)
    assert out.returncode in (0, 1) and "Traceback" not in out.stderr, out.stderr
    assert "read-only file system" not in out.stderr
    assert "NOT VERIFIED" not in out.stderr and out.stdout
    assert digest(rw / "journal.db") == before
    assert sorted(p.name for p in rw.iterdir()) == ["journal.db", "journal.db.lock"]


@pytest.mark.parametrize("command", READERS[:3], ids=lambda c: " ".join(c))
def test_a_reader_of_a_journal_on_a_read_only_file_system_says_so(tmp_path, command):
    """With records still in its -wal file, a journal on read-only media cannot be read whole
    there (SQLite needs the -shm file to read them): the reader says so and to copy it."""
    wrap, rw, ro = _read_only_mount(tmp_path)
    left_with_its_wal(rw / "journal.db")
    before = digest(rw / "journal.db")
    out = tablectl(*command, "--journal", ro / "journal.db", wrap=wrap)
    not_called_damaged(out)
    assert "read-only file system" in out.stderr and "copy" in out.stderr
    assert digest(rw / "journal.db") == before


def test_the_daemon_whose_journal_directory_is_to_be_made_on_a_read_only_file_system_says_so(
        tmp_path):
    # A new table's journal in a directory not made yet, where the file system is read-only
    # (a disk mounted so, or any path the unit's ProtectSystem=strict leaves read-only): the
    # refusal said to check the directory exists, which cannot be mended by making it.
    wrap, rw, ro = _read_only_mount(tmp_path)
    config = tmp_path / "table.toml"
    config.write_text(CONFIG.format(journal=ro / "table" / "journal.db"))
    out = tablectl("run", "--config", config, wrap=wrap)
    not_called_damaged(out)
    assert "read-only file system" in out.stderr and "read-write" in out.stderr, out.stderr
    assert "check the directory exists" not in out.stderr
    assert list(rw.iterdir()) == []


def test_the_daemon_with_its_journal_on_a_read_only_file_system_says_so(tmp_path):
    wrap, rw, ro = _read_only_mount(tmp_path)
    fill(rw / "journal.db")
    config = tmp_path / "table.toml"
    config.write_text(CONFIG.format(journal=ro / "journal.db"))
    out = tablectl("run", "--config", config, wrap=wrap)
    not_called_damaged(out)
    assert "read-only file system" in out.stderr and "read-write" in out.stderr
    assert "service user" not in out.stderr
