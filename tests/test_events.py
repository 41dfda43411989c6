"""Device events survive a JSON round trip (the journal stores them as JSON)."""
import json

import pytest

from controller.rules.cards import Card
from drivers import events as ev

IDENT = ev.DeviceIdentity("shuffler", "Acme", "S1", "0001", "1.2.3", "ab" * 32, True)

SAMPLES = [
    ev.LinkUp(device="shuffler", ts=1.0, identity=IDENT),
    ev.LinkLost(device="shoe", ts=2.0, reason="heartbeat timeout"),
    ev.HandDispensed(device="shuffler", ts=3.0, cards=(Card.parse("As"), None, Card.parse("Td"))),
    ev.DeckCheckResult(device="shuffler", ts=4.0, count=52, missing=(Card.parse("2c"),),
                       extra=(Card.parse("2c"),)),
    ev.CardDrawn(device="shoe", ts=5.0, card=Card.parse("Qh"), face_up=True, deck_id=7),
    ev.DiceResult(device="dice", ts=6.0, dice=(1, 6, 3, 4)),
    ev.DieNotFlat(device="dice", ts=6.5, die=2),
    ev.CardPlaced(device="box-sensors", ts=7.0, box=3),
    ev.Malfunction(device="shuffler", ts=8.0, code=0x21, text="elevator motor"),
]


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.kind)
def test_json_round_trip(event):
    doc = json.loads(json.dumps(event.to_json()))
    assert doc["kind"] == event.kind
    assert ev.event_from_json(doc) == event


def test_every_kind_is_unique_and_registered():
    kinds = [cls.kind for cls in ev.EVENT_TYPES.values()]
    assert len(kinds) == len(set(kinds))
    assert {"card_drawn", "hand_dispensed", "dice_result", "link_lost", "jam"} <= set(kinds)
