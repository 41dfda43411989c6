"""The real controller process (`tablectl run`) against simulated devices over pseudo-terminals."""
import signal

import pytest

from controller.journal import Journal
from controller.rig import Rig

pytestmark = pytest.mark.hil


@pytest.fixture
def rig(tmp_path, request):
    game, mode = request.param
    r = Rig(tmp_path, game, mode, seed=7)
    r.start_devices()
    r.start_controller()
    r.wait_links()
    yield r
    r.stop()


def open_table(r):
    r.must("open_table", "supervisor")
    if r.state() == "shuffling":
        if r.mode == "shoe":
            r.must("deck_ready")
        else:
            r.wait_state("bets_open")


def records(r, kind):
    with Journal.open(r.journal_path, readonly=True) as j:
        return list(j.records(kinds=[kind]))


@pytest.mark.parametrize("rig", [("q-poker", "shoe")], indirect=True)
def test_q_poker_shoe_round_through_the_real_process(rig):
    open_table(rig)
    rig.must("place_bet", box=2, wager="versus_croupier", amount=10)
    shoe = rig.devices["shoe"]
    drawn = []
    for _ in range(6):          # art. 7(1): box 2 and the croupier, three times
        drawn += [e["card"] for e in shoe.draw()]
    rig.wait_state("player_decisions")
    opened = rig.wait_event(lambda e: e["kind"] == "hand_opened")
    assert opened["hand"] == [drawn[0], drawn[2], drawn[4]]
    rig.must("decide", box=2, decision="play")
    settled = rig.wait_event(lambda e: e["kind"] == "settlement")
    assert settled["hands"]["croupier"]["cards"] == [drawn[1], drawn[3], drawn[5]]
    rig.must("confirm_result")
    assert rig.kill(signal.SIGTERM) == 0       # clean stop
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert j.verify().ok
        assert j.last(kind="service").payload == {"event": "stop"}
        assert j.last(kind="round_close").payload["outcome"] == "settled"


@pytest.mark.parametrize("rig", [("q-poker", "shuffler")], indirect=True)
def test_shuffler_jam_while_dealing_voids_round_art_11_5(rig):
    open_table(rig)
    rig.must("place_bet", box=1, wager="versus_croupier", amount=10)
    rig.must("place_bet", box=4, wager="pair_bonus", amount=5)
    rig.devices["shuffler"].inject("jam", at_card=4)    # during box 4's hand
    rig.must("close_bets")
    rig.wait_state("malfunction")
    void = rig.wait_event(lambda e: e["kind"] == "round_void")
    assert void["article"] == "89/2004 art. 11(5)"
    rig.devices["shuffler"].clear_jam()
    rig.must("clear_malfunction", "supervisor")
    rig.wait_state("bets_open", timeout=20)
    closes = records(rig, "round_close")
    assert closes[-1].payload["outcome"] == "void" and closes[-1].article == "89/2004 art. 11(5)"


@pytest.mark.parametrize("rig", [("q-poker", "shoe")], indirect=True)
def test_sigkill_while_dealing_then_restart_voids_the_round(rig):
    open_table(rig)
    rig.must("place_bet", box=3, wager="versus_croupier", amount=10)
    shoe = rig.devices["shoe"]
    shoe.draw()
    shoe.draw()
    rig.wait_event(lambda e: e["kind"] == "card" and e["recipient"] == "croupier")
    rig.kill(signal.SIGKILL)
    rig.start_controller()
    rig.wait_state("malfunction")
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert j.verify().ok
        close = j.last(kind="round_close")
        assert close.round_id == "1" and close.payload["outcome"] == "void"
        assert j.last(kind="recovery").payload["report"]["state_at_crash"] == "dealing"


def test_tells_systemd_ready_pings_the_watchdog_and_stops_cleanly(tmp_path):
    import socket
    import time

    sock_path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock.settimeout(10)
    r = Rig(tmp_path / "rig", "q-poker", "shoe", seed=3)
    try:
        r.start_devices()
        r.start_controller(env={"NOTIFY_SOCKET": str(sock_path), "WATCHDOG_USEC": "200000"})
        got = []
        deadline = time.monotonic() + 10
        while not ({"READY=1", "WATCHDOG=1"} <= set(got)) and time.monotonic() < deadline:
            got += sock.recv(4096).decode().splitlines()
        assert "READY=1" in got and "WATCHDOG=1" in got
        assert got.index("READY=1") < got.index("WATCHDOG=1") or got.count("WATCHDOG=1") > 1
        # An idle table keeps pinging (here every 0.1 s), not only once after start.
        idle = []
        until = time.monotonic() + 1.0
        while time.monotonic() < until:
            idle += sock.recv(4096).decode().splitlines()
        assert idle.count("WATCHDOG=1") >= 4, idle
        assert r.kill(signal.SIGTERM) == 0
        rest = []
        sock.settimeout(1)
        try:
            while True:
                rest += sock.recv(4096).decode().splitlines()
        except OSError:
            pass
        assert "STOPPING=1" in rest
    finally:
        r.stop()
        sock.close()


@pytest.mark.parametrize("rig", [("q-poker", "shoe")], indirect=True)
def test_a_journal_that_cannot_be_written_stops_the_daemon_and_the_card_is_taken_after(rig):
    """A commit that fails (here another writer holds the database past the busy timeout)
    acts on nothing: the card is neither shown nor acknowledged, the daemon exits 1 for
    systemd to restart it, and the restarted daemon takes the card the shoe sends again,
    once."""
    import sqlite3
    import time
    open_table(rig)
    rig.must("place_bet", box=3, wager="versus_croupier", amount=10)
    mark = rig.mark()
    other = sqlite3.connect(rig.journal_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        card = rig.devices["shoe"].draw()[0]["card"]
        deadline = time.monotonic() + 60
        while "journal write failed" not in rig.log_path.read_text():
            assert rig.proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        other.execute("ROLLBACK")      # the disk is back: the daemon records why it stops
        other.close()
    assert rig.proc.wait(60) == 1
    assert not any(e.get("kind") == "card" for e in rig.events[mark:])
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert "journal could not be written" in j.last(kind="service").payload["failed"]
    rig.start_controller()
    rig.wait_state("dealing")       # the card the shoe sent again closed bets and dealt
    assert len(rig.view()["hands"]["box 3"]) == 1
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert j.verify().ok
        taken = [r for r in j.records(kinds=["device"])
                 if r.payload["event"].get("card") == card]
        assert len(taken) == 1
