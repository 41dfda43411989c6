"""A firmware may write the cards of a hand packed together, with no space between them
(`KcQhJd`, `10hKc`, `K♣Q♥`), as a hand is often printed. In a device's own words (a
malfunction's text, a jam's place) such a run names every card in it: each must be masked
where those words leave the controller (the condition, the ruling's detail, the log)."""
import json
import re

import pytest

from controller.table.secrecy import redact_device_event, scrub
from drivers import events as ev

from table_helpers import draw, table


def spelled(text, word):
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", text) is not None


@pytest.mark.parametrize("run,cards", [
    ("KcQhJd", ["Kc", "Qh", "Jd"]),
    ("10hKc", ["10h", "Kc"]),
    ("KCQH", ["KC", "QH"]),
    ("K♣Q♥", ["K♣", "Q♥"]),
])
def test_a_run_of_cards_is_masked_card_by_card(run, cards):
    masked = scrub(f"could not deliver the hand {run}, door shut")
    assert masked == "could not deliver the hand " + "[card]" * len(cards) + ", door shut"
    for c in cards:
        assert c not in masked


def test_words_that_are_no_run_of_cards_stay():
    for text in ("ASAP", "KCAL 7", "door open as asked", "ASK", "10 KHz", "JSON"):
        assert scrub(text) == text


def test_the_table_publishes_no_card_of_a_hand_a_device_names_packed():
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "Kd", "Th", "2c")                 # the croupier's Kd and 2c are face down
    t.outbox.clear()
    t.handle_device(ev.Malfunction(device="shoe", ts=1.0, code=7, text="reader saw Kd2c"))
    assert t.state == "malfunction"
    published = json.dumps([e.to_json() for e in t.outbox], ensure_ascii=False)
    assert "[card]" in published
    assert not re.search(r"Kd|2c", published), published
    logged = json.dumps(redact_device_event(ev.Jam(device="shoe", ts=1.0,
                                                   where="reader Kd2c").to_json()))
    assert not re.search(r"Kd|2c", logged), logged
