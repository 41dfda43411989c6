"""A journal that cannot be written: the daemon shows nothing of what it decided on an input
it could not journal (the tower light, the buzzer, the control socket's view, the API), and
stops. The journal fails for real: another writer holds it past the daemon's busy timeout
(the tower light on gpiozero's mock pins; everything else is the real daemon)."""
import asyncio
import json
import sqlite3

from gpiozero.pins.mock import MockFactory

from controller.config import parse_text
from controller.journal import Journal
from controller.sdnotify import Notifier
from controller.service import Service
from service_helpers import SERIAL_SHUFFLER, linked, until

CONFIG = """
[table]
id = "jf-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[gpio]
bounce_ms = 0
buzzer = 12

[gpio.buttons]
close_bets = 17

[gpio.light]
green = 13
amber = 26
red = 18

[journal]
path = "{journal}"
"""


async def _must(svc, name, role="dealer", **args):
    reply = await svc.submit(name, role, args)
    assert reply["ok"], reply


class _Held:
    """Another writer holding the journal: the daemon's next commit fails (busy)."""

    def __init__(self, svc, path):
        svc.journal._conn.execute("PRAGMA busy_timeout = 50")
        self.other = sqlite3.connect(path, isolation_level=None)
        self.other.execute("BEGIN IMMEDIATE")

    def release(self):
        if self.other is not None:
            self.other.execute("ROLLBACK")
            self.other.close()
            self.other = None


def _betting(tmp_path):
    return parse_text(CONFIG.format(journal=tmp_path / "j.db"))


def _journaled_commands(path):
    with Journal.open(path, readonly=True) as j:
        return [r.payload["name"] for r in j.records(kinds=["command"])] + [
            r.payload["event"]["button"] for r in j.records(kinds=["device"])
            if r.payload["event"]["kind"] == "button_pressed"]


def test_the_tower_light_does_not_show_what_a_failed_commit_decided(tmp_path):
    cfg = _betting(tmp_path)
    factory = MockFactory()
    green, amber, red, buzzer = (factory.pin(p) for p in (13, 26, 18, 12))

    async def scenario():
        svc = Service(cfg, pin_factory=factory, notifier=Notifier(None))
        task = asyncio.create_task(svc.run())
        await until(lambda: svc.runner is not None and svc.panel is not None)
        await _must(svc, "open_table", "supervisor")
        await _must(svc, "deck_ready")
        await _must(svc, "place_bet", box=1, wager="versus_croupier", amount=10)
        await until(lambda: green.state and not amber.state)      # bets open: green
        for pin in (green, amber, red, buzzer):
            pin.clear_states()
        held = _Held(svc, tmp_path / "j.db")
        try:
            factory.pin(17).drive_low()                  # close bets: its commit fails
            factory.pin(17).drive_high()
            code = await asyncio.wait_for(task, 30)
        finally:
            held.release()
        return code

    assert asyncio.run(scenario()) == 1
    # Bets were not closed in the journal: the light never said so (amber), nor anything else,
    # until the panel went dark at the stop.
    assert "close_bets" not in _journaled_commands(tmp_path / "j.db")
    assert not any(s.state for s in amber.states[1:])
    assert not any(s.state for s in red.states[1:])
    assert not any(s.state for s in buzzer.states[1:])


API = """
[table]
id = "jf-2"
game = "q-poker"
mode = "shoe"
boxes = 7

[devices.shoe]
class = "shoe"
transport = "serial"
port = "{absent}"

[journal]
path = "{journal}"

[api]
listen = "127.0.0.1"
port = 0

[api.tokens]
"""


def _with_api(tmp_path, api_keys=""):
    """The API table's configuration with every role's token (and ``api_keys`` under
    ``[api]``), and the dealer's request headers."""
    from controller.config import hash_token
    from test_api_support import TOKENS

    text = API.format(absent=tmp_path / "tty-absent", journal=tmp_path / "j.db").replace(
        "port = 0\n", "port = 0\n" + api_keys) + "".join(
        f'{role} = "{hash_token(tok)}"\n' for role, tok in TOKENS.items())
    return parse_text(text), {"Authorization": f"Bearer {TOKENS['dealer']}"}


async def _serving(cfg):
    """The service started in this loop, once its API is up: the service and its task."""
    svc = Service(cfg, notifier=Notifier(None), open_panel=False)
    task = asyncio.create_task(svc.run())
    await until(lambda: svc.api is not None or task.done())
    return svc, task


