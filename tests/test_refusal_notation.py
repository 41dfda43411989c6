"""Refusals quote a wrong value as the client wrote it, in JSON (true, null, "1", 10.0), and
name its type in JSON's words (a number, text, null), not Python's (True, None, '1', bool,
NoneType): the console's dealer and API clients that speak JSON read them. A bool where a
box, seat, amount or position is expected is refused as not a whole number, not looked up.
Through the console API (in-process app), the real daemon's control socket, and the one
function that quotes them."""
import json

import pytest

from controller.api import create_app
from controller.rules.cards import Card
from controller.shown import described, kind, shown
from controller.table.secrecy import scrub
from drivers import events as ev

from test_api_support import api_config, auth, client, make_runner
from test_control_socket_input import _serve as serve

PYTHON_WORDS = ("True", "False", "None", "NoneType", "got '", "'1'", "bool", "int ", "float",
                "str ")


@pytest.fixture
def runner(tmp_path):
    r = make_runner(tmp_path / "j.db")
    yield r
    r.journal.close()


def _betting(runner):
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")


def _decisions(runner):
    _betting(runner)
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.command("close_bets")
    for card in ("As", "Kd", "2c", "3d", "4h", "5s"):
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(card)))
    assert runner.table.state == "player_decisions"


def _post(runner, name, args, role="dealer"):
    async def check(c):
        r = await c.post(f"/api/commands/{name}", headers=auth(role), json=args)
        return r.status, await r.json()
    return client(create_app(runner, api_config()), check)


BET = {"box": 1, "wager": "versus_croupier", "amount": 10}


@pytest.mark.parametrize("setup,name,args,words", [
    (_betting, "place_bet", {**BET, "box": True}, "box must be a whole number"),
    (_betting, "place_bet", {**BET, "box": "1"}, 'got "1"'),
    (_betting, "place_bet", {**BET, "amount": 10.0}, "got 10.0;"),
    (_betting, "place_bet", {**BET, "amount": None}, "got null;"),
    (_betting, "place_bet", {**BET, "amount": True}, "got true;"),
    (_decisions, "decide", {"box": 1, "decision": True}, "got true"),
    (_decisions, "decide", {"box": 1, "decision": "Play"}, 'got "Play"'),
    (_decisions, "exposed_card", {"recipient": "box 1", "card": True},
     "must be a whole number from 1 to 3, got true;"),
    (_decisions, "exposed_card", {"recipient": "box 1", "card": "2"},
     'must be a whole number from 1 to 3, got text "2";'),
])
def test_a_refusal_through_the_api_quotes_the_value_in_json(runner, setup, name, args, words):
    setup(runner)
    view, state = runner.table.public_view(), runner.table.state
    status, body = _post(runner, name, args)
    message = body["error"]["message"]
    assert status in (400, 409) and words in message, message
    assert not any(w in message for w in PYTHON_WORDS), message
    assert runner.table.public_view() == view and runner.table.state == state


def test_an_unknown_command_is_quoted_in_json(runner):
    """The API's own refusal of a command name it does not know quotes the name as JSON."""
    status, body = _post(runner, "place_bets", dict(BET))
    message = body["error"]["message"]
    assert status == 404 and 'there is no command "place_bets";' in message, message
    assert "place_bet" in message.split(";", 1)[1]      # the way out: the commands there are


def test_a_bool_box_is_not_looked_up_as_a_box(runner):
    _betting(runner)
    _, body = _post(runner, "place_bet", {**BET, "box": True})
    assert "does not exist" not in body["error"]["message"]
    assert "1-7" in body["error"]["message"]       # the way out: the boxes there are


def test_a_bool_seat_is_refused_as_not_a_whole_number(tmp_path):
    r = make_runner(tmp_path / "j.db", game="super-pan-9")
    try:
        _betting(r)
        _, body = _post(r, "set_banker", {"seat": True, "capital": 1000})
        message = body["error"]["message"]
        assert "must be a whole number" in message and "got true" in message, message
    finally:
        r.journal.close()


def test_a_card_in_a_wrong_value_is_still_masked(runner):
    _decisions(runner)
    status, body = _post(runner, "decide", {"box": 1, "decision": "As x"})
    message = body["error"]["message"]
    assert status == 409 and '"[card] x"' in message and "As x" not in message, message


def test_the_control_socket_quotes_values_in_json(tmp_path):
    answers = []

    async def talk(ask, svc):
        async def say(req):
            return await ask(json.dumps(req).encode())
        await say({"command": "open_table", "role": "supervisor"})
        await say({"command": "deck_ready"})
        answers.append(await say({"command": "place_bet", "args": {**BET, "player": 5}}))
        answers.append(await say({"command": "place_bet", "args": {**BET, "box": True}}))
        answers.append(await say({"command": "place_bet", "args": {**BET, "amount": None}}))
        answers.append(await say({"command": True}))
        answers.append(await say({"command": "close_bets", "role": None}))

    serve(tmp_path, talk)
    errors = [a["error"] for a in answers]
    assert all(a["ok"] is False for a in answers)
    assert "got a number 5" in errors[0]
    assert "box must be a whole number" in errors[1] and "got true" in errors[1]
    assert "got null;" in errors[2]
    assert "got true" in errors[3] and "close_bets" in errors[3]
    assert "got null" in errors[4]
    for e in errors:
        assert not any(w in e for w in PYTHON_WORDS), e


@pytest.mark.parametrize("value,text", [
    (True, "true"), (False, "false"), (None, "null"), ("1", '"1"'), (10.0, "10.0"),
    (5, "5"), ([1, "a"], '[1, "a"]'), ({"a": None}, '{"a": null}'), ("Zoë", '"Zoë"'),
    ('say "hi"', '"say \\"hi\\""'),
])
def test_shown_is_json(value, text):
    assert shown(value) == text


def test_shown_cuts_a_long_value_and_names_a_number_too_long_to_spell():
    assert shown("x" * 100) == '"' + "x" * 39 + "..."
    assert len(shown(list(range(100)))) == 43
    assert shown(10 ** 5000) == "(a number too long to print)"
    loop = []
    loop.append(loop)
    assert shown(loop) == "(a value that holds itself)"
    assert shown([10 ** 5000]) == "(a value holding a number too long to print)"


def test_shown_leaves_a_card_for_the_mask():
    assert scrub(f"got {shown('Kd')}") == 'got "[card]"'
    assert scrub(f"got {shown(['As', 'x'])}") == 'got ["[card]", "x"]'


@pytest.mark.parametrize("value,name,both", [
    (1, "a number", "a number 1"), (1.5, "a number", "a number 1.5"), ("1", "text", 'text "1"'),
    (True, "true/false", "true"), (None, "null", "null"), ([1], "a list", "a list [1]"),
    ({}, "an object", "an object {}"),
])
def test_kind_and_described_use_jsons_words(value, name, both):
    assert kind(value) == name and described(value) == both
