"""A reload of the daemon (SIGHUP: ``systemctl reload tablectl``) rotates the console's tokens
without stopping the table.

The daemon (``Service``, in this process, on a real TCP port) re-reads its table.toml, checks it
as ``tablectl config check`` does, journals a ``config_reload`` record (the roles whose token
changed, never a token or its hash) and only then puts the new tokens in force: a replaced or
removed token is refused at once and the event streams opened with it are closed; the other
streams go on. A file with a mistake changes nothing; any other setting changed waits for a
restart and is named.
"""
import asyncio
import json

import aiohttp

from controller.config import hash_token, load_config
from controller.journal import Journal
from controller.journal_cli import describe
from controller.sdnotify import Notifier
from controller.service import Service
from test_api_service import started

# the dealer's token before and after, the display's, the supervisor's
A, B, D, S = ("a" * 32, "b" * 32, "d" * 32, "s" * 32)

CONFIG = """[table]
id = "rot-1"
game = "q-poker"
mode = "shoe"
boxes = 7
{extra}
[journal]
path = "{journal}"

[api]
listen = "127.0.0.1"
port = {port}

[api.tokens]
{tokens}
"""


def write(tmp_path, tokens, extra="", port=0):
    lines = "\n".join(f'{role} = "{hash_token(tok)}"' for role, tok in tokens.items())
    path = tmp_path / "table.toml"
    path.write_text(CONFIG.format(journal=tmp_path / "j.db", port=port, tokens=lines,
                                  extra=extra))
    return path


def bearer(token):
    return {"Authorization": "Bearer " + token}


class Stream:
    """An open /api/events: its lines as they come, until the daemon ends it."""

    def __init__(self, http, url, token):
        self.http, self.url, self.token = http, url, token
        self.lines = []
        self.ended = asyncio.Event()
        self.snapshot = asyncio.Event()

    async def open(self):
        self.resp = await self.http.get(f"{self.url}/api/events", headers=bearer(self.token))
        assert self.resp.status == 200
        self.task = asyncio.create_task(self._read())
        await asyncio.wait_for(self.snapshot.wait(), 10)
        return self

    async def _read(self):
        try:
            while True:
                line = await self.resp.content.readline()
                if not line:
                    break
                self.lines.append(line.decode().rstrip("\n"))
                if line.startswith(b"event: snapshot"):
                    self.snapshot.set()
        except (aiohttp.ClientError, asyncio.CancelledError):
            pass
        finally:
            self.ended.set()

    async def until(self, text, timeout=10):
        for _ in range(int(timeout / 0.01)):
            if any(text in line for line in self.lines):
                return
            if self.ended.is_set():
                raise AssertionError(f"stream ended before {text!r}: {self.lines[-5:]}")
            await asyncio.sleep(0.01)
        raise AssertionError(f"no {text!r} on the stream: {self.lines[-5:]}")

    def close(self):
        self.task.cancel()
        self.resp.close()


async def running(path):
    return await started(load_config(path))


async def status(http, url, token, path="/api/whoami"):
    async with http.get(f"{url}{path}", headers=bearer(token)) as resp:
        return resp.status, await resp.json()


def reloads(journal_path):
    with Journal.open(journal_path, readonly=True) as j:
        return list(j.records(kinds=["config_reload"]))


def secret_free(rec, *tokens):
    text = json.dumps(rec.payload)
    for tok in tokens:
        assert tok not in text and hash_token(tok) not in text
        assert hash_token(tok).removeprefix("sha256:") not in text


