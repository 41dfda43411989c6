"""The physical deck inside a simulated shuffler or shoe: cards with the id printed on their back.

A real card carries its face (rank and suit) and its back (the deck it belongs to). A table uses
decks of one back id (``TABLE_DECK_ID``); a card of any other id is *foreign*. The simulator keeps
both so that a missing, extra, duplicated or foreign card can be put into a deck exactly as it
happens at a table, and a card-recognising device reports what it really holds.

:class:`DeckMaker` builds each new deck order: a seeded shuffle by default, or an explicit order,
or one of the failures a deck-integrity check must catch (sorted, merely cut, repeated). It is
deterministic: the same seed gives the same sequence of decks.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable, Sequence

from controller.errors import TablectlError
from controller.rules.cards import Card, full_deck
from controller.rules.errors import RuleError

TABLE_DECK_ID = 1       # the back id of the table's own decks
FOREIGN_DECK_ID = 2     # the default back id of a card that slipped in from another deck


@dataclass(frozen=True, slots=True)
class DeckCard:
    """One physical card: its face and the id of the deck its back belongs to."""

    card: Card
    deck_id: int = TABLE_DECK_ID

    def __str__(self) -> str:
        return str(self.card) if self.deck_id == TABLE_DECK_ID else f"{self.card}#{self.deck_id}"

    @classmethod
    def parse(cls, item: "str | Card | DeckCard") -> "DeckCard":
        """``"As"`` (a card of the table's deck), ``"As#2"`` (back id 2), a Card or a DeckCard."""
        if isinstance(item, DeckCard):
            return item
        if isinstance(item, Card):
            return cls(item)
        if not isinstance(item, str):
            raise TablectlError(f"deck card {item!r} must be text such as 'As' or 'As#2' "
                                "(ace of spades with back id 2)")
        face, sep, back = item.strip().partition("#")
        try:
            card = Card.parse(face)
        except RuleError as exc:
            raise TablectlError(f"deck card {item!r}: {exc}") from None
        if not sep:
            return cls(card)
        if not back.isdigit():
            raise TablectlError(f"deck card {item!r}: the back id after '#' must be a whole "
                                "number, e.g. 'As#2'")
        return cls(card, int(back))


def parse_deck(items: Iterable[str | Card | DeckCard] | str) -> list[DeckCard]:
    """An explicit deck order: a list of cards, or one string separated by spaces or commas.

    Duplicates and foreign backs are allowed on purpose (a test may want exactly that deck)."""
    if isinstance(items, str):
        items = items.replace(",", " ").split()
    deck = [DeckCard.parse(i) for i in items]
    if not deck:
        raise TablectlError("an explicit deck needs at least one card, e.g. deck = "
                            "['As', 'Kd', ...]")
    return deck


def new_deck(deck_id: int = TABLE_DECK_ID) -> list[DeckCard]:
    """One full deck of 52 in code order (spades 2..A, hearts, clubs, diamonds)."""
    return [DeckCard(c, deck_id) for c in full_deck()]


def sorted_order(cards: Sequence[DeckCard]) -> list[DeckCard]:
    """What a shuffler left in sort mode puts out: card code order."""
    return sorted(cards, key=lambda d: (d.card.code, d.deck_id))


class DeckMaker:
    """Makes the order of every new deck, and remembers the orders it made.

    ``order(cards, mode)`` returns ``cards`` arranged by ``mode``:

    - ``"shuffle"``: a uniform random permutation from the seeded RNG;
    - ``"sorted"``: code order (a shuffler left in sort mode, a deck never shuffled);
    - ``"cut"``: the previous deck's order, cut once at a random place (a deck merely cut);
    - ``"repeat"``: the same order as an earlier deck (``back`` decks ago, 1 = the last one).

    Cards that are not in the earlier deck (after a missing or extra card was put in) keep a
    place: ``cut`` and ``repeat`` reproduce the earlier order of the cards they share and put the
    others where the random shuffle puts them.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.history: list[list[DeckCard]] = []

    def order(self, cards: Sequence[DeckCard], mode: str = "shuffle", *,
              back: int = 1) -> list[DeckCard]:
        cards = list(cards)
        if mode == "shuffle":
            out = cards[:]
            self.rng.shuffle(out)
        elif mode == "sorted":
            out = sorted_order(cards)
        elif mode in ("cut", "repeat"):
            if len(self.history) < back:
                # Nothing earlier to copy: the first deck of a session is shuffled.
                out = cards[:]
                self.rng.shuffle(out)
            else:
                earlier = self._align(self.history[-back], cards)
                if mode == "cut":
                    k = self.rng.randrange(1, max(2, len(earlier)))
                    out = earlier[k:] + earlier[:k]
                else:
                    out = earlier
        else:
            raise TablectlError(f"deck order {mode!r} is unknown; use shuffle, sorted, cut or "
                                "repeat")
        self.history.append(list(out))     # a copy: the device pops cards off ``out``
        return out

    def explicit(self, cards: Sequence[DeckCard]) -> list[DeckCard]:
        """Record an order given by a test as the next deck."""
        out = list(cards)
        self.history.append(list(out))     # a copy: the device pops cards off ``out``
        return out

    def _align(self, earlier: list[DeckCard], cards: list[DeckCard]) -> list[DeckCard]:
        """The earlier order restricted to ``cards``, with cards it lacks spliced in randomly."""
        pool = list(cards)
        out: list[DeckCard] = []
        for c in earlier:
            if c in pool:
                pool.remove(c)
                out.append(c)
        for c in pool:
            out.insert(self.rng.randrange(len(out) + 1), c)
        return out


def deck_differences(cards: Sequence[DeckCard], deck_id: int = TABLE_DECK_ID
                     ) -> tuple[list[Card], list[DeckCard], list[Card]]:
    """What a card-recognising device finds against one full deck of ``deck_id``:
    (missing faces, extra cards (foreign backs), duplicated faces)."""
    seen: dict[Card, int] = {}
    extra: list[DeckCard] = []
    for d in cards:
        if d.deck_id != deck_id:
            extra.append(d)
            continue
        seen[d.card] = seen.get(d.card, 0) + 1
    missing = [c for c in full_deck() if c not in seen]
    duplicate = [c for c in full_deck() if seen.get(c, 0) > 1]
    return missing, extra, duplicate
