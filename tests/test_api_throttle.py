"""A console token that keeps sending commands the table refuses is held back (429) before it
can grow the journal at HTTP speed (controller/api/throttle.py, docs/api.md *Too many
refusals*).

Against the real application over HTTP (aiohttp's test server on a loopback port), with the
throttle's clock driven by the test: no test waits out a window.
"""
import io
import json

import pytest

from controller.api import create_app, hub_of
from controller.api.app import THROTTLE, use_tokens
from controller.api.throttle import HELD, RELEASED
from controller.config import ApiConfig, hash_token, parse_text

from test_api_support import TOKENS, auth, captured_logs, client, make_runner

BET = {"box": 1, "wager": "versus_croupier", "amount": 10}


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def runner(tmp_path):
    r = make_runner(tmp_path / "j.db")
    r.command("open_table", role="supervisor")
    r.command("deck_ready")         # bets open: `decide` is refused, `place_bet` taken
    yield r
    r.journal.close()


@pytest.fixture
def logs():
    with captured_logs() as stream:
        yield stream


def limited(limit=3, window=10, tokens=None):
    return ApiConfig("127.0.0.1", 0, tokens or {r: hash_token(t) for r, t in TOKENS.items()},
                     refused_limit=limit, refused_window_s=window)


def refused_one(c, role="dealer", headers=None):
    """A command the table refuses in bets_open (a decision before the deal)."""
    return c.post("/api/commands/decide", headers=headers or auth(role),
                  json={"box": 1, "decision": "play"})


def records(runner, since=0):
    return list(runner.journal.records(since=since))


async def answer(r):
    return r.status, await r.json(), r.headers.get("Retry-After")


def test_past_the_limit_a_token_is_answered_429_and_the_table_and_journal_are_untouched(
        runner):
    clock = Clock()
    app = create_app(runner, limited(3, 10), clock=clock)

    async def check(c):
        first = [await answer(await refused_one(c)) for _ in range(3)]
        head = len(runner.journal)
        state, view = runner.table.state, runner.table.public_view()
        held = [await answer(await refused_one(c))]
        after_first = len(runner.journal)
        clock.now += 4
        held.append(await answer(await c.post("/api/commands/place_bet", headers=auth("dealer"),
                                              json=BET)))
        held.append(await answer(await refused_one(c)))
        return first, head, state, view, held, after_first
    first, head, state, view, held, after_first = client(app, check)
    # the three refusals reached the table, each journaled (its command and its refusal)
    assert [s for s, _, _ in first] == [409, 409, 409]
    assert [r.kind for r in records(runner)].count("refused") == 3
    # the fourth and every one after: 429, nothing acted on, one record for the hold
    status, body, retry = held[0]
    assert status == 429 and retry == "10"
    err = body["error"]
    assert err["code"] == "too_many_refusals" and err["command"] == "decide"
    assert "3" in err["message"] and "10 s" in err["message"]
    assert "nothing was done" in err["message"] and "GET /api/table" in err["message"]
    assert [(s, r) for s, _, r in held[1:]] == [(429, "6"), (429, "6")]
    assert runner.table.state == state and runner.table.public_view() == view
    assert not runner.table.round.bets            # the place_bet held back was not taken
    new = records(runner, head)
    assert [r.kind for r in new[:1]] == [HELD] and after_first == head + 1
    assert new[0].source == "service" and new[0].round_id == str(runner.table.round.round_id)
    assert new[0].payload == {"role": "dealer", "refused": 3, "limit": 3, "window_s": 10}
    assert "command" not in [r.kind for r in new]


def test_another_token_and_the_reads_are_not_held_back(runner):
    app = create_app(runner, limited(2, 10), clock=Clock())

    async def check(c):
        for _ in range(3):
            await refused_one(c, "dealer")
        out = {"supervisor": (await refused_one(c, "supervisor")).status,
               "supervisor_bet": (await c.post("/api/commands/place_bet",
                                               headers=auth("supervisor"), json=BET)).status}
        for path in ("/api/table", "/api/health", "/api/whoami"):
            out[path] = (await c.get(path, headers=auth("dealer"))).status
        stream = await c.get("/api/events", headers=auth("dealer"))
        out["events"] = stream.status
        stream.close()
        out["dealer"] = (await refused_one(c, "dealer")).status
        return out
    out = client(app, check)
    assert out == {"supervisor": 409, "supervisor_bet": 200, "/api/table": 200,
                   "/api/health": 200, "/api/whoami": 200, "events": 200, "dealer": 429}
    assert [r.payload["role"] for r in records(runner) if r.kind == HELD] == ["dealer"]


