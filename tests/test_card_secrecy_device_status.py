"""A device's status report (``StatusReport``: its state and a ``detail`` of key-values, the
firmware's own) is logged with ``--debug`` as every device event is, through
``secrecy.redact_device_event``. The firmware may put a card in its detail (the card in its
reader, the next in the shoe, the hand a shuffler holds ready): whatever the nesting, the
log must not carry it: the detail's values are whole numbers on the wire (docs/protocol.md,
``kv``), so a card there is its code, under a name of the firmware's own."""
import json
import re

import pytest

from controller.rules.cards import Card
from controller.table.secrecy import redact_device_event
from drivers import events as ev

KC = Card.parse("Kc")


def spelled(text: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", text) is not None


@pytest.mark.parametrize("detail", [
    {"next": "Kc"},
    {"reader": "card KC stuck"},
    {"card": KC.code},
    {"next_card": KC.code},
    {"reader_card": KC.code, "cards": 40},
    {"card": "Kc"},
    {"holding": {"cards": ["Kc", "2d"]}},
    {"hands": [{"card": "Kc"}]},
])
def test_a_card_in_a_status_detail_is_not_logged(detail):
    logged = json.dumps(redact_device_event(
        ev.Status(device="shuffler", ts=1.0, state="dispensing", detail=detail).to_json()),
        ensure_ascii=False)
    assert not spelled(logged, "Kc") and not spelled(logged, "KC"), logged
    assert str(KC.code) not in logged, logged


def test_a_status_detail_keeps_its_counters():
    logged = redact_device_event(ev.Status(device="shoe", ts=1.0, state="ready", detail={
        "cards": 40, "drawn": 12, "cards_out": 12, "door": "shut"}).to_json())
    assert logged["detail"] == {"cards": 40, "drawn": 12, "cards_out": 12, "door": "shut"}
    assert logged["state"] == "ready"
