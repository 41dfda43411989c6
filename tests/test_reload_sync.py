"""``tablectl reload`` (the unit's ``ExecReload=``): the running daemon reloads table.toml when
asked through its control socket, and the command waits for the daemon's own outcome.

``tablectl run`` is its own process (simulated devices on pseudo-terminals, the console API on
a loopback port, a notify socket as systemd gives it); ``tablectl reload`` is the real command
in another. Applied: exit 0, the roles whose tokens changed and the keys for a restart, the new
token in force by the time the command returns. Refused (a mistake in the file; a journal that
cannot be written): exit 1, the tokens in force unchanged, the reason and the way out. No
daemon, a stale socket, a socket this user may not reach: their own exit codes and messages.
"""
import json
import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from controller.config import hash_token
from controller.journal import Journal
from test_cli_errors import tablectl as tablectl_as, unprivileged  # noqa: F401 - a fixture
from test_api_support import free_port
from test_token_reload_daemon import A, B, C, S, ApiRig, get, reload_records, until

REPO = Path(__file__).resolve().parent.parent
# The exit statuses docs/install.md documents (controller/reload_cli.py).
EXIT_APPLIED, EXIT_REFUSED, EXIT_NOT_RUNNING, EXIT_DENIED = 0, 1, 3, 4


def reload_cmd(control, timeout=90):
    """``tablectl reload --control CONTROL``, the real command in its own process."""
    return subprocess.run([sys.executable, "-m", "controller.cli", "reload", "--control",
                           str(control)], capture_output=True, text=True, cwd=REPO,
                          timeout=timeout)


def secret_free(text):
    for tok in (A, B, C, S):
        assert tok not in text and hash_token(tok).removeprefix("sha256:") not in text