def test_the_api_answers_a_command_it_could_not_journal_without_its_undurable_state(tmp_path):
    """The dealer's close_bets fails its commit: the answer must not say bets are closed
    (the table in memory decided it; the journal holds nothing of it), and nothing the API
    serves after it shows the table ahead of its journal."""
    import aiohttp

    cfg, dealer = _with_api(tmp_path)

    async def scenario():
        svc, task = await _serving(cfg)
        url = svc.api.url
        await linked(svc, "shoe")
        await _must(svc, "open_table", "supervisor")
        await _must(svc, "deck_ready")
        await _must(svc, "place_bet", box=1, wager="versus_croupier", amount=10)
        held = _Held(svc, tmp_path / "j.db")
        try:
            async with aiohttp.ClientSession() as http:
                r = await http.post(f"{url}/api/commands/close_bets", headers=dealer)
                answer = (r.status, await r.json())
            code = await asyncio.wait_for(task, 30)
        finally:
            held.release()
        return answer, code

    (status, body), code = asyncio.run(scenario())
    assert code == 1
    assert "close_bets" not in _journaled_commands(tmp_path / "j.db")
    assert "bets_closed" not in json.dumps(body), body
    assert status == 503 and body["error"]["code"] == "journal_failed", body
    assert "bets_closed" not in json.dumps(body)
    assert "journal could not be written" in body["error"]["message"]


