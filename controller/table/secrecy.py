"""Card secrecy: what may leave the controller, and how a card becomes public.

No card still face down at the table may appear in any published event, state or log line
until it is revealed (the croupier's hand before the reveal, a player's hand, the deck order).
This module makes leaking structurally hard rather than a matter of care:

* :class:`CardVault` is the only holder of the identities of the cards dealt in a round. It
  hands out identities only as :class:`Revealed` tokens, and only for cards that are face up
  at the table (dealt face up, exposed, or revealed at the regulation's moment).
* :class:`PublicEvent` is the only thing the table publishes (display, event stream, logs). Its
  constructor refuses any raw :class:`~controller.rules.cards.Card` and any text that spells a
  card (``"As"``, ``"10h"``) anywhere in its payload; revealed cards travel as ``Revealed``.
* :func:`redact_device_event` turns a device event into a log-safe dict (card fields removed).
"""
from __future__ import annotations

import re
# collections.abc, not typing: isinstance against typing.Mapping goes through typing's own
# checks, a measurable part of the walk every published event takes.
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.rules.base import Recipient
from controller.rules.cards import CARD_TEXT, Card

# Text that spells a card in any notation cards.Card.parse accepts: one pattern with the
# configuration's check of names, so that no name it takes is refused here.
_CARD_TEXT = CARD_TEXT
_CARD_FIELDS = ("card", "cards", "missing", "extra", "duplicate")


# A card spelled among other words: a rank in capitals or digits, then a suit in either case
# or as its sign (``Kd``, ``KD``, ``10D``, ``K♦``), as Card.parse reads one; or a run of them
# with nothing between, as a hand is often printed (``KcQhJd``). In the controller's own
# sentences ranks in lower case are left: ``as``, ``ks``, ``th`` are words as often as cards,
# and the controller names a card only in its own spelling (``Kd``).
_ONE_CARD = r"(?:10|[2-9TJQKA])[shcdSHCD♠♥♣♦]"
_CARD_WORD = re.compile(rf"(?<![A-Za-z0-9])(?:{_ONE_CARD})+(?![A-Za-z0-9])")
_CARD_IN_RUN = re.compile(_ONE_CARD)
# A device's own words are its firmware's, which may spell a card in lower case (``kd``):
# there a rank in any case is a card. Masking a word (``as``) costs a word of a jam's place;
# letting a card out would cost the round.
_ONE_CARD_ANY_CASE = r"(?:10|[2-9TJQKAtjqka])[shcdSHCD♠♥♣♦]"
_DEVICE_CARD_WORD = re.compile(
    rf"(?<![A-Za-z0-9])(?:{_ONE_CARD_ANY_CASE})+(?![A-Za-z0-9])")
_DEVICE_CARD_IN_RUN = re.compile(_ONE_CARD_ANY_CASE)


def reads_as_card(text: str) -> bool:
    """Whether ``text`` on its own spells a card (``Jc``, ``10h``): a published field that
    does is refused as a card's identity, whoever typed it."""
    return bool(_CARD_TEXT.match(text))


def shown_device(device: str) -> str:
    """A device's id as the view, the events and the pit's health list it. The configuration
    takes no id that spells a card; a journal written before it refused one (``Kd``) still
    holds it, and the round it left in play keeps that device until it ends: marked as the
    earlier file's, since a text that reads as a card is refused whole as a face-down card's
    (and on the pit display would read as one)."""
    return f"{device} (device id of an earlier table.toml)" if reads_as_card(device) \
        else device


def scrub(text: str) -> str:
    """``text`` with every card spelled in it masked: for error messages that leave the
    controller (a rule engine's error may name the cards it was given)."""
    return _CARD_WORD.sub(lambda m: "[card]" * len(_CARD_IN_RUN.findall(m.group())),
                          str(text))


def written_apart(text: str) -> str:
    """``text`` with every card :func:`scrub` would mask written apart (``Mr Kd`` as
    ``Mr K.d.``): the way out offered for a name or a reason with a card inside it."""
    return _CARD_WORD.sub(lambda m: "".join(f"{c[:-1]}.{c[-1]}." for c in
                                            _CARD_IN_RUN.findall(m.group())), str(text))


