"""``systemctl reload tablectl`` on the real daemon: SIGHUP rotates a console token.

``tablectl run`` as its own process (simulated devices on pseudo-terminals, the console API
on a loopback port, a notify socket as systemd gives it). A dealer's event stream and requests
use token A; table.toml is rewritten with token B and the process gets SIGHUP: A is refused
and its stream closed, B is accepted, systemd hears RELOADING=1 then READY=1. A reload of a
file with a mistake changes nothing and says why; the control socket never noticed.
"""
import json
import signal
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest

from controller.config import hash_token
from controller.journal import Journal

import rig_helpers
from test_api_support import free_port

pytestmark = pytest.mark.hil

A, B, C = ("tok-a-" + "1" * 26, "tok-b-" + "2" * 26, "tok-c-" + "3" * 26)
S = "tok-s-" + "4" * 26


class ApiRig(rig_helpers.ApiRig):
    tokens = {"dealer": A, "supervisor": S}


def get(url, token):
    req = urllib.request.Request(url + "/api/whoami", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


class Stream(threading.Thread):
    """/api/events read to its end in a thread."""

    def __init__(self, url, token):
        super().__init__(daemon=True)
        req = urllib.request.Request(url + "/api/events",
                                     headers={"Authorization": f"Bearer {token}"})
        self.resp = urllib.request.urlopen(req, timeout=60)
        self.lines = []
        self.start()

    def run(self):
        try:
            for line in self.resp:
                self.lines.append(line.decode().rstrip("\n"))
        except OSError:
            pass


def until(pred, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def reload_records(rig):
    with Journal.open(rig.journal_path, readonly=True) as j:
        return list(j.records(kinds=["config_reload"]))


def test_sighup_rotates_a_token_on_the_running_daemon(tmp_path):
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify.sock"))
    notify.settimeout(20)
    rig = ApiRig(tmp_path / "rig", "q-poker", "shoe", seed=3)
    rig.port = free_port()
    url = f"http://127.0.0.1:{rig.port}"
    rig.start_devices()
    try:
        rig.start_controller(env={"NOTIFY_SOCKET": str(tmp_path / "notify.sock")})
        rig.wait_links()
        until(lambda: get(url, A)[0] == 200, "the console is up")
        heard = []

        def datagrams(want):
            while not any(want in d for d in heard):
                heard.append(notify.recv(4096).decode())

        datagrams("READY=1")
        heard.clear()
        stream = Stream(url, A)
        until(lambda: any(line.startswith("event: snapshot") for line in stream.lines),
              "the stream's snapshot")

        text = rig.config_path.read_text()
        rig.config_path.write_text(text.replace(hash_token(A), hash_token(B)))
        rig.proc.send_signal(signal.SIGHUP)
        stream.join(20)
        assert not stream.is_alive(), "the stream of the replaced token is still open"
        assert get(url, A)[0] == 401
        code, body = get(url, B)
        assert code == 200 and body["role"] == "dealer"
        datagrams("READY=1")
        reloading = next(d for d in heard if "RELOADING=1" in d)
        assert "MONOTONIC_USEC=" in reloading
        assert heard.index(reloading) < next(i for i, d in enumerate(heard) if "READY=1" in d)
        (rec,) = reload_records(rig)
        assert rec.payload["outcome"] == "applied"
        assert rec.payload["roles"]["changed"] == ["dealer"]

        # The new token pasted as it is, not its hash: refused, B stays in force.
        heard.clear()
        rig.config_path.write_text(text.replace(hash_token(A), C))
        rig.proc.send_signal(signal.SIGHUP)
        until(lambda: len(reload_records(rig)) == 2, "the refused reload journaled")
        refused = reload_records(rig)[1].payload
        assert refused["outcome"] == "refused"
        assert [q["key"] for q in refused["problems"]] == ["api.tokens.dealer"]
        assert C not in json.dumps(refused)
        assert get(url, B)[0] == 200 and get(url, C)[0] == 401
        datagrams("READY=1")
        assert any("reload refused" in d for d in heard), heard
        log = rig.log_path.read_text()
        assert "reload refused" in log and "api.tokens.dealer" in log and C not in log
        assert rig.proc.poll() is None              # the table never stopped
        assert rig.state() == "out_of_service"      # the control socket, as it was
        rig.must("open_table", "supervisor")
    finally:
        rig.stop()
        notify.close()
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert j.verify().ok
        starts = [r for r in j.records(kinds=["service"]) if r.payload.get("event") == "start"]
        assert len(starts) == 1
