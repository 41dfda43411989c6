"""Firmware model of an automatic card shuffler (single deck, card-recognising by default).

States::

    idle ──shuffle──▶ shuffling ──(30 s)──▶ ready ──dispense_card/hand──▶ dispensing ──▶ ready
      ▲                                       │                                       └─▶ empty
      └──────────── deck_check ◀──────────────┘  checking ──(12 s)──▶ idle
    any ──jam──▶ jammed ──clear_jam──▶ idle      any ──door──▶ door-open ──close──▶ idle
    any ──malfunction──▶ fault (until reboot)

A shuffle or a deck check begins with the croupier's collection: every card of the table's deck
goes back into the shuffler (a card lost or slipped in by a deck fault stays lost or in). A deck
check leaves the cards unshuffled (idle). Hands are dispensed card by card; a jam or malfunction
at a card stops the hand, which is then not reported.
"""
from __future__ import annotations

from typing import Any

from ..faults import Fault
from .base import Refused, SimulatorError
from .cards import CardModel
from .deck import DeckCard, parse_deck


class ShufflerModel(CardModel):
    device_class = "shuffler"
    COMMANDS = {"shuffle": "_cmd_shuffle", "dispense_card": "_cmd_dispense_card",
                "dispense_hand": "_cmd_dispense_hand", "deck_check": "_cmd_deck_check",
                "status": "_cmd_status"}
    MAX_HAND = 13
    # A deck check reports every card held in one DeckCheckResult: u16 count, bool, u16 count
    # and 3 bytes a card, within the 1024-byte payload (docs/protocol.md 2, 5.4).
    MAX_CARDS = (1024 - 5) // 3

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.held: list[DeckCard] = list(self.owned)     # unshuffled until the first shuffle
        self.shuffles = 0

    def _power_on(self) -> None:
        super()._power_on()
        self.held = list(self.owned)         # the firmware lost the order it had made

    def _status_detail(self) -> dict[str, Any]:
        return {"cards": len(self.held), "cards_out": self.cards_out, "shuffles": self.shuffles}

    def _due_deck(self):
        return self._due("at_deck")

    def _apply_own_fault(self, fault: Fault) -> None:
        if fault.name == "shuffle_report":
            # A report only: the cards held and the state (a check under way goes on) stay.
            self._emit("shuffle_done", count=len(self.held))
            return
        super()._apply_own_fault(fault)

    # --- commands ---------------------------------------------------------------------

    def _cmd_status(self) -> None:
        self._emit("status", **self.status())

    def _cmd_shuffle(self) -> None:
        self._idle_or_refuse()
        self.shuffles += 1
        self.state = "shuffling"
        self._emit("shuffle_started")
        self.held = self._make_deck()
        if self.state != "shuffling":        # a fault due at this shuffle stopped it
            return
        self._after(self._duration("shuffle"), self._shuffle_done)

    def _shuffle_done(self) -> None:
        self.state = "ready" if self.held else "empty"
        self._emit("shuffle_done", count=len(self.held))

    def _cmd_deck_check(self) -> None:
        self._idle_or_refuse()
        self.state = "checking"
        self._collect()
        self.held = list(self.owned)         # collected, unshuffled
        self._after(self._duration("deck_check"), self._deck_check_done)

    def _deck_check_done(self) -> None:
        self.state = "idle"
        self._emit("deck_check_result", **self.deck_report(self.held))

    def _cmd_dispense_card(self) -> None:
        self._ready_or_refuse(1)
        self.state = "dispensing"
        self._after(self._duration("dispense_card"), self._one_card_out)

    def _one_card_out(self) -> None:
        stop, misread, _ = self._card_faults()
        if stop:
            return
        d = self.held.pop(0)
        self.cards_out += 1
        seen = self._read(d, misread)
        self._emit("card_dispensed", card=seen, deck_id=None if seen is None else d.deck_id)
        self._after_out()

    def _cmd_dispense_hand(self, n: int = 3) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= self.MAX_HAND:
            raise Refused("bad-argument", f"a hand is 1 to {self.MAX_HAND} cards, not {n!r}")
        self._ready_or_refuse(n)
        self.state = "dispensing"
        self._hand: list[DeckCard | None] = []
        self._hand_ids: list[int | None] = []
        self._after(self._duration("dispense_hand_card"), lambda: self._hand_card(n))

    def _hand_card(self, n: int) -> None:
        stop, misread, _ = self._card_faults()
        if stop:
            return
        d = self.held.pop(0)
        self.cards_out += 1
        seen = self._read(d, misread)
        self._hand.append(seen)
        self._hand_ids.append(None if seen is None else d.deck_id)
        if len(self._hand) < n:
            self._after(self._duration("dispense_hand_card"), lambda: self._hand_card(n))
            return
        self._emit("hand_dispensed", cards=self._hand, deck_ids=self._hand_ids)
        self._after_out()

    def _after_out(self) -> None:
        if self.held:
            self.state = "ready"
        else:
            self.state = "empty"
            self._emit("empty")

    # --- refusals ---------------------------------------------------------------------

    def _idle_or_refuse(self) -> None:
        if self.state in ("shuffling", "dispensing", "checking"):
            raise Refused("busy", f"the shuffler is {self.state}")

    def _ready_or_refuse(self, n: int) -> None:
        if self.state in ("shuffling", "dispensing", "checking"):
            raise Refused("busy", f"the shuffler is {self.state}")
        if self.state == "empty" or (self.state == "ready" and len(self.held) < n):
            raise Refused("empty", f"{len(self.held)} card(s) left; shuffle a new deck")
        if self.state != "ready":
            raise Refused("not-ready", "shuffle first")

    # --- physical actions -------------------------------------------------------------

    def load_deck(self, now: float, cards: Any = None, *, fresh: bool = False) -> list:
        """The croupier loads the shuffler: these exact cards, or a complete new pack with
        ``fresh``, or else the table's deck gathered again. They stay unordered (idle) until
        the next shuffle."""
        self._at(now)
        if self.state in ("shuffling", "dispensing", "checking"):
            raise SimulatorError(f"the shuffler is {self.state}; load the deck when it is idle")
        if cards is not None:
            deck = parse_deck(cards)
            if len(deck) > self.MAX_CARDS:
                raise SimulatorError(f"a shuffler holds at most {self.MAX_CARDS} cards (its deck "
                                     f"check reports them in one frame), not {len(deck)}")
            self.owned = deck
        elif fresh:
            self.fresh_deck()
        self._collect()
        self.held = list(self.owned)
        if self.state in ("ready", "empty"):
            self.state = "idle"
        return self._flush()
