"""The console API: every role, every refusal, journaling with the role, the event stream."""
import asyncio
import io
import json

import pytest

from controller.api import ApiServer, create_app
from controller.config import ApiConfig, hash_token
from controller.rules.cards import Card
from controller.table.machine import COMMANDS
from drivers import events as ev

from table_helpers import deck_checked
from test_api_support import (TOKENS, api_config, auth, captured_logs, client,
                              make_runner, reset_logging)

DEALER_ONLY_OR_BOTH = sorted(n for n, c in COMMANDS.items() if "dealer" in c.roles)
SUPERVISOR_ONLY = sorted(n for n, c in COMMANDS.items() if c.roles == ("supervisor",))


@pytest.fixture
def runner(tmp_path):
    r = make_runner(tmp_path / "j.db")
    yield r
    r.journal.close()


@pytest.fixture
def logs():
    with captured_logs() as stream:
        yield stream


def journaled_commands(runner):
    return [(r.kind, r.payload) for r in runner.journal.records(kinds=["command", "refused"])]


def open_round(runner):
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")


def test_supervisors_dealers_and_displays_see_the_table(runner):
    open_round(runner)

    async def check(c):
        out = {}
        for role in TOKENS:
            r = await c.get("/api/table", headers=auth(role))
            assert r.status == 200
            out[role] = await r.json()
        return out
    docs = client(create_app(runner, api_config()), check)
    for role, doc in docs.items():
        assert doc["role"] == role
        assert doc["state"] == "bets_open" and doc["game"]["id"] == "q-poker"
        assert doc["game"]["boxes"] == 7 and "versus_croupier" in doc["game"]["wagers"]
        assert doc["light"] == {"signal": "ready", "colour": "green", "buzzer": "off"}
        assert {d["device"] for d in doc["devices"]} == {"shoe", "shuffler", "dice"}


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"},
                                     {"Authorization": "Basic " + TOKENS["dealer"]},
                                     {"Authorization": "Bearer " + hash_token(TOKENS["dealer"])}])
def test_no_token_or_a_wrong_one_is_401_for_every_endpoint_and_is_logged(runner, logs, headers):
    open_round(runner)
    before = len(runner.journal)

    async def check(c):
        statuses = []
        for method, path in (("GET", "/api/table"), ("GET", "/api/health"),
                             ("GET", "/api/whoami"), ("GET", "/api/events"),
                             ("POST", "/api/commands/close_bets"),
                             ("POST", "/api/commands/void_round")):
            r = await c.request(method, path, headers=headers)
            body = await r.json()
            statuses.append(r.status)
            assert body["ok"] is False and body["error"]["status"] == 401
            assert "token" in body["error"]["message"]
            assert r.headers["WWW-Authenticate"].startswith("Bearer")
        return statuses
    assert set(client(create_app(runner, api_config()), check)) == {401}
    assert len(runner.journal) == before and runner.table.state == "bets_open"
    lines = [json.loads(line) for line in logs.getvalue().splitlines()]
    refused = [line for line in lines if line["event"] == "api request refused"]
    assert len(refused) == 6 and {line["status"] for line in refused} == {401}
    for token in TOKENS.values():                  # the log never holds a token
        assert token not in logs.getvalue()


def test_the_event_stream_takes_the_token_in_the_query_but_nothing_else_does(runner):
    async def check(c):
        bad = await c.get("/api/table", params={"token": TOKENS["supervisor"]})
        good = await c.get("/api/events", params={"token": TOKENS["display"]})
        first = await good.content.readuntil(b"\n\n")
        good.close()
        return bad.status, good.status, first
    bad, good, first = client(create_app(runner, api_config()), check)
    assert bad == 401 and good == 200
    assert first.startswith(b"id: 0\nevent: snapshot\n")


def test_display_may_not_give_any_command_403_logged_and_nothing_journaled(runner, logs):
    open_round(runner)
    before = len(runner.journal)
    view = runner.table.public_view()

    async def check(c):
        out = []
        for name in COMMANDS:
            r = await c.post(f"/api/commands/{name}", headers=auth("display"), json={})
            out.append((r.status, (await r.json())["error"]["code"]))
        return out
    assert set(client(create_app(runner, api_config()), check)) == {(403, "read_only")}
    assert len(runner.journal) == before and runner.table.public_view() == view
    refused = [json.loads(line) for line in logs.getvalue().splitlines()
               if "api request refused" in line]
    assert len(refused) == len(COMMANDS) and {r["role"] for r in refused} == {"display"}


