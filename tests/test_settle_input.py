"""`tablectl rules settle`: input a person can get wrong in the Q Poker and Fortune round
documents (docs/settle.md) is refused with one line naming the key and the way out, exit 2."""
from __future__ import annotations

import io
import json
import re

import pytest

from controller.cli import main


def settle(doc, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(doc)))
    code = main(["rules", "settle", "--json"])
    out, err = capsys.readouterr()
    return code, out, err


def q_round(*players, **box):
    return {"game": "q-poker", "interpretations": {"shared_box_decision": "seated_player"},
            "croupier": {"cards": ["Kd", "8c", "4h"]},
            "boxes": [dict({"box": 1, "cards": ["7s", "7h", "Qc"], "players": list(players)},
                           **box)]}


ANA = {"player": "Ana", "seated": True, "versus_croupier": 20, "decision": "play"}
BO = {"player": "Bo", "versus_croupier": 10, "decision": "play"}


@pytest.mark.parametrize("doc,msg", [
    # "seated" is a JSON boolean: the text "false" is not false (bool("false") is True)
    (q_round(ANA, dict(BO, seated="false")), r'box 1 \(Bo\): "seated" must be true or false'),
    (q_round(ANA, dict(BO, seated=0)), r'box 1 \(Bo\): "seated" must be true or false'),
    # a missing box number is named, not echoed as None
    ({"game": "q-poker", "croupier": {"cards": ["Kd", "8c", "4h"]},
      "boxes": [{"cards": ["7s", "7h", "Qc"], "pair_bonus": 10}]},
     r'a box has no "box"; give "box": N, its number 1-7'),
    ({"game": "fortune-3-card-poker", "croupier": {"cards": ["Kd", "8c", "4h"]},
      "boxes": [{"cards": ["7s", "7h", "Qc"], "pair_plus": 10}]},
     r'a box has no "box"; give "box": N, its number 1-7'),
    # a layout config check refuses (one deck deals at most 16 boxes and the croupier) is no
    # table whose round can be settled, nor can a box out of any real table's range be
    (dict(q_round(ANA), layout_boxes=17, boxes=[{"box": 17, "cards": ["7s", "7h", "Qc"],
                                                 "pair_bonus": 10}]),
     r"one deck of 52 .* at most 16 boxes .* this layout has 17"),
    (dict(q_round(ANA), layout_boxes=2**53 - 1, boxes=[{"box": 2**53 - 1, "pair_bonus": 10,
                                                        "cards": ["7s", "7h", "Qc"]}]),
     r"at most 16 boxes .* this layout has 9007199254740991"),
    # a wager the game does not have, on the second of two boxes: the box is named, so that
    # the one to correct can be found
    ({"game": "fortune-3-card-poker", "croupier": {"cards": ["Qs", "7d", "2c"]}, "boxes": [
        {"box": 1, "cards": ["9h", "9d", "4s"], "ante": 10, "play": 10, "decision": "play"},
        {"box": 4, "cards": ["8h", "8d", "4c"], "ante": 10, "decision": "fold",
         "ante_bonus": 5}]},
     r"^tablectl: error: box 4 has unknown key\(s\) ante_bonus; the keys are: ante, box,"),
    (dict(q_round(ANA), boxes=[{"box": 2, "cards": ["7s", "7h", "Qc"], "pair_plus": 10}]),
     r"^tablectl: error: box 2 has unknown key\(s\) pair_plus; the keys are: box, cards, "
     r"decision, pair_bonus"),
    # the croupier's cards given bare, with nobody playing against him: the shape is named,
    # not a player who does not play nor a hand that is there
    ({"game": "q-poker", "croupier": ["Kd", "8c", "4h"],
      "boxes": [{"box": 1, "cards": ["7s", "7h", "Qc"], "pair_bonus": 10}]},
     r'^tablectl: error: "croupier" must be \{"cards": \[three cards\]\}, got \["Kd", "8c"'),
    ({"game": "fortune-3-card-poker", "croupier": ["Kd", "8c", "4h"],
      "boxes": [{"box": 1, "cards": ["7s", "7h", "Qc"], "pair_plus": 10}]},
     r'^tablectl: error: "croupier" must be \{"cards": \[three cards\]\}, got \["Kd", "8c"'),
    (dict(q_round(ANA), layout_boxes=138, interpretations={"decks": "several"}),
     r"8 decks of 52 .*decks=several, the most a shoe holds.* at most 137 boxes"),
])
def test_bad_input_is_one_clear_line(doc, msg, monkeypatch, capsys):
    code, out, err = settle(doc, monkeypatch, capsys)
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert re.search(msg, err), err


