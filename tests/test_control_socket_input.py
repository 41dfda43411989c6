"""The control socket's requests as a person or a program can get them wrong: a key given
twice, a line beyond the reader's limit, JSON nested too deep. Each is answered with one JSON
line naming the problem and the way out; the connection goes on; nothing is changed or
journaled. The real daemon, its journal and a real Unix socket."""
import asyncio
import json
import logging

from controller.config import parse_text
from controller.journal import Journal
from service_helpers import start_with_control

CONFIG = """
[table]
id = "cs-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[journal]
path = "{journal}"
"""


def _serve(tmp_path, talk):
    """Run the daemon with a control socket; ``talk(ask, svc)`` sends lines through ``ask``
    (raw bytes without the newline -> the decoded answer)."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    control = tmp_path / "control.sock"

    async def scenario():
        svc, task = await start_with_control(cfg, control)
        reader, writer = await asyncio.open_unix_connection(str(control), limit=1 << 22)

        async def ask(raw: bytes):
            writer.write(raw + b"\n")
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), 10)
            assert line.endswith(b"\n"), line[:200]
            return json.loads(line)

        try:
            await talk(ask, svc)
        finally:
            writer.close()
            svc.stop()
            await task

    asyncio.run(scenario())
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        return [(r.payload.get("name"), r.payload.get("args"))
                for r in j.records(kinds=["command"])]


def _command(name, role="dealer", **args):
    return json.dumps({"command": name, "role": role, "args": args}).encode()


def test_a_key_given_twice_is_refused_and_places_nothing(tmp_path):
    """"amount" 10 then 1000 placed a bet of 1000: JSON keeps the last."""
    async def talk(ask, svc):
        assert (await ask(_command("open_table", "supervisor")))["ok"]
        assert (await ask(_command("deck_ready")))["ok"]
        twice = await ask(b'{"command": "place_bet", "role": "dealer", "args": {"box": 3, '
                          b'"wager": "versus_croupier", "amount": 10, "amount": 1000}}')
        assert twice["ok"] is False
        assert '"amount" twice' in twice["error"] and "give each key once" in twice["error"]
        top = await ask(b'{"command": "void_round", "role": "dealer", "role": "supervisor", '
                        b'"args": {"reason": "x"}}')
        assert top["ok"] is False and '"role" twice' in top["error"]
        view = (await ask(b'{"query": "view"}'))["view"]
        assert view["state"] == "bets_open" and view["round"]["bets"] == []
        assert (await ask(_command("place_bet", box=3, wager="versus_croupier",
                                   amount=10)))["ok"]
        view = (await ask(b'{"query": "view"}'))["view"]
        assert [b["amount"] for b in view["round"]["bets"]] == [10]

    names = [n for n, _ in _serve(tmp_path, talk)]
    assert names == ["open_table", "deck_ready", "place_bet"]


def test_a_line_beyond_the_limit_is_answered_and_the_connection_goes_on(tmp_path, caplog):
    """A line over 64 KiB dropped the connection without a word, and asyncio logged "Task
    exception was never retrieved"."""
    caplog.set_level(logging.ERROR)

    async def talk(ask, svc):
        long = b'{"command": "open_table", "role": "supervisor", "args": {"x": "' + \
            b"a" * (100 * 1024) + b'"}}'
        answer = await ask(long)
        assert answer["ok"] is False and "64 KiB" in answer["error"]
        assert "one line" in answer["error"] or "shorter" in answer["error"]
        # the end of the long line was not read as a request of its own
        assert (await ask(b'{"query": "view"}'))["view"]["state"] == "out_of_service"
        huge = b"x" * (1 << 20)                      # 1 MiB without a newline until the end
        assert "64 KiB" in (await ask(huge))["error"]
        assert (await ask(_command("open_table", "supervisor")))["ok"]

    assert [n for n, _ in _serve(tmp_path, talk)] == ["open_table"]
    assert "never retrieved" not in caplog.text


def test_json_nested_too_deep_is_answered_and_the_connection_goes_on(tmp_path, caplog):
    caplog.set_level(logging.ERROR)

    async def talk(ask, svc):
        deep = b'{"command": "open_table", "role": "supervisor", "args": {"x": ' + \
            b"[" * 30000 + b"]" * 30000 + b"}}"
        answer = await ask(deep)
        assert answer["ok"] is False and "deep" in answer["error"]
        assert "at most 3" in answer["error"]
        nested = b'{"command": "open_table", "role": "supervisor", "args": {"x": [[[1]]]}}'
        answer = await ask(nested)
        assert answer["ok"] is False and "at most 3" in answer["error"]
        assert (await ask(_command("open_table", "supervisor")))["ok"]

    assert [n for n, _ in _serve(tmp_path, talk)] == ["open_table"]
    assert "never retrieved" not in caplog.text


def test_a_line_asking_two_things_is_refused_and_does_neither(tmp_path):
    """`{"subscribe": true, "reload": true}` subscribed and dropped the reload without a
    word; a command with a query did the command alone. One request a line: both named."""
    replies = {}

    async def talk(ask, svc):
        before = len(svc.journal)
        for raw in (b'{"subscribe": true, "reload": true}',
                    b'{"command": "open_table", "role": "supervisor", "query": "view"}',
                    b'{"query": "view", "reload": true}'):
            replies[raw] = await ask(raw)
        replies["journal"] = len(svc.journal) - before
        replies["view"] = await ask(b'{"query": "view"}')     # the connection goes on

    commands = _serve(tmp_path, talk)
    for raw in (b'{"subscribe": true, "reload": true}',
                b'{"command": "open_table", "role": "supervisor", "query": "view"}',
                b'{"query": "view", "reload": true}'):
        r = replies[raw]
        assert r["ok"] is False and "one request a line" in r["error"], r
        asked = [k for k in ("command", "query", "subscribe", "reload") if k.encode() in raw]
        assert all(f'"{k}"' in r["error"] for k in asked), r
    assert replies["journal"] == 0 and commands == []
    assert replies["view"]["ok"] is True