@pytest.mark.parametrize("name", SUPERVISOR_ONLY)
def test_dealer_may_not_give_supervisor_commands(runner, name):
    open_round(runner)
    before = len(runner.journal)

    async def check(c):
        r = await c.post(f"/api/commands/{name}", headers=auth("dealer"),
                         json={"reason": "x"} if name == "void_round" else {})
        return r.status, await r.json()
    status, body = client(create_app(runner, api_config()), check)
    assert status == 403 and body["error"]["code"] == "forbidden"
    assert "supervisor" in body["error"]["message"] and name in body["error"]["message"]
    assert len(runner.journal) == before and runner.table.state == "bets_open"


def test_dealer_marks_bets_and_each_command_is_journaled_with_its_role(runner):
    open_round(runner)

    async def check(c):
        r1 = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                          json={"box": 2, "wager": "versus_croupier", "amount": 10})
        r2 = await c.post("/api/commands/place_bet", headers=auth("supervisor"),
                          json={"box": 4, "wager": "pair_bonus", "amount": 5})
        return (r1.status, await r1.json()), (r2.status, await r2.json())
    (s1, b1), (s2, b2) = client(create_app(runner, api_config()), check)
    assert s1 == s2 == 200 and b1["ok"] and b2["role"] == "supervisor"
    assert {(b["box"], b["wager"], b["amount"]) for b in b2["view"]["round"]["bets"]} == \
        {(2, "versus_croupier", 10), (4, "pair_bonus", 5)}
    cmds = [p for k, p in journaled_commands(runner) if k == "command"][-2:]
    assert cmds[0] == {"source": "command", "name": "place_bet", "role": "dealer",
                       "args": {"box": 2, "wager": "versus_croupier", "amount": 10}}
    assert cmds[1]["role"] == "supervisor" and cmds[1]["args"]["box"] == 4


def test_supervisor_voids_a_round_journaled_with_its_role(runner):
    open_round(runner)
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)

    async def check(c):
        r = await c.post("/api/commands/void_round", headers=auth("supervisor"),
                         json={"reason": "a player disputes the bets"})
        return r.status, await r.json()
    status, body = client(create_app(runner, api_config()), check)
    assert status == 200 and body["state"] == "round_void"
    assert runner.table.round.void["cause"] == "supervisor"
    last = [p for k, p in journaled_commands(runner) if k == "command"][-1]
    assert last["name"] == "void_round" and last["role"] == "supervisor"
    close = runner.journal.last(kind="round_close")
    assert close.payload["outcome"] == "void"


@pytest.mark.parametrize("name,args,words", [
    ("decide", {"box": 1, "decision": "play"}, "player_decisions"),       # wrong state
    ("place_bet", {"box": 9, "wager": "versus_croupier", "amount": 5}, "box 9"),
    ("place_bet", {"box": 1, "wager": "ante", "amount": 5}, "ante"),        # not a Q Poker wager
    ("place_bet", {"box": 1, "wager": "versus_croupier", "amount": 2.5}, "whole number"),
    ("confirm_result", {}, "settlement"),
    ("exposed_card", {"recipient": "croupier"}, "dealing"),
])
def test_an_illegal_command_is_409_names_the_problem_changes_nothing_and_is_journaled(
        runner, name, args, words):
    open_round(runner)
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    view, state = runner.table.public_view(), runner.table.state
    before = len(runner.journal)

    async def check(c):
        r = await c.post(f"/api/commands/{name}", headers=auth("dealer"), json=args)
        return r.status, await r.json()
    status, body = client(create_app(runner, api_config()), check)
    assert status == 409 and body["error"]["code"] == "refused"
    assert words in body["error"]["message"] and body["error"]["state"] == state
    assert runner.table.public_view() == view and runner.table.state == state
    recs = list(runner.journal.records(since=before))
    assert [r.kind for r in recs] == ["command", "refused"]
    assert recs[0].payload == {"source": "command", "name": name, "role": "dealer", "args": args}
    assert recs[1].payload["error"] == body["error"]["message"]