def test_a_replaced_token_is_refused_and_its_stream_closed_at_once(tmp_path):
    path = write(tmp_path, {"display": D, "dealer": A, "supervisor": S})

    async def scenario():
        svc, task = await running(path)
        url = svc.api.url
        async with aiohttp.ClientSession() as http:
            old = await Stream(http, url, A).open()
            pit = await Stream(http, url, D).open()
            assert (await status(http, url, A))[1]["role"] == "dealer"
            write(tmp_path, {"display": D, "dealer": B, "supervisor": S})
            done = svc.reload()
            assert done["outcome"] == "applied"
            code, body = await status(http, url, A)
            assert code == 401 and body["error"]["code"] == "wrong_token"
            code, body = await status(http, url, B)
            assert code == 200 and body["role"] == "dealer"
            await asyncio.wait_for(old.ended.wait(), 10)    # the old token's stream is over
            assert any("revoked" in line for line in old.lines)
            # The display's stream, opened with a token that did not change, goes on.
            async with http.post(f"{url}/api/commands/open_table", headers=bearer(S)) as r:
                assert r.status == 200
            await pit.until('"kind": "state"')
            assert not pit.ended.is_set()
            async with http.post(f"{url}/api/commands/deck_ready", headers=bearer(B)) as r:
                assert r.status == 200, await r.text()
            old.close()
            pit.close()
        svc.stop()
        await task

    asyncio.run(scenario())
    (rec,) = reloads(tmp_path / "j.db")
    assert rec.payload["outcome"] == "applied" and rec.source == "service"
    assert rec.payload["roles"] == {"changed": ["dealer"], "added": [], "removed": []}
    assert rec.payload["restart"] == []
    secret_free(rec, A, B, D, S)
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        # Journaled before the new token was used: the dealer's deck_ready comes after it.
        (cmd,) = [r for r in j.records(kinds=["command"]) if r.payload["name"] == "deck_ready"]
        assert cmd.source == "dealer" and cmd.seq > rec.seq
        assert j.verify().ok
    assert describe(rec).startswith("console tokens reloaded from ")
    assert describe(rec).endswith(": replaced dealer")


def test_a_role_left_out_loses_its_token_and_a_new_role_gets_one(tmp_path):
    path = write(tmp_path, {"display": D, "dealer": A})

    async def scenario():
        svc, task = await running(path)
        url = svc.api.url
        async with aiohttp.ClientSession() as http:
            pit = await Stream(http, url, D).open()
            write(tmp_path, {"dealer": A, "supervisor": S})
            svc.reload()
            assert (await status(http, url, D))[0] == 401
            await asyncio.wait_for(pit.ended.wait(), 10)
            assert (await status(http, url, S))[1]["role"] == "supervisor"
            assert (await status(http, url, A))[1]["role"] == "dealer"
            pit.close()
        svc.stop()
        await task

    asyncio.run(scenario())
    (rec,) = reloads(tmp_path / "j.db")
    assert rec.payload["roles"] == {"changed": [], "added": ["supervisor"],
                                    "removed": ["display"]}
    secret_free(rec, A, D, S)


def test_a_file_with_a_mistake_changes_nothing(tmp_path):
    path = write(tmp_path, {"display": D, "dealer": A})

    async def scenario():
        svc, task = await running(path)
        url = svc.api.url
        async with aiohttp.ClientSession() as http:
            stream = await Stream(http, url, A).open()
            # The new token pasted as it is instead of its hash, and a limit that is no number.
            path.write_text(path.read_text().replace(hash_token(A), B)
                            + '\n[limits]\nmax = "twenty"\n')
            done = svc.reload()
            assert done["outcome"] == "refused"
            assert (await status(http, url, A))[1]["role"] == "dealer"
            assert (await status(http, url, B))[0] == 401
            async with http.post(f"{url}/api/commands/deck_ready", headers=bearer(A)) as r:
                assert r.status == 409          # heard as the dealer: the table is closed
            assert not stream.ended.is_set()
            stream.close()
        svc.stop()
        await task

    asyncio.run(scenario())
    (rec,) = reloads(tmp_path / "j.db")
    p = rec.payload
    assert p["outcome"] == "refused"
    keys = {(q["key"], q["line"]) for q in p["problems"]}
    lines = path.read_text().splitlines()
    dealer_line = next(i for i, t in enumerate(lines, 1) if t.startswith("dealer"))
    assert ("api.tokens.dealer", dealer_line) in keys
    assert any(k == "limits.max" for k, _ in keys)
    assert all(q["fix"] for q in p["problems"])       # each says the way out
    secret_free(rec, A, B, D)
    words = describe(rec)
    assert words.startswith("reload refused, nothing changed: ")
    assert f"{dealer_line}: api.tokens.dealer: is (not shown)" in words


def test_a_file_of_another_table_is_refused_as_config_check_refuses_it(tmp_path):
    path = write(tmp_path, {"dealer": A})

    async def scenario():
        svc, task = await running(path)
        path.write_text(path.read_text().replace('id = "rot-1"', 'id = "rot-2"')
                        .replace(hash_token(A), hash_token(B)))
        done = svc.reload()
        async with aiohttp.ClientSession() as http:
            assert (await status(http, svc.api.url, A))[0] == 200
            assert (await status(http, svc.api.url, B))[0] == 401
        svc.stop()
        await task
        return done

    done = asyncio.run(scenario())
    assert done["outcome"] == "refused"
    assert [q["key"] for q in done["problems"]] == ["table.id"]