def scrub_device(text: str) -> str:
    """A device's own words (a malfunction's text, a jam's place, a status report's text)
    with every card spelled in them masked, its rank in any case: ``kd`` too, which
    :func:`scrub` leaves in the controller's own sentences."""
    return _DEVICE_CARD_WORD.sub(
        lambda m: "[card]" * len(_DEVICE_CARD_IN_RUN.findall(m.group())), str(text))


class SecrecyError(AssertionError):
    """A face-down card was about to leave the controller (a programming error, never data)."""


@dataclass(frozen=True, slots=True)
class Revealed:
    """A card that is face up at the table, and so may be published. Made only by the vault."""

    card: Card
    _token: object = field(repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if self._token is not _VAULT_TOKEN:
            raise SecrecyError("a Revealed card is made only by CardVault when the card is face up")

    def to_json(self) -> str:
        return str(self.card)


_VAULT_TOKEN = object()


class _Refusal(Exception):
    """Raised inside the walk; the path is gathered on the way out, so a walk that refuses
    nothing builds no path at all (one per node cost more than the check itself)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message, self.steps = message, []


def _public(value: Any) -> Any:
    # Exact types first (the plain JSON an event is made of), by identity: this walk runs on
    # every published event, and an isinstance chain was most of its cost. Subclasses and
    # other mappings and sequences take the general path below.
    t = type(value)
    if t is str and not _CARD_TEXT.match(value):
        return value
    if t is int or t is bool or t is float or value is None:
        return value
    if t is dict:
        return _public_mapping(value)
    if t is list or t is tuple:
        return _public_items(value)
    if isinstance(value, str):          # card text, or a str subclass
        return _public_text(value)
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, Revealed):
        return value.to_json()
    if isinstance(value, Card):
        raise _Refusal("raw card at {path}: publish cards only through CardVault.reveal")
    if isinstance(value, Mapping):
        return _public_mapping(value)
    if isinstance(value, (list, tuple)):
        return _public_items(value)
    raise _Refusal(f"{type(value).__name__} at {{path}} is not publishable data")


def _public_text(value: str) -> str:
    if _CARD_TEXT.match(value):
        raise _Refusal(f"card text {value!r} at {{path}}: publish cards only as Revealed")
    return value


def _public_mapping(value: Mapping[Any, Any]) -> dict[Any, Any]:
    out = {}
    for k, v in value.items():
        if type(k) is not str or _CARD_TEXT.match(k):
            try:
                k = _public(k)
            except _Refusal as r:
                r.steps.append(".<key>")
                raise
        try:
            out[k] = _public(v)
        except _Refusal as r:
            r.steps.append(f".{k}")
            raise
    return out


def _public_items(value: list[Any] | tuple[Any, ...]) -> list[Any]:
    items = []
    for i, v in enumerate(value):
        try:
            items.append(_public(v))
        except _Refusal as r:
            r.steps.append(f"[{i}]")
            raise
    return items


def _check_public(value: Any, path: str) -> Any:
    """Copy ``value`` into plain JSON, refusing raw cards and card text (SecrecyError naming
    where, below ``path``)."""
    try:
        return _public(value)
    except _Refusal as r:
        raise SecrecyError(r.message.format(path=path + "".join(reversed(r.steps)))) from None


@dataclass(frozen=True, slots=True)
class PublicEvent:
    """One published table event: safe for the display, the event stream and the logs."""

    kind: str
    table: str
    round: int | None
    state: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _check_public(dict(self.data), self.kind))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "table": self.table, "round": self.round,
                "state": self.state, **self.data}


@dataclass(slots=True)
class _Slot:
    recipient: Recipient
    card: Card | None
    face_up: bool
    set_aside: bool = False


class CardVault:
    """The identities of one round's cards, released only when face up at the table.

    Slots are in dealing order; ``hidden`` counts let the display show "box 3: 2 cards" without
    knowing which.
    """

    def __init__(self) -> None:
        self._slots: list[_Slot] = []

    def deal(self, recipient: Recipient, card: Card | None, face_up: bool = False) -> int:
        """Keep a dealt card; return its slot number."""
        self._slots.append(_Slot(recipient, card, face_up))
        return len(self._slots) - 1

    def expose(self, slot: int) -> Revealed | None:
        """The card of ``slot`` was turned face up by accident: it is public from now on."""
        s = self._slots[slot]
        s.face_up = True
        return self._revealed(s)

    def unknown_face_up(self, recipient: Recipient) -> int:
        """How many face-up cards of ``recipient`` the device could not read."""
        return sum(1 for s in self._slots if s.recipient == recipient and not s.set_aside
                   and s.face_up and s.card is None)

    def fill(self, recipient: Recipient, cards: list[Card]) -> list[tuple[Card, Recipient]]:
        """Enter the cards of a revealed hand that the device could not read, in dealing
        order of the unread ones; TablectlError (nothing changed) when they do not fit.

        A card entered that is already face up in the round is refused. One that the device
        read for a hand still face down is taken, and returned with that hand's recipient:
        refusing it would tell whoever typed it what the face-down hand holds."""
        from controller.errors import TablectlError

        holes = [s for s in self._slots if s.recipient == recipient and not s.set_aside
                 and s.card is None]
        if not holes:
            raise TablectlError(f"every card of {recipient} is known; nothing to enter")
        if not all(s.face_up for s in holes):
            raise TablectlError(f"the hand of {recipient} is not revealed yet")
        if len(cards) != len(holes):
            raise TablectlError(f"{recipient} has {len(holes)} unread card(s); enter exactly "
                                f"{len(holes)}, got {len(cards)}")
        shown = {s.card for s in self._slots if s.card is not None and s.face_up}
        twice = [c for c in cards if c in shown] or \
            [c for i, c in enumerate(cards) if c in cards[:i]]
        if twice:
            raise TablectlError(f"{len(twice)} of the cards entered is already face up in this "
                                "round; read the hand again")
        hidden = {s.card: s.recipient for s in self._slots
                  if s.card is not None and not s.face_up}
        for s, c in zip(holes, cards):
            s.card = c
        return [(c, hidden[c]) for c in cards if c in hidden]

    def reassign(self, slot: int, recipient: Recipient) -> None:
        """The card of ``slot`` landed elsewhere than planned (a box sensor saw it)."""
        self._slots[slot].recipient = recipient

    def positions(self, recipient: Recipient) -> list[int]:
        """The slots of every card dealt to ``recipient``, in the order dealt to it, those set
        aside too: the card the croupier names as its n-th is slot ``[n - 1]``."""
        return [i for i, s in enumerate(self._slots) if s.recipient == recipient]

    def position(self, slot: int) -> int:
        """Where the card of ``slot`` is among its recipient's cards, from 1 (see positions)."""
        return self.positions(self._slots[slot].recipient).index(slot) + 1

    def last_slots(self, recipient: Recipient, n: int) -> list[int]:
        """The slots of the last ``n`` cards dealt to ``recipient``."""
        mine = [i for i, s in enumerate(self._slots)
                if s.recipient == recipient and not s.set_aside]
        return mine[-n:] if n else []

    def set_aside(self, slot: int, face_up: bool = True) -> None:
        """Fortune 3 Card Poker art. 11(2): the exposed croupier card is set aside face up;
        it no longer belongs to the croupier's hand. ``face_up=False``: a card set aside
        unseen (F4 ``next_hand``: the rest of the exposed card's hand) stays face down."""
        s = self._slots[slot]
        s.set_aside = True
        s.face_up = s.face_up or face_up

    def reveal(self, recipient: Recipient) -> list[Revealed | None]:
        """Turn the hand of ``recipient`` face up (the regulation's moment) and return it."""
        out = []
        for s in self._slots:
            if s.recipient == recipient and not s.set_aside:
                s.face_up = True
                out.append(self._revealed(s))
        return out

    def public_hand(self, recipient: Recipient) -> list[Revealed | None]:
        """The hand as the table shows it: face-up cards as Revealed, face-down as None."""
        return [self._revealed(s) if s.face_up else None
                for s in self._slots if s.recipient == recipient and not s.set_aside]

    def set_aside_cards(self) -> list[Revealed | None]:
        """The cards set aside, as the table shows them: face down as None."""
        return [self._revealed(s) if s.face_up else None for s in self._slots if s.set_aside]

    def revealed_hand(self, recipient: Recipient) -> list[Card] | None:
        """The cards of ``recipient`` for settlement, only once the whole hand is face up."""
        hand = [s for s in self._slots if s.recipient == recipient and not s.set_aside]
        if not hand or not all(s.face_up for s in hand):
            return None
        return [s.card for s in hand]  # type: ignore[misc]

    def count(self, recipient: Recipient) -> int:
        return sum(1 for s in self._slots if s.recipient == recipient and not s.set_aside)

    def recipients(self) -> list[Recipient]:
        seen: list[Recipient] = []
        for s in self._slots:
            if s.recipient not in seen:
                seen.append(s.recipient)
        return seen

    def slot_recipient(self, slot: int) -> Recipient:
        return self._slots[slot].recipient

    def slots(self) -> int:
        return len(self._slots)

    def is_set_aside(self, slot: int) -> bool:
        return self._slots[slot].set_aside

    def is_face_up(self, slot: int) -> bool:
        return self._slots[slot].face_up

    def vouch(self, value: Any) -> Any:
        """Copy ``value`` with every card (or card text) that is face up at the table turned into
        a Revealed token. A card still face down stays as it is, so PublicEvent refuses it."""
        face_up = {s.card: s for s in self._slots if s.face_up and s.card is not None}
        return self._vouch(value, face_up)

    def _vouch(self, value: Any, face_up: dict[Card, _Slot]) -> Any:
        if isinstance(value, str):
            # Text that spells no card (most of a settlement's: categories, recipients,
            # wagers) is kept as it is, without a parse that would fail and raise.
            if not _CARD_TEXT.match(value):
                return value
            try:
                card = Card.parse(value)
            except Exception:
                return value
            return self._revealed(face_up[card]) if card in face_up else value
        if isinstance(value, Card):
            return self._revealed(face_up[value]) if value in face_up else value
        if isinstance(value, Mapping):
            return {k: self._vouch(v, face_up) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._vouch(v, face_up) for v in value]
        return value

    def all_cards_unpublishable(self) -> list[Card | None]:
        """Every identity in dealing order, for the journal and deck-integrity checks only:
        the caller must never publish the result."""
        return [s.card for s in self._slots]

    @staticmethod
    def _revealed(s: _Slot) -> Revealed | None:
        if s.card is None:
            return None
        return Revealed(s.card, _VAULT_TOKEN)


def redact_device_event(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A device event's JSON with every card identity removed (counts kept), for the logs.
    A device's own text (a malfunction's words, a jam's place) is its firmware's and may name
    a card: any card spelled in it is masked too. So at any depth: a status report's
    ``detail`` is the firmware's own key-values, which may hold the card in its reader or the
    hand it has ready. The event's ``device`` is the id table.toml gave it, which the
    configuration's check holds to what no message masks (``kd-1``): kept as it is."""
    out = _redacted({k: v for k, v in doc.items() if k != "device"})
    return {"device": doc["device"], **out} if "device" in doc else out


def _redacted(doc: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in doc.items():
        if k in _CARD_FIELDS:
            if isinstance(v, (list, tuple)):
                out[f"{k}_count"] = len(v)
            elif isinstance(v, bool) or (isinstance(v, int) and k != "card"):
                out[k] = v          # a count ("cards": 40), not a card's code
            elif v is not None:
                out[k] = "hidden"
            continue
        if isinstance(k, str) and k.lower().endswith("card") and v is not None \
                and not isinstance(v, bool):
            # A status report's detail is names and whole numbers (docs/protocol.md, kv): a
            # card there is its code, under a name of the firmware's own ("next_card").
            out[k] = "hidden"
            continue
        out[k] = _redacted_value(v)
    return out


def _redacted_value(v: Any) -> Any:
    if isinstance(v, str):
        return scrub_device(v)      # a device event's text is the device's own words
    if isinstance(v, Mapping):
        return _redacted(v)
    if isinstance(v, (list, tuple)):
        return [_redacted_value(x) for x in v]
    return v