@pytest.mark.parametrize("body,code,words", [
    (b"{not json", "bad_json", "not JSON"),
    (b"[1, 2]", "bad_body", "JSON object"),
    (b'{"box": 1, "wager": "versus_croupier", "amount": 5, "colour": "red"}',
     "bad_parameter", "colour"),
    (b"\xff\xfe{", "bad_json", "UTF-8"),
    (b"[" * 30_000 + b"]" * 30_000, "bad_json", "too deep"),
])
def test_a_malformed_request_is_400_and_changes_nothing(runner, body, code, words):
    open_round(runner)
    before = len(runner.journal)

    async def check(c):
        r = await c.post("/api/commands/place_bet", headers=auth("dealer"), data=body)
        return r.status, await r.json()
    status, doc = client(create_app(runner, api_config()), check)
    assert status == 400 and doc["error"]["code"] == code and words in doc["error"]["message"]
    assert len(runner.journal) == before and runner.table.round.bets == {}


def test_a_body_beyond_64_kib_is_refused_without_reading_it(runner):
    async def check(c):
        r = await c.post("/api/commands/void_round", headers=auth("supervisor"),
                         data=b'{"reason": "' + b"x" * 70_000 + b'"}')
        return r.status, await r.json()
    status, doc = client(create_app(runner, api_config()), check)
    assert status == 413 and doc["ok"] is False
    assert not list(runner.journal.records(kinds=["command"]))


def test_an_unknown_command_is_404_and_lists_the_roles_commands(runner):
    async def check(c):
        r = await c.post("/api/commands/deal_faster", headers=auth("dealer"))
        return r.status, await r.json()
    status, doc = client(create_app(runner, api_config()), check)
    assert status == 404 and "deal_faster" in doc["error"]["message"]
    assert "place_bet" in doc["error"]["message"]
    assert "void_round" not in doc["error"]["message"]     # not the dealer's


def test_whoami_lists_each_roles_commands(runner):
    async def check(c):
        out = {}
        for role in TOKENS:
            r = await c.get("/api/whoami", headers=auth(role))
            out[role] = {x["name"] for x in (await r.json())["commands"]}
        return out
    got = client(create_app(runner, api_config()), check)
    assert got["display"] == set()
    assert got["dealer"] == set(DEALER_ONLY_OR_BOTH)
    assert got["supervisor"] == set(COMMANDS)


def test_the_stream_sends_a_snapshot_then_each_table_event_in_order(runner):
    open_round(runner)
    app = create_app(runner, api_config(), status_interval=30)

    async def check(c):
        stream = await c.get("/api/events", headers=auth("display"))
        events = []

        async def read(n):
            while len(events) < n:
                block = (await stream.content.readuntil(b"\n\n")).decode()
                fields = dict(line.split(": ", 1) for line in block.strip().split("\n"))
                events.append((fields["event"], json.loads(fields["data"])))
        await read(1)
        await c.post("/api/commands/place_bet", headers=auth("dealer"),
                     json={"box": 3, "wager": "versus_croupier", "amount": 20})
        await c.post("/api/commands/close_bets", headers=auth("dealer"))
        await asyncio.wait_for(read(4), 5)
        stream.close()
        return events
    events = client(app, check)
    assert events[0][0] == "snapshot" and events[0][1]["state"] == "bets_open"
    assert [(k, d["kind"]) for k, d in events[1:4]] == [
        ("table", "bet"), ("table", "bets_closed"), ("table", "state")]
    assert events[1][1]["box"] == 3 and events[1][1]["amount"] == 20
    assert events[3][1]["dest"] == "bets_closed"


def test_a_stream_resumed_with_last_event_id_starts_again_from_a_snapshot(runner):
    """Last-Event-ID (an EventSource sends it when it reconnects) is not supported: the
    client missed events, and the numbers may be another process's, so it is given the
    table as it is now, never the events after the number it names."""
    open_round(runner)
    app = create_app(runner, api_config(), status_interval=30)

    async def check(c):
        await c.post("/api/commands/place_bet", headers=auth("dealer"),
                     json={"box": 3, "wager": "versus_croupier", "amount": 20})
        stream = await c.get("/api/events", headers={**auth("display"), "Last-Event-ID": "1"})
        first = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), 5)
        stream.close()
        return first.decode()
    first = client(app, check)
    assert "event: snapshot" in first
    snap = json.loads(first.split("data: ", 1)[1])
    assert [(b["box"], b["amount"]) for b in snap["view"]["round"]["bets"]] == [(3, 20)]


