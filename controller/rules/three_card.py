"""Three-card hands: the categories and the comparison shared by Q Poker and Fortune 3 Card Poker.

Both regulations rank the same six categories (89/2004 art. 8, 78/2008 art. 8), highest first:
straight flush, three of a kind, straight, flush, pair, three odd cards. They differ in what
breaks a tie, and this module takes the differences as parameters (:class:`Ranking`):

* Q Poker (89/2004 art. 4(1), 8) ends every comparison with the suits, spades > hearts >
  clubs > diamonds, so with one deck no two hands tie. Which card's suit decides between two
  straights is interpretation Q1 (``straight_suit_card``).
* Fortune 3 Card Poker (78/2008 art. 4, 8) has no suit order: equal ranks tie. Whether a suited
  A-K-Q is a straight flush is interpretation F1 (``suited_ace_king_queen``).

Sequences (art. 4(3) / art. 4(2)): A-K-Q highest, then K-Q-J ... 4-3-2, and A-2-3 (3-2-A) lowest;
the ace plays low only in that one sequence.

A hand's value is a tuple, its *key*: comparing keys compares hands (a larger key wins, equal
keys tie). Pure functions, no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Sequence

from controller.shown import shown

from .base import (CROUPIER, Deal, Irregularity, Mode, PlanRequest, Remedy, Ruling,
                   box as box_recipient)
from .cards import Card, parse_cards
from .errors import RuleError


class Category(IntEnum):
    """The six three-card categories, weakest first (so a larger value is a better hand)."""

    THREE_ODD_CARDS = 0
    PAIR = 1
    FLUSH = 2
    STRAIGHT = 3
    THREE_OF_A_KIND = 4
    STRAIGHT_FLUSH = 5

    @property
    def label(self) -> str:
        """The category's name as the regulations' English glosses write it."""
        return self.name.lower().replace("_", " ")


@dataclass(frozen=True, slots=True)
class Ranking:
    """How one regulation compares three-card hands.

    ``suits_break_ties``: Q Poker's suit order ends every comparison (89/2004 art. 4(1), 8).
    ``straight_suit_card``: for two equal straights under suit tie-breaks, whose suit decides:
    ``top_of_sequence`` (the sequence's top card; the 3 of A-2-3) or ``highest_face_value``
    (the highest card by face value, art. 4(2); the ace of A-2-3).
    ``suited_ace_king_queen``: ``straight_flush`` or ``flush`` (78/2008 art. 4(2) vs 8(1)).
    """

    suits_break_ties: bool
    straight_suit_card: str = "top_of_sequence"
    suited_ace_king_queen: str = "straight_flush"

    def __post_init__(self) -> None:
        if self.straight_suit_card not in ("top_of_sequence", "highest_face_value"):
            raise ValueError(f"bad straight_suit_card {self.straight_suit_card!r}")
        if self.suited_ace_king_queen not in ("straight_flush", "flush"):
            raise ValueError(f"bad suited_ace_king_queen {self.suited_ace_king_queen!r}")


Q_POKER = Ranking(suits_break_ties=True)
FORTUNE = Ranking(suits_break_ties=False)


def sequence_top(ranks: Sequence[int]) -> int | None:
    """The top of the sequence the three ranks form, or None.

    A-K-Q -> 14 (the highest sequence) ... 4-3-2 -> 4; A-2-3 -> 3 (the lowest, the ace low).
    """
    r = sorted(ranks, reverse=True)
    if r[0] - 1 == r[1] and r[1] - 1 == r[2]:
        return r[0]
    if r == [14, 3, 2]:
        return 3
    return None


@dataclass(frozen=True, slots=True)
class HandValue:
    """A hand's category and its comparison key (``key[0]`` is the category)."""

    category: Category
    key: tuple[int, ...]

    @property
    def label(self) -> str:
        return self.category.label


def evaluate(cards: Sequence[Card], ranking: Ranking) -> HandValue:
    """The category and comparison key of a three-card hand under ``ranking``.

    With several decks (Q Poker interpretation ``decks``) a hand may hold the same card twice;
    the categories still apply as written: three cards of one suit are a flush even when two
    share a rank, since flush ranks above pair.
    """
    if len(cards) != 3:
        raise RuleError(f"a three-card hand needs exactly 3 cards, got {len(cards)}")
    ranks = sorted((c.rank for c in cards), reverse=True)
    suited = len({c.suit for c in cards}) == 1
    top = sequence_top(ranks)
    suit_of = _suit_lookup(cards)

    if top is not None and suited and not (
            top == 14 and ranking.suited_ace_king_queen == "flush"):
        cat = Category.STRAIGHT_FLUSH
        key: tuple[int, ...] = (top,)
        if ranking.suits_break_ties:
            key += (cards[0].suit_rank,)
    elif ranks[0] == ranks[2]:
        cat = Category.THREE_OF_A_KIND
        key = (ranks[0],)  # art. 8(2): the higher rank wins; no suit sentence
    elif top is not None and not suited:
        cat = Category.STRAIGHT
        key = (top,)
        if ranking.suits_break_ties:
            decider = top if ranking.straight_suit_card == "top_of_sequence" else ranks[0]
            key += (suit_of(decider),)
    elif suited:
        cat = Category.FLUSH
        key = tuple(ranks)
        if ranking.suits_break_ties:
            key += (cards[0].suit_rank,)
    elif ranks[0] == ranks[1] or ranks[1] == ranks[2]:
        cat = Category.PAIR
        pair = ranks[1]
        kicker = ranks[2] if ranks[0] == ranks[1] else ranks[0]
        key = (pair, kicker)
        if ranking.suits_break_ties:  # 89/2004 art. 8(5): the odd card's suit
            key += (suit_of(kicker),)
    else:
        cat = Category.THREE_ODD_CARDS
        key = tuple(ranks)
        if ranking.suits_break_ties:  # 89/2004 art. 8(6): the suit of the highest card
            key += (suit_of(ranks[0]),)
    return HandValue(cat, (int(cat), *key))


def _suit_lookup(cards: Sequence[Card]):
    def suit_of(rank: int) -> int:
        # With several decks two cards may share a rank and suit; any of them speaks.
        return max(c.suit_rank for c in cards if c.rank == rank)
    return suit_of


# The croupier plays only with a Q-high hand or better (89/2004 art. 9(4), 78/2008 art. 9(5)):
# anything but three odd cards below a queen qualifies.
def qualifies(value: HandValue) -> bool:
    """Whether the croupier's hand is Q-high or better (the qualification of art. 9)."""
    return value.category > Category.THREE_ODD_CARDS or value.key[1] >= 12


# ---------------------------------------------------------------- round mechanics shared by
# the two three-card regulations: dealing plans, stakes, hands read from a round document.

def dealing_plan(request: PlanRequest, *, layout_boxes: int, regulation: str) -> list[Deal]:
    """Three cards to every box holding a bet, left to right, the croupier last.

    Shoe (89/2004 art. 7(1), 78/2008 art. 7(1)): one card at a time, three rounds, each round
    from the lowest box number (the croupier's left) to the highest, the croupier last.
    Shuffler (art. 7(2) of both): three cards at a time, same order, the croupier last.
    Every card face down.
    """
    if not request.boxes:
        raise RuleError("no box holds a bet: there is nothing to deal; place a bet first")
    for n in request.boxes:
        if not 1 <= n <= layout_boxes:
            raise RuleError(f"box {n} does not exist: this table has boxes 1-{layout_boxes} "
                            f"({regulation} art. 2); bet on one of them, or give the table's "
                            "real number of boxes (--layout)")
    order = sorted(request.boxes)
    if request.mode is Mode.SHUFFLER:
        return [Deal(box_recipient(n), 3) for n in order] + [Deal(CROUPIER, 3)]
    plan = []
    for _ in range(3):
        plan += [Deal(box_recipient(n), 1) for n in order] + [Deal(CROUPIER, 1)]
    return plan


def device_failure(irregularity: Irregularity, dealing: bool, shoe_reading: str, article: str,
                   void_word: str) -> Ruling:
    """A shuffler or card-reading shoe failure in the two three-card games, whose articles
    (89/2004 art. 11(5), 78/2008 art. 11(4)) read alike: a shuffler failure while dealing
    voids the round; outside dealing no card is affected. A shoe failure follows the reading
    ``shoe_reading`` of interpretation shoe_malfunction. ``void_word``: what the round
    becomes in the game's own words ("void", "invalid")."""
    if irregularity is Irregularity.SHUFFLER_MALFUNCTION:
        if dealing:
            return Ruling(Remedy.ROUND_VOID, article,
                          f"shuffler malfunction while dealing: the round is {void_word} and "
                          "every bet is returned; replace the shuffler or deal from the shoe",
                          needs_supervisor=True)
        return Ruling(Remedy.CONTINUE, article,
                      "shuffler malfunction outside dealing: no card of this round is "
                      "affected; replace the shuffler or use the shoe before the next deal",
                      needs_supervisor=True)
    if dealing and shoe_reading == "round_void":
        return Ruling(Remedy.ROUND_VOID, article,
                      "card-reading shoe failure while dealing, treated like a shuffler "
                      f"malfunction: the round is {void_word} and every bet is returned; "
                      "repair or replace the shoe (interpretation shoe_malfunction)",
                      needs_supervisor=True)
    return Ruling(Remedy.CONTINUE, article,
                  "card-reading shoe failure: the cards themselves are sound; the croupier "
                  "goes on by hand and the cards are entered at the console (interpretation "
                  "shoe_malfunction)", needs_supervisor=True)


def stake(value, what: str) -> int:
    """A stake from a round document: a whole, non-negative number of chip units."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleError(f"{what} is {shown(value)}: a stake is a whole number of chip units "
                        "(0 or more), e.g. 10; never a fraction or text")
    if value < 0:
        raise RuleError(f"{what} is {value}: a stake cannot be negative; give 0 or more chips")
    return value


def read_hand(raw, what: str, *, distinct: bool = True) -> list[Card]:
    """Exactly three cards, from a JSON list such as ``["As", "Kd", "7c"]``; with ``distinct``
    (one deck) no card twice. Q Poker's reading ``decks=several`` lets a hand hold a card twice."""
    if raw is None:
        raise RuleError(f"{what} has no cards; give its three cards, e.g. [\"As\", \"Kd\", \"7c\"]")
    if not isinstance(raw, (list, str)):
        raise RuleError(f"{what}: cards must be a list such as [\"As\", \"Kd\", \"7c\"], "
                        f"got {shown(raw)}")
    return parse_cards(raw, count=3, what=what, distinct=distinct)


def box_label(raw) -> str:
    """How an error names a box entry of a round document before its number is checked:
    ``box 3`` when it gives a whole number, else ``a box`` (so that in a round of seven boxes
    the one to correct can be found)."""
    box = raw.get("box") if isinstance(raw, dict) else None
    return f"box {box}" if type(box) is int else "a box"


def box_number(raw, layout_boxes: int, regulation: str) -> int:
    """A box number that exists on this table."""
    if raw is None:
        raise RuleError(f'a box has no "box"; give "box": N, its number 1-{layout_boxes}')
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise RuleError(f"box {shown(raw)} must be a box number 1-{layout_boxes}")
    if not 1 <= raw <= layout_boxes:
        raise RuleError(f"box {raw} does not exist: this table has boxes 1-{layout_boxes} "
                        f"({regulation} art. 2); a bet can only lie on one of them")
    return raw
