"""A device's own words (a jam's place, a malfunction's text) are its firmware's, and may name
a card in any spelling the firmware likes: `Kd`, `KD`, `10D`, `K♦`. They reach the console,
the display, the event stream and the log as the condition and the ruling's detail; a card in
them must not, whatever its spelling (as `tablectl` itself reads a card typed `KD` or `10D`), in
lower case too (`kd`, `as`): in a device's words a rank in any case is a card. The
controller's own sentences name a card only in its own spelling (`Kd`), so there lower-case
letter ranks, English words as often (`as`, `ks`), are left."""
import json
import re

import pytest

from controller.rig import Rig
from controller.table.secrecy import redact_device_event, scrub, scrub_device
from drivers import events as ev
from rig_helpers import open_for_bets
from table_helpers import draw, table

SPELLINGS = ["KD", "10D", "QH", "K♦", "Kd", "10d", "kd", "as", "th", "q♥"]
UPPER = ["KD", "10D", "QH", "K♦", "Kd", "10d"]


def spelled(text, word):
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", text) is not None


@pytest.mark.parametrize("word", SPELLINGS)
def test_a_card_in_any_case_is_masked_in_a_devices_words(word):
    assert scrub_device(f"reader, card {word} stuck") == "reader, card [card] stuck"
    assert scrub_device(f"{word}, then {word}.") == "[card], then [card]."
    assert scrub_device(f"hand {word}{word}2c ready") == "hand [card][card][card] ready"
    logged = json.dumps(redact_device_event(
        ev.Malfunction(device="shoe", ts=1.0, code=7, text=f"could not eject {word}").to_json()),
        ensure_ascii=False)
    assert not spelled(logged, word), logged


@pytest.mark.parametrize("word", UPPER)
def test_the_controllers_own_sentences_mask_a_card_in_its_spelling(word):
    assert scrub(f"reader, card {word} stuck") == "reader, card [card] stuck"


def test_words_that_only_look_like_cards_in_lower_case_stay_in_the_controllers_sentences():
    assert scrub("door open as asked; ks counter") == "door open as asked; ks counter"


def test_a_devices_words_lose_only_what_spells_cards():
    # A word made of cards in lower case is masked (`as`), a word that only begins with one
    # is not (`asked`, `ashes`), nor a number (`10`, `2`).
    assert scrub_device("door open as asked; 10 ashes, 2 left") == \
        "door open [card] asked; 10 ashes, 2 left"


@pytest.mark.parametrize("word", ["KD", "10D", "kd", "kD"])
def test_the_table_publishes_no_card_a_device_names_in_any_case(word):
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "Kd", "Th")                    # the croupier's Kd is face down
    t.outbox.clear()
    t.handle_device(ev.Jam(device="shoe", ts=1.0, where=f"reader, card {word}"))
    assert t.state == "malfunction"
    published = json.dumps([e.to_json() for e in t.outbox], ensure_ascii=False)
    assert "[card]" in published and not spelled(published, word), published


@pytest.mark.hil
def test_the_daemon_lets_no_card_out_of_a_jams_words_in_any_case(tmp_path):
    """The real daemon, the shoe's firmware wording its jam with the card in its reader in
    capitals and the next in lower case: the event stream, the view and the log hold the
    jam's words without the cards."""
    rig = Rig(tmp_path, "q-poker", "shoe")
    try:
        open_for_bets(rig)
        rig.must("place_bet", box=3, wager="versus_croupier", amount=10)
        mark = rig.mark()
        for _ in range(2):
            rig.devices["shoe"].draw()
        rig.wait_event(lambda e: e["kind"] == "card" and e.get("recipient") == "croupier",
                       mark)
        rig.devices["shoe"].inject("jam", where="reader, card QH and 10D, next ks")
        rig.wait_state("malfunction")
        ruling = rig.wait_event(lambda e: e["kind"] == "ruling", mark)
        assert "[card]" in json.dumps(ruling, ensure_ascii=False)
        seen = json.dumps(rig.events[mark:], ensure_ascii=False) + json.dumps(rig.view())
        rig.stop()
        log = rig.log_path.read_text()
        assert "jam" in log
        for word in ("QH", "10D", "ks"):
            assert not spelled(seen, word), word
            assert not spelled(log, word), word
    finally:
        rig.stop()


def test_a_malfunctions_words_in_lower_case_reach_no_one_with_the_card():
    """The croupier's face-down card named in lower case in the shoe's malfunction text:
    neither the condition nor the ruling the table publishes carries it."""
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "Kd", "Th")                    # the croupier's Kd is face down
    t.outbox.clear()
    t.handle_device(ev.Malfunction(device="shoe", ts=1.0, code=7, text="could not eject kd"))
    assert t.state == "malfunction"
    published = json.dumps([e.to_json() for e in t.outbox], ensure_ascii=False)
    assert "could not eject [card]" in published and not spelled(published.lower(), "kd"), \
        published


@pytest.mark.parametrize("dev_id", ["kd-1", "shoe-kd", "as-2"])
def test_the_device_id_a_logged_event_carries_is_the_configurations_not_masked(dev_id):
    """A device event's ``device`` is the id table.toml gave the device (config check takes
    ``kd-1``: a rank in lower case is masked in no message), not the firmware's words: the
    log of its events names it as configured, while a card in its words is still masked."""
    doc = redact_device_event(ev.Jam(device=dev_id, ts=0.0, where="by the kd").to_json())
    assert doc["device"] == dev_id, doc
    assert doc["where"] == "by the [card]", doc