def test_a_device_fault_shows_as_red_light_and_the_device_condition(runner):
    open_round(runner)
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse("9h")))
    runner.device(ev.Jam(device="shoe", ts=0.0, where="exit"))

    async def check(c):
        r = await c.get("/api/health", headers=auth("display"))
        return await r.json()
    doc = client(create_app(runner, api_config()), check)
    assert doc["state"] == "malfunction"
    assert doc["light"] == {"signal": "malfunction", "colour": "red", "buzzer": "sounding"}
    shoe = next(d for d in doc["devices"] if d["device"] == "shoe")
    assert shoe["conditions"] == ["jam"]


def test_api_listens_on_loopback_unless_configured_otherwise(runner):
    async def check():
        server = await ApiServer.start(create_app(runner, ApiConfig()), ApiConfig(), port=0)
        try:
            return server.host, server.url
        finally:
            await server.close()
    host, url = asyncio.run(check())
    assert host == "127.0.0.1" and url.startswith("http://127.0.0.1:")
    assert ApiConfig().listen == "127.0.0.1"


def test_page_is_served_without_external_resources(runner):
    async def check(c):
        r = await c.get("/")
        html = await r.text()
        js = await (await c.get("/static/app.js")).text()
        return r.status, r.headers, html, js
    status, headers, html, js = client(create_app(runner, api_config()), check)
    assert status == 200 and "default-src 'self'" in headers["Content-Security-Policy"]
    for text in (html, js):
        assert "http://" not in text and "https://" not in text and "//cdn" not in text


def test_a_client_too_slow_for_the_stream_is_told_to_resync_and_the_table_never_waits(
        runner, monkeypatch):
    import controller.api.hub as hub_mod
    monkeypatch.setattr(hub_mod, "QUEUE_SIZE", 3)
    open_round(runner)
    app = create_app(runner, api_config(), status_interval=30)

    async def check(c):
        stream = await c.get("/api/events", headers=auth("display"))
        await stream.content.readuntil(b"\n\n")                      # the snapshot
        for box in range(1, 7):                                        # 6 events, queue of 3
            runner.command("place_bet", box=box, wager="versus_croupier", amount=6)
        blocks = []
        while True:
            block = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), 5)
            blocks.append(block)
            if b"event: resync" in block:
                break
        return blocks
    blocks = client(app, check)
    assert b"event: resync" in blocks[-1] and b"GET /api/table" in blocks[-1]
    assert len(runner.table.round.bets) == 6


def test_the_access_log_names_no_token_and_no_query(runner, logs):
    async def check():
        server = await ApiServer.start(create_app(runner, api_config()), api_config())
        import aiohttp
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{server.url}/api/events",
                                params={"token": TOKENS["display"]}) as r:
                await r.content.readuntil(b"\n\n")
            await (await http.get(f"{server.url}/api/table", headers=auth("dealer"))).read()
        await server.close()
    asyncio.run(check())
    lines = [json.loads(line) for line in logs.getvalue().splitlines()]
    http = [line for line in lines if line["event"] == "http"]
    assert {(line["path"], line["role"], line["status"]) for line in http} == {
        ("/api/events", "display", 200), ("/api/table", "dealer", 200)}
    for token in TOKENS.values():
        assert token not in logs.getvalue()


def test_a_refusal_that_names_cards_reaches_the_client_without_them(runner, monkeypatch):
    """A rule's error may name the cards it was given; none leaves through the API."""
    from controller.errors import TablectlError
    open_round(runner)

    def refuse(name, role, **args):
        raise TablectlError("the croupier holds As Kd 10h, not Qs")
    monkeypatch.setattr(runner, "command", refuse)

    async def check(c):
        r = await c.post("/api/commands/close_bets", headers=auth("dealer"))
        return r.status, await r.text()
    status, text = client(create_app(runner, api_config()), check)
    assert status == 409 and "croupier holds" in text
    for card in ("As", "Kd", "10h", "Qs"):
        assert card not in text


