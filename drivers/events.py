"""Vendor-neutral device events: what every driver puts on the controller's queue.

Whatever a device speaks on the wire (this project's open protocol or a vendor's codec), its
driver turns it into these typed, timestamped events. The table machine consumes only these,
so a new vendor protocol never touches the controller. Each event has a ``kind`` (the name used
in the journal) and serialises to JSON with :meth:`DeviceEvent.to_json`; :func:`event_from_json`
reads it back, so a journal replays into the same objects.

Card identities are :class:`controller.rules.cards.Card` or ``None`` where the device saw a card
but could not (or does not) recognise it. ``deck_id`` is the back/deck identifier a device
reports where it can (a card of another deck is a foreign card); ``None`` when it cannot.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from controller.rules.cards import Card

EVENT_TYPES: dict[str, type["DeviceEvent"]] = {}


@dataclass(frozen=True, slots=True)
class DeviceIdentity:
    """What a device says of itself in the hello exchange."""

    device_class: str          # "shuffler" | "shoe" | "dice" | "box-sensors"
    vendor: str
    model: str
    serial: str
    firmware_version: str
    firmware_hash: str         # hex digest of the firmware image, for the regulator's approval list
    recognises_cards: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceEvent:
    """Base of every event. ``device`` is the configured device id (e.g. ``shuffler``),
    ``ts`` the driver's monotonic clock reading when the event was decoded."""

    kind: ClassVar[str] = "device_event"
    device: str
    ts: float

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with ``kind`` first; cards as their text (``As``)."""
        out: dict[str, Any] = {"kind": self.kind}
        for name in _field_names(type(self)):
            out[name] = _to_json(getattr(self, name))
        return out


# Each event class's field names, worked out once: every card goes through to_json and
# event_from_json, and dataclasses.fields() builds its tuple anew on each call.
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _to_json(value: Any) -> Any:
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, DeviceIdentity):
        return dataclasses.asdict(value)
    if isinstance(value, tuple):
        return [_to_json(v) for v in value]
    return value


def event_from_json(doc: dict[str, Any]) -> DeviceEvent:
    """Rebuild an event written by :meth:`DeviceEvent.to_json`."""
    cls = EVENT_TYPES[doc["kind"]]
    kwargs: dict[str, Any] = {}
    for name in _field_names(cls):
        if name not in doc:
            continue
        v = doc[name]
        if name == "card" and v is not None:
            v = Card.parse(v)
        elif name in _CARD_TUPLES and v is not None:
            v = tuple(None if c is None else Card.parse(c) for c in v)
        elif name == "identity" and v is not None:
            v = DeviceIdentity(**v)
        elif isinstance(v, list):
            v = tuple(v)
        kwargs[name] = v
    return cls(**kwargs)


_CARD_TUPLES = frozenset(("cards", "missing", "extra", "duplicate"))


# --- link, common to every device class -------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class LinkUp(DeviceEvent):
    """The hello exchange completed: the device is there and said who it is."""

    kind: ClassVar[str] = "link_up"
    identity: DeviceIdentity


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkLost(DeviceEvent):
    """Heartbeats stopped, the port vanished or the device stopped answering."""

    kind: ClassVar[str] = "link_lost"
    reason: str
    # The device said it restarted (a boot notice, or its uptime went back): what it held
    # in memory (a shuffled deck's order, a hand asked for) is gone.
    rebooted: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkRestored(DeviceEvent):
    """The device was found again (same stable name) and the hello exchange completed."""

    kind: ClassVar[str] = "link_restored"
    identity: DeviceIdentity
    # False: the device came back with a new session (it restarted while away), so what it
    # held in memory is gone; True: the session it had before the loss goes on.
    resumed: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Malfunction(DeviceEvent):
    """The device reports a fault it cannot recover from by itself."""

    kind: ClassVar[str] = "malfunction"
    code: int
    text: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Jam(DeviceEvent):
    """Cards (or the mechanism) jammed."""

    kind: ClassVar[str] = "jam"
    where: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class DoorOpened(DeviceEvent):
    """A door or lid of the device opened (the dice agitator's lid included)."""

    kind: ClassVar[str] = "door_opened"


@dataclass(frozen=True, slots=True, kw_only=True)
class DoorClosed(DeviceEvent):
    kind: ClassVar[str] = "door_closed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Empty(DeviceEvent):
    """No cards left to deal."""

    kind: ClassVar[str] = "empty"


@dataclass(frozen=True, slots=True, kw_only=True)
class Status(DeviceEvent):
    """Answer to a status request: the firmware's state name and its counters."""

    kind: ClassVar[str] = "status"
    state: str
    detail: dict = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandRefused(DeviceEvent):
    """The device refused a command the host sent: its acknowledgement carried a refusal
    code and nothing was done. Put on the queue by the driver (the device sends no event
    of its own), so the table learns that what it asked for will not come."""

    kind: ClassVar[str] = "command_refused"
    action: str                # the driver's method: shuffle, deck_check, dispense_hand, shake…
    reason: str                # the refusal's name: busy, not-ready, empty, door-open, jammed…
    text: str = ""             # what the croupier reads, with the way out


# --- shuffler -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class ShuffleStarted(DeviceEvent):
    kind: ClassVar[str] = "shuffle_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class ShuffleDone(DeviceEvent):
    """A shuffle finished; ``count`` is the number of cards the shuffler holds."""

    kind: ClassVar[str] = "shuffle_done"
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CardDispensed(DeviceEvent):
    """The shuffler put out one card (identity where the model recognises cards)."""

    kind: ClassVar[str] = "card_dispensed"
    card: Card | None = None
    deck_id: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HandDispensed(DeviceEvent):
    """The shuffler put out one hand of ``len(cards)`` cards."""

    kind: ClassVar[str] = "hand_dispensed"
    cards: tuple[Card | None, ...]
    deck_ids: tuple[int | None, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCheckResult(DeviceEvent):
    """Result of a deck check: ``count`` always; where the model recognises cards, the
    identities read (``cards``) and the differences with one full deck."""

    kind: ClassVar[str] = "deck_check_result"
    count: int
    cards: tuple[Card, ...] | None = None
    missing: tuple[Card, ...] = ()
    extra: tuple[Card, ...] = ()          # cards of no deck of this table (foreign)
    duplicate: tuple[Card, ...] = ()
    deck_ids: tuple[int, ...] = ()        # the back ids seen, each once, in order
    # Each card's back id, parallel to ``cards`` (``None`` where the back was not read); empty
    # where the device reports only the set. With it, a card of another back among two of the
    # table's is named alone, not with the table's cards of its less common back.
    card_deck_ids: tuple[int | None, ...] = ()


# --- card-reading shoe ----------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class CardDrawn(DeviceEvent):
    """A card left the shoe. ``face_up`` is set when the shoe sensed it coming out face up."""

    kind: ClassVar[str] = "card_drawn"
    card: Card | None
    face_up: bool = False
    deck_id: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CutCardReached(DeviceEvent):
    kind: ClassVar[str] = "cut_card_reached"


@dataclass(frozen=True, slots=True, kw_only=True)
class Misread(DeviceEvent):
    """A card left the shoe but could not be read."""

    kind: ClassVar[str] = "misread"


# --- dice agitator --------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class ShakeStarted(DeviceEvent):
    kind: ClassVar[str] = "shake_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class DiceResult(DeviceEvent):
    """Every die lies flat; ``dice`` are the faces, 1-6, in die order."""

    kind: ClassVar[str] = "dice_result"
    dice: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DieNotFlat(DeviceEvent):
    """翹骰: a die came to rest tilted (``die`` is its index from 0)."""

    kind: ClassVar[str] = "die_not_flat"
    die: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DieOutOfCup(DeviceEvent):
    kind: ClassVar[str] = "die_out_of_cup"
    die: int


# --- box sensors ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class CardPlaced(DeviceEvent):
    """A card landed on box ``box``."""

    kind: ClassVar[str] = "card_placed"
    box: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CardRemoved(DeviceEvent):
    kind: ClassVar[str] = "card_removed"
    box: int


def _register(base: type) -> None:
    for cls in base.__subclasses__():
        EVENT_TYPES[cls.kind] = cls
        _register(cls)


_register(DeviceEvent)