def test_after_the_window_commands_are_taken_and_the_release_counts_those_turned_away(runner):
    clock = Clock()
    app = create_app(runner, limited(2, 10), clock=clock)

    async def check(c):
        for _ in range(2):
            await refused_one(c)
        turned = [(await refused_one(c)).status for _ in range(4)]
        clock.now += 10
        head = len(runner.journal)
        taken = await c.post("/api/commands/place_bet", headers=auth("dealer"), json=BET)
        again = [(await refused_one(c)).status for _ in range(3)]
        return turned, head, taken.status, again
    turned, head, taken, again = client(app, check)
    assert turned == [429] * 4 and taken == 200
    new = records(runner, head)
    # the release is journaled before the command it lets through
    assert [r.kind for r in new[:2]] == [RELEASED, "command"]
    held = next(r for r in records(runner) if r.kind == HELD)
    assert new[0].payload == {"role": "dealer", "turned_away": 4, "held": held.seq,
                              "why": "window"}
    # a clean count: two refusals again before the next hold
    assert again == [409, 409, 429]
    assert [r.kind for r in records(runner)].count(HELD) == 2


def test_accepted_commands_never_count_and_old_refusals_leave_the_window(runner):
    clock = Clock()
    app = create_app(runner, limited(3, 10), clock=clock)

    async def check(c):
        out = [(await refused_one(c)).status for _ in range(2)]
        for box in range(1, 8):
            r = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                             json={**BET, "box": box})
            out.append(r.status)
        clock.now += 10.5          # the two refusals are out of the window now
        out += [(await refused_one(c)).status for _ in range(4)]
        return out
    assert client(app, check) == [409, 409] + [200] * 7 + [409, 409, 409, 429]


def test_a_limit_of_0_holds_nothing_back(runner):
    app = create_app(runner, limited(0, 10), clock=Clock())

    async def check(c):
        return {(await refused_one(c)).status for _ in range(40)}
    assert client(app, check) == {409}
    assert HELD not in [r.kind for r in records(runner)]


def test_a_token_replaced_starts_with_a_clean_count_and_its_hold_is_released(runner):
    new_dealer = "dealer-token-rotated-0123456789"
    tokens = {r: hash_token(t) for r, t in TOKENS.items()}
    app = create_app(runner, limited(2, 10, tokens), clock=Clock())

    async def check(c):
        for _ in range(2):
            await refused_one(c)
        await refused_one(c)       # held: turned away
        await refused_one(c)       # and again
        use_tokens(app, limited(2, 10, {**tokens, "dealer": hash_token(new_dealer)}))
        fresh = {"Authorization": f"Bearer {new_dealer}"}
        return [(await refused_one(c, headers=fresh)).status for _ in range(3)]
    assert client(app, check) == [409, 409, 429]
    kinds = [(r.kind, r.payload.get("why")) for r in records(runner)
             if r.kind in (HELD, RELEASED)]
    assert kinds == [(HELD, None), (RELEASED, "token_replaced"), (HELD, None),
                     (RELEASED, "stopping")]
    released = [r for r in records(runner) if r.kind == RELEASED]
    assert [r.payload["turned_away"] for r in released] == [2, 1]


def test_a_hold_ends_by_itself_once_its_window_passes(runner):
    clock = Clock()
    app = create_app(runner, limited(1, 10), clock=clock)

    async def check(c):
        import asyncio
        await refused_one(c)
        await refused_one(c)       # held
        clock.now += 10
        for _ in range(300):       # no request: the throttle's own timer releases it
            if any(r.kind == RELEASED for r in records(runner)):
                return True
            await asyncio.sleep(0.01)
        return False
    assert client(app, check)
    released = [r for r in records(runner) if r.kind == RELEASED]
    assert [(r.payload["why"], r.payload["turned_away"]) for r in released] == [("window", 1)]