def test_a_display_opened_mid_round_gets_that_rounds_history_after_the_snapshot(runner):
    app = create_app(runner, api_config(), status_interval=30)
    open_round(runner)
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.command("void_round", role="supervisor", reason="dispute")
    runner.command("next_round")
    runner.command("deck_ready")
    runner.command("place_bet", box=6, wager="pair_bonus", amount=5)

    async def check(c):
        runner.command("place_bet", box=2, wager="versus_croupier", amount=20)
        stream = await c.get("/api/events", headers=auth("display"))
        blocks = [await stream.content.readuntil(b"\n\n")]
        while True:
            block = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), 5)
            blocks.append(block)
            if b'"box": 2' in block:
                break
        stream.close()
        return blocks
    blocks = client(app, check)
    assert b"event: snapshot" in blocks[0]
    assert all(b"event: history" in b for b in blocks[1:])
    docs = [json.loads(b.split(b"data: ", 1)[1]) for b in blocks[1:]]
    assert {d["round"] for d in docs} == {2}                 # nothing of the voided round
    assert [(d["box"], d["amount"]) for d in docs if d["kind"] == "bet"] == [(6, 5), (2, 20)]
    ids = [int(b.split(b"\n")[0][4:]) for b in blocks[1:]]
    assert ids == sorted(ids)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_or_infinity_in_a_body_is_400_and_the_table_still_takes_the_next_bet(
        runner, constant):
    """Python's parser takes NaN and Infinity, JSON has neither and the journal cannot hold
    them: such a body is refused before it reaches the table, which goes on as before."""
    open_round(runner)
    before = len(runner.journal)

    async def check(c):
        bad = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                           data=b'{"box": 1, "wager": "versus_croupier", "amount": '
                           + constant.encode() + b"}")
        good = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                            json={"box": 1, "wager": "versus_croupier", "amount": 10})
        return bad.status, await bad.json(), good.status
    status, doc, after = client(create_app(runner, api_config()), check)
    assert status == 400 and doc["error"]["code"] == "bad_json"
    assert constant in doc["error"]["message"] and "whole number" in doc["error"]["message"]
    assert after == 200
    cmds = [r.payload for r in runner.journal.records(since=before, kinds=["command"])]
    assert [c["args"]["amount"] for c in cmds] == [10]


def test_a_lone_surrogate_in_a_body_is_400_and_the_stream_still_opens(runner):
    """"\\ud800" parses, but is no text: once on the table the stream could not encode its
    snapshot, and no display opened for the rest of the round."""
    open_round(runner)
    before = len(runner.journal)

    async def check(c):
        bad = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                           data=b'{"box": 1, "wager": "versus_croupier", "amount": 10, '
                                b'"player": "Ann\\ud800"}')
        stream = await c.get("/api/events", headers=auth("display"))
        first = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), 5)
        stream.close()
        return bad.status, await bad.json(), first
    status, doc, first = client(create_app(runner, api_config(), status_interval=30), check)
    assert status == 400 and doc["error"]["code"] == "bad_json"
    assert "\\ud800" in doc["error"]["message"] and "UTF-8" in doc["error"]["message"]
    assert len(runner.journal) == before and runner.table.round.bets == {}
    assert b"event: snapshot" in first


@pytest.mark.parametrize("name,args,param", [
    ("place_bet", {"box": 1, "wager": "versus_croupier", "amount": 10, "player": {"a": 1}},
     "player"),
    ("remove_bet", {"box": 1, "wager": ["versus_croupier"]}, "wager"),
    ("decide", {"box": 1, "decision": "play", "player": ["Ann"]}, "player"),
    ("decide", {"box": 1, "decision": "fold", "player": 7}, "player"),
    ("void_round", {"reason": {"why": "dispute"}}, "reason"),
])
def test_a_list_object_or_number_where_text_is_needed_is_400_and_the_round_goes_on(
        runner, name, args, param):
    """A wager, player or reason that is not text used to fail inside the table as a
    controller fault, voiding the round in play; it is refused before it reaches the table."""
    open_round(runner)
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    if name == "decide":
        runner.command("close_bets")
        for card in ("As", "Kd", "2c", "3d", "4h", "5s"):
            runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(card)))
        assert runner.table.state == "player_decisions"
    state, view, before = runner.table.state, runner.table.public_view(), len(runner.journal)

    async def check(c):
        r = await c.post(f"/api/commands/{name}", headers=auth("supervisor"), json=args)
        return r.status, await r.json()
    status, doc = client(create_app(runner, api_config()), check)
    assert status == 400 and doc["error"]["code"] == "bad_parameter"
    assert f"{param} must be text" in doc["error"]["message"]
    assert runner.table.state == state and runner.table.public_view() == view
    assert len(runner.journal) == before


