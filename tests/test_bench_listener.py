"""The event stream's listener (controller.bench.floor.Listener) asks for the real-time
policy it is given, says what it got, and stamps only the events of its kinds."""
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from controller.bench import OPTIONS
from controller.bench.floor import Listener


def fifo_allowed() -> bool:
    """Whether a process of this user may take SCHED_FIFO, asked of a process of its own."""
    probe = subprocess.run([sys.executable, "-c", "import os; os.sched_setscheduler(0, "
                            "os.SCHED_FIFO, os.sched_param(10))"], capture_output=True)
    return probe.returncode == 0


@pytest.fixture
def stream(tmp_path, monkeypatch):
    """A stand-in for the daemon's control socket: it takes one subscription (kept in
    ``asked``), answers as the daemon does, then sends each line put in ``send``. The run's
    record of the listeners' policies starts empty."""
    monkeypatch.setattr(OPTIONS, "listener_policies", set())
    path = tmp_path / "control.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    send: list[bytes] = []
    asked: list[bytes] = []

    def serve() -> None:
        client, _ = server.accept()
        with client:
            asked.append(client.recv(256))
            client.sendall(b'{"ok": true, "subscribed": true}\n')
            while not send or send[-1] != b"":
                if send:
                    client.sendall(send.pop(0))
                time.sleep(0.001)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield path, send, asked
    send.append(b"")
    t.join(5)
    server.close()


def test_a_listener_without_priority_keeps_the_normal_policy(stream):
    path, _, asked = stream
    with Listener(path, "dice", priority=0) as listener:
        assert [json.loads(a) for a in asked] == [{"subscribe": True}]
        assert listener.policy == "other"
        assert os.sched_getscheduler(listener.proc.pid) == os.SCHED_OTHER
    assert OPTIONS.listener_policies == {"other"}


def test_a_listener_with_priority_runs_real_time_or_says_why_not(stream):
    path, _, _ = stream
    with Listener(path, "dice", priority=7) as listener:
        if fifo_allowed():
            assert listener.policy == "fifo"
            assert os.sched_getscheduler(listener.proc.pid) == os.SCHED_FIFO
            assert os.sched_getparam(listener.proc.pid).sched_priority == 7
        else:
            assert listener.policy.startswith("other: ") and len(listener.policy) > 7
            assert os.sched_getscheduler(listener.proc.pid) == os.SCHED_OTHER
    assert OPTIONS.listener_policies == {listener.policy}


def test_the_listener_stamps_only_its_kinds_in_order(stream):
    path, send, _ = stream
    with Listener(path, "dice,card", priority=0) as listener:
        before = time.monotonic()
        send += [b'{"kind": "state", "state": "dealing"}\n', b'{"kind": "dice", "dice": [1]}\n',
                 b'{"kind": "card", "count": 1}\n']
        first = listener.next("dice")
        second = listener.next("card")
        assert before <= first <= second <= time.monotonic()
        send.append(b'{"kind": "dice", "dice": [2]}\n')
        with pytest.raises(RuntimeError, match="a dice event came .* where a card event was due"):
            listener.next("card")
