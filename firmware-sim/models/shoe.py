"""Firmware model of a card-reading dealing shoe.

The shoe does nothing by itself: the croupier draws the cards. Its firmware reads each card as
it leaves (face and back id), senses a card coming out face up, and reports the cut card and the
last card. States::

    ready ──draw──▶ ready … ──last card──▶ empty ──load_deck──▶ ready
    any ──jam──▶ jammed ──clear_jam──▶ ready      any ──door──▶ door-open ──close──▶ ready
    any ──malfunction──▶ fault (until reboot)

At power-on the shoe holds one deck, shuffled with the seeded RNG unless an explicit deck was
given. ``load_deck`` puts the next deck in (the croupier's hand-shuffled deck, or whatever the
armed deck faults make of it). A cut card may be placed ``cut_at`` cards from the front.
"""
from __future__ import annotations

from typing import Any

from .base import SimulatorError
from .cards import CardModel
from .deck import DeckCard


class ShoeModel(CardModel):
    device_class = "shoe"
    COMMANDS = {"status": "_cmd_status"}

    def __init__(self, *, cut_at: int | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.cards: list[DeckCard] = []
        self.cut_at: int | None = None
        self.drawn = 0
        self._load(cut_at)

    def _due_deck(self):
        return self._due("at_deck")

    def _power_on(self) -> None:
        if self.door_open:
            self.state = self.door_state
        else:
            self.state = "ready" if self.cards else "empty"

    def _after_door_closed(self) -> None:
        self._power_on()

    def _after_jam_cleared(self) -> None:
        self._power_on()

    def _status_detail(self) -> dict[str, Any]:
        return {"cards": len(self.cards), "drawn": self.drawn, "cards_out": self.cards_out}

    def _cmd_status(self) -> None:
        self._emit("status", **self.status())

    def _load(self, cut_at: int | None) -> None:
        self.cards = self._make_deck()
        if cut_at is not None and not (isinstance(cut_at, int) and 0 < cut_at <= len(self.cards)):
            raise SimulatorError(f"cut_at {cut_at!r} must be a card position from 1 to "
                                 f"{len(self.cards)}")
        self.cut_at = cut_at
        self.drawn = 0
        if self.state not in ("jammed", "fault"):
            self._power_on()

    # --- physical actions -------------------------------------------------------------

    def load_deck(self, now: float, cards: Any = None, *, cut_at: int | None = None,
                  fresh: bool = False) -> list:
        """The croupier puts the next deck into the shoe. ``cards`` gives its exact order;
        otherwise the table's deck (a new complete pack with ``fresh``) is shuffled, or
        arranged as an armed deck fault says."""
        self._at(now)
        if self.state in ("jammed", "fault"):
            raise SimulatorError(f"the shoe is {self.state}; "
                                 + ("clear the jam" if self.state == "jammed" else "reboot it")
                                 + " before loading a deck")
        if fresh:
            self.fresh_deck()
        if cards is not None:
            self.set_next_deck(cards)
        self._load(cut_at)
        return self._flush()

    def draw(self, now: float, *, face_up: bool = False) -> list:
        """The croupier draws the next card (``face_up`` when it comes out face up)."""
        self._at(now)
        if self.state == "jammed":
            raise SimulatorError("the shoe is jammed: clear_jam() before drawing")
        if not self.cards:
            raise SimulatorError("the shoe is empty: load_deck() before drawing")
        if self.state == "fault":
            # The card still leaves the shoe; a firmware in fault reports nothing of it.
            self.cards.pop(0)
            self.drawn += 1
            return self._flush()
        stop, misread, armed_face_up = self._card_faults()
        if stop:
            return self._flush()
        d = self.cards.pop(0)
        self.drawn += 1
        self.cards_out += 1
        seen = self._read(d, misread)
        if seen is None:
            self._emit("misread")
        else:
            self._emit("card_drawn", card=seen, face_up=bool(face_up or armed_face_up),
                       deck_id=d.deck_id)
        if self.cut_at is not None and self.drawn == self.cut_at:
            self._emit("cut_card_reached")
        if not self.cards:
            self.state = "empty" if self.state == "ready" else self.state
            self._emit("empty")
        return self._flush()

    def peek(self) -> list[DeckCard]:
        """The cards still in the shoe, next first (for tests; the firmware cannot see them)."""
        return list(self.cards)
