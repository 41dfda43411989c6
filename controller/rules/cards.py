"""Playing cards: one 52-card deck, parsing with clear errors, and a stable numeric code.

Notation is rank then suit: ``As`` (ace of spades), ``Td`` or ``10d`` (ten of diamonds),
``7c``, ``Qh``. Ranks ``A K Q J T 9 8 7 6 5 4 3 2``; suits ``s h c d`` (spades, hearts,
clubs, diamonds; the order Q Poker's article 4 ranks them, highest first). Upper or lower
case and the suit symbols ``♠ ♥ ♣ ♦`` are accepted on input; ``str(card)`` is canonical.

Every device speaks of a card by its *code*, 0-51: ``suit_index * 13 + (rank - 2)``, with
spades 0, hearts 1, clubs 2, diamonds 3. The code is what travels in the wire protocol.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from controller.shown import described, shown

from .errors import RuleError

RANKS = "23456789TJQKA"
SUITS = "shcd"
SUIT_NAMES = {"s": "spades", "h": "hearts", "c": "clubs", "d": "diamonds"}
RANK_NAMES = {
    2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9", 10: "10",
    11: "J", 12: "Q", 13: "K", 14: "A",
}
_SUIT_SYMBOLS = {"♠": "s", "♥": "h", "♣": "c", "♦": "d"}
# Text that on its own spells a card in any notation Card.parse accepts (``Kd``, ``kd``,
# ``10h``, ``Th``, ``Q♠``), spaces around it too. The table publishes no text that does
# (controller.table.secrecy), and so takes no name a person chooses that does (config).
CARD_TEXT = re.compile(r"^\s*(10|[2-9TJQKAtjqka])[shcdSHCD♠♥♣♦]\s*$")
CARD_HELP = ("write rank then suit, e.g. As, Td, 10h, 7c "
             "(ranks A K Q J T 9 8 7 6 5 4 3 2; suits s h c d)")


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One card. ``rank`` is 2-14 (ace high, 14); ``suit`` is one of ``s h c d``."""

    rank: int
    suit: str

    def __post_init__(self) -> None:
        if not (2 <= self.rank <= 14) or self.suit not in SUITS:
            raise RuleError(f"no such card: rank {self.rank!r} suit {self.suit!r}; {CARD_HELP}")

    @property
    def code(self) -> int:
        """The card's code 0-51 used on the wire (see module docstring)."""
        return SUITS.index(self.suit) * 13 + (self.rank - 2)

    @property
    def suit_rank(self) -> int:
        """Suit strength for Q Poker article 4(1): spades 3, hearts 2, clubs 1, diamonds 0."""
        return 3 - SUITS.index(self.suit)

    @classmethod
    def from_code(cls, code: int) -> "Card":
        """The card with wire code ``code`` (0-51)."""
        if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code < 52:
            raise RuleError(f"card code {shown(code)} is outside 0-51; a device reported a card "
                            "this deck does not have")
        return cls(code % 13 + 2, SUITS[code // 13])

    @classmethod
    def parse(cls, text: str) -> "Card":
        """Parse ``As``, ``10h``, ``td``, ``Q♠``; raise RuleError naming the problem."""
        if not isinstance(text, str):
            raise RuleError(f"a card must be written as text, got {shown(text)}; {CARD_HELP}")
        card = _PARSED.get(text)
        if card is not None and cls is Card:
            return card         # a card is immutable: the same text, the same card
        t = text.strip()
        if len(t) < 2:
            raise RuleError(f"unknown card {shown(text)}; {CARD_HELP}")
        rank_part, suit_part = t[:-1].upper(), t[-1]
        suit = _SUIT_SYMBOLS.get(suit_part, suit_part.lower())
        if rank_part == "10":
            rank_part = "T"
        if len(rank_part) != 1 or rank_part not in RANKS or suit not in SUITS:
            raise RuleError(f"unknown card {shown(text)}; {CARD_HELP}")
        card = cls(RANKS.index(rank_part) + 2, suit)
        if cls is Card and len(_PARSED) < _PARSED_MAX:
            _PARSED[text] = card
        return card

    def __str__(self) -> str:
        return RANKS[self.rank - 2] + self.suit

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"

    @property
    def name(self) -> str:
        """Human name, e.g. ``10 of hearts``."""
        return f"{RANK_NAMES[self.rank]} of {SUIT_NAMES[self.suit]}"


# The spellings parsed so far (every card is parsed again and again: each device event read
# back from the journal, each card a settlement vouches for). Only valid spellings go in, and
# no more than a few per card, so hostile input cannot grow it.
_PARSED: dict[str, Card] = {}
_PARSED_MAX = 52 * 8


def spells_card(text: str) -> bool:
    """Whether ``text`` on its own spells a card (see CARD_TEXT)."""
    return bool(CARD_TEXT.match(text))


def full_deck() -> list[Card]:
    """The 52 cards in code order (spades 2..A, hearts, clubs, diamonds)."""
    return [Card.from_code(i) for i in range(52)]


def parse_cards(items: Iterable[str | Card], *, count: int | None = None,
                what: str = "hand", distinct: bool = True) -> list[Card]:
    """Parse a list of cards; check the count and, with ``distinct`` (one deck), that no card
    appears twice."""
    if isinstance(items, str):
        items = items.replace(",", " ").split()
    elif isinstance(items, (dict, bytes)) or not isinstance(items, Iterable):
        raise RuleError(f"{what} must be a list of cards such as [\"As\", \"Td\"], "
                        f"not {described(items)}")
    cards = [c if isinstance(c, Card) else Card.parse(c) for c in items]
    if count is not None and len(cards) != count:
        raise RuleError(f"{what} has {len(cards)} cards ({' '.join(map(str, cards)) or 'none'}); "
                        f"it needs exactly {count}")
    if distinct:
        ensure_distinct(cards, what=what)
    return cards


def ensure_distinct(cards: Sequence[Card], *, what: str = "the cards") -> None:
    """Raise RuleError naming the first card that appears twice (one deck holds each once)."""
    seen: set[Card] = set()
    for c in cards:
        if c in seen:
            raise RuleError(f"duplicate card {c} in {what}: one 52-card deck holds each card "
                            "once; check the card reader or the round's input")
        seen.add(c)
