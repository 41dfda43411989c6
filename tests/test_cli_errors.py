"""A path a person gets wrong (unreadable, unwritable, not a directory) gets one clear line and
exit status 2 from the real command, never a Python traceback."""
import asyncio
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
import controller.service, asyncio
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


# --- run --control: a socket path the daemon cannot bind ----------------------------------------

RUN_CONFIG = """[table]
id = "ctl-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[journal]
path = "{journal}"
"""


def run_config(where, journal_dir=None):
    config = where / "table.toml"
    config.write_text(RUN_CONFIG.format(journal=(journal_dir or where) / "journal.db"))
    config.chmod(0o644)
    return config


def test_run_refuses_a_control_socket_in_a_directory_that_does_not_exist(tmp_path):
    config = run_config(tmp_path)
    control = tmp_path / "no-such-dir" / "ctl.sock"
    proc = tablectl("run", "--config", config, "--control", control, timeout=30)
    refused(proc, f"control socket {control}", f"the directory {control.parent} does not exist",
            "create it, or give another --control path", "RuntimeDirectory=")
    # refused at start: no journal opened (nothing written), no directory made
    assert not (tmp_path / "journal.db").exists() and not control.parent.exists()


def test_run_refuses_a_control_socket_under_a_regular_file(tmp_path):
    config = run_config(tmp_path)
    (tmp_path / "plain").write_text("")
    control = tmp_path / "plain" / "ctl.sock"
    refused(tablectl("run", "--config", config, "--control", control, timeout=30),
            f"the directory {control.parent} is not a directory", "another --control path")
    assert not (tmp_path / "journal.db").exists()


def test_run_leaves_a_file_in_the_control_sockets_place_alone(tmp_path):
    config = run_config(tmp_path)
    # --control pointed at the configuration by mistake: it must not be deleted
    refused(tablectl("run", "--config", config, "--control", config, timeout=30),
            f"{config} exists and is not a socket", "give another --control path")
    assert config.read_text() == RUN_CONFIG.format(journal=tmp_path / "journal.db")
    assert not (tmp_path / "journal.db").exists()


def test_run_refuses_a_control_socket_path_too_long_to_bind(tmp_path):
    config = run_config(tmp_path)
    control = tmp_path / ("s" * 120)
    refused(tablectl("run", "--config", config, "--control", control, timeout=30),
            "longer than the 108 bytes", "shorter --control path")
    assert not (tmp_path / "journal.db").exists()


def test_run_refuses_a_control_socket_directory_this_user_may_not_write(unprivileged):
    as_nobody, base = unprivileged
    lib, run = base / "lib", base / "run"
    lib.mkdir()
    lib.chmod(0o777)            # the journal could be made: only the socket's directory is wrong
    run.mkdir()
    run.chmod(0o555)
    config = run_config(base, journal_dir=lib)
    control = run / "ctl.sock"
    refused(tablectl("run", "--config", config, "--control", control, as_nobody=as_nobody,
                     timeout=30),
            f"the directory {run} cannot be written by this user", "another --control path")
    assert list(lib.iterdir()) == [] and list(run.iterdir()) == []


def test_a_control_socket_that_fails_to_bind_after_the_check_stops_the_daemon_cleanly(
        tmp_path, monkeypatch):
    """The check at start is the first line; should the bind fail anyway (the directory gone
    meanwhile), the daemon stops as on any start-up error: a clear error, the stop journaled,
    the journal closed."""
    from controller.config import parse_text
    from controller.errors import TablectlError
    from controller.sdnotify import Notifier
    from controller.service import Service

    cfg = parse_text(RUN_CONFIG.format(journal=tmp_path / "journal.db"))
    control = tmp_path / "gone" / "ctl.sock"
    svc = Service(cfg, control=control, notifier=Notifier(None), open_panel=False)
    monkeypatch.setattr(svc, "_check_control", lambda: None)
    with pytest.raises(TablectlError, match=r"control socket .* cannot be opened: no such file"):
        asyncio.run(svc.run())
    assert svc.journal is not None and svc.journal._conn is None       # closed
    with Journal.open(tmp_path / "journal.db", readonly=True) as j:
        assert j.verify().ok
        assert [r.payload.get("event") for r in j.records(kinds=["service"])] == \
            ["start", "stop"]


def test_a_journal_in_a_directory_this_user_may_not_write_is_a_clear_error(unprivileged):
    # SQLite reads a WAL journal through the -shm file beside it, which a reader must be able
    # to create: the journal file readable but its directory not writable is not a damaged
    # journal, and the message must not say it may be.
    as_nobody, base = unprivileged
    journal = base / "state" / "journal.db"
    journal.parent.mkdir()
    write_journal(journal)
    journal.chmod(0o644)
    journal.parent.chmod(0o555)
    line = refused(tablectl("journal", "verify", "--journal", journal, as_nobody=as_nobody),
                   str(journal), "sudo -u tablectl")
    assert "damaged" not in line


@pytest.mark.parametrize("existing", [False, True])
def test_run_with_a_journal_directory_this_user_may_not_write_names_it(unprivileged, existing):
    # The writer needs the journal's directory (SQLite's -wal and -shm files beside it): a
    # directory the service user may not write is a permission matter, not a damaged journal
    # to restore from a backup.
    as_nobody, base = unprivileged
    state = base / "state"
    state.mkdir()
    if existing:
        write_journal(state / "journal.db")
        (state / "journal.db").chmod(0o666)
    state.chmod(0o555)
    before = sorted(p.name for p in state.iterdir())
    line = refused(tablectl("run", "--config", run_config(base, journal_dir=state),
                            as_nobody=as_nobody, timeout=30),
                   str(state / "journal.db"), f"may not write {state}")
    assert "damaged" not in line and "backup" not in line
    assert sorted(p.name for p in state.iterdir()) == before


def test_run_with_a_journal_this_user_may_not_write_names_it(unprivileged):
    as_nobody, base = unprivileged
    state = base / "state"
    state.mkdir()
    state.chmod(0o777)
    write_journal(state / "journal.db")
    (state / "journal.db").chmod(0o444)
    before = sorted(p.name for p in state.iterdir())
    line = refused(tablectl("run", "--config", run_config(base, journal_dir=state),
                            as_nobody=as_nobody, timeout=30),
                   str(state / "journal.db"), "may not write it")
    assert "damaged" not in line and "backup" not in line
    assert sorted(p.name for p in state.iterdir()) == before


# --- an argument the command does not take --------------------------------------------------

@pytest.mark.parametrize("command", [c for c in JOURNAL_COMMANDS if c[1] != "show"])
def test_a_journal_given_without_its_option_names_the_option(tmp_path, command):
    """`tablectl journal verify /var/lib/tablectl/journal.db` was answered with the top-level
    usage and "unrecognized arguments", nothing saying the path goes after --journal."""
    path = tmp_path / "journal.db"
    write_journal(path)
    proc = tablectl(*command, path)
    refused(proc, f"unrecognized arguments: {path}",
            f"tablectl {' '.join(command)} --journal {path}")
    assert "usage: tablectl [-h]" not in proc.stderr
    assert tablectl(*command, "--journal", path).returncode in (0, 1)


def test_an_unknown_option_names_the_commands_help():
    refused(tablectl("config", "check", "--strict"), "unrecognized arguments: --strict",
            "tablectl config check --help")
