"""Bad input: the frame decoder, the configuration loader, the console API and `rules settle`
fed malformed and hostile input. Each gives a clear error (or a clean result), never a crash,
and changes nothing. Example counts are small by default and large with --long."""
import asyncio
import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from controller.config import parse_text
from controller.errors import TablectlError
from controller.rules import get_game
from drivers.protocol import messages as m
from drivers.protocol.codec import Received, Rejected, get_codec

ROOT = Path(__file__).resolve().parents[2]
LONG = "--long" in sys.argv
EXAMPLES = 2000 if LONG else 150
FEW = settings(max_examples=EXAMPLES, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def good_frames():
    enc = get_codec("tablectl", "host")
    return [enc.encode(m.CardDrawn(card=5), seq=1), enc.encode(m.DiceResult(dice=(1, 2, 3, 4)),
                                                               seq=2),
            enc.encode(m.Jam(where="gate"), seq=3), enc.encode(m.Heartbeat(), seq=0)]


# --- the frame decoder ----------------------------------------------------------------------

@st.composite
def mangled_stream(draw):
    """Good frames with bytes flipped, cut, inserted and garbage between them, in chunks."""
    frames = [bytearray(f) for f in good_frames()]
    stream = bytearray()
    for f in draw(st.lists(st.sampled_from(frames), min_size=1, max_size=8)):
        f = bytearray(f)
        op = draw(st.sampled_from(["keep", "flip", "cut", "insert", "garbage"]))
        if op == "flip":
            i = draw(st.integers(0, len(f) - 1))
            f[i] ^= draw(st.integers(1, 255))
        elif op == "cut":
            f = f[:draw(st.integers(0, len(f) - 1))]
        elif op == "insert":
            i = draw(st.integers(0, len(f)))
            f[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif op == "garbage":
            stream += draw(st.binary(max_size=64))
        stream += f
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    chunks, last = [], 0
    for c in cuts + [len(stream)]:
        chunks.append(bytes(stream[last:c]))
        last = c
    return chunks


@pytest.mark.parametrize("codec", ["tablectl", "dice-binary"])
@FEW
@given(chunks=mangled_stream())
def test_decoder_survives_mangled_frames_and_still_reads_the_next_good_one(codec, chunks):
    dec = get_codec(codec, "device")
    for chunk in chunks:
        for item in dec.feed(chunk):
            assert isinstance(item, (Received, Rejected))
            if isinstance(item, Rejected):
                assert item.reason and item.detail      # a reason that can be logged
    if codec == "tablectl":
        # Whatever came before, a clean frame after a pause of silence is read (the decoder
        # resynchronises on the start byte and drops the broken bytes before it).
        dec.reset()
        good = get_codec("tablectl", "host").encode(m.CardDrawn(card=9), seq=7)
        got = [i for i in dec.feed(good) if isinstance(i, Received)]
        assert got and got[-1].message == m.CardDrawn(card=9)


@FEW
@given(data=st.binary(max_size=512))
def test_decoder_never_raises_on_arbitrary_bytes(data):
    for codec in ("tablectl", "dice-binary"):
        dec = get_codec(codec, "device")
        for item in dec.feed(data):
            assert isinstance(item, (Received, Rejected))


# --- the configuration loader ---------------------------------------------------------------

EXAMPLE = (ROOT / "docs" / "table.toml.example").read_text()


@st.composite
def mangled_config(draw):
    lines = EXAMPLE.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["drop", "dup", "value", "junk", "key"]))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "value" and "=" in lines[i]:
            key = lines[i].split("=", 1)[0]
            lines[i] = key + "= " + draw(st.sampled_from(
                ['-1', '0', '"x"', '1.5', 'true', '[]', '{}', '"../../etc/passwd"',
                 '"' + "A" * 300 + '"', '99999999999999999999', '"\\u0000"', 'nan']))
        elif op == "key":
            lines.insert(i, draw(st.sampled_from(["bogus = 1", "[nosuch]", "[devices.x]",
                                                  "table.id = 3", "[[table]]"])))
        else:
            lines.insert(i, draw(st.text(max_size=40)))
        if not lines:
            break
    return "\n".join(lines)


