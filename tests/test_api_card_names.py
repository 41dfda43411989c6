"""A name a person types into a command must not be taken for a card.

A player's name (Q Poker's seated player among them), a void's reason and the supervisor who
checked the deck are published as typed, and the table publishes no text that spells a card
(controller.table.secrecy). The table refuses such a command with nothing changed; the console
API refuses it before it reaches the table, as it refuses a parameter of the wrong kind: 400
``bad_parameter`` naming the parameter and the way out, nothing journaled, no refusal counted
against the role.
"""
import pytest

from controller.api import create_app
from controller.journal import Journal
from controller.rules import get_game
from controller.table import Table
from controller.table.runner import TableRunner
from table_helpers import DEVICES
from test_api_support import api_config, auth, client

SEATED = {"shared_box_decision": "seated_player"}


def runner(path):
    journal = Journal.open(path, "T1")
    t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices=DEVICES,
              interpretations=SEATED)
    run = TableRunner(t, journal)
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    return run, journal


CASES = [
    ("dealer", "place_bet", {"box": 2, "wager": "versus_croupier", "amount": 20,
                             "player": "Kd", "seated": True}, "player", "Kd"),
    ("dealer", "place_bet", {"box": 2, "wager": "pair_bonus", "amount": 10, "player": "kd"},
     "player", "kd"),
    ("dealer", "remove_bet", {"box": 2, "wager": "pair_bonus", "player": "10h"}, "player",
     "10h"),
    ("dealer", "decide", {"box": 2, "decision": "play", "player": "Th"}, "player", "Th"),
    # Super Pan 9's co-banking player: told before the table (of any game) is asked
    ("dealer", "co_bank", {"player": "As", "capital": 100, "seat": 2}, "player", "As"),
    ("supervisor", "void_round", {"reason": " th "}, "reason", " th "),
    ("supervisor", "clear_integrity", {"supervisor": "QS"}, "supervisor", "QS"),
]


@pytest.mark.parametrize("role, name, body, param, text", CASES)
def test_a_name_that_spells_a_card_is_a_bad_parameter_and_nothing_is_journaled(
        tmp_path, role, name, body, param, text):
    message = refused_as_a_card(tmp_path, role, name, body, param)
    assert "write it otherwise" in message, message


def refused_as_a_card(tmp_path, role, name, body, param):
    """The console API's answer to ``name`` with ``body`` on a fresh table: a 400
    ``bad_parameter`` naming ``param`` as reading as a card, with nothing journaled and the
    table as it was. Returns the answer's message."""
    run, journal = runner(tmp_path / "j.db")
    before = len(journal)
    view = run.table.public_view()

    async def check(c):
        r = await c.post(f"/api/commands/{name}", headers=auth(role), json=body)
        return r.status, await r.json()

    status, doc = client(create_app(run, api_config()), check)
    assert status == 400 and doc["error"]["code"] == "bad_parameter", doc
    message = doc["error"]["message"]
    assert message.startswith(f"{name}: {param} ") and "reads as a card" in message, message
    assert len(journal) == before and run.table.public_view() == view
    journal.close()
    return message


def test_the_same_name_written_otherwise_is_taken_and_shown(tmp_path):
    run, journal = runner(tmp_path / "j.db")

    async def check(c):
        r = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                         json={"box": 2, "wager": "versus_croupier", "amount": 20,
                               "player": "K.d.", "seated": True})
        return r.status, await r.json()

    status, doc = client(create_app(run, api_config()), check)
    assert status == 200, doc
    assert doc["view"]["round"]["seated"] == [{"box": 2, "player": "K.d."}]
    journal.close()
