"""sd_notify when the service manager's queue is full for a while (a systemd slow under load),
against a real AF_UNIX datagram socket: a notification that changes the unit's state is not
lost, a watchdog ping may be, and the daemon's event loop is never held long."""
import os
import socket

import pytest

from controller.sdnotify import Notifier


from test_sdnotify import server  # noqa: F401 - the notify socket fixture


def fill(n):
    """Ping until the socket's queue is full (a ping given up): the manager reads nothing."""
    for _ in range(10_000):
        if not n.watchdog():
            return
    raise AssertionError("the queue never filled")


def drain(sock):
    """Everything queued, in order (the manager catches up)."""
    got = []
    sock.setblocking(False)
    try:
        while True:
            got.append(sock.recv(4096).decode())
    except BlockingIOError:
        pass
    sock.settimeout(5)
    return got


@pytest.mark.parametrize("send, line", [
    (lambda n: n.ready("table t1: idle"), "READY=1\nSTATUS=table t1: idle"),
    (lambda n: n.stopping("stopping on SIGTERM"), "STOPPING=1\nSTATUS=stopping on SIGTERM"),
    (lambda n: n.extend_timeout(90, "starting: replay"),
     "EXTEND_TIMEOUT_USEC=90000000\nSTATUS=starting: replay"),
])
def test_a_state_change_given_up_on_a_full_queue_goes_with_the_next_notification(server, send,
                                                                                 line):
    # READY=1 lost kept the unit "activating" until TimeoutStartSec killed a healthy daemon;
    # an EXTEND_TIMEOUT_USEC lost had a long start killed likewise. Given up after the short
    # wait (the event loop is not held), it is now sent again, ahead of the next ping.
    sock, path = server
    n = Notifier.from_env({"NOTIFY_SOCKET": path})
    fill(n)
    assert send(n) is False                     # not sent now: the queue is still full
    assert line not in drain(sock)
    assert n.watchdog() is True                 # the main loop's next ping
    assert drain(sock) == [line, "WATCHDOG=1"]
    assert n.watchdog() is True and drain(sock) == ["WATCHDOG=1"]   # sent once only
    n.close()


def test_a_reload_kept_back_keeps_its_order_and_a_ping_is_not_kept(server):
    sock, path = server
    n = Notifier.from_env({"NOTIFY_SOCKET": path})
    fill(n)
    assert n.reloading("reloading") is False
    assert n.ready("reloaded") is False         # behind the reload still kept back
    assert n.watchdog() is False                # a ping is not kept: the next one will do
    got = drain(sock)
    assert not any(g.startswith(("RELOADING=1", "READY=1")) for g in got)
    assert n.status("idle") is True
    got = drain(sock)
    assert [g.split("\n")[0] for g in got] == ["RELOADING=1", "READY=1", "STATUS=idle"]
    assert got[0].split("\n")[1].startswith("MONOTONIC_USEC=")
    n.close()


def test_a_ready_given_up_while_the_socket_is_away_goes_once_it_is_back(tmp_path):
    # systemd re-executing itself binds its socket anew: a READY=1 sent in that moment found
    # no one and was lost; it now goes with the next notification once the socket is back.
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    n = Notifier.from_env({"NOTIFY_SOCKET": path})
    sock.close()
    os.unlink(path)
    assert n.ready("table t1: idle") is False
    assert n.watchdog() is False                # still away
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(5)
    try:
        assert n.watchdog() is True
        assert drain(sock) == ["READY=1\nSTATUS=table t1: idle", "WATCHDOG=1"]
    finally:
        sock.close()
        n.close()


def test_a_start_phase_waits_longer_for_room_for_its_extension(server):
    # EXTEND_TIMEOUT_USEC goes just before a long start phase (a journal's replay) that sends
    # nothing until it ends: a copy kept for the next notification would come too late, and
    # the start was killed at TimeoutStartSec. It is sent before the devices are opened, when
    # nothing waits on the event loop, so it waits longer for room: a manager that reads
    # again a moment later gets it.
    import threading

    sock, path = server
    n = Notifier.from_env({"NOTIFY_SOCKET": path})
    fill(n)
    drained = []
    reader = threading.Timer(0.3, lambda: drained.append(sock.recv(4096).decode()))
    reader.start()
    try:
        assert n.extend_timeout(90, "starting: replay") is True
    finally:
        reader.join(10)
    assert "EXTEND_TIMEOUT_USEC=90000000\nSTATUS=starting: replay" in drain(sock)
    n.close()
