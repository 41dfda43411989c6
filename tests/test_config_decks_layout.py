"""Q Poker under ``decks = "several"`` (89/2004 art. 1(1), Q3): the layout is one the table's
configured decks (``[integrity] decks``, 1 to 8) can deal to a full table, three cards to every
box and three to the croupier (art. 7), as one deck holds it to 16 boxes under ``one``. Art. 2(1)
gives no upper limit of its own ("oito ou mais lugares"), so the decks are the only one."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from config_helpers import line_of, only
from controller.config import parse_text
from controller.rules.errors import RuleError
from controller.rules.q_poker import GAME

ROOT = Path(__file__).resolve().parents[1]
SEVERAL = {"decks": "several"}


def text(boxes, decks=None, reading="several", journal=None):
    body = textwrap.dedent(f"""\
        [table]
        id = "t1"
        game = "q-poker"
        mode = "shoe"
        boxes = {boxes}

        [devices.shoe]
        class = "shoe"
        port = "/dev/tablectl/shoe"

        [interpretations]
        decks = "{reading}"
        """)
    if decks is not None:
        body += f"\n[integrity]\ndecks = {decks}\n"
    if journal is not None:
        body += f'\n[journal]\npath = "{journal}"\n'
    return body


# --- the rule: what the decks deal ---------------------------------------------------------

@pytest.mark.parametrize("decks, most", [(1, 16), (2, 33), (3, 51), (8, 137)])
def test_several_decks_deal_a_full_table_of_at_most_their_cards_in_threes(decks, most):
    # (boxes + 1) hands of three from 52 × decks cards
    GAME.check_layout(most, SEVERAL, decks=decks)
    with pytest.raises(RuleError, match=rf"{decks} decks? of 52.*at most {most} boxes"):
        GAME.check_layout(most + 1, SEVERAL, decks=decks)


def test_several_decks_with_no_count_are_held_to_what_eight_decks_deal():
    # A table built from its readings alone (no count of decks): no shoe holds more than 8.
    GAME.check_layout(137, SEVERAL)
    with pytest.raises(RuleError, match=r"at most 137 boxes"):
        GAME.check_layout(138, SEVERAL)


def test_one_deck_reading_is_still_held_to_sixteen_whatever_the_count():
    with pytest.raises(RuleError, match=r"at most 16 boxes"):
        GAME.check_layout(17, {"decks": "one"}, decks=1)


# --- tablectl config check ----------------------------------------------------------------

def test_a_layout_two_decks_cannot_deal_is_refused_at_its_line_naming_both_ways_out():
    t = text(34, decks=2)
    p = only(t)
    assert p.key == "table.boxes" and p.line == line_of(t, "boxes = 34")
    assert "at most 33 boxes" in p.reason and "2 decks" in p.reason, p.reason
    assert "89/2004 art. 1(1)" in p.reason and "89/2004 art. 7" in p.reason
    assert "at most 33" in p.fix and "decks = 3" in p.fix and "8" in p.fix, p.fix
    assert parse_text(t.replace("boxes = 34", "boxes = 33")).boxes == 33
    assert parse_text(t.replace("decks = 2", "decks = 3")).boxes == 34


def test_several_decks_read_with_the_default_one_deck_is_held_to_sixteen():
    # [integrity] decks left at 1: the shoe holds one deck whatever the reading allows
    p = only(text(20))
    assert p.key == "table.boxes" and "at most 16 boxes" in p.reason, p.reason
    assert "decks = 2" in p.fix and "[integrity]" in p.fix, p.fix


def test_a_layout_eight_decks_cannot_deal_has_only_fewer_boxes_for_a_way_out():
    p = only(text(138, decks=8))
    assert p.key == "table.boxes" and "at most 137 boxes" in p.reason, p.reason
    assert "at most 137" in p.fix and "decks = 9" not in p.fix, p.fix
    assert parse_text(text(137, decks=8)).boxes == 137


def test_a_wrong_count_of_decks_is_named_alone_not_judged_against_the_layout():
    # decks = 9 is refused at its own key; the layout is not judged against a count not kept
    p = only(text(20, decks=9))
    assert p.key == "integrity.decks", p.format()


def test_config_check_refuses_it_from_the_command_line(tmp_path):
    f = tmp_path / "table.toml"
    f.write_text(text(34, decks=2))
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(f)],
                         capture_output=True, text=True, cwd=ROOT)
    said = out.stderr + out.stdout
    assert out.returncode != 0
    assert "table.boxes" in said and "at most 33 boxes" in said, said


def test_the_daemon_refuses_to_start_on_it_and_writes_nothing(tmp_path):
    journal = tmp_path / "journal.db"
    f = tmp_path / "table.toml"
    f.write_text(text(34, decks=2, journal=journal))
    out = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config", str(f)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 2, out.stderr
    assert "at most 33 boxes" in out.stderr and "decks = 3" in out.stderr, out.stderr
    assert not journal.exists()
