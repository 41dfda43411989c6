"""``deck_ready`` refused on a table dealt by the shuffler, its round waiting in ``shuffling``:
the refusal's way out is one the table takes there (switch_mode is refused in ``shuffling``)."""
import pytest

from controller.errors import TablectlError
from controller.rules import get_game
from controller.table import Table
from table_helpers import DEVICES, LAYOUT, ready


def shuffling(devices):
    t = Table("T1", get_game("q-poker"), "shuffler", layout_boxes=LAYOUT["q-poker"],
              devices=devices)
    t.command("open_table", role="supervisor")
    assert t.state == "shuffling"
    return t


def test_the_refusal_says_how_to_deal_by_the_shoe_and_that_way_works():
    t = shuffling(DEVICES)
    with pytest.raises(TablectlError) as refused:
        t.command("deck_ready", role="dealer")
    said = str(refused.value)
    assert "close_table" in said and "switch_mode" in said and "open_table" in said, said
    # The way it gives, followed step by step: each is taken, and the shoe deals.
    t.command("close_table", role="supervisor")
    t.command("switch_mode", role="supervisor", mode="shoe")
    t.command("open_table", role="supervisor")
    ready(t)
    assert (t.mode.value, t.state) == ("shoe", "bets_open")


def test_a_table_with_no_shoe_is_told_to_wait_for_the_shuffler():
    t = shuffling({k: v for k, v in DEVICES.items() if v != "shoe"})
    with pytest.raises(TablectlError) as refused:
        t.command("deck_ready", role="dealer")
    said = str(refused.value)
    assert "wait for it" in said and "no shoe configured" in said and "switch" not in said, said