class Notify(threading.Thread):
    """The notify socket systemd would give the daemon, read as systemd reads it: at once,
    every datagram kept (one left unread holds the daemon's next message up once the socket's
    queue is full)."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.heard = []
        self.start()

    def run(self):
        try:
            while True:
                self.heard.append(self.sock.recv(4096).decode())
        except OSError:
            pass

    def close(self):
        self.sock.close()


@pytest.fixture
def daemon(tmp_path):
    """A running daemon with the console on (dealer token A, supervisor S) and a notify
    socket: (rig, console url, what the notify socket heard)."""
    notify = Notify(tmp_path / "notify.sock")
    rig = ApiRig(tmp_path / "rig", "q-poker", "shoe", seed=5)
    rig.port = free_port()
    url = f"http://127.0.0.1:{rig.port}"
    rig.start_devices()
    try:
        rig.start_controller(env={"NOTIFY_SOCKET": str(tmp_path / "notify.sock")})
        rig.wait_links()
        until(lambda: up(url), "the console is up")
        yield rig, url, notify.heard
    finally:
        rig.stop()
        notify.close()


def up(url):
    try:
        return get(url, A)[0] == 200
    except OSError:                 # not listening yet
        return False


def test_an_applied_reload_exits_0_naming_the_roles_with_the_token_in_force(daemon):
    rig, url, heard = daemon
    until(lambda: any("READY=1" in d for d in heard), "READY=1 at the start")
    started = len(heard)
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace(hash_token(A), hash_token(B))
                               .replace('level = "info"', 'level = "warning"'))
    done = reload_cmd(rig.control_path)
    assert done.returncode == EXIT_APPLIED, done.stderr
    # Synchronous: in force by the time the command returns, nothing waited for.
    assert get(url, A)[0] == 401
    code, body = get(url, B)
    assert code == 200 and body["role"] == "dealer"
    (rec,) = reload_records(rig)
    assert rec.payload["outcome"] == "applied"
    assert rec.payload["roles"] == {"changed": ["dealer"], "added": [], "removed": []}
    assert rec.payload["restart"] == ["logging.level"]
    out = done.stdout
    assert str(rig.config_path) in out and f"record {rec.seq}" in out
    assert "tokens replaced: dealer" in out
    assert "needs a restart: logging.level" in out
    assert "added" not in out and "removed" not in out      # only what the record holds
    secret_free(out + done.stderr)
    # systemd heard RELOADING=1, then READY=1 with the outcome (sent before the answer; read
    # here by a thread of its own, which may come to it a moment after).
    until(lambda: any("tokens reloaded" in d for d in heard[started:]), "READY=1 again")
    told = heard[started:]
    reloading = next(i for i, d in enumerate(told) if "RELOADING=1" in d)
    ready = next(i for i, d in enumerate(told) if "READY=1" in d)
    assert reloading < ready and "tokens reloaded" in told[ready]
    assert rig.proc.poll() is None


def test_a_file_with_a_mistake_exits_1_naming_key_and_line_and_changes_nothing(daemon):
    rig, url, _ = daemon
    text = rig.config_path.read_text()
    # The new token pasted as it is, not its hash: the usual slip when rotating one.
    rig.config_path.write_text(text.replace(hash_token(A), C))
    done = reload_cmd(rig.control_path)
    assert done.returncode == EXIT_REFUSED, (done.stdout, done.stderr)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("dealer"))
    err = done.stderr
    assert f"{rig.config_path}:{line}: api.tokens.dealer: " in err
    assert "hash-token" in err                              # the way out, as config check says
    assert "unchanged" in err and "reload again" in err
    assert "Traceback" not in err and done.stdout == ""
    secret_free(err)
    assert get(url, A)[0] == 200 and get(url, C)[0] == 401   # the tokens in force stay
    (rec,) = reload_records(rig)
    assert rec.payload["outcome"] == "refused"
    assert [q["key"] for q in rec.payload["problems"]] == ["api.tokens.dealer"]
    assert f"record {rec.seq}" in err
    assert rig.proc.poll() is None


def test_a_journal_that_cannot_be_written_exits_1_and_applies_nothing(daemon):
    rig, url, _ = daemon
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace(hash_token(A), hash_token(B)))
    other = sqlite3.connect(rig.journal_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")      # another writer, past the daemon's busy timeout
    try:
        done = reload_cmd(rig.control_path)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert done.returncode == EXIT_REFUSED, (done.stdout, done.stderr)
    err = done.stderr
    assert "journal could not be written" in err and "nothing of it was applied" in err
    assert "Traceback" not in err and done.stdout == ""
    assert rig.proc.wait(60) == 1        # a journal that failed stops the daemon (restarted)
    assert reload_records(rig) == []
    log = rig.log_path.read_text()
    assert "configuration reloaded" not in log
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert "nothing of it was applied" in j.last(kind="service").payload["failed"]
        assert j.verify().ok


def test_two_reloads_asked_at_once_are_done_one_after_the_other(daemon):
    rig, url, _ = daemon
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace(hash_token(A), hash_token(B)))
    procs = [subprocess.Popen([sys.executable, "-m", "controller.cli", "reload", "--control",
                               str(rig.control_path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=REPO) for _ in range(2)]
    outs = [p.communicate(timeout=90) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    first, second = reload_records(rig)
    # The second read the file after the first had put it in force: nothing left to change.
    assert first.payload["roles"]["changed"] == ["dealer"]
    assert second.payload["roles"] == {"changed": [], "added": [], "removed": []}
    said = sorted(out for out, _ in outs)
    assert sum("tokens replaced: dealer" in s for s in said) == 1
    assert sum("no console token changed" in s for s in said) == 1
    assert get(url, B)[0] == 200 and get(url, A)[0] == 401


def test_a_request_never_carries_a_token(daemon):
    rig, url, _ = daemon
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace(hash_token(A), hash_token(B)))
    for req in ({"reload": True, "token": B}, {"reload": B}):
        reply = rig.request(req)
        assert reply["ok"] is False and '{"reload": true}' in reply["error"]
        secret_free(json.dumps(reply))
    assert reload_records(rig) == [] and get(url, A)[0] == 200      # nothing reloaded
    reply = rig.request({"reload": True})
    assert reply["ok"] is True and reply["reload"]["roles"]["changed"] == ["dealer"]
    secret_free(json.dumps(reply))


# --- no daemon to ask ------------------------------------------------------------------------

def test_no_control_socket_exits_3_naming_the_path_and_the_way_out(tmp_path):
    missing = tmp_path / "control.sock"
    done = reload_cmd(missing)
    assert done.returncode == EXIT_NOT_RUNNING, done.stderr
    err = done.stderr.strip()
    assert err.startswith("tablectl: error: ") and len(err.splitlines()) == 1
    assert str(missing) in err and "not running" in err
    assert "systemctl start tablectl" in err and "--control" in err


def test_a_socket_no_daemon_listens_on_exits_3(tmp_path):
    stale = tmp_path / "control.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(stale))              # bound, never listening: what a killed daemon leaves
    s.close()
    done = reload_cmd(stale)
    assert done.returncode == EXIT_NOT_RUNNING, done.stderr
    assert str(stale) in done.stderr and "no daemon" in done.stderr
    assert "systemctl start tablectl" in done.stderr


def test_a_socket_this_user_may_not_reach_exits_4(unprivileged):  # noqa: F811
    as_nobody, base = unprivileged
    path = base / "control.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    path.chmod(0o600)                           # as the daemon makes it
    if not as_nobody:
        pytest.skip("permission bits do not hold the test's own user back from its socket")
    try:
        done = tablectl_as("reload", "--control", path, as_nobody=True)
    finally:
        server.close()
    assert done.returncode == EXIT_DENIED, done.stderr
    err = done.stderr.strip()
    assert str(path) in err and "permission denied" in err
    assert "sudo tablectl reload" in err and "Traceback" not in err