def test_the_control_socket_shows_no_view_the_journal_does_not_hold(tmp_path):
    """A view asked right behind a command whose commit failed (one write, two lines: the
    daemon reads the second while it closes its devices) is not the table in memory."""
    cfg = parse_text(API.split("[api]")[0].format(absent=tmp_path / "tty-absent",
                                                   journal=tmp_path / "j.db"))
    sock = tmp_path / "control.sock"

    async def scenario():
        svc = Service(cfg, control=sock, notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        await until(lambda: svc.drivers or task.done())
        await until(lambda: sock.exists())
        await linked(svc, "shoe")
        await _must(svc, "open_table", "supervisor")
        await _must(svc, "deck_ready")
        await _must(svc, "place_bet", box=1, wager="versus_croupier", amount=10)
        reader, writer = await asyncio.open_unix_connection(str(sock))
        held = _Held(svc, tmp_path / "j.db")
        try:
            writer.write(b'{"command": "close_bets", "role": "dealer"}\n{"query": "view"}\n')
            await writer.drain()
            replies = [json.loads(await asyncio.wait_for(reader.readline(), 30))
                       for _ in range(2)]
            code = await asyncio.wait_for(task, 30)
        finally:
            held.release()
            writer.close()
        return replies, code

    (command, view), code = asyncio.run(scenario())
    assert code == 1
    assert "close_bets" not in _journaled_commands(tmp_path / "j.db")
    assert command["ok"] is False
    assert view["ok"] is False and "journal could not be written" in view["error"], view


def test_nothing_the_api_serves_shows_a_table_ahead_of_its_journal(tmp_path):
    """After a commit that failed (the bets closed in memory, not in the journal): the page,
    the health, the stream and a command's answer say the table is stopping, never
    bets_closed."""
    import pytest

    from controller.api import create_app
    from controller.journal import JournalError
    from test_api_support import api_config, auth, client, make_runner

    runner = make_runner(tmp_path / "j.db")
    runner.command("open_table", "supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    app = create_app(runner, api_config())
    runner.journal._conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(tmp_path / "j.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(JournalError):
            runner.command("close_bets")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert runner.table.state == "bets_closed" and runner.broken     # in memory only

    async def look(c):
        got = []
        for path in ("/api/table", "/api/health"):
            r = await c.get(path, headers=auth("display"))
            got.append((r.status, await r.text()))
        r = await c.get("/api/events", headers=auth("display"))
        got.append((r.status, (await r.content.readany()).decode()))  # no snapshot: it ends
        r.close()
        r = await c.post("/api/commands/remove_bet", headers=auth("dealer"),
                         json={"box": 1, "wager": "versus_croupier"})
        got.append((r.status, await r.text()))
        return got

    got = client(app, look)
    for status, text in got[:2] + got[3:]:
        assert status == 503 and "journal_failed" in text, (status, text)
    assert got[2][0] == 200 and got[2][1] == ""
    assert not any("bets_closed" in text for _, text in got)
    runner.journal.close()


def test_a_command_whose_number_cannot_be_journaled_is_not_sent_and_the_daemon_stops(
        tmp_path):
    """Each command's link number is journaled before it is sent (protocol 3.6). When that
    record fails (the disk goes between the table's commit and the send), the command is not
    sent, and the daemon stops as for any journal failure, instead of leaving the table
    waiting for a command that never left; restarted, it asks the shuffler again."""
    from drivers.protocol import messages as m
    from test_link import Peer, until

    port = str(tmp_path / "tty-shuffler")
    cfg = parse_text(SERIAL_SHUFFLER.format(port=port, journal=tmp_path / "j.db"))

    async def scenario():
        peer = Peer(port, "shuffler")
        peer.plug()
        svc = Service(cfg, notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        await until(lambda: svc.drivers and svc.drivers["shuffler"].is_up)
        await until(lambda: svc.queue.empty() and "shuffler" in svc.runner.table.identities)
        held = []
        send = svc.runner.send

        def failing_disk(command):          # the disk fails after the table's commit
            if not held:
                held.append(_Held(svc, tmp_path / "j.db"))
            send(command)
        svc.runner.send = failing_disk
        try:
            reply = await svc.submit("open_table", "supervisor", {})
            code = await asyncio.wait_for(task, 30)
        finally:
            for h in held:
                h.release()
        asked = [msg for _, msg in peer.received if not isinstance(msg, (m.Hello, m.Heartbeat,
                                                                         m.Ack, m.Nak))]
        # Restarted: the table recovers in shuffling and asks the shuffler again.
        svc2 = Service(cfg, notifier=Notifier(None), open_panel=False)
        task2 = asyncio.create_task(svc2.run())
        try:
            await until(lambda: peer.acted, timeout=20)
        finally:
            svc2.stop()
            await asyncio.wait_for(task2, 30)
            peer.unplug()
        return reply, held, code, asked, list(peer.acted), svc.failed

    reply, held, code, asked, acted, failed = asyncio.run(scenario())
    assert reply["ok"] is True and held          # open_table was journaled, then the disk went
    assert asked == []                           # nothing reached the shuffler
    assert code == 1 and "journal" in failed
    assert acted and type(acted[0]).__name__ in ("Shuffle", "DeckCheck")


def test_a_stop_is_journaled_before_the_light_goes_dark_and_the_devices_close(tmp_path):
    """SIGTERM: the service's stop record is on disk before the operator sees the table stop
    (the tower light dark, the devices' links closed)."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db").replace(
        "[journal]", f'[devices.shoe]\nclass = "shoe"\ntransport = "serial"\n'
                     f'port = "{tmp_path / "tty-absent"}"\n\n[journal]'))
    factory = MockFactory()
    red = factory.pin(18)
    seen = []

    async def scenario():
        svc = Service(cfg, pin_factory=factory, notifier=Notifier(None))
        task = asyncio.create_task(svc.run())
        await until(lambda: svc.runner is not None and svc.panel is not None)
        # out of service (its shoe never links here, so no round opens): red
        await until(lambda: red.state)
        append, close = svc.journal.append, svc.drivers["shoe"].close

        def journal_append(kind, payload=None, *a, **kw):
            if kind == "service" and payload.get("event") == "stop":
                seen.append(("stop journaled", svc.panel.light.value))
            return append(kind, payload, *a, **kw)

        async def driver_close():
            seen.append(("shoe closed", None))
            await close()
        svc.journal.append = journal_append
        svc.drivers["shoe"].close = driver_close
        svc.stop("SIGTERM")
        return await asyncio.wait_for(task, 30)

    assert asyncio.run(scenario()) == 0
    assert [what for what, _ in seen] == ["stop journaled", "shoe closed"]
    assert seen[0][1] != "off"                  # the light still showed the table


def test_a_console_hold_the_journal_cannot_record_stops_the_daemon_with_no_other_input(
        tmp_path):
    """The API's own record (a console held back, `commands_held`) fails its commit: the API
    answers 503 and marks the table stopped; the daemon stops on its next idle wake-up (a
    second at most), not at the next input, which an idle table may not have for long."""
    import aiohttp

    cfg, dealer = _with_api(tmp_path, "refused_limit = 2\n")

    async def scenario():
        svc, task = await _serving(cfg)
        url = svc.api.url
        async with aiohttp.ClientSession() as http:
            for _ in range(2):      # the table is closed: bets cannot close
                r = await http.post(f"{url}/api/commands/close_bets", headers=dealer)
                assert r.status == 409
            held = _Held(svc, tmp_path / "j.db")
            try:
                r = await http.post(f"{url}/api/commands/close_bets", headers=dealer)
                answer = (r.status, await r.json())
                code = await asyncio.wait_for(task, 30)
            finally:
                held.release()
        return answer, code, svc.failed

    (status, body), code, failed = asyncio.run(scenario())
    assert status == 503 and body["error"]["code"] == "journal_failed", body
    assert code == 1 and "commands_held was not recorded" in failed
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
        assert not list(j.records(kinds=["commands_held"]))
