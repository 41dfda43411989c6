"""sd_notify against a real AF_UNIX datagram socket, path and abstract namespace."""
import os
import socket
import uuid

import pytest

from controller.sdnotify import Notifier


@pytest.fixture
def server(tmp_path):
    """A service manager's notify socket that the test reads: (the socket, its path)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(tmp_path / "notify.sock")
    sock.bind(path)
    sock.settimeout(5)
    yield sock, path
    sock.close()


def recv(sock):
    return sock.recv(4096).decode()


def test_messages_reach_the_socket(server):
    sock, path = server
    n = Notifier.from_env({"NOTIFY_SOCKET": path})
    assert n.enabled
    assert n.ready("table t1: ready")
    assert recv(sock) == "READY=1\nSTATUS=table t1: ready"
    assert n.watchdog() and recv(sock) == "WATCHDOG=1"
    assert n.status("round 12\ndealing") and recv(sock) == "STATUS=round 12 dealing"
    assert n.stopping() and recv(sock) == "STOPPING=1"
    assert n.extend_timeout(2.5) and recv(sock) == "EXTEND_TIMEOUT_USEC=2500000"
    assert n.extend_timeout(90, "starting: replay") and \
        recv(sock) == "EXTEND_TIMEOUT_USEC=90000000\nSTATUS=starting: replay"
    assert n.notify("FDSTORE=0", ERRNO=5) and recv(sock) == "FDSTORE=0\nERRNO=5"
    n.close()


def test_abstract_namespace():
    name = f"tablectl-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(5)
    try:
        n = Notifier.from_env({"NOTIFY_SOCKET": "@" + name})
        assert n.ready()
        assert recv(sock) == "READY=1"
    finally:
        sock.close()


def test_no_socket_is_a_no_op():
    n = Notifier.from_env({})
    assert not n.enabled
    assert n.ready() is False and n.watchdog() is False and n.watchdog_period() is None


def test_socket_gone_is_not_fatal(tmp_path):
    n = Notifier.from_env({"NOTIFY_SOCKET": str(tmp_path / "nobody-listens")})
    assert n.ready() is False


def test_watchdog_interval():
    pid = os.getpid()
    env = {"NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "10000000"}
    assert Notifier.from_env(env).watchdog_period() == 5.0
    assert Notifier.from_env({**env, "WATCHDOG_PID": str(pid)}).watchdog_period() == 5.0
    # The watchdog belongs to another process (e.g. we were forked by the service's main pid).
    assert Notifier.from_env({**env, "WATCHDOG_PID": str(pid + 1)}).watchdog_period() is None
    assert Notifier.from_env({**env, "WATCHDOG_USEC": "soon"}).watchdog_period() is None
    assert Notifier.from_env({**env, "WATCHDOG_USEC": "0"}).watchdog_period() is None


def test_a_manager_that_reads_nothing_never_holds_the_daemon(server):
    """The socket's queue full (nobody reads it: a test rig, a service manager stuck):
    a message is given up after a short wait instead of blocking the daemon's event loop,
    and the ones sent before are still there to read."""
    import threading

    sock, path = server
    n = Notifier.from_env({"NOTIFY_SOCKET": path})
    sent = []
    worker = threading.Thread(target=lambda: sent.extend(n.watchdog() for _ in range(30)),
                              daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "a notification blocked on a queue nobody reads"
    assert sent[0] is True and sent[-1] is False
    assert recv(sock) == "WATCHDOG=1"
    n.close()
