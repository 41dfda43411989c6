"""Automatic card shuffler: shuffle, dispense a card or a hand, deck check, status."""
from __future__ import annotations

from collections import Counter

from controller.errors import TablectlError
from controller.rules.cards import Card, full_deck

from . import events as ev
from .driver import Driver, card_or_none, deck_or_none
from .protocol import messages as m


class ShufflerDriver(Driver):
    """Commands return when the shuffler accepted them; results arrive on the queue:
    ShuffleStarted / ShuffleDone, CardDispensed, HandDispensed, DeckCheckResult, and Jam,
    Malfunction, DoorOpened / DoorClosed, Empty whenever they happen."""

    device_class = "shuffler"

    async def shuffle(self) -> None:
        await self._command(m.Shuffle(), "shuffle", "shuffle")

    async def dispense_card(self) -> None:
        await self._command(m.DispenseCard(), "dispense card", "dispense_card")

    async def dispense_hand(self, n: int) -> None:
        """Dispense one hand of ``n`` cards (1-255)."""
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 255:
            raise TablectlError(f"a hand has 1 to 255 cards, not {n!r}")
        await self._command(m.DispenseHand(n), f"dispense hand of {n}", "dispense_hand")

    async def deck_check(self) -> None:
        await self._command(m.DeckCheck(), "deck check", "deck_check")

    def _translate(self, msg: m.Message) -> ev.DeviceEvent | None:
        if isinstance(msg, m.ShuffleStarted):
            return self._event(ev.ShuffleStarted)
        if isinstance(msg, m.ShuffleDone):
            return self._event(ev.ShuffleDone, count=msg.count)
        if isinstance(msg, m.CardDispensed):
            return self._event(ev.CardDispensed, card=card_or_none(msg.card),
                               deck_id=deck_or_none(msg.deck))
        if isinstance(msg, m.HandDispensed):
            return self._event(ev.HandDispensed,
                               cards=tuple(card_or_none(c) for c, _ in msg.cards),
                               deck_ids=tuple(deck_or_none(d) for _, d in msg.cards))
        if isinstance(msg, m.DeckCheckResult):
            return self._event(ev.DeckCheckResult, **deck_check_fields(msg))
        return super()._translate(msg)


def deck_check_fields(msg: m.DeckCheckResult) -> dict:
    """Count, identities and the differences with one full deck of the table's back.

    The table's deck id is the one most cards carry; a card with another deck id is foreign
    (``extra``) whatever its face. ``missing`` are faces of a full deck not read among the
    table's own cards; ``duplicate`` lists each face read more than once (once per extra copy).
    ``card_deck_ids`` gives each read card's back id, in the order of ``cards``.
    Unread cards (code 0xFF) are counted but have no identity. The driver does not know how
    many decks the table uses, so these lists are against one deck; the integrity ledger
    counts ``cards`` against the table's decks itself and does not add this ``duplicate``.
    """
    if not msg.recognised:
        return {"count": msg.count}
    read = [(Card.from_code(c), deck_or_none(d)) for c, d in msg.cards if c != m.UNKNOWN_CARD]
    decks = Counter(d for _, d in read if d is not None)
    home = decks.most_common(1)[0][0] if decks else None
    own = [c for c, d in read if d is None or d == home]
    foreign = tuple(c for c, d in read if d is not None and d != home)
    counts = Counter(own)
    duplicate = tuple(c for c, n in sorted(counts.items()) for _ in range(n - 1))
    missing = tuple(c for c in full_deck() if c not in counts)
    return {"count": msg.count, "cards": tuple(c for c, _ in read), "missing": missing,
            "extra": foreign, "duplicate": duplicate, "deck_ids": tuple(sorted(decks)),
            "card_deck_ids": tuple(d for _, d in read)}