@FEW
@given(text=mangled_config())
def test_config_loader_gives_a_config_or_a_clear_error(text):
    try:
        cfg = parse_text(text, "table.toml")
    except TablectlError as exc:
        msg = str(exc)
        assert msg and "Traceback" not in msg
        return
    assert cfg.table_id and cfg.game


@pytest.mark.parametrize("name,data", [
    ("binary.toml", b"\x00\xff\xfe" * 50),
    ("huge-line.toml", b"[table]\nid = \"" + b"x" * 100_000 + b"\"\n"),
    ("empty.toml", b""),
    ("nul-in-key.toml", b"[table]\ni\x00d = 1\n"),
    ("deep.toml", b"a = " + b"[" * 5000),
    ("deep-tables.toml", b"a = " + b"{b = " * 3000),
])
def test_config_check_on_hostile_files_exits_2_without_traceback(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(p)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, (name, proc.stdout, proc.stderr[-600:])
    assert "Traceback" not in proc.stderr and proc.stderr.strip(), name


# --- rules settle -----------------------------------------------------------------------------

def settle_examples():
    text = (ROOT / "docs" / "settle.md").read_text()
    out = []
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        try:
            doc = json.loads(block)
        except ValueError:
            continue
        if isinstance(doc, dict) and "game" in doc:
            out.append(doc)
    return out


SETTLE = settle_examples()
HOSTILE = st.recursive(st.none() | st.booleans() | st.integers(-10**30, 10**30)
                       | st.floats(allow_nan=True) | st.text(max_size=12),
                       lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@st.composite
def mangled_round(draw, pool=None):
    doc = copy.deepcopy(draw(st.sampled_from(pool or SETTLE)))

    def paths(node, prefix=()):
        yield prefix
        if isinstance(node, dict):
            for k, v in node.items():
                yield from paths(v, prefix + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from paths(v, prefix + (i,))
    for _ in range(draw(st.integers(1, 3))):
        ps = [p for p in paths(doc) if p and p != ("game",)]
        if not ps:
            break
        path = draw(st.sampled_from(ps))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(HOSTILE)
    return doc


def test_settle_examples_found():
    assert len({d["game"] for d in SETTLE}) == 4


HOLDEM = [d for d in SETTLE if d["game"] == "texas-holdem"]
OTHERS = [d for d in SETTLE if d["game"] != "texas-holdem"]


def settle_checked(doc):
    before = copy.deepcopy(doc)
    try:
        result = get_game(doc["game"]).settle(doc)
    except TablectlError as exc:
        assert str(exc)
    else:
        out = result.to_json()
        assert isinstance(out["house_net"], int)
        for w in out["wagers"]:
            assert isinstance(w["net"], int)       # money stays whole chip units
    assert json.dumps(doc, default=str) == json.dumps(before, default=str)   # left alone


@FEW
@given(doc=mangled_round(OTHERS))
def test_settle_gives_a_settlement_or_a_rule_error_and_leaves_the_round_alone(doc):
    settle_checked(doc)


@FEW
@given(doc=mangled_round(HOLDEM))
def test_holdem_settle_gives_a_settlement_or_a_rule_error(doc):
    settle_checked(doc)


def test_holdem_settle_command_with_a_board_that_is_not_a_list_exits_2():
    doc = copy.deepcopy(HOLDEM[0])
    doc["board"] = True
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "rules", "settle", "--json"],
                          input=json.dumps(doc), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-400:]


# json.loads recurses once per nesting level: deep nesting must still be one clear line.
@pytest.mark.parametrize("stdin", ["", "{", "[]", "null", '{"game": "baccarat"}',
                                   '{"game": "q-poker"}', '{"game": "q-poker", "boxes": "x"}',
                                   "\x00\x01", "1e999999",
                                   '{"game": ' * 3000])
def test_settle_command_on_hostile_input_exits_2_with_one_line(stdin):
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "rules", "settle", "--json"],
                          input=stdin, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, (stdin[:40], proc.stdout, proc.stderr[-500:])
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("tablectl: error:") and proc.stdout == ""


