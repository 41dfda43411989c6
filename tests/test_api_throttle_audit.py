"""The console's refusal throttle attacked (controller/api/throttle.py, docs/api.md *Too many
refusals*): commands a role already had in flight when its limit was reached, bodies as large
as a command may be, and the new records across a restart."""
import asyncio
import json

import pytest

from controller.api import create_app
from controller.api.app import THROTTLE
from controller.api.throttle import HELD, RELEASED
from controller.config import parse_text
from controller.journal import Journal

from test_api_support import auth, client
from test_api_throttle import Clock, limited, refused_one, runner  # noqa: F401 - fixture


def daemon_config(tmp_path, sim, limit, window):
    from test_api_service import config_text
    devices = {c: sim.add(c) for c in ("shoe", "shuffler")}
    text = config_text(tmp_path, devices).replace(
        'port = 0\n', f'port = 0\nrefused_limit = {limit}\nrefused_window_s = {window}\n')
    return parse_text(text)


@pytest.mark.hil
def test_commands_in_flight_together_are_refused_no_more_than_the_limit(tmp_path):
    """A console (or a leaked token) that sends its refused commands many at once: each of
    them passes the look at the hold before the table has refused any, so they all reached the
    table and the journal. The table takes a role's commands one at a time, so the count must
    see each refusal before the next command of that role is given to the table."""
    from firmware_sim import SimulatedTable

    import aiohttp
    from test_api_service import serving

    sim = SimulatedTable(seed=3, speed=200.0)
    config = daemon_config(tmp_path, sim, 2, 60)

    async def main():
        async with serving(config) as service:
            url = service.api.url
            async with aiohttp.ClientSession() as http:
                async def one():
                    r = await http.post(f"{url}/api/commands/close_bets",
                                        headers=auth("dealer"), json={})
                    return r.status
                return sorted(await asyncio.gather(*(one() for _ in range(30))))
    try:
        statuses = asyncio.run(main())
    finally:
        sim.stop()
    with Journal.open(tmp_path / "journal.db", readonly=True) as journal:
        kinds = [r.kind for r in journal.records()]
    assert kinds.count("refused") == 2 and kinds.count("command") == 2, kinds.count("refused")
    assert statuses == [409, 409] + [429] * 28
    assert kinds.count(HELD) == 1


def test_a_command_body_as_large_as_the_server_takes_does_not_reach_the_journal(runner):
    """A refused command is journaled with its arguments: one whose text fills the 64 KiB a
    body may hold would cost the journal two such records per refusal, the limit's worth in
    every window. A command's parameters are a few names and numbers: a long one is a 400,
    which never reaches the table."""
    app = create_app(runner, limited(20, 10), clock=Clock())
    before = len(runner.journal)

    async def check(c):
        out = []
        for param in ("wager", "player"):
            r = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                             json={"box": 1, "wager": "versus_croupier", "amount": 10,
                                   param: "x" * 60_000})
            out.append((r.status, (await r.json())["error"]))
        r = await c.post("/api/commands/void_round", headers=auth("supervisor"),
                         json={"reason": "y" * 60_000})
        out.append((r.status, (await r.json())["error"]))
        return out
    out = client(app, check)
    for status, err in out:
        assert status == 400 and err["code"] == "bad_parameter", err
        assert "characters" in err["message"] and "nothing was done" in err["message"], err
    assert len(runner.journal) == before, "none of them reached the table or the journal"


def test_a_long_list_is_refused_before_the_table_too(runner):
    app = create_app(runner, limited(20, 10), clock=Clock())
    before = len(runner.journal)

    async def check(c):
        r = await c.post("/api/commands/enter_cards", headers=auth("dealer"),
                         json={"recipient": "box 1", "cards": ["As"] * 10_000})
        return r.status, (await r.json())["error"]
    status, err = client(app, check)
    assert status == 400 and err["code"] == "bad_parameter", err
    assert "cards" in err["message"], err
    assert len(runner.journal) == before


