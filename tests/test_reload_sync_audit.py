"""``tablectl reload`` attacked as an operator, a tamperer and a crash would.

The real daemon (``tablectl run`` in its own process, simulated devices on pseudo-terminals,
the console on a loopback port) and the real ``tablectl reload`` command, as in
tests/test_reload_sync.py: a reload in the middle of a round changes nothing of the round; a
token pasted where a role's name goes is never repeated by the refusal; a client that hangs up
before the answer still has its reload done and journaled; requests that are not exactly
``{"reload": true}`` reload nothing; ``--control`` given as a relative path or as something
that is not a socket.
"""
import json
import signal
import socket
import sqlite3
import subprocess
import sys

import pytest

from controller.config import hash_token
from controller.journal import Journal
from test_api_support import free_port
from test_reload_sync import (EXIT_APPLIED, EXIT_NOT_RUNNING, EXIT_REFUSED, REPO, reload_cmd,
                              secret_free, up)
from test_token_reload_daemon import A, B, C, ApiRig, get, reload_records, until

pytestmark = pytest.mark.hil

EXIT_USAGE = 2


@pytest.fixture
def rig(tmp_path):
    """A running daemon with the console on (dealer A, supervisor S)."""
    r = ApiRig(tmp_path / "rig", "q-poker", "shoe", seed=5)
    r.port = free_port()
    r.url = f"http://127.0.0.1:{r.port}"
    r.start_devices()
    try:
        r.start_controller()
        r.wait_links()
        until(lambda: up(r.url), "the console is up")
        yield r
    finally:
        r.stop()


def round_part(view):
    """What of the view belongs to the table's play (not the devices' links)."""
    return {k: v for k, v in view.items() if k != "devices"}


def dealing(rig):
    """A round with a bet of 50 on box 1 and the shoe's first card dealt."""
    rig.must("open_table", "supervisor")
    rig.devices["shoe"].load_deck(fresh=True)
    rig.must("deck_ready")
    rig.must("place_bet", box=1, wager="versus_croupier", amount=50)
    mark = rig.mark()
    rig.devices["shoe"].draw()
    rig.wait_event(lambda e: e["kind"] == "card", since=mark)


def test_a_reload_while_dealing_changes_nothing_of_the_round_nor_of_its_replay(rig):
    dealing(rig)
    before = rig.view()
    # A new dealer token and a lower limit: the token now, the limit at the next start.
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace(hash_token(A), hash_token(B))
                               + "\n[limits]\nmax = 20\n")
    done = reload_cmd(rig.control_path)
    assert done.returncode == EXIT_APPLIED, done.stderr
    assert "needs a restart: limits" in done.stdout
    after = rig.view()
    assert round_part(after) == round_part(before)
    (rec,) = reload_records(rig)
    assert before["state"] == "dealing" and rec.round_id == str(before["round"]["round"])
    assert get(rig.url, B)[0] == 200
    # The limit waits for the next start; the record is no input: the replay of the round
    # after a crash is the one played (a restart while dealing voids it, bets returned).
    rig.kill(signal.SIGKILL)
    rig.start_controller()
    rig.wait_links()
    assert rig.wait_state("malfunction") == "malfunction"
    with Journal.open(rig.journal_path, readonly=True) as j:
        void = j.last(kind="round_close").payload
        assert j.verify().ok
    assert [(b["box"], b["amount"]) for b in void["returned"]] == [(1, 50)]


def test_a_token_pasted_in_place_of_its_role_is_not_repeated_by_the_refusal(rig):
    text = rig.config_path.read_text()
    for line in (f'{C} = "{hash_token(C)}"', f'"{C}" = "{hash_token(C)}"'):
        rig.config_path.write_text(text.replace(f'dealer = "{hash_token(A)}"', line))
        done = reload_cmd(rig.control_path)
        assert done.returncode == EXIT_REFUSED, (done.stdout, done.stderr)
        assert "api.tokens." in done.stderr and "(not shown)" in done.stderr
        secret_free(done.stdout + done.stderr)
    for rec in reload_records(rig):
        assert rec.payload["outcome"] == "refused"
        secret_free(json.dumps(rec.payload))
    secret_free(rig.log_path.read_text())
    assert get(rig.url, A)[0] == 200 and get(rig.url, C)[0] == 401
    # A role's name misspelt is no token: shown, so the operator sees what to fix.
    rig.config_path.write_text(text.replace("dealer =", "dealr ="))
    done = reload_cmd(rig.control_path)
    assert done.returncode == EXIT_REFUSED and "api.tokens.dealr: unknown key" in done.stderr


def test_a_client_gone_before_the_answer_still_has_its_reload_done_and_journaled(rig):
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace(hash_token(A), hash_token(B)))
    for _ in range(3):
        s = socket.socket(socket.AF_UNIX)
        s.connect(str(rig.control_path))
        s.sendall(b'{"reload": true}\n')
        s.close()
    until(lambda: len(reload_records(rig)) == 3, "three reloads journaled")
    assert get(rig.url, B)[0] == 200 and get(rig.url, A)[0] == 401
    assert rig.proc.poll() is None and rig.view()["state"]
    log = rig.log_path.read_text()
    assert "Traceback" not in log and '"level": "error"' not in log


