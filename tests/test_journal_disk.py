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


@pytest.mark.parametrize("command", READERS[:3], ids=lambda c: " ".join(c))
def test_a_reader_of_a_journal_on_a_read_only_file_system_says_so(tmp_path, command):
    wrap, rw, ro = _read_only_mount(tmp_path)
    fill(rw / "journal.db")
    before = digest(rw / "journal.db")
    out = tablectl(*command, "--journal", ro / "journal.db", wrap=wrap)
    not_called_damaged(out)
    assert "read-only file system" in out.stderr and "copy" in out.stderr
    assert digest(rw / "journal.db") == before


def test_the_daemon_with_its_journal_on_a_read_only_file_system_says_so(tmp_path):
    wrap, rw, ro = _read_only_mount(tmp_path)
    fill(rw / "journal.db")
    config = tmp_path / "table.toml"
    config.write_text(CONFIG.format(journal=ro / "journal.db"))
    out = tablectl("run", "--config", config, wrap=wrap)
    not_called_damaged(out)
    assert "read-only file system" in out.stderr and "read-write" in out.stderr
    assert "service user" not in out.stderr
