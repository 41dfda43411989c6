"""The console API as a hostile client on the casino network would use it, against the real
daemon (`tablectl run` as its own process, simulated devices on pseudo-terminals): connections
that never finish their request, bodies that never arrive, clients that vanish mid-body. The
table must go on, the daemon's resources stay bounded, and nothing reaches the journal.
"""
from __future__ import annotations

import json
import os
import socket
import time

import pytest

from test_api_support import TOKENS, DaemonTable

# Sockets the daemon may hold for the console beyond what it holds at rest, however many
# connections a client opens (controller.api.serve.MAX_CONNECTIONS, with room to spare).
HELD_AT_MOST = 160

@pytest.fixture(scope="module")
def live(tmp_path_factory):
    table = DaemonTable(tmp_path_factory.mktemp("audit"), "q-poker", "shoe")
    yield table
    table.close()


def fds(live) -> int:
    return len(os.listdir(f"/proc/{live.rig.proc.pid}/fd"))


def until(pred, timeout=30.0, what="condition"):
    """Wait until ``pred()`` holds; the ceiling is for a loaded machine."""
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, f"{what} not reached in {timeout} s"
        time.sleep(0.05)


def address(live):
    host, port = live.url.split("//")[1].split(":")
    return host, int(port)


def get(live, path, role="display"):
    import urllib.request
    req = urllib.request.Request(live.url + path,
                                 headers={"Authorization": f"Bearer {TOKENS[role]}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, json.loads(r.read())


def journal_count(live) -> int:
    with live.journal() as journal:
        return sum(1 for _ in journal.records())


def half_body(role="dealer") -> bytes:
    """A place_bet whose body says 100 bytes and sends 8."""
    return (f"POST /api/commands/place_bet HTTP/1.1\r\nHost: table\r\n"
            f"Authorization: Bearer {TOKENS[role]}\r\nContent-Type: application/json\r\n"
            f"Content-Length: 100\r\n\r\n{{\"box\": 1").encode()


def read_answer(sock: socket.socket, timeout: float = 30.0) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_a_flood_of_unfinished_connections_holds_a_bounded_number_of_sockets(live):
    """Each connection that never finishes its request holds a file descriptor of the
    daemon's: under systemd it has 1024, and the journal, the devices' ports and their
    reconnections need theirs. A client opening hundreds of them (idle, headers half sent,
    a body half sent) must leave the daemon holding a bounded number, and the console still
    answering the next request."""
    base = fds(live)
    socks = []
    host, port = address(live)
    try:
        for i in range(300):
            s = socket.create_connection((host, port))
            socks.append(s)
            if i % 3 == 1:
                s.sendall(b"GET /api/table HTTP/1.1\r\nHost: table\r\n")
            elif i % 3 == 2:
                s.sendall(half_body())
        until(lambda: fds(live) <= base + HELD_AT_MOST, what=f"at most {HELD_AT_MOST} sockets")
        status, body = get(live, "/api/health")
        assert status == 200 and body["ok"]
    finally:
        for s in socks:
            s.close()


def test_a_body_that_never_arrives_in_full_is_answered_and_changes_nothing(live):
    """A command whose body stops half way (a client that hangs, or one that means to hold a
    connection for ever) is answered 408 naming the problem once the body is overdue, and
    nothing reaches the journal or the table."""
    host, port = address(live)
    state, before = live.state(), journal_count(live)
    with socket.create_connection((host, port)) as s:
        s.sendall(half_body())
        answer = read_answer(s)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:200]
    error = json.loads(body)["error"]
    assert error["code"] == "request_timeout"
    assert "body" in error["message"] and "send" in error["message"]
    assert journal_count(live) == before and live.state() == state
    assert get(live, "/api/health")[0] == 200


def test_a_client_gone_mid_body_is_no_error_in_the_log(live):
    """A client that goes away half way through a body is an ordinary event on a network:
    the log does not fill with error tracebacks for it (one per connection a hostile
    client opens)."""
    host, port = address(live)
    for _ in range(3):
        with socket.create_connection((host, port)) as s:
            s.sendall(half_body())
            time.sleep(0.1)
    marker = "/api/whoami"
    assert get(live, marker)[0] == 200
    log = live.rig.log_path
    until(lambda: marker in log.read_text(encoding="utf-8", errors="replace"),
          what="the access log line")
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "Error handling request" not in text
    assert "Traceback" not in text


def test_a_malformed_request_carrying_the_token_leaves_it_out_of_the_log(live):
    """The event stream takes its token in the query string (a browser's EventSource sends
    no header); a request whose line the server cannot parse (a stray control character, a
    line beyond 8190 bytes) is answered 400, and the log line for it neither holds the
    request line, and with it the token, nor a traceback a client could fill the log with."""
    host, port = address(live)
    token = TOKENS["display"]
    for line in (f"GET /api/events?token={token}\x01 HTTP/1.1\r\nHost: table\r\n\r\n",
                 f"GET /api/events?token={token}&{'a' * 9000} HTTP/1.1\r\nHost: table\r\n\r\n",
                 f"GET /api/events?token={token} HTTP/1.1\r\nNot a header\r\n\r\n"):
        with socket.create_connection((host, port)) as s:
            s.sendall(line.encode())
            s.settimeout(10)
            assert b" 400 " in s.recv(100).split(b"\r\n")[0]
    marker = "/api/health"
    assert get(live, marker)[0] == 200
    log = live.rig.log_path
    until(lambda: marker in log.read_text(encoding="utf-8", errors="replace"),
          what="the access log line")
    text = log.read_text(encoding="utf-8", errors="replace")
    assert token not in text
    assert "Traceback" not in text
    assert "http request not understood" in text


def test_head_of_the_event_stream_is_its_headers_alone(live):
    """A HEAD request (a proxy's or a monitor's check) is answered with the headers a GET
    would have and no content (RFC 9110 9.3.2): the event stream must not start, or the
    answer never ends and the connection is taken up by it. The next request on the same
    connection is answered as such."""
    host, port = address(live)
    auth = f"Authorization: Bearer {TOKENS['display']}\r\n"
    with socket.create_connection((host, port)) as s:
        s.sendall(f"HEAD /api/events HTTP/1.1\r\nHost: table\r\n{auth}\r\n"
                  f"GET /api/health HTTP/1.1\r\nHost: table\r\n{auth}\r\n".encode())
        answer = read_answer(s)
    head, _, rest = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head, head
    assert rest.startswith(b"HTTP/1.1 200"), rest[:80]
    assert json.loads(rest.partition(b"\r\n\r\n")[2])["ok"] is True


def post(live, path, raw: bytes, role="dealer"):
    import urllib.error
    import urllib.request
    req = urllib.request.Request(live.url + path, data=raw, method="POST", headers={
        "Authorization": f"Bearer {TOKENS[role]}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_a_card_spelled_in_a_refused_name_is_masked_in_the_answer_and_the_log(live):
    """Anywhere the API answers, a card spelled in what the sender gave is masked (the
    table's refusals, a key given twice): an unknown parameter or an unknown command named
    as a card too, in the answer and in the log line of the refusal, so that no byte a
    client or the log gets spells a card the table has not turned up."""
    before = journal_count(live)
    status, body = post(live, "/api/commands/place_bet", b'{"Ah": 1, "Kd": 2}')
    assert status == 400 and json.loads(body)["error"]["code"] == "bad_parameter"
    assert b"Ah" not in body and b"Kd" not in body and b"[card]" in body
    status, body = post(live, "/api/commands/Qs", b"{}")
    assert status == 404 and json.loads(body)["error"]["code"] == "unknown_command"
    assert b"Qs" not in body and b"[card]" in body
    assert journal_count(live) == before
    marker = "/api/whoami"
    assert get(live, marker)[0] == 200
    log = live.rig.log_path
    until(lambda: marker in log.read_text(encoding="utf-8", errors="replace"),
          what="the access log line")
    assert "commands/Qs" not in log.read_text(encoding="utf-8", errors="replace")


def test_event_streams_beyond_their_limit_leave_room_for_the_dealers_commands(live):
    """Event streams last as long as their client wants: a client holding the display's
    token that opens stream after stream must not take every connection the console has,
    or the dealer's next command finds none. Streams beyond their limit are refused (503,
    saying why and what to do) and a dealer's command is still answered."""
    host, port = address(live)
    auth = f"Authorization: Bearer {TOKENS['display']}\r\n"
    streams, refused = [], []
    try:
        for _ in range(140):
            s = socket.create_connection((host, port))
            s.sendall(f"GET /api/events HTTP/1.1\r\nHost: table\r\n{auth}\r\n".encode())
            s.settimeout(10)
            first = s.recv(200)
            streams.append(s)
            if b" 503 " in first.split(b"\r\n")[0]:
                refused.append(first)
        assert refused, "every stream was taken"
        status, body = post(live, "/api/commands/close_bets", b"")
        assert status in (200, 409), body
        error = json.loads(read_answer_of(refused[-1], streams[-1]))["error"]
        assert error["code"] == "too_many_streams" and "stream" in error["message"]
    finally:
        for s in streams:
            s.close()


def read_answer_of(first: bytes, sock: socket.socket) -> bytes:
    """The body of an answer whose first bytes were ``first``."""
    data = first
    sock.settimeout(10)
    while not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.partition(b"\r\n\r\n")[2]


def test_a_connection_beyond_the_limit_when_all_are_busy_is_closed_cleanly(monkeypatch):
    """When every connection has a request in hand (event streams), the new one is the one
    closed: at once, without its serving task failing (an error in the log each time), and
    the streams go on."""
    import asyncio
    import gc
    import tempfile
    from pathlib import Path

    import controller.api.serve as serve
    from controller.api import ApiServer, create_app
    from test_api_support import api_config, make_runner

    monkeypatch.setattr(serve, "MAX_CONNECTIONS", 2)
    failures = []

    async def main():
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: failures.append(ctx))
        with tempfile.TemporaryDirectory() as tmp:
            runner = make_runner(Path(tmp) / "j.db")
            config = api_config()
            server = await ApiServer.start(create_app(runner, config, status_interval=0.2),
                                           config)
            auth = f"Authorization: Bearer {TOKENS['display']}\r\n"
            try:
                streams = []
                for _ in range(2):
                    r, w = await asyncio.open_connection("127.0.0.1", server.port)
                    w.write(f"GET /api/events HTTP/1.1\r\nHost: t\r\n{auth}\r\n".encode())
                    assert b" 200 " in await r.readline()
                    streams.append((r, w))
                r, w = await asyncio.open_connection("127.0.0.1", server.port)
                try:
                    assert await asyncio.wait_for(r.read(100), 10) == b""
                except ConnectionResetError:
                    pass
                w.close()
                for r, _ in streams:                   # both streams still going
                    assert await asyncio.wait_for(r.readuntil(b"event: status"), 10)
                for _, w in streams:
                    w.close()
                gc.collect()
                await asyncio.sleep(0.1)
            finally:
                await server.close()
            runner.journal.close()

    asyncio.run(main())
    assert not failures, failures


def test_an_event_stream_whose_reader_stopped_is_ended(monkeypatch):
    """A display that stops reading its stream (its network gone without a word, a client
    that means to hold a stream for ever) must not keep its place among the streams and its
    connection for ever: once what is sent to it waits unwritten for STREAM_WRITE_S, the
    stream ends. (In process, with the socket's buffers made small, so that a few status
    messages fill them.)"""
    import asyncio
    import socket as sockets
    import tempfile
    from pathlib import Path

    import controller.api.app as app_module
    from controller.api import ApiServer, create_app
    from test_api_support import api_config, make_runner

    monkeypatch.setattr(app_module, "STREAM_WRITE_S", 1.0, raising=False)

    async def main():
        with tempfile.TemporaryDirectory() as tmp:
            runner = make_runner(Path(tmp) / "j.db")
            config = api_config()
            app = create_app(runner, config, status_interval=0.05)
            server = await ApiServer.start(app, config)
            try:
                s = sockets.socket()
                s.setsockopt(sockets.SOL_SOCKET, sockets.SO_RCVBUF, 2048)
                s.setblocking(False)
                loop = asyncio.get_running_loop()
                await loop.sock_connect(s, ("127.0.0.1", server.port))
                await loop.sock_sendall(s, f"GET /api/events HTTP/1.1\r\nHost: t\r\n"
                                        f"Authorization: Bearer {TOKENS['display']}\r\n\r\n"
                                        .encode())
                assert b" 200 " in await loop.sock_recv(s, 20)
                streams = app[app_module._STREAMS]
                busy = next(iter(app[app_module.BUSY]))
                busy.transport.get_extra_info("socket").setsockopt(
                    sockets.SOL_SOCKET, sockets.SO_SNDBUF, 2048)
                busy.transport.set_write_buffer_limits(high=2048)
                # The client reads no more: the status messages fill the buffers.
                deadline = asyncio.get_running_loop().time() + 30
                while streams and asyncio.get_running_loop().time() < deadline:
                    await asyncio.sleep(0.05)
                assert not streams, "the stream of a client that stopped reading goes on"
                s.close()
            finally:
                await server.close()
            runner.journal.close()

    asyncio.run(main())
