"""A name or a reason with a card spelled inside it ("Mr Kd", "shoe Kd jammed").

Such text is published as typed in the view (the seated marks, the co-bankers) and on the
event stream, but every message that quotes it back masks the card (``[card]``, as a rule's
error naming a face-down card is masked): a refusal about "Mr Kd" read "no bet ... for Mr
[card]", in the console's answer, the log and the journal's record of the refusal, so the
player named could not be told from "Mrs Kd" or "Mr Qs". The console API refuses such text
as it refuses a name that is a card (tests/test_api_card_names.py): 400 ``bad_parameter``
naming the parameter and the way out (the card written apart), nothing journaled.
"""
import pytest

from controller.api import create_app
from test_api_card_names import refused_as_a_card, runner
from test_api_support import api_config, auth, client

CASES = [
    ("dealer", "place_bet", {"box": 2, "wager": "versus_croupier", "amount": 20,
                             "player": "Mr Kd", "seated": True}, "player", "Mr K.d."),
    ("dealer", "place_bet", {"box": 2, "wager": "pair_bonus", "amount": 10,
                             "player": "Ana 10h"}, "player", "Ana 10.h."),
    ("dealer", "remove_bet", {"box": 2, "wager": "pair_bonus", "player": "KcQh Bo"}, "player",
     "K.c.Q.h. Bo"),
    ("dealer", "decide", {"box": 2, "decision": "play", "player": "Eve K♦"}, "player",
     "Eve K.♦."),
    ("dealer", "co_bank", {"player": "Mr As", "capital": 100, "seat": 2}, "player", "Mr A.s."),
    ("supervisor", "void_round", {"reason": "shoe Kd jammed"}, "reason", "shoe K.d. jammed"),
    ("supervisor", "clear_integrity", {"supervisor": "QS Lee"}, "supervisor", "Q.S. Lee"),
]


@pytest.mark.parametrize("role, name, body, param, apart", CASES)
def test_a_card_inside_a_name_or_a_reason_is_a_bad_parameter_with_the_card_written_apart(
        tmp_path, role, name, body, param, apart):
    message = refused_as_a_card(tmp_path, role, name, body, param)
    assert f"write it otherwise, such as \"{apart}\"" in message, message
    assert body[param] not in message       # the card in it stays masked in the answer


def test_the_card_written_apart_and_lower_case_words_are_taken_and_shown_as_typed(tmp_path):
    """What the refusal suggests is taken, and so is a word that only looks like a rank in
    lower case ("as", "th"), which no message masks; both are shown as typed."""
    run, journal = runner(tmp_path / "j.db")

    async def check(c):
        r = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                         json={"box": 2, "wager": "versus_croupier", "amount": 20,
                               "player": "Mr K.d.", "seated": True})
        bet = r.status, await r.json()
        r = await c.post("/api/commands/void_round", headers=auth("supervisor"),
                         json={"reason": "as the shoe jammed at th row"})
        return bet, (r.status, await r.json())

    (status, doc), (voided, vdoc) = client(create_app(run, api_config()), check)
    assert status == 200, doc
    assert doc["view"]["round"]["seated"] == [{"box": 2, "player": "Mr K.d."}]
    assert voided == 200, vdoc
    assert vdoc["view"]["round"]["seated"] == [{"box": 2, "player": "Mr K.d."}], vdoc
    journal.close()