def test_seated_true_and_false_still_settle(monkeypatch, capsys):
    code, out, err = settle(q_round(ANA, dict(BO, seated=False)), monkeypatch, capsys)
    assert code == 0, err
    code, out, err = settle(q_round(ANA, dict(BO, seated=True)), monkeypatch, capsys)
    assert code == 2 and "found 2" in err


def settle_raw(text, monkeypatch, capsys, *flags):
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code = main(["rules", "settle", *flags])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_refusal(code, out, err):
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert "\x1b" not in err and "\x9b" not in err, err


@pytest.mark.parametrize("flags", [(), ("--json",)])
def test_a_key_given_twice_is_refused_not_taken_last(flags, monkeypatch, capsys):
    """JSON keeps the last of a key given twice: "versus_croupier" 10 then 1000 settled a bet
    of 1000."""
    text = ('{"game": "q-poker", "croupier": {"cards": ["Kd", "8c", "4h"]}, "boxes": '
            '[{"box": 1, "cards": ["7s", "7h", "Qc"], "player": "Ana", '
            '"versus_croupier": 10, "decision": "play", "versus_croupier": 1000}]}')
    code, out, err = settle_raw(text, monkeypatch, capsys, *flags)
    one_line_refusal(code, out, err)
    assert '"versus_croupier" twice' in err and "give each key once" in err, err
    top = '{"game": "q-poker", "game": "fortune-3-card-poker", "boxes": []}'
    code, out, err = settle_raw(top, monkeypatch, capsys, *flags)
    one_line_refusal(code, out, err)
    assert '"game" twice' in err, err


@pytest.mark.parametrize("name", ["Ana\x1b[2J\x1b[H", "Bo\x9b31m", "Chen\u202eoB", "Dee\x00",
                                  "Eve\u200b", "Fay\nbox 9"])
@pytest.mark.parametrize("flags", [(), ("--json",)])
def test_a_name_with_a_control_character_is_refused(name, flags, monkeypatch, capsys):
    """An escape sequence in a player's name went to the operator's terminal as it was: it
    could clear the screen or rewrite the lines above."""
    doc = q_round(dict(ANA, player=name))
    code, out, err = settle(doc, monkeypatch, capsys) if flags else \
        settle_raw(json.dumps(doc), monkeypatch, capsys)
    one_line_refusal(code, out, err)
    assert "U+" in err and "printable" in err, err
    assert "boxes[0].players[0].player" in err, err


def test_printable_names_in_any_script_still_settle(monkeypatch, capsys):
    code, out, err = settle_raw(json.dumps(q_round(dict(ANA, player="陈 Chen\u00e9"))),
                                monkeypatch, capsys)
    assert code == 0 and "陈 Chen\u00e9" in out, err


@pytest.mark.parametrize("flags", [(), ("--json",)])
@pytest.mark.parametrize("amount", [2**53, 10**30, "9" * 5000])
def test_an_amount_beyond_2_53_minus_1_is_refused_as_at_the_table(amount, flags, monkeypatch,
                                                                  capsys):
    text = ('{"game": "q-poker", "croupier": {"cards": ["Kd", "8c", "4h"]}, "boxes": '
            '[{"box": 1, "cards": ["7s", "7h", "Qc"], "player": "Ana", '
            f'"pair_bonus": {amount}, "versus_croupier": 10, "decision": "play"}}]}}')
    code, out, err = settle_raw(text, monkeypatch, capsys, *flags)
    one_line_refusal(code, out, err)
    assert "9,007,199,254,740,991" in err and "2^53 - 1" in err, err


def test_the_largest_round_a_table_takes_is_taken_and_no_more(monkeypatch, capsys):
    """A whole number up to 2^53 - 1 is read; a round's stakes together are then held, as at
    the table, to 2^53 - 1 divided by 82, so that no figure of the settlement passes 2^53 - 1
    (tests/test_settlement_bounds.py)."""
    from controller.rules.base import MAX_ROUND_STAKES
    doc = q_round(dict(ANA, versus_croupier=0, pair_bonus=MAX_ROUND_STAKES))
    doc["boxes"][0]["players"][0].pop("decision")
    code, out, err = settle(doc, monkeypatch, capsys)
    assert code == 0, err
    doc["boxes"][0]["players"][0]["pair_bonus"] = 2**53 - 1
    one_line_refusal(*settle(doc, monkeypatch, capsys))