def test_other_settings_wait_for_a_restart_and_are_named(tmp_path):
    path = write(tmp_path, {"dealer": A})

    async def scenario():
        svc, task = await running(path)
        url = svc.api.url
        write(tmp_path, {"dealer": B}, extra="\n[limits]\nmax = 20\n", port=1)
        done = svc.reload()
        async with aiohttp.ClientSession() as http:
            assert (await status(http, url, B))[0] == 200     # still applied
            assert (await status(http, url, A))[0] == 401
        assert svc.config.limits.maximum is None and svc.runner.settings["limits"][
            "versus_croupier"] == [1, 0]                        # the limit of the start
        svc.stop()
        await task
        return done

    done = asyncio.run(scenario())
    assert done["outcome"] == "applied" and done["roles"]["changed"] == ["dealer"]
    assert done["restart"] == ["api.port", "limits.max"]
    (rec,) = reloads(tmp_path / "j.db")
    assert describe(rec).endswith(": replaced dealer; needs a restart: api.port, limits.max")


def test_a_command_whose_body_arrives_after_its_token_was_replaced_is_refused(tmp_path):
    path = write(tmp_path, {"dealer": A, "supervisor": S})

    async def scenario():
        svc, task = await running(path)
        reader, writer = await asyncio.open_connection(svc.api.host, svc.api.port)
        body = b"{" + b" " * 16 + b"}"          # open_table takes no parameters
        writer.write(b"POST /api/commands/open_table HTTP/1.1\r\nHost: x\r\n"
                     b"Authorization: Bearer " + S.encode() + b"\r\n"
                     b"Content-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:5])
        await writer.drain()
        before = svc.runner.table.state
        for _ in range(500):                 # its handler holds the request, reading the body
            if _in_hand(svc):
                break
            await asyncio.sleep(0.01)
        write(tmp_path, {"dealer": A, "supervisor": B})
        svc.reload()
        writer.write(body[5:])
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        writer.close()
        state = svc.runner.table.state
        svc.stop()
        await task
        return head, before, state

    head, before, state = asyncio.run(scenario())
    assert head.startswith(b"HTTP/1.1 401"), head
    assert state == before
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert not list(j.records(kinds=["command"]))


def _in_hand(svc):
    from controller.api.app import BUSY
    return bool(svc.api.runner.app[BUSY])


def test_the_control_socket_is_unaffected(tmp_path):
    path = write(tmp_path, {"dealer": A, "supervisor": S})
    control = tmp_path / "c.sock"

    async def scenario():
        svc = Service(load_config(path), control=control, notifier=Notifier(None),
                      open_panel=False)
        task = asyncio.create_task(svc.run())
        for _ in range(1000):
            if svc.api is not None and control.exists():
                break
            await asyncio.sleep(0.01)
        reader, writer = await asyncio.open_unix_connection(str(control))
        write(tmp_path, {"dealer": B})
        svc.reload()
        writer.write(b'{"command": "open_table", "role": "supervisor"}\n')
        await writer.drain()
        reply = json.loads(await asyncio.wait_for(reader.readline(), 10))
        writer.close()
        svc.stop()
        await task
        return reply

    assert asyncio.run(scenario())["ok"] is True


def test_reloading_tells_systemd_with_the_monotonic_time(tmp_path):
    import socket
    import time

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "n.sock"))
    sock.settimeout(5)
    try:
        n = Notifier(str(tmp_path / "n.sock"))
        before = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        assert n.reloading("reloading table.toml")
        fields = dict(line.split("=", 1) for line in sock.recv(4096).decode().splitlines())
        after = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        assert fields["RELOADING"] == "1" and fields["STATUS"] == "reloading table.toml"
        assert before <= int(fields["MONOTONIC_USEC"]) <= after
    finally:
        sock.close()


