"""What the shuffler and the shoe share: a deck made by a seeded DeckMaker, and deck faults.

Deck faults (missing, extra, duplicate, sorted, cut, repeat, explicit order) are armed and take
effect on the *next* deck the device makes: at the shuffler's next shuffle, at the shoe's next
load. A lost, extra or duplicated card also shows at the shuffler's next deck check, which
gathers the deck as a shuffle does. That is how they happen at a table: a card falls on the floor while the deck is collected,
a card of another deck slips in, a shuffler is left in sort mode.
"""
from __future__ import annotations

from typing import Any

from ..faults import Fault
from .base import FirmwareModel, SimulatorError
from .deck import (TABLE_DECK_ID, DeckCard, DeckMaker, deck_differences, new_deck, parse_deck)


class CardModel(FirmwareModel):
    """A firmware that holds a deck and puts cards out one at a time."""

    def __init__(self, *, deck: Any = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.maker = DeckMaker(self.rng)
        self.deck_id = TABLE_DECK_ID
        # The physical deck as the table owns it: faults change it for good (a lost card stays
        # lost until a fresh deck is loaded).
        self.owned: list[DeckCard] = new_deck(self.deck_id)
        self._order_mode: list[tuple[str, dict]] = []     # sorted/cut/repeat, one per deck
        self._explicit: list[list[DeckCard]] = []
        self._pending_changes: list[Fault] = []
        self._next_face_up = False
        self._next_misread = False
        self.cards_out = 0                                # cards put out since power-on
        self.decks_made = 0
        if deck is not None:
            self._explicit.append(parse_deck(deck))

    # --- deck making ------------------------------------------------------------------

    def set_next_deck(self, cards: Any) -> None:
        """The next deck comes out in exactly this order (a test's explicit deck)."""
        self._explicit.append(parse_deck(cards))

    def _make_deck(self) -> list[DeckCard]:
        """The order of the next deck: explicit if a test gave one, else the owned cards with
        pending changes, arranged by the pending order mode (a seeded shuffle by default)."""
        self.decks_made += 1
        for f in self._due_deck():
            self._apply_fault(f)
        self._collect()
        if self._explicit:
            return self.maker.explicit(self._explicit.pop(0))
        mode, args = self._order_mode.pop(0) if self._order_mode else ("shuffle", {})
        return self.maker.order(self.owned, mode, **args)

    def _collect(self) -> None:
        """The croupier gathers the deck: armed content faults (a card lost, one slipped in)
        happen now."""
        for f in self._pending_changes:
            self._change_deck(f)
        self._pending_changes.clear()

    def _due_deck(self) -> list[Fault]:
        return []

    def _change_deck(self, f: Fault) -> None:
        """Apply one deck-content fault to the owned deck."""
        a = f.args
        if f.name == "deck_missing":
            victim = self._pick(a["card"], own=True)
            self.owned.remove(victim)
        elif f.name == "deck_extra":
            face = self._face(a["card"])
            if a["replace"]:
                self.owned.remove(self._pick(None, own=True))
            self.owned.append(DeckCard(face, a["deck_id"]))
        elif f.name == "deck_duplicate":
            twin = self._pick(a["card"], own=True)
            if a["replace"]:
                others = [d for d in self.owned if d != twin]
                self.owned.remove(self.rng.choice(others))
            self.owned.append(twin)

    def _try_changes(self, changes: list[Fault]) -> None:
        """Raise SimulatorError if ``changes`` could not all be made to the deck as it is (a
        card named that an earlier change takes away, or that the deck does not hold): the
        error then comes when the fault is given, not in the middle of the next deck."""
        owned, state = self.owned, self.rng.getstate()
        self.owned = list(owned)
        try:
            for f in changes:
                self._change_deck(f)
        finally:
            self.owned = owned
            self.rng.setstate(state)

    def _face(self, text: str | None):
        if text is None:
            return self.rng.choice(new_deck()).card
        return DeckCard.parse(text).card

    def _pick(self, text: str | None, *, own: bool) -> DeckCard:
        """A card of the owned deck: the one named, or a random one."""
        if text is None:
            if not self.owned:
                raise SimulatorError("the deck has no card left to take")
            return self.rng.choice(self.owned)
        want = DeckCard.parse(text)
        if want not in self.owned:
            raise SimulatorError(f"card {want} is not in the {self.device_class}'s deck")
        return want

    def check_fault(self, fault: Fault) -> None:
        # A card named wrongly is rejected when the fault is given, not at the deck it changes.
        a = fault.args
        if fault.name in ("deck_missing", "deck_extra", "deck_duplicate"):
            if a.get("card") is not None:
                DeckCard.parse(a["card"])
        elif fault.name == "deck_order":
            parse_deck(a["cards"])
        super().check_fault(fault)

    def _apply_own_fault(self, fault: Fault) -> None:
        name, a = fault.name, fault.args
        if name in ("deck_missing", "deck_extra", "deck_duplicate"):
            self.check_fault(fault)
            self._try_changes([*self._pending_changes, fault])
            self._pending_changes.append(fault)
        elif name == "deck_sorted":
            self._order_mode.extend([("sorted", {})] * a["decks"])
        elif name == "deck_cut":
            self._order_mode.append(("cut", {}))
        elif name == "deck_repeat":
            self._order_mode.append(("repeat", {"back": a["back"]}))
        elif name == "deck_order":
            self._explicit.append(parse_deck(a["cards"]))
        elif name == "misread":
            self._next_misread = True
        elif name == "face_up" and self.device_class == "shoe":
            self._next_face_up = True
        else:
            super()._apply_own_fault(fault)

    # --- one card out -----------------------------------------------------------------

    def _card_faults(self) -> tuple[bool, bool, bool]:
        """Faults due at the card about to come out: (stop, misread, face_up). ``stop`` means
        a jam or malfunction took the card's place."""
        for f in self._due("at_card"):
            if f.name in ("jam", "malfunction", "door_open"):
                self._apply_fault(f)
                return True, False, False
            self._apply_fault(f)
        misread, self._next_misread = self._next_misread, False
        face_up, self._next_face_up = self._next_face_up, False
        return False, misread, face_up

    def _read(self, d: DeckCard, misread: bool) -> DeckCard | None:
        """What the reader reports of card ``d``: nothing if it cannot read it."""
        if misread or not self.recognises_cards:
            return None
        return d

    def deck_report(self, cards: list[DeckCard]) -> dict[str, Any]:
        """A deck check's fields: count always; identities and differences where recognised."""
        out: dict[str, Any] = {"count": len(cards)}
        if self.recognises_cards:
            missing, extra, duplicate = deck_differences(cards, self.deck_id)
            out.update(cards=list(cards), missing=missing, extra=extra, duplicate=duplicate,
                       deck_ids=sorted({d.deck_id for d in cards}))
        return out

    def fresh_deck(self) -> None:
        """A new, complete deck of the table's back replaces the owned one (deck faults that
        were armed still apply to it)."""
        self.owned = new_deck(self.deck_id)