def test_a_hold_and_its_release_in_the_round_in_play_do_not_stop_recovery(runner):
    """A restart (here a new runner on the same journal, as the daemon's start builds it)
    after a hold and a release inside the round in play: recovery replays no such record and
    rebuilds the round."""
    from test_api_support import make_runner
    clock = Clock()
    app = create_app(runner, limited(1, 10), clock=clock)

    async def check(c):
        await c.post("/api/commands/place_bet", headers=auth("dealer"),
                     json={"box": 2, "wager": "versus_croupier", "amount": 10})
        await refused_one(c)
        await refused_one(c)            # held
        clock.now += 10
        r = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                         json={"box": 3, "wager": "versus_croupier", "amount": 10})
        return r.status
    assert client(app, check) == 200
    kinds = [r.kind for r in runner.journal.records()]
    assert HELD in kinds and RELEASED in kinds
    path = runner.journal.path
    runner.journal.close()
    again = make_runner(path)
    try:
        report = again.recover()
        assert report["state_now"] == "bets_open", report
        assert len(again.table.round.bets) == 2
    finally:
        again.journal.close()


def _post(url, path, role, body=None, method="POST"):
    import urllib.error
    import urllib.request
    from test_api_support import TOKENS
    req = urllib.request.Request(url + path, method=method,
                                 data=None if method == "GET" else json.dumps(body or {}).encode(),
                                 headers={"Authorization": f"Bearer {TOKENS[role]}",
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


@pytest.mark.hil
def test_a_daemon_killed_while_a_token_is_held_starts_again_with_a_clean_count(tmp_path):
    """The real daemon, killed (SIGKILL) while the dealer's token is held back: no
    `commands_released` is written (nothing runs to write it); the restart is not stopped by
    the `commands_held` left without one, and the role starts again with a clean count, as
    docs/api.md says."""
    import signal
    import socket
    import time

    from controller.config import hash_token
    from controller.rig import Rig
    from test_api_support import TOKENS

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rig = Rig(tmp_path, "q-poker", "shoe")
    try:
        rig.start_devices()
        with open(rig.config_path, "a") as f:
            f.write(f'\n[api]\nlisten = "127.0.0.1"\nport = {port}\nrefused_limit = 2\n'
                    'refused_window_s = 600\n\n[api.tokens]\n'
                    + "".join(f'{r} = "{hash_token(t)}"\n' for r, t in TOKENS.items()))
        url = f"http://127.0.0.1:{port}"

        def up():
            rig.start_controller()
            rig.wait_links()
            for _ in range(500):
                if _post(url, "/api/health", "display", method="GET") == 200:
                    return
                time.sleep(0.02)
            raise AssertionError("the console API did not come up")
        up()
        first = [_post(url, "/api/commands/close_bets", "dealer") for _ in range(3)]
        assert rig.kill(signal.SIGKILL) == -signal.SIGKILL
        up()
        again = _post(url, "/api/commands/close_bets", "dealer")
    finally:
        rig.stop()
    assert first == [409, 409, 429] and again == 409
    with Journal.open(rig.journal_path, readonly=True) as journal:
        assert journal.verify().ok
        kinds = [r.kind for r in journal.records()]
    held = kinds.index(HELD)
    assert RELEASED not in kinds
    assert "service" in kinds[held + 1:] and "recovery" in kinds[held + 1:]


def test_once_closed_for_the_stop_the_throttle_writes_nothing_more(runner):
    """The daemon closes the throttle (its holds released) just before its stop record, the
    last of the run, and only then closes the API: a command still in hand then must not
    begin a hold, whose record would come after the stop's."""
    app = create_app(runner, limited(2, 10), clock=Clock())

    async def check(c):
        for _ in range(2):
            await refused_one(c)
        app[THROTTLE].close()
        runner.journal.append("service", {"event": "stop"}, source="service")
        for _ in range(3):
            await refused_one(c)
    client(app, check)
    kinds = [r.kind for r in runner.journal.records()]
    stop = max(i for i, k in enumerate(kinds) if k == "service")
    assert HELD not in kinds[stop:] and RELEASED not in kinds[stop:], kinds[stop:]