def test_a_reload_in_the_middle_of_a_round_is_in_its_record_and_the_round_goes_on(tmp_path):
    path = write(tmp_path, {"dealer": A, "supervisor": S})

    async def first():
        svc, task = await running(path)
        url = svc.api.url
        async with aiohttp.ClientSession() as http:
            for token, name in ((S, "open_table"), (A, "deck_ready")):
                async with http.post(f"{url}/api/commands/{name}", headers=bearer(token)) as r:
                    assert r.status == 200, await r.text()
            async with http.post(f"{url}/api/commands/place_bet", headers=bearer(A),
                                 json={"box": 2, "wager": "versus_croupier",
                                       "amount": 10}) as r:
                assert r.status == 200, await r.text()
            round_id = svc.runner.table.round.round_id
            write(tmp_path, {"dealer": B, "supervisor": S})
            svc.reload()
            async with http.post(f"{url}/api/commands/place_bet", headers=bearer(B),
                                 json={"box": 3, "wager": "versus_croupier",
                                       "amount": 10}) as r:
                assert r.status == 200, await r.text()
        svc.stop()
        await task
        return round_id

    async def again():
        svc, task = await running(path)      # the new file, the round where it was
        bets = dict(svc.runner.table.round.bets)
        state = svc.runner.table.state
        svc.stop()
        await task
        return bets, state

    round_id = asyncio.run(first())
    (rec,) = reloads(tmp_path / "j.db")
    assert rec.round_id == str(round_id)
    bets, state = asyncio.run(again())
    assert state == "bets_open" and sorted(k.box for k in bets) == [2, 3]
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert not list(j.records(kinds=["alarm"]))
        assert [r.seq for r in j.records(round_id=str(round_id)) if r.kind == "config_reload"] \
            == [rec.seq]


def test_config_check_never_repeats_a_value_written_under_api_tokens(tmp_path, capsys):
    # `systemctl reload` runs the check too, and its output goes to the system's log: a
    # token pasted in place of its hash, the usual slip when rotating one, must stay out of it.
    from controller.cli import main

    path = write(tmp_path, {"dealer": A})
    text = path.read_text().replace(hash_token(A), B)
    path.write_text(text + 'supervisor = 12345678901234567890\n')
    assert main(["config", "check", str(path)]) == 2
    err = capsys.readouterr().err
    lines = text.splitlines()
    dealer_line = next(i for i, t in enumerate(lines, 1) if t.startswith("dealer"))
    assert f":{dealer_line}: api.tokens.dealer: " in err and "hash-token --new" in err
    assert "api.tokens.supervisor: is a number, not a string" in err
    assert B not in err and "12345678901234567890" not in err


def test_a_reload_asked_while_starting_is_done_once_ready(tmp_path):
    path = write(tmp_path, {"dealer": A})

    async def scenario():
        svc = Service(load_config(path), notifier=Notifier(None), open_panel=False)
        write(tmp_path, {"dealer": B})
        assert svc.reload() is None              # SIGHUP before the table is up
        task = asyncio.create_task(svc.run())
        for _ in range(1000):
            if svc.api is not None:
                break
            await asyncio.sleep(0.01)
        async with aiohttp.ClientSession() as http:
            codes = [(await status(http, svc.api.url, t))[0] for t in (A, B)]
        svc.stop()
        await task
        return codes

    assert asyncio.run(scenario()) == [401, 200]
    (rec,) = reloads(tmp_path / "j.db")
    assert rec.payload["roles"]["changed"] == ["dealer"]


def test_a_console_off_at_start_is_started_by_a_restart_not_a_reload(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(CONFIG.split("[api]")[0].format(journal=tmp_path / "j.db", extra=""))

    async def scenario():
        svc = Service(load_config(path), notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        while not svc._ready and not task.done():
            await asyncio.sleep(0.01)
        write(tmp_path, {"dealer": A})
        done = svc.reload()
        api = svc.api
        svc.stop()
        await task
        return done, api

    done, api = asyncio.run(scenario())
    assert api is None
    assert done["restart"] == ["api.port", "api.tokens"]       # port 0 in the new file
    assert done["roles"] == {"changed": [], "added": [], "removed": []}


def test_config_check_never_repeats_a_token_written_where_a_roles_name_goes(tmp_path, capsys):
    # The other slip: the token pasted as the key (`TOKEN = "sha256:…"`). The check runs at
    # every start (ExecStartPre), into the system's log: its line is named, never its text.
    from controller.cli import main

    path = write(tmp_path, {"dealer": A})
    path.write_text(path.read_text() + f'{B} = "{hash_token(B)}"\ndealr = "x"\n')
    assert main(["config", "check", str(path)]) == 2
    err = capsys.readouterr().err
    line = len(path.read_text().splitlines()) - 1
    assert f":{line}: api.tokens.(not shown): unknown key, as long as a token" in err, err
    assert "api.tokens.dealr: unknown key" in err      # a misspelt role's name is shown
    assert B not in err