def test_the_hold_and_its_release_are_published_and_logged_without_the_token(runner, logs):
    clock = Clock()
    app = create_app(runner, limited(1, 10), clock=clock)
    hub = hub_of(app)

    async def check(c):
        await refused_one(c)
        await refused_one(c)
        clock.now += 10
        await c.post("/api/commands/place_bet", headers=auth("dealer"), json=BET)
    client(app, check)
    published = [d for _, d in hub.recent if d["kind"] in (HELD, RELEASED)]
    assert [(d["kind"], d["role"]) for d in published] == [(HELD, "dealer"), (RELEASED, "dealer")]
    assert published[1]["turned_away"] == 1
    lines = [json.loads(line) for line in logs.getvalue().splitlines()]
    said = [line for line in lines if line.get("role") == "dealer" and "held" in line["event"]]
    assert said, lines
    text = logs.getvalue() + json.dumps([r.payload for r in records(runner)])
    for token in TOKENS.values():
        assert token not in text and hash_token(token) not in text
        assert hash_token(token).split(":", 1)[1] not in text


def test_a_hold_the_journal_cannot_record_is_not_taken_and_the_table_stops(runner):
    """The hold is journaled before it takes effect: a journal that cannot be written (here,
    closed under the API) stops the table as a failed commit does (503), and nothing is held."""
    app = create_app(runner, limited(2, 10), clock=Clock())

    async def check(c):
        for _ in range(2):
            await refused_one(c)
        runner.journal.close()
        r = await refused_one(c)
        return r.status, (await r.json())["error"]
    status, err = client(app, check)
    assert status == 503 and err["code"] == "journal_failed"
    assert "commands_held was not recorded" in err["message"]
    assert runner.broken is not None and "Restart the service" in runner.broken
    assert not app[THROTTLE].held("dealer")


@pytest.mark.hil
def test_the_daemon_holds_back_a_token_past_the_limit_of_its_file(tmp_path):
    """The daemon (controller.service.Service, in process, its commands through its one input
    queue) takes the limit from table.toml and journals the hold in its own journal."""
    import asyncio

    import aiohttp
    from firmware_sim import SimulatedTable

    from controller.journal import Journal
    from test_api_service import config_text, serving

    sim = SimulatedTable(seed=3, speed=200.0)
    devices = {c: sim.add(c) for c in ("shoe", "shuffler")}
    text = config_text(tmp_path, devices).replace(
        'port = 0\n', 'port = 0\nrefused_limit = 2\nrefused_window_s = 60\n')
    config = parse_text(text)

    async def main():
        async with serving(config) as service:
            url = service.api.url
            async with aiohttp.ClientSession() as http:
                out = []
                for _ in range(4):      # the table is closed: bets cannot close
                    r = await http.post(f"{url}/api/commands/close_bets",
                                        headers=auth("dealer"), json={})
                    out.append((r.status, r.headers.get("Retry-After")))
                return out
    try:
        out = asyncio.run(main())
    finally:
        sim.stop()
    assert out == [(409, None), (409, None), (429, "60"), (429, "60")]
    with Journal.open(tmp_path / "journal.db", readonly=True) as journal:
        kinds = [r.kind for r in journal.records()]
        held = [r.payload for r in journal.records(kinds=[HELD])]
        released = [r.payload for r in journal.records(kinds=[RELEASED])]
        assert journal.verify().ok
    assert kinds.count("refused") == 2 and kinds.count("command") == 2
    assert held == [{"role": "dealer", "refused": 2, "limit": 2, "window_s": 60}]
    # the daemon stopped while the token was held: the count is not lost, and it is
    # recorded before the stop's own record, the last of the run
    assert [(p["why"], p["turned_away"]) for p in released] == [("stopping", 2)]
    assert kinds[-2:] == [RELEASED, "service"]


def test_the_openapi_description_names_the_429_of_every_command():
    from controller.api.openapi import build_openapi
    from controller.table.machine import COMMANDS
    paths = build_openapi()["paths"]
    for name in COMMANDS:
        assert "429" in paths[f"/api/commands/{name}"]["post"]["responses"]
