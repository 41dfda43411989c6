"""A path a person gets wrong (unreadable, unwritable, not a directory) gets one clear line and
exit status 2 from the real command, never a Python traceback."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from controller.journal import Journal, Kind

REPO = Path(__file__).resolve().parent.parent
NOBODY = 65534
JOURNAL_COMMANDS = [("journal", "verify"), ("journal", "show", "last"), ("journal", "rounds"),
                    ("journal", "export"), ("integrity", "report")]


# Root is not held back by permission bits, so as root the command drops to nobody (all its
# user and group ids) once it has imported what it runs: the interpreter may live where nobody
# may not look (a pyenv under /root), the files the test locks away are what nobody must meet.
AS_NOBODY = f"""
import os, sys
import sqlite3, tomllib
import controller.cli, controller.config, controller.journal, controller.integrity.report
controller.cli.build_parser()           # every subcommand's module
os.setgroups([])
os.setresgid({NOBODY}, {NOBODY}, {NOBODY})
os.setresuid({NOBODY}, {NOBODY}, {NOBODY})
sys.argv[0] = "tablectl"
sys.exit(controller.cli.main())
"""


def tablectl(*args, as_nobody=False, timeout=60):
    """The real command in a subprocess; ``as_nobody``: as the user nobody."""
    head = ["-c", AS_NOBODY] if as_nobody else ["-m", "controller.cli"]
    return subprocess.run([sys.executable, *head, *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=timeout)


def refused(proc, *words):
    """Exit status 2, one ``tablectl: error:`` line holding ``words``, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tablectl: error: "), proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def write_journal(path):
    with Journal.open(path, "T1") as j:
        j.append(Kind.SERVICE, {"event": "start"}, source="daemon")


@pytest.fixture
def unprivileged():
    """``(as_nobody, base)``: whether the command must run as nobody for the permission bits to
    apply (it must when the tests run as root), and a fresh directory that user may enter."""
    as_nobody = os.geteuid() == 0
    base = Path(tempfile.mkdtemp(prefix="tablectl-perm-"))    # pytest's tmp dir is root's alone
    base.chmod(0o755)
    if as_nobody:
        probe = tablectl("--version", as_nobody=True)
        if probe.returncode != 0:
            shutil.rmtree(base)
            pytest.skip(f"cannot run tablectl as nobody here: {probe.stderr}")
    yield as_nobody, base
    for d in [base, *base.rglob("*")]:
        if d.is_dir():
            d.chmod(0o755)
    shutil.rmtree(base, ignore_errors=True)


# --- journal and integrity commands: a configuration or journal this user may not read -------

@pytest.mark.parametrize("command", JOURNAL_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("option", ["--config", "--journal"])
def test_a_path_in_a_directory_this_user_may_not_enter_is_named(unprivileged, command, option):
    as_nobody, base = unprivileged
    locked = base / "locked"
    locked.mkdir()
    write_journal(locked / "journal.db")
    (locked / "table.toml").write_text("")
    locked.chmod(0o000)
    target = locked / ("table.toml" if option == "--config" else "journal.db")
    line = refused(tablectl(*command, option, target, as_nobody=as_nobody),
                   str(target), "cannot be read", f"may not enter {locked}",
                   "as root or as the service user", "sudo -u tablectl")
    assert line.startswith("tablectl: error: " +
                           ("configuration" if option == "--config" else "journal"))


def test_a_config_whose_journal_lies_in_a_locked_directory_names_the_journal(unprivileged):
    as_nobody, base = unprivileged
    locked = base / "var-lib"
    locked.mkdir()
    write_journal(locked / "journal.db")
    config = base / "table.toml"
    config.write_text('[table]\nid = "T1"\ngame = "q-poker"\nmode = "shoe"\nboxes = 7\n\n'
                      '[devices.shoe]\nclass = "shoe"\ntransport = "serial"\n'
                      'port = "/dev/ttyUSB0"\n\n'
                      f'[journal]\npath = "{locked / "journal.db"}"\n')
    config.chmod(0o644)
    locked.chmod(0o000)
    refused(tablectl("journal", "verify", "--config", config, as_nobody=as_nobody),
            f"journal {locked / 'journal.db'} cannot be read", f"may not enter {locked}",
            "sudo -u tablectl")


@pytest.mark.parametrize("name", ["table.toml", "journal.db"])
def test_a_file_this_user_may_not_read_is_named(unprivileged, name):
    as_nobody, base = unprivileged
    target = base / name
    if name == "journal.db":
        write_journal(target)
        option = "--journal"
    else:
        target.write_text("")
        option = "--config"
    target.chmod(0o000)
    refused(tablectl("journal", "rounds", option, target, as_nobody=as_nobody),
            str(target), f"may not read {target}", "sudo -u tablectl")


@pytest.mark.parametrize("command", JOURNAL_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("option", ["--config", "--journal"])
def test_a_path_the_os_refuses_to_look_up_is_a_clear_error(tmp_path, command, option):
    # root too: a name longer than the file system allows makes stat() itself fail (ENAMETOOLONG),
    # through the same check as a directory this user may not enter
    target = tmp_path / ("x" * 300) / "file"
    refused(tablectl(*command, option, target), str(target), "cannot be read",
            "file name too long", "check the path")


@pytest.mark.parametrize("option", ["--config", "--journal"])
def test_a_path_under_a_regular_file_says_it_does_not_exist(tmp_path, option):
    (tmp_path / "plain").write_text("")
    target = tmp_path / "plain" / "file"
    refused(tablectl("journal", "verify", option, target), str(target), "does not exist")


# --- demo --dir: a path that is no directory this user may write ------------------------------

DEMO = ("demo", "--game", "q-poker", "--mode", "shoe", "--rounds", "1")


def test_demo_dir_that_is_a_regular_file_is_refused(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("keep me")
    refused(tablectl(*DEMO, "--dir", plain), f"--dir {plain} is a file, not a directory",
            "give --dir a directory that can be written, or leave --dir out")
    assert plain.read_text() == "keep me"
    refused(tablectl(*DEMO, "--dir", plain / "sub"), f"--dir {plain / 'sub'} cannot be created",
            "not a directory", "leave --dir out")


def test_demo_dir_this_user_may_not_write_is_refused(unprivileged):
    as_nobody, base = unprivileged
    readonly = base / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    refused(tablectl(*DEMO, "--dir", readonly, as_nobody=as_nobody),
            f"--dir {readonly} cannot be written", "permission denied",
            "give --dir a directory that can be written, or leave --dir out")
    assert list(readonly.iterdir()) == []       # nothing started, nothing left behind


def test_demo_table_folder_blocked_by_a_file_is_refused(tmp_path):
    (tmp_path / "q-poker-shoe").write_text("")
    proc = tablectl(*DEMO, "--dir", tmp_path)
    refused(proc, f"{tmp_path / 'q-poker-shoe'} cannot be created",
            "a file of that name is in the way")
