"""Before each start phase that reads the journal (opening it, the recovery, each device's
search back for its last link session) the daemon asks systemd for more start time, in
proportion to the journal's size, and only then says READY=1; without NOTIFY_SOCKET it
starts as before."""
import asyncio
import socket

import pytest

from controller.config import parse_text
from controller.journal import Entry, Journal
from controller.sdnotify import Notifier
from controller.service import Service
from service_helpers import linked
from controller.start_time import PHASE_FLOOR_S, READ_BYTES_PER_S, journal_bytes, phase_budget

CONFIG = """
[table]
id = "st-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[devices.shoe]
class = "shoe"
port = "{absent}/shoe"

[devices.shuffler]
class = "shuffler"
port = "{absent}/shuffler"

[journal]
path = "{journal}"
"""


@pytest.fixture
def notify_socket(tmp_path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(tmp_path / "notify.sock")
    sock.bind(path)
    sock.settimeout(10)
    yield sock, path
    sock.close()


def config(tmp_path):
    return parse_text(CONFIG.format(absent=tmp_path / "absent", journal=tmp_path / "j.db"))


def long_journal(tmp_path, nbytes):
    """A journal of the table's, at least ``nbytes`` on disk, as months of play leave it."""
    with Journal.open(tmp_path / "j.db", "st-1") as j:
        while journal_bytes(j.path) < nbytes:
            j.append_many([Entry("device", {"kind": "heartbeat", "pad": "x" * 1000},
                                 source="shoe")] * 500)


def start_and_stop(cfg, notifier, until_ready=None):
    """Run the daemon until it is ready (``until_ready()`` returns once it has said so, or the
    main loop is up), then stop it; its exit status."""
    async def scenario():
        svc = Service(cfg, notifier=notifier, open_panel=False)
        task = asyncio.create_task(svc.run())
        if until_ready is not None:
            await asyncio.to_thread(until_ready)
        else:
            async with asyncio.timeout(10):
                while svc.runner is None or svc.runner.table.state is None or \
                        not svc.drivers:
                    await asyncio.sleep(0.01)
        await linked(svc, "shoe")           # no round opens before its shoe has linked
        assert (await svc.submit("open_table", "supervisor", {}))["ok"]
        svc.stop()
        return await task
    return asyncio.run(scenario())


def messages_until_ready(sock):
    got = []
    while not any("READY=1" in m for m in got):
        got.append(sock.recv(4096).decode())
    return got


def fields(message):
    return dict(line.split("=", 1) for line in message.splitlines())


def test_more_start_time_is_asked_for_before_each_journal_phase_then_ready(tmp_path,
                                                                           notify_socket):
    sock, path = notify_socket
    long_journal(tmp_path, 3_000_000)
    size = journal_bytes(tmp_path / "j.db")
    got = []
    status = start_and_stop(config(tmp_path), Notifier.from_env({"NOTIFY_SOCKET": path}),
                            until_ready=lambda: got.extend(messages_until_ready(sock)))
    assert status == 0
    *before, ready = [fields(m) for m in got]
    assert ready.get("READY") == "1" and "EXTEND_TIMEOUT_USEC" not in ready
    assert [f["STATUS"].split(" (")[0] for f in before] == [
        "starting: opening the journal",
        "starting: recovering the table from the journal",
        "starting: finding shoe's last link session in the journal",
        "starting: finding shuffler's last link session in the journal"]
    # Each asks for the floor and the time to read the whole journal at the slowest rate
    # planned for, from now (systemd's EXTEND_TIMEOUT_USEC is relative).
    for f in before:
        assert int(f["EXTEND_TIMEOUT_USEC"]) >= (PHASE_FLOOR_S + size / READ_BYTES_PER_S) * 1e6
    # Nothing asks for start time once the daemon is up: a stop says STOPPING=1.
    sock.settimeout(2)
    rest = []
    try:
        while True:
            rest.append(sock.recv(4096).decode())
    except OSError:
        pass
    assert not any("EXTEND_TIMEOUT_USEC" in m for m in rest)
    assert any("STOPPING=1" in m for m in rest)


def test_a_new_journal_gets_the_floor(tmp_path, notify_socket):
    sock, path = notify_socket
    got = []
    start_and_stop(config(tmp_path), Notifier.from_env({"NOTIFY_SOCKET": path}),
                   until_ready=lambda: got.extend(messages_until_ready(sock)))
    first = fields(got[0])
    assert first["STATUS"] == "starting: opening the journal (0.0 MB)"
    assert int(first["EXTEND_TIMEOUT_USEC"]) == PHASE_FLOOR_S * 1e6


def test_without_notify_socket_the_start_is_as_before(tmp_path):
    long_journal(tmp_path, 100_000)
    assert start_and_stop(config(tmp_path), Notifier.from_env({})) == 0
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
        assert j.last(kind="recovery") is not None


def test_the_budget_grows_with_the_journal():
    assert phase_budget(0) == PHASE_FLOOR_S
    assert phase_budget(-5) == PHASE_FLOOR_S
    assert phase_budget(10 * READ_BYTES_PER_S) == PHASE_FLOOR_S + 10


def test_journal_bytes_counts_the_wal_and_a_missing_journal_is_nothing(tmp_path):
    assert journal_bytes(tmp_path / "none.db") == 0
    (tmp_path / "j.db").write_bytes(b"x" * 100)
    (tmp_path / "j.db-wal").write_bytes(b"y" * 23)
    assert journal_bytes(tmp_path / "j.db") == 123
