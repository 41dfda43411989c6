"""Texas Hold'em hand ranking, 11/2008 articles 10(1), 14 and 15.

A player's hand is the best five of his two hole cards and the five board cards (art. 10(1):
"qualquer combinação", so playing the board is allowed). Suits are all equal (art. 14(1)); the
ace is high, and low only in the straight 5-4-3-2-A (art. 14(3)). The ten categories of
art. 15, highest first, carry the regulation's own names (:data:`CATEGORY_NAMES`).

A :class:`HandValue` orders like the regulation: compare ``(category, tiebreak)``; equal values
are the ties art. 15 declares ("verifica-se um empate"). The one departure from the usual poker
evaluator is art. 15(3): the fifth card beside four of a kind "does not count for any purpose",
so by default it breaks no tie (interpretation ``four_of_a_kind_kicker``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from itertools import combinations
from typing import Iterable, Sequence

from .cards import Card, ensure_distinct, parse_cards
from .errors import RuleError


class Category(IntEnum):
    """The hand categories of art. 15, valued so that a higher number is a better hand."""

    FIVE_ODD_CARDS = 0     # 15(10) cinco cartas diferentes
    ONE_PAIR = 1           # 15(9)  par
    TWO_PAIRS = 2          # 15(8)  dois pares
    THREE_OF_A_KIND = 3    # 15(7)  três cartas iguais ou trio
    STRAIGHT = 4           # 15(6)  sequência
    FLUSH = 5              # 15(5)  naipe ou cor
    FULL_HOUSE = 6         # 15(4)  trio-par
    FOUR_OF_A_KIND = 7     # 15(3)  quatro cartas iguais
    STRAIGHT_FLUSH = 8     # 15(2)  sequência de naipe
    ROYAL_FLUSH = 9        # 15(1)  naipe real

    @property
    def label(self) -> str:
        """The regulation's name, Portuguese then English: ``Trio-par (full house)``."""
        pt, en, _ = CATEGORY_NAMES[self]
        return f"{pt} ({en})"

    @property
    def article(self) -> str:
        return CATEGORY_NAMES[self][2]


CATEGORY_NAMES: dict[Category, tuple[str, str, str]] = {
    Category.ROYAL_FLUSH: ("Naipe real", "royal flush", "11/2008 art. 15(1)"),
    Category.STRAIGHT_FLUSH: ("Sequência de naipe", "straight flush", "11/2008 art. 15(2)"),
    Category.FOUR_OF_A_KIND: ("Quatro cartas iguais", "four of a kind", "11/2008 art. 15(3)"),
    Category.FULL_HOUSE: ("Trio-par", "full house", "11/2008 art. 15(4)"),
    Category.FLUSH: ("Naipe ou cor", "flush", "11/2008 art. 15(5)"),
    Category.STRAIGHT: ("Sequência", "straight", "11/2008 art. 15(6)"),
    Category.THREE_OF_A_KIND: ("Três cartas iguais ou trio", "three of a kind",
                               "11/2008 art. 15(7)"),
    Category.TWO_PAIRS: ("Dois pares", "two pairs", "11/2008 art. 15(8)"),
    Category.ONE_PAIR: ("Par", "one pair", "11/2008 art. 15(9)"),
    Category.FIVE_ODD_CARDS: ("Cinco cartas diferentes", "five odd cards", "11/2008 art. 15(10)"),
}


@dataclass(frozen=True, order=True, slots=True)
class HandValue:
    """The value of a five-card hand. Ordered by ``(category, tiebreak)``; ``cards`` (the five
    cards making it, best first) do not take part in comparisons."""

    category: Category
    tiebreak: tuple[int, ...]
    cards: tuple[Card, ...] = field(compare=False, default=())

    @property
    def label(self) -> str:
        return self.category.label

    def to_json(self) -> dict:
        return {"category": self.category.label, "category_id": self.category.name.lower(),
                "best_five": [str(c) for c in self.cards], "article": self.category.article}