# --- the console API --------------------------------------------------------------------------

api = pytest.importorskip("controller.api")


@pytest.fixture
def runner(tmp_path):
    sys.path.insert(0, str(ROOT / "tests"))
    from test_api_support import make_runner
    r = make_runner(tmp_path / "j.db")
    r.command("open_table", role="supervisor")
    r.command("deck_ready")
    yield r
    r.journal.close()


def hostile_requests(rnd, n):
    """(role, command name, body, content type) as a confused or hostile client sends them."""
    names = ["place_bet", "close_bets", "void_round", "decide", "nosuch", "..%2F..%2Fetc",
             "%00", "A" * 300, "confirm_result"]
    bodies = [b"", b"{", b"[]", b"null", b"{" * 2000, b"\x00\xff" * 50,
              b'{"box": 1, "wager": "pair_bonus", "amount": 1.5}',
              b'{"box": -1, "wager": "versus_croupier", "amount": 10}',
              b'{"box": 1, "wager": "versus_croupier", "amount": "10"}',
              b'{"box": 1, "wager": "versus_croupier", "amount": 1e400}',
              b'{"reason": "' + b"x" * 70000 + b'"}', b'{"box": {"$gt": 0}}',
              b'{"box": 1, "wager": "versus_croupier", "amount": 10, "extra": 1}']
    for _ in range(n):
        body = rnd.choice(bodies) if rnd.random() < 0.7 else bytes(
            rnd.randrange(256) for _ in range(rnd.randrange(64)))
        yield (rnd.choice(["dealer", "supervisor", "display", "none", "bad"]),
               rnd.choice(names), body,
               rnd.choice(["application/json", "text/plain", "multipart/form-data", ""]))


def test_api_body_not_utf8_is_400(runner):
    from test_api_support import TOKENS, api_config, client

    async def check(c):
        r = await c.post("/api/commands/place_bet", data=b"\xff\xfe{", headers={
            "Authorization": f"Bearer {TOKENS['dealer']}", "Content-Type": "application/json"})
        return r.status
    assert client(api.create_app(runner, api_config()), check) == 400


def test_api_hostile_requests_are_refused_cleanly_and_change_nothing(runner):
    import random
    from test_api_support import TOKENS, api_config, client

    rnd = random.Random(5)
    examples = list(hostile_requests(rnd, 600 if LONG else 80))
    view_before = json.dumps(runner.table.public_view(), sort_keys=True)
    seq_before = runner.journal.head()[0]

    async def check(c):
        statuses = []
        for role, name, body, ctype in examples:
            headers = {"Content-Type": ctype} if ctype else {}
            if role in TOKENS:
                headers["Authorization"] = f"Bearer {TOKENS[role]}"
            elif role == "bad":
                headers["Authorization"] = "Bearer " + "x" * rnd.randint(0, 300)
            r = await c.post(f"/api/commands/{name}", data=body, headers=headers)
            text = await r.text()
            statuses.append(r.status)
            assert r.status < 500, (role, name, body[:60], r.status, text[:300])
            if r.status >= 400:
                doc = json.loads(text) if text.startswith("{") else None
                if doc is not None:
                    assert doc["ok"] is False and doc["error"]["message"]
        return statuses

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        statuses = client(api.create_app(runner, api_config()), check)
    assert statuses
    # A refused or malformed request changes nothing: the table is as it was, and the journal
    # holds at most the refused commands with their refusals (and the commands that were
    # accepted). A refused command is journaled too (as its input, then ``refused``), so
    # what was accepted is told by the answer, not by the journal.
    accepted = sum(1 for s in statuses if s < 400)
    new = list(runner.journal.records(since=seq_before))
    kinds = {r.kind for r in new}
    assert kinds <= {"command", "refused", "table", "state", "decision", "round_close",
                     "round_open"}, kinds
    commands = sum(1 for r in new if r.kind == "command")
    refused = sum(1 for r in new if r.kind == "refused")
    assert commands - refused == accepted, (commands, refused, accepted)
    if not accepted:
        assert json.dumps(runner.table.public_view(), sort_keys=True) == view_before
    assert runner.journal.verify().ok