@pytest.mark.parametrize("name,args,missing", [
    ("place_bet", {"box": 1, "wager": "versus_croupier"}, "needs amount;"),
    ("place_bet", {}, "needs box, wager, amount;"),
    ("remove_bet", {"wager": "versus_croupier"}, "needs box;"),
])
def test_a_missing_parameter_is_400_naming_it_and_not_the_optional_ones(
        runner, name, args, missing):
    open_round(runner)
    before = len(runner.journal)

    async def check(c):
        r = await c.post(f"/api/commands/{name}", headers=auth("dealer"), json=args)
        return r.status, await r.json()
    status, doc = client(create_app(runner, api_config()), check)
    message = doc["error"]["message"]
    assert status == 400 and doc["error"]["code"] == "bad_parameter"
    assert f"{name} {missing}" in message and "if wanted, player" in message
    assert len(runner.journal) == before and runner.table.round.bets == {}


@pytest.mark.parametrize("method,path,status,words", [
    ("GET", "/api/commands/close_bets", 405, "use POST"),
    ("POST", "/api/table", 405, "use GET"),
    ("GET", "/api/tables", 404, "Not Found"),
])
def test_a_wrong_method_or_path_names_the_way_out(runner, method, path, status, words):
    open_round(runner)
    before = len(runner.journal)

    async def check(c):
        r = await c.request(method, path, headers=auth("dealer"))
        return r.status, r.headers.get("Allow"), await r.json()
    got, allow, doc = client(create_app(runner, api_config()), check)
    assert got == status and doc["error"]["status"] == status
    assert words in doc["error"]["message"] and "/api/openapi.json" in doc["error"]["message"]
    assert (allow is not None) == (status == 405)
    assert len(runner.journal) == before


def test_an_oversized_body_names_the_limit(runner):
    async def check(c):
        r = await c.post("/api/commands/void_round", headers=auth("supervisor"),
                         data=b'{"reason": "' + b"x" * 70_000 + b'"}')
        return await r.json()
    doc = client(create_app(runner, api_config()), check)
    assert doc["error"]["code"] == "request_entity_too_large"
    assert "64 KiB" in doc["error"]["message"]


def test_a_token_that_is_not_utf8_is_a_wrong_token_not_a_server_error(runner, logs):
    async def check(c):
        reader, writer = await asyncio.open_connection(c.host, c.port)
        writer.write(b"GET /api/table HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok\xff\xfe\r\n"
                     b"Connection: close\r\n\r\n")
        await writer.drain()
        answer = await reader.read()
        writer.close()
        return answer
    answer = client(create_app(runner, api_config()), check)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 401 ")
    assert json.loads(body)["error"]["code"] == "wrong_token"
    assert "Traceback" not in logs.getvalue()


def test_a_body_nested_deeper_than_any_parameter_is_400_and_never_journaled(runner):
    """No parameter nests deeper than {"stacks": {"1": 500}}. A body nested hundreds deep went
    to the journal, which could not write it down and then took no more input at all."""
    open_round(runner)
    before = len(runner.journal)
    deep = b"[" * 50 + b"1" + b"]" * 50

    async def check(c):
        bad = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                           data=b'{"wager": "pair_bonus", "amount": 5, "box": ' + deep + b"}")
        good = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                            json={"box": 1, "wager": "pair_bonus", "amount": 5})
        return bad.status, await bad.json(), good.status
    status, doc, after = client(create_app(runner, api_config()), check)
    assert status == 400 and doc["error"]["code"] == "bad_json"
    assert "51 deep" in doc["error"]["message"] and "stacks" in doc["error"]["message"]
    assert after == 200
    cmds = [r.payload["args"] for r in runner.journal.records(since=before, kinds=["command"])]
    assert cmds == [{"box": 1, "wager": "pair_bonus", "amount": 5}]


@pytest.mark.parametrize("body,kind", [(b"null", "null"), (b'"box 1"', "text"), (b"7", "a number")])
def test_a_body_that_is_not_an_object_is_named_in_json_words(runner, body, kind):
    async def check(c):
        r = await c.post("/api/commands/place_bet", headers=auth("dealer"), data=body)
        return r.status, await r.json()
    status, doc = client(create_app(runner, api_config()), check)
    assert status == 400 and doc["error"]["code"] == "bad_body"
    assert doc["error"]["message"].endswith(f"got {kind}")


