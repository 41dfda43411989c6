"""`tablectl rules plan` knows the table's decks: under Q Poker's ``decks = "several"`` (89/2004
art. 1(1), Q3) a plan for a layout its ``--decks`` (the table's ``[integrity] decks``, 1 to 8)
cannot deal to a full table, three cards to every box and three to the croupier (art. 7), is
refused as `tablectl config check` refuses the table: the same limit in the same words, and
the way out in the command's own options."""
import subprocess
import sys
from pathlib import Path

import pytest

from test_config_decks_layout import text as layout_text

ROOT = Path(__file__).resolve().parents[1]


def tablectl(*args):
    return subprocess.run([sys.executable, "-m", "controller.cli", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


def plan(layout, *extra, boxes="1,2,3"):
    args = ["rules", "plan", "q-poker", "--boxes", boxes, *extra]
    if layout is not None:
        args += ["--layout", str(layout)]
    return tablectl(*args)


def config_check(tmp_path, boxes, decks):
    # The same table as the config tests' (tests/test_config_decks_layout.py), checked by the CLI.
    f = tmp_path / "table.toml"
    f.write_text(layout_text(boxes, decks))
    return tablectl("config", "check", str(f))


def test_a_layout_two_decks_cannot_deal_is_refused_in_config_checks_words(tmp_path):
    out = plan(34, "--set", "decks=several", "--decks", "2")
    assert out.returncode == 2, out.stdout
    assert out.stdout == "" and "Traceback" not in out.stderr
    # the reason is the one config check gives for the same table, word for word
    checked = config_check(tmp_path, 34, 2)
    reason = "2 decks of 52 (89/2004 art. 1(1), interpretation decks=several) deal three " \
             "cards (89/2004 art. 7) to at most 33 boxes and the croupier; this layout has 34"
    assert reason in checked.stdout + checked.stderr
    assert reason in out.stderr, out.stderr
    # and both ways out, in the plan's own options
    assert "--layout" in out.stderr and "at most 33" in out.stderr, out.stderr
    assert "--decks 3" in out.stderr, out.stderr


def test_the_layout_the_decks_deal_is_planned():
    out = plan(33, "--set", "decks=several", "--decks", "2", boxes="1,33")
    assert out.returncode == 0, out.stderr
    assert "9 cards" in out.stdout
    assert plan(34, "--set", "decks=several", "--decks", "3").returncode == 0


def test_several_decks_without_a_count_are_one_deck_as_in_the_configuration():
    # [integrity] decks defaults to 1, so does --decks: a shoe of one deck deals 16 boxes
    out = plan(20, "--set", "decks=several")
    assert out.returncode == 2
    assert "1 deck of 52" in out.stderr and "at most 16 boxes" in out.stderr, out.stderr
    assert "--decks 2" in out.stderr, out.stderr


def test_eight_decks_leave_only_fewer_boxes():
    out = plan(138, "--set", "decks=several", "--decks", "8")
    assert out.returncode == 2
    assert "at most 137 boxes" in out.stderr and "--decks 9" not in out.stderr, out.stderr


def test_one_deck_reading_holds_the_layout_to_sixteen():
    out = plan(17)
    assert out.returncode == 2
    assert "at most 16 boxes" in out.stderr and "this layout has 17" in out.stderr
    assert "decks=several" in out.stderr and "--decks" in out.stderr, out.stderr
    assert plan(16).returncode == 0


@pytest.mark.parametrize("decks", ["0", "9", "two", "-1", "9" * 5000])
def test_a_count_of_decks_a_shoe_cannot_hold_is_named(decks):
    out = plan(20, "--set", "decks=several", "--decks", decks)
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    assert "--decks" in out.stderr and "1 to 8" in out.stderr, out.stderr


def test_more_decks_under_the_one_deck_reading_are_refused_with_the_way_out():
    out = plan(16, "--decks", "2")
    assert out.returncode == 2 and out.stdout == ""
    assert "interpretation decks is 'one'" in out.stderr, out.stderr
    assert "--decks 1" in out.stderr and "--set decks=several" in out.stderr, out.stderr


def test_a_game_of_one_deck_refuses_more():
    out = tablectl("rules", "plan", "fortune-3-card-poker", "--boxes", "1", "--decks", "2")
    assert out.returncode == 2 and out.stdout == ""
    assert "fortune-3-card-poker is played with one 52-card deck" in out.stderr, out.stderr
    assert tablectl("rules", "plan", "fortune-3-card-poker", "--boxes", "1",
                    "--decks", "1").returncode == 0