def test_requests_other_than_reload_true_reload_nothing(rig):
    text = rig.config_path.read_text()
    rig.config_path.write_text(text.replace(hash_token(A), hash_token(B)))
    s = socket.socket(socket.AF_UNIX)
    s.connect(str(rig.control_path))
    f = s.makefile("rwb")

    def ask(raw):
        f.write(raw)
        f.flush()
        return json.loads(f.readline())

    for raw in (b'{"reload": 1}\n', b'{"reload": false}\n', b'{"reload": "true"}\n',
                b'{"reload": true, "extra": 1}\n', b'{"reload": true, "reload": true}\n',
                b'{"reload": null}\n', b'["reload"]\n', b'reload\n',
                b'{"reload": true' + b" " * (70 * 1024) + b"}\n", b'{"reload": 1.0}\n'):
        reply = ask(raw)
        assert reply["ok"] is False and reply["error"], raw[:40]
    assert reload_records(rig) == [] and get(rig.url, A)[0] == 200
    reply = ask(b'{"reload": true}\n')          # the connection is still served
    assert reply["ok"] is True
    f.close()
    s.close()
    # A request cut off with no end of line, the client gone: nothing half-read is acted on
    # as another request.
    s = socket.socket(socket.AF_UNIX)
    s.connect(str(rig.control_path))
    s.sendall(b'{"relo')
    s.close()
    assert rig.proc.poll() is None and len(reload_records(rig)) == 1


def test_many_reloads_each_journal_one_record(rig):
    for _ in range(20):
        assert rig.request({"reload": True})["ok"] is True
    recs = reload_records(rig)
    assert len(recs) == 20
    assert all(r.payload["roles"] == {"changed": [], "added": [], "removed": []} for r in recs)
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert j.verify().ok


def test_a_relative_control_path_and_one_that_is_no_socket(rig, tmp_path):
    rel = subprocess.run([sys.executable, "-m", "controller.cli", "reload", "--control",
                          rig.control_path.name], capture_output=True, text=True,
                         cwd=rig.control_path.parent,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=90)
    assert rel.returncode == EXIT_APPLIED, rel.stderr
    plain = tmp_path / "plain"
    plain.write_text("")
    for path in (plain, tmp_path):
        done = reload_cmd(path)
        assert done.returncode == EXIT_USAGE, done.stderr
        assert "not a socket" in done.stderr and "--control" in done.stderr


def test_a_reload_and_a_sighup_in_malfunction_keep_the_hold(rig):
    dealing(rig)
    rig.kill(signal.SIGKILL)
    rig.start_controller()
    rig.wait_links()
    assert rig.wait_state("malfunction") == "malfunction"
    before = rig.view()
    assert rig.request({"reload": True})["ok"] is True
    rig.proc.send_signal(signal.SIGHUP)        # the same reload, by signal, right after
    until(lambda: len(reload_records(rig)) == 2, "the SIGHUP's reload")
    assert round_part(rig.view()) == round_part(before)
    rig.must("clear_malfunction", "supervisor")


def test_a_reload_while_the_daemon_recovers_its_journal_says_it_may_be_starting(tmp_path):
    # The control socket opens once the journal is recovered: a reload asked before finds
    # none, and must not tell the operator to start a daemon that is starting.
    r = ApiRig(tmp_path / "rig", "q-poker", "shoe", seed=5)
    r.port = free_port()
    r.start_devices()
    other = None
    try:
        r.start_controller()
        r.wait_links()
        r.kill(signal.SIGTERM)
        assert not r.control_path.exists()
        other = sqlite3.connect(r.journal_path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")        # the start waits on the journal meanwhile
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config",
                                 str(r.config_path), "--control", str(r.control_path)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                cwd=REPO)
        try:
            done = reload_cmd(r.control_path)
            assert proc.poll() is None              # it was starting all along
        finally:
            other.execute("ROLLBACK")
            other.close()
            other = None
            proc.terminate()
            proc.wait(60)
        assert done.returncode == EXIT_NOT_RUNNING, done.stderr
        err = done.stderr
        assert "starting" in err and "systemctl is-active tablectl" in err
        assert "systemctl start tablectl" in err and "--control" in err
    finally:
        if other is not None:
            other.close()
        r.stop()


def test_an_empty_control_path_is_a_wrong_command_line():
    done = reload_cmd("")
    assert done.returncode == EXIT_USAGE, done.stderr
    err = done.stderr.strip()
    assert err.startswith("tablectl: error: ") and len(err.splitlines()) == 1
    assert "--control" in err and "/run/tablectl/control.sock" in err
    assert "not running" not in err