@pytest.mark.parametrize("number, words", [
    ("1e400", "whole number"), ("-1e400", "whole number"),
    (str(2**53), "2^53 - 1"), (str(10**30), "2^53 - 1"), (str(-(2**53)), "2^53 - 1")])
def test_a_number_beyond_what_the_journal_and_the_page_hold_is_400(runner, number, words):
    """1e400 is valid JSON, but Python reads it as infinity, which the journal cannot hold; the
    console page, in JavaScript, shows whole numbers exactly up to 2^53 - 1. Either is refused
    with NaN and Infinity, before the table (not as the table's refusal), and never reaches
    the journal."""
    open_round(runner)
    before = len(runner.journal)

    async def check(c):
        bad = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                           data=b'{"box": 1, "wager": "versus_croupier", "amount": '
                           + number.encode() + b"}")
        return bad.status, await bad.json()
    status, doc = client(create_app(runner, api_config()), check)
    assert status == 400 and doc["error"]["code"] == "bad_json"
    assert number in doc["error"]["message"] and words in doc["error"]["message"]
    assert len(runner.journal) == before and runner.table.round.bets == {}


def test_cards_given_as_a_number_at_the_reveal_are_a_409_and_the_round_goes_on(tmp_path):
    """They used to fail inside the table: 200 ok, and the round void by a controller fault
    after every card was out."""
    run = make_runner(tmp_path / "j.db", "q-poker", "shuffler")
    run.command("open_table", "supervisor")
    run.device(deck_checked())
    run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    run.command("place_bet", "dealer", box=1, wager="versus_croupier", amount=10)
    run.command("close_bets", "dealer")
    for _ in range(2):          # box 1 and the croupier, read by nobody
        run.device(ev.HandDispensed(device="shuffler", ts=0.0, cards=(None, None, None)))
    run.command("decide", "dealer", box=1, decision="play")

    async def check(c):
        r = await c.post("/api/commands/enter_cards", headers=auth("dealer"),
                         json={"recipient": "box 1", "cards": 5})
        return r.status, await r.json()
    status, doc = client(create_app(run, api_config()), check)
    assert status == 409 and "cards must be text" in doc["error"]["message"]
    assert run.table.state == "croupier_reveal" and run.table.round.void is None
    run.journal.close()




def test_a_co_bank_over_the_api_is_in_the_view_and_a_refused_one_is_a_409_naming_art_5_5(
        tmp_path):
    run = make_runner(tmp_path / "j.db", "super-pan-9", "shoe")
    run.command("open_table", "supervisor")
    run.command("deck_ready")
    run.command("set_banker", seat=1, capital=100)
    run.command("place_bet", box=2, wager="seat", amount=50, player="Ana")

    async def check(c):
        ok = await c.post("/api/commands/co_bank", headers=auth("dealer"),
                          json={"player": "Eve", "seat": 4, "capital": 100})
        house = await c.post("/api/commands/co_bank", headers=auth("dealer"),
                             json={"house": True, "capital": 500})
        bad = await c.post("/api/commands/co_bank", headers=auth("dealer"),
                           json={"player": "Ana", "capital": 100})
        return (ok.status, await ok.json()), house.status, (bad.status, await bad.json())
    (status, done), house, (refused, doc) = client(create_app(run, api_config()), check)
    assert status == 200 and house == 200
    assert done["view"]["round"]["co_bankers"] == [{"player": "Eve", "seat": 4, "capital": 100}]
    assert run.table.public_view()["round"]["co_bankers"][1] == {"house": True, "capital": 500}
    assert refused == 409 and "Ana bets on seat 2" in doc["error"]["message"]
    assert "art. 5(5)" in doc["error"]["message"]
    assert [r.kind for r in run.journal.records(kinds=["command", "refused"])][-2:] == [
        "command", "refused"]
    run.journal.close()