def _straight_high(ranks: set[int]) -> int | None:
    """The top card of a five-rank straight, 5 for 5-4-3-2-A (art. 14(3)), else None."""
    if len(ranks) != 5:
        return None
    hi, lo = max(ranks), min(ranks)
    if hi - lo == 4:
        return hi
    if ranks == {14, 5, 4, 3, 2}:
        return 5
    return None


def evaluate_five(cards: Sequence[Card], *, four_of_a_kind_kicker: bool = False) -> HandValue:
    """The art. 15 value of exactly five distinct cards."""
    if len(cards) != 5:
        raise RuleError(f"a poker hand is five cards, got {len(cards)}")
    ranks = sorted((c.rank for c in cards), reverse=True)
    counts: dict[int, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    # ranks grouped by multiplicity, then by rank: e.g. full house 9-9-9-4-4 -> [9, 4]
    groups = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    flush = len({c.suit for c in cards}) == 1
    high = _straight_high(set(ranks))
    # order the five cards for display: by group, then rank (wheel shows the ace last)
    ordered = sorted(cards, key=lambda c: (counts[c.rank], c.rank), reverse=True)
    if high == 5:
        ordered = sorted(cards, key=lambda c: 1 if c.rank == 14 else c.rank, reverse=True)

    if flush and high is not None:
        if high == 14:
            # 15(1): every royal flush is the same hand; suits are equal (14(1))
            return HandValue(Category.ROYAL_FLUSH, (), tuple(ordered))
        return HandValue(Category.STRAIGHT_FLUSH, (high,), tuple(ordered))
    if shape == [4, 1]:
        # 15(3): "A outra carta não conta para qualquer efeito"
        tb = (groups[0], groups[1]) if four_of_a_kind_kicker else (groups[0],)
        return HandValue(Category.FOUR_OF_A_KIND, tb, tuple(ordered))
    if shape == [3, 2]:
        return HandValue(Category.FULL_HOUSE, (groups[0], groups[1]), tuple(ordered))
    if flush:
        return HandValue(Category.FLUSH, tuple(ranks), tuple(ordered))
    if high is not None:
        return HandValue(Category.STRAIGHT, (high,), tuple(ordered))
    if shape == [3, 1, 1]:
        return HandValue(Category.THREE_OF_A_KIND, tuple(groups), tuple(ordered))
    if shape == [2, 2, 1]:
        return HandValue(Category.TWO_PAIRS, tuple(groups), tuple(ordered))
    if shape == [2, 1, 1, 1]:
        return HandValue(Category.ONE_PAIR, tuple(groups), tuple(ordered))
    return HandValue(Category.FIVE_ODD_CARDS, tuple(ranks), tuple(ordered))


def best_hand(cards: Iterable[Card | str], *, four_of_a_kind_kicker: bool = False) -> HandValue:
    """The best five-card hand among five to seven distinct cards (art. 10(1)).

    Among equally valued fives the one with the highest cards is shown (it matters only for
    display, e.g. the idle kicker beside four of a kind).
    """
    parsed = parse_cards(list(cards), what="the hand")
    if not 5 <= len(parsed) <= 7:
        raise RuleError(f"a Hold'em hand is the best five of five to seven cards; got "
                        f"{len(parsed)} ({' '.join(map(str, parsed)) or 'none'})")
    ensure_distinct(parsed, what="the hand")
    best: HandValue | None = None
    best_display: tuple = ()
    for five in combinations(parsed, 5):
        value = evaluate_five(five, four_of_a_kind_kicker=four_of_a_kind_kicker)
        display = (value.category, value.tiebreak, sorted((c.rank for c in five), reverse=True))
        if best is None or display > best_display:
            best, best_display = value, display
    assert best is not None
    return best


def holdem_hand(hole: Sequence[Card | str], board: Sequence[Card | str], *,
                four_of_a_kind_kicker: bool = False) -> HandValue:
    """The art. 10(1) hand of a player: two hole cards with the five board cards."""
    hole_cards = parse_cards(list(hole), count=2, what="the hole cards")
    board_cards = parse_cards(list(board), count=5, what="the board")
    all_cards = hole_cards + board_cards
    ensure_distinct(all_cards, what="the hole cards and the board")
    return best_hand(all_cards, four_of_a_kind_kicker=four_of_a_kind_kicker)
