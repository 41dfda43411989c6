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
