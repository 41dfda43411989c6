"""The firmware's side of the wire: host messages to model commands, model events to messages.

The message classes are the protocol's own (``drivers.protocol.messages``); nothing of the
protocol is defined again here. Boxes are numbered from 1 in the model and the API (as the
regulations number them) and from 0 on the wire (docs/protocol.md, section 4).
"""
from __future__ import annotations

from typing import Any

from drivers.protocol import messages as m

from .models.base import Emit
from .models.deck import DeckCard

# Host command message -> (model command, argument builder)
COMMANDS: dict[type[m.Message], tuple[str, Any]] = {
    m.StatusRequest: ("status", lambda msg: {}),
    m.Shuffle: ("shuffle", lambda msg: {}),
    m.DispenseCard: ("dispense_card", lambda msg: {}),
    m.DispenseHand: ("dispense_hand", lambda msg: {"n": msg.count}),
    m.DeckCheck: ("deck_check", lambda msg: {}),
    m.Shake: ("shake", lambda msg: {}),
}


def card_code(d: DeckCard | None) -> int:
    return m.UNKNOWN_CARD if d is None else d.card.code


def deck_code(d: DeckCard | None) -> int:
    return m.NO_DECK if d is None else d.deck_id


def status_kv(status: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    """A status dict as the protocol's ``kv`` counters: booleans as 0/1, a list as one counter
    per item (``cards_on_box`` becomes ``box0``, ``box1``…)."""
    out: list[tuple[str, int]] = []
    for key, value in status.items():
        if key == "state":
            continue
        if isinstance(value, bool):
            out.append((key, int(value)))
        elif isinstance(value, int):
            out.append((key, value))
        elif isinstance(value, (list, tuple)):
            stem = "box" if key == "cards_on_box" else key + "."
            out.extend((f"{stem}{i}", int(v)) for i, v in enumerate(value))
    return tuple(out[:255])


def to_message(e: Emit) -> m.Message:
    """The protocol message for one model event."""
    f = e.fields
    k = e.kind
    if k == "status":
        return m.StatusReport(f["state"], status_kv(f))
    if k == "malfunction":
        return m.Malfunction(f["code"], f.get("text", ""))
    if k == "jam":
        return m.Jam(f.get("where", ""))
    if k in ("door_opened", "door_closed"):
        return m.Door(k == "door_opened")
    if k == "empty":
        return m.Empty()
    if k == "shuffle_started":
        return m.ShuffleStarted()
    if k == "shuffle_done":
        return m.ShuffleDone(f["count"])
    if k == "card_dispensed":
        return m.CardDispensed(card_code(f["card"]), deck_code(f["card"]))
    if k == "hand_dispensed":
        return m.HandDispensed(tuple((card_code(d), deck_code(d)) for d in f["cards"]))
    if k == "deck_check_result":
        cards = f.get("cards")
        return m.DeckCheckResult(f["count"], cards is not None,
                                 tuple((card_code(d), deck_code(d)) for d in cards or ()))
    if k == "card_drawn":
        return m.CardDrawn(card_code(f["card"]), bool(f["face_up"]), deck_code(f["card"]))
    if k == "cut_card_reached":
        return m.CutCardReached()
    if k == "misread":
        return m.Misread()
    if k == "shake_started":
        return m.ShakeStarted()
    if k == "dice_result":
        return m.DiceResult(tuple(f["dice"]))
    if k == "die_not_flat":
        return m.DieNotFlat(f["die"])
    if k == "die_out_of_cup":
        return m.DieOutOfCup(f["die"])
    if k == "card_placed":
        return m.CardPlaced(f["box"] - 1)
    if k == "card_removed":
        return m.CardRemoved(f["box"] - 1)
    raise ValueError(f"no protocol message for model event {k!r}")  # a programming error