def test_holdem_pots_and_the_boxes_eligible_for_each_are_in_the_view(tmp_path):
    """11/2008 art. 10, 11(3), H3: the view gives each pot, main and side, with its amount and
    the boxes that may win it, to every role, in the table document, in a command's answer
    and, once the betting is over, as the settlement awards them."""
    runner = make_runner(tmp_path / "j.db", "texas-holdem")
    open_round(runner)
    runner.command("seat_players", seats=[1, 3, 6], stacks={"1": 1000, "3": 500, "6": 200},
                   button=1)
    runner.command("close_bets")
    for card in ("Qd", "7h", "As", "Qc", "2c", "Ks"):        # hole cards, seats 3, 6, 1
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(card)))
    side = [{"amount": 600, "eligible": [1, 3, 6]}, {"amount": 200, "eligible": [1, 3]}]

    async def check(c):
        out = {}
        r = await c.get("/api/table", headers=auth("display"))
        out["blinds"] = (await r.json())["view"]["holdem"]["pots"]
        for seat, action, amount in ((1, "raise", 300), (3, "call", None), (6, "allin", None)):
            body = {"seat": seat, "action": action}
            if amount is not None:
                body["amount"] = amount
            r = await c.post("/api/commands/holdem_action", headers=auth("dealer"), json=body)
            assert r.status == 200, await r.text()
        out["answer"] = (await r.json())["view"]["holdem"]["pots"]
        for role in TOKENS:
            r = await c.get("/api/table", headers=auth(role))
            out[role] = (await r.json())["view"]["holdem"]["pots"]
        return out
    got = client(create_app(runner, api_config()), check)
    assert got["blinds"] == [{"amount": 3, "eligible": [1, 3, 6]}]
    assert got["answer"] == side
    assert all(got[role] == side for role in TOKENS)
    for card in ("2d", "3d", "4d", "5h"):                    # burn and flop
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(card)))
    runner.command("holdem_action", seat=3, action="bet", amount=100)
    runner.command("holdem_action", seat=1, action="fold")
    for card in ("6c", "8s", "9c", "Jh"):                    # turn and river, nobody to bet
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(card)))
    view = runner.table.public_view()
    assert view["state"] == "settlement"
    assert view["holdem"]["pots"] == [{"amount": 600, "eligible": [3, 6]},
                                      {"amount": 200, "eligible": [3]}]
    assert [{"amount": p["amount"], "eligible": p["eligible"]}
            for p in view["round"]["settlement"]["pots"]] == view["holdem"]["pots"]


@pytest.mark.parametrize("body, key", [
    (b'{"box": 1, "wager": "versus_croupier", "amount": 10, "amount": 1000}', "amount"),
    (b'{"box": 1, "wager": "versus_croupier", "box": 4, "amount": 10}', "box"),
    (b'{"box": 1, "wager": "pair_bonus", "amount": 10, "Amount": 5, "amount": 10}', "amount")])
def test_a_parameter_given_twice_is_400_naming_it_and_nothing_is_journaled(runner, body, key):
    """JSON lets a body name a key twice; the parser kept the last and the table took a bet
    of 1000 where the body also said 10. Which one the sender meant nobody can tell: the
    body is refused, before the table, and the next bet is taken."""
    open_round(runner)
    before = len(runner.journal)
    view = runner.table.public_view()

    async def check(c):
        bad = await c.post("/api/commands/place_bet", headers=auth("dealer"), data=body)
        good = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                            json={"box": 2, "wager": "pair_bonus", "amount": 5})
        return bad.status, await bad.json(), good.status
    status, doc, after = client(create_app(runner, api_config()), check)
    assert status == 400 and doc["error"]["code"] == "bad_json"
    message = doc["error"]["message"]
    assert f'"{key}" twice' in message and "once" in message
    assert after == 200
    cmds = [r.payload["args"] for r in runner.journal.records(since=before, kinds=["command"])]
    assert cmds == [{"box": 2, "wager": "pair_bonus", "amount": 5}]
    assert runner.table.public_view()["round"]["bets"] == [
        {"box": 2, "wager": "pair_bonus", "player": None, "amount": 5}]
    assert view["round"]["bets"] == []


def test_a_seat_given_twice_in_the_stacks_is_400(tmp_path):
    """{"1": 500, "1": 5000} seated seat 1 with 5000 chips."""
    run = make_runner(tmp_path / "j.db", "texas-holdem")
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    before = len(run.journal)

    async def check(c):
        r = await c.post("/api/commands/seat_players", headers=auth("dealer"),
                         data=b'{"seats": [1, 3], "stacks": {"1": 500, "3": 500, "1": 5000}}')
        return r.status, await r.json()
    status, doc = client(create_app(run, api_config()), check)
    after = len(run.journal)
    run.journal.close()
    assert status == 400 and doc["error"]["code"] == "bad_json"
    assert '"1" twice in stacks' in doc["error"]["message"]
    assert after == before and run.table.public_view()["holdem"] is None
