"""Super Pan 9 — Portaria n.º 261/96/M (九家樂), article by article.

A player-banked game: one seat holds the bank (art. 5), every seat in play and the banker's seat
receive two cards (art. 2(3)), and each seat's bets are settled against the banker's hand
(art. 6-8), with the house's commission (art. 9).

Table orientation (used throughout, and by ``pan9_bank``): the layout has N seats (門 / lugar),
numbered 1..N clockwise as seen from above, seat 1 at the croupier's left. The croupier faces
the seats, so clockwise runs from his left to his right and *counter-clockwise* (art. 2(2),
5(2)) from his right to his left: that is the "right to left" of art. 2(3) as the croupier sees
it, and it is decreasing seat numbers, seat 1 being followed by seat N. The banker sits at one
of the seats and holds a hand like every other seat: in a dealing plan the banker is
``Recipient box <banker's seat>``, never ``croupier`` (the croupier only deals).

Ambiguous points are interpretations (see docs/interpretations.md, IDs P1-P12); every reading
is implemented and chosen by key. The module is pure: no I/O, no clock, no randomness.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from controller.shown import shown

from . import pan9_bank
from .base import (Deal, Game, Interpretation, Irregularity, Mode, Phase, PlanRequest, Recipient,
                   Remedy, Ruling, Settlement, WagerResult, box, cards_json,
                   check_round_stakes)
from .cards import Card, ensure_distinct, parse_cards
from .doc_keys import check_keys, flag, require
from .errors import RuleError
from .pan9_bank import BankLedger, BankShare, allocate_net, check_capital, counter_clockwise

REG = "261/96/M"
DEFAULT_LAYOUT = 8          # seats, the banker's included, when the table config says nothing
MIN_SEATS = 2               # art. 3(1)
MAX_SEATS = 26              # art. 1(1) one 52-card deck, art. 2(3) two cards a seat
DICE = 4                    # art. 1(2)
COMMISSION = Fraction(5, 100)  # art. 9

# Interpretation IDs of docs/interpretations.md, by configuration key.
IDS = {
    "count_empty_seats": "P1a", "banker_is_one": "P1b", "equal_points": "P2",
    "machine_failure": "P3", "dice_malfunction": "P4", "dealing_error": "P5",
    "banker_card_exposed": "P6", "commission_on": "P7", "commission_rounding": "P8",
    "capital_cap": "P9", "co_banker_order": "P10", "bank_requires_previous_bet": "P11",
    "adjusted_total": "P12",
}


def art(ref: str) -> str:
    """A citation of this regulation, e.g. ``261/96/M art. 2(4)``."""
    return f"{REG} art. {ref}"


def interp(key: str) -> str:
    """A citation of an interpretation where the text is silent or ambiguous."""
    return f"{REG} interpretation {IDS[key]} ({key})"


# --- art. 6: card values ------------------------------------------------------------------


def card_points(card: Card) -> int:
    """Art. 6(1): 10 and the pictures count 0, the ace 1, the others their face value."""
    if card.rank == 14:
        return 1
    return 0 if card.rank >= 10 else card.rank


def card_order(card: Card) -> int:
    """Art. 6(1): single-card order K Q J 10 9 … 2 A, as 13 (K) down to 1 (A). Suits are equal."""
    return 1 if card.rank == 14 else card.rank


def hand_points(cards: Sequence[Card]) -> int:
    """Art. 6(2): the two cards' values added, only the last digit counted; 9 is best.

    (The Portuguese says a sum "above ten" loses ten and the Chinese keeps the last digit of a
    sum "over 10"; a sum of exactly 10 is 0 in both, since 9 is the highest score.)"""
    return sum(card_points(c) for c in cards) % 10


def hand_key(cards: Sequence[Card], equal_points: str = "highest_card") -> tuple[int, ...]:
    """Art. 6-7: a key that orders hands; a higher key wins, equal keys go to the banker (art. 8).

    Equal points are decided by the single highest card (``highest_card``, the Chinese
    "其中最大之一張牌") or by the cards compared in turn, highest first (``each_card``, the
    Portuguese plural "as cartas de valor mais elevado"): interpretation P2."""
    orders = sorted((card_order(c) for c in cards), reverse=True)
    if equal_points == "highest_card":
        return (hand_points(cards), orders[0])
    if equal_points == "each_card":
        return (hand_points(cards), *orders)
    raise RuleError(f"equal_points cannot be {shown(equal_points)}; choose highest_card or "
                    "each_card")


def compare_hands(a: Sequence[Card], b: Sequence[Card],
                  equal_points: str = "highest_card") -> int:
    """1 when ``a`` ranks above ``b``, -1 below, 0 when art. 8 applies (equal in every respect)."""
    ka, kb = hand_key(a, equal_points), hand_key(b, equal_points)
    return (ka > kb) - (ka < kb)


def seat_wins(seat: Sequence[Card], banker: Sequence[Card],
              equal_points: str = "highest_card") -> bool:
    """Art. 7-8: the seat wins only when it ranks strictly above the banker; a full tie is the
    banker's."""
    return compare_hands(seat, banker, equal_points) > 0


def describe(cards: Sequence[Card]) -> str:
    p = hand_points(cards)
    return f"{p} point{'s' if p != 1 else ''}"


# --- art. 1-3: material, dice, seats -------------------------------------------------------


def check_dice(dice: object) -> tuple[int, ...]:
    """Art. 1(2): four dice, each showing 1 to 6."""
    if dice is None:
        raise RuleError("the four dice are missing: give them as e.g. 3,5,1,6 (art. 2(2))")
    if isinstance(dice, (str, bytes)) or not isinstance(dice, Iterable):
        raise RuleError(f"dice {shown(dice)} must be four whole numbers 1-6, e.g. 3,5,1,6")
    values = list(dice)
    if len(values) != DICE:
        raise RuleError(f"{len(values)} dice given ({shown(values)}); Super Pan 9 shakes "
                        "exactly four (art. 1(2))")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6:
            raise RuleError(f"a die cannot show {shown(v)}; each die shows 1 to 6 "
                            f"({shown(values)})")
    return tuple(values)


def check_adjust(adjust: object, interpretations: Mapping[str, str] | None = None) -> int:
    """Art. 2(3): the points the banker declares, before the shake, to add (+) or subtract (-).

    Any whole number under reading ``wrap`` of P12; under ``refuse`` the declaration must leave
    the lowest throw (4) a total of at least 1, so no throw can give a count of 0 or less."""
    if isinstance(adjust, bool) or not isinstance(adjust, int):
        raise RuleError(f"declared adjustment {shown(adjust)} must be a whole number such as +2 "
                        "or -1")
    if (interpretations or {}).get("adjusted_total", "wrap") == "refuse" and adjust < 1 - DICE:
        raise RuleError(f"declared adjustment {adjust:+d} could leave a total below 1 (lowest "
                        f"throw {DICE}); with adjusted_total=refuse subtract at most {DICE - 1}")
    return adjust


def check_seat(seat: object, layout: int, what: str = "seat") -> int:
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise RuleError(f"{what} {shown(seat)} must be a seat number 1-{layout}")
    if not 1 <= seat <= layout:
        raise RuleError(f"{what} {seat} does not exist: the table has seats 1-{layout} "
                        "(set the layout if the table has more)")
    return seat


# --- art. 2(2)-(3): who receives the first cards, and the order ----------------------------


def first_seat(*, banker: int, in_play: Iterable[int], dice: Sequence[int], adjust: int,
               layout: int, interpretations: Mapping[str, str]) -> int:
    """Art. 2(2)-(3): the seat that receives the first cards.

    The dice total plus the declared adjustment is counted counter-clockwise from the banker.
    P1a ``count_empty_seats``: ``no`` counts only the seats in play (the counted seat is always
    one that receives cards); ``yes`` counts every seat of the layout, and when the count ends
    on a seat not in play the first cards go to the next seat in play counter-clockwise.
    P1b ``banker_is_one``: ``yes`` the banker's seat is "one"; ``no`` the first seat
    counter-clockwise after the banker is "one". P12 ``adjusted_total``: a total below 1 is
    counted on around the same circle (``wrap``) or refused (``refuse``).
    """
    chosen = GAME.resolve_interpretations(interpretations)
    in_play = set(in_play)
    if banker not in in_play:
        raise RuleError(f"the banker's seat {banker} must be among the seats in play "
                        f"{sorted(in_play)}: the banker holds a hand ({art('2(3)')})")
    total = sum(check_dice(dice)) + check_adjust(adjust, chosen)
    if total < 1 and chosen["adjusted_total"] == "refuse":
        raise RuleError(f"dice {sum(dice)} with declared {adjust:+d} give {total}: with "
                        "adjusted_total=refuse the count must be at least 1")
    counted = range(1, layout + 1) if chosen["count_empty_seats"] == "yes" else in_play
    ring = counter_clockwise(counted, banker)
    steps = total - 1 if chosen["banker_is_one"] == "yes" else total
    landed = ring[steps % len(ring)]
    return counter_clockwise(in_play, landed)[0]


def dealing_order(first: int, in_play: Iterable[int]) -> list[int]:
    """Art. 2(3): right to left (counter-clockwise) from the first seat, every seat in play,
    the banker's included."""
    return counter_clockwise(in_play, first)


def settlement_order(first: int, in_play: Iterable[int], banker: int) -> list[int]:
    """Art. 2(3): bets are settled in the dealing order, right to left from the first seat
    dealt; the banker's seat holds no bets and is skipped."""
    return [s for s in dealing_order(first, in_play) if s != banker]


def reveal_order(first: int, in_play: Iterable[int], banker: int) -> list[int]:
    """Art. 5(6): the players look at and lay down their cards first; the banker opens last."""
    return settlement_order(first, in_play, banker) + [banker]


def bets_open(phase: Phase) -> bool:
    """Art. 2(5): bets are placed before the banker shakes; from the shake on no bet is placed,
    added to, removed or moved."""
    return Phase(phase) == Phase.BETTING


def check_bet_change(phase: Phase) -> None:
    """Raise RuleError citing art. 2(5) when a bet is placed or changed after the shake."""
    if not bets_open(phase):
        raise RuleError(f"bets are closed ({Phase(phase).value}), since after the banker shakes "
                        "the dice no bet may be placed, added to, removed or moved "
                        f"({art('2(5)')}); wait for the next round")


# --- art. 9: commission -------------------------------------------------------------------


def commission_on(amount: int, rounding: str = "floor") -> int:
    """Art. 9: 5 % of a win, in whole chip units (P8: ``floor`` leaves the fraction with the
    winner, ``half_up`` rounds to the nearest unit, halves up, ``ceil`` takes the whole unit)."""
    if amount <= 0:
        return 0
    if rounding == "floor":
        return amount * 5 // 100
    if rounding == "half_up":
        return (amount * 5 + 50) // 100
    if rounding == "ceil":
        return -(-amount * 5 // 100)
    raise RuleError(f"commission_rounding cannot be {shown(rounding)}; choose floor, half_up or "
                    "ceil")


# --- the game -----------------------------------------------------------------------------


def _interpretations() -> tuple[Interpretation, ...]:
    I = Interpretation
    return (
        I("count_empty_seats", art("2(2)"),
          "P1a: when the dice total is counted from the banker, are seats not in play counted?",
          ("no", "yes"), "no"),
        I("banker_is_one", art("2(2)"),
          "P1b: counting \"from the banker\" (由庄起), is the banker's seat one?", ("yes", "no"),
          "yes"),
        I("equal_points", art("7(2), 8"),
          "P2: equal points: compare only the highest card (Chinese) or each card in turn "
          "(Portuguese plural)?", ("highest_card", "each_card"), "highest_card"),
        I("machine_failure", "261/96/M (silent)",
          "P3: the shuffler or shoe fails while dealing: round void, or the croupier completes "
          "the deal?", ("round_void", "rectify"), "round_void"),
        I("dice_malfunction", art("2(4)") + " by analogy",
          "P4: the electronic dice agitator fails during the shake: shake again or void?",
          ("reshake", "round_void"), "reshake"),
        I("dealing_error", "261/96/M (silent)",
          "P5: cards dealt in the wrong order or wrong number: round void, or put right?",
          ("round_void", "rectify"), "round_void"),
        I("banker_card_exposed", art("4"),
          "P6: a banker's card exposed while dealing: valid like any card (art. 4), or void "
          "as the croupier's card in Q Poker?", ("continue", "round_void"), "continue"),
        I("commission_on", art("9"),
          "P7: whose winnings pay the 5 % commission?",
          ("all_winners", "players_only", "bank_only"), "all_winners"),
        I("commission_rounding", art("9"),
          "P8: how does 5 % round to the chip unit?", ("floor", "half_up", "ceil"), "floor"),
        I("capital_cap", art("5(3), 2(3)"),
          "P9: bets beyond the bank's capital: settled seat by seat in order, or on the "
          "round's net?", ("in_order", "net"), "in_order"),
        I("co_banker_order", art("5(5)"),
          "P10: the order among co-banking players", ("as_placed", "counter_clockwise"),
          "as_placed"),
        I("bank_requires_previous_bet", art("5(2)"),
          "P11: must every new banker have bet in the previous round (Chinese), or only one the "
          "bank passed to after a refusal (Portuguese)?", ("always", "when_passed"), "always"),
        I("adjusted_total", art("2(3)"),
          "P12: dice total plus declared adjustment below 1", ("wrap", "refuse"), "wrap"),
    )


class SuperPan9(Game):
    """Super Pan 9, Portaria n.º 261/96/M."""

    game_id = "super-pan-9"
    # One wager: a stake on a seat, against the banker (art. 2(5), 3); settle() names it "seat".
    wagers: tuple[str, ...] = ("seat",)
    regulation = REG
    title = "Super Pan 9"
    interpretations = _interpretations()

    # art. 3(1), with art. 1(1) and 2(3) for the upper bound
    def check_layout(self, layout_boxes: int,
                     interpretations: Mapping[str, str] | None = None) -> None:
        """Art. 3(1): at least two seats, the banker's included; one 52-card deck (art. 1(1))
        gives two cards (art. 2(3)) to at most 26 seats."""
        if isinstance(layout_boxes, bool) or not isinstance(layout_boxes, int):
            raise RuleError(f"the layout {shown(layout_boxes)} must be a whole number of seats")
        if layout_boxes < MIN_SEATS:
            raise RuleError(f"a Super Pan 9 table has at least {MIN_SEATS} seats, the banker's "
                            f"included ({art('3(1)')}); the layout has {layout_boxes}")
        if layout_boxes > MAX_SEATS:
            raise RuleError(f"{layout_boxes} seats cannot each get two cards from one 52-card "
                            f"deck ({art('1(1)')}, {art('2(3)')}); at most {MAX_SEATS}")

    def check_adjust(self, adjust: object,
                     interpretations: Mapping[str, str] | None = None) -> int:
        """Art. 2(3): the points the banker declares before the shake, checked when declared
        under the chosen reading of P12 (``adjusted_total``)."""
        return check_adjust(adjust, self.resolve_interpretations(interpretations))

    def check_bet_change(self, phase: Phase, cards_dealt: int, *, removal: bool = False) -> None:
        """Art. 2(5): from the shake on, no bet is placed, added to, removed or moved."""
        check_bet_change(phase)

    def _layout(self, layout: object) -> int:
        n = DEFAULT_LAYOUT if layout is None else layout
        self.check_layout(n)  # type: ignore[arg-type]
        return n  # type: ignore[return-value]

    def dealing_plan(self, request: PlanRequest) -> list[Deal]:
        """Art. 2(2)-(3): from the first seat (dice counted from the banker), right to left,
        two consecutive cards to every seat in play, the banker's seat included (it is
        ``box <banker>``, in play whether or not ``request.boxes`` lists it). Shoe: two
        one-card steps per seat; shuffler: one two-card step. ``layout_boxes`` defaults to
        8 seats."""
        banker, in_play, first = self._seats(request)
        mode = Mode.parse(request.mode)
        plan: list[Deal] = []
        for seat in dealing_order(first, in_play):
            if mode == Mode.SHOE:
                plan += [Deal(box(seat), 1), Deal(box(seat), 1)]
            else:
                plan.append(Deal(box(seat), 2))
        return plan

    def reveal_order(self, request: PlanRequest) -> list[Recipient]:
        """Art. 5(6): every seat in play lays down its cards, in the dealing order (art.
        2(3)), and the banker opens his last, even when the dice gave him the first cards."""
        banker, in_play, first = self._seats(request)
        return [box(seat) for seat in reveal_order(first, in_play, banker)]

    def _seats(self, request: PlanRequest) -> tuple[int, set[int], int]:
        """The banker's seat, the seats in play (his included) and the first seat dealt, as
        the dice give it (art. 2(2)-(3))."""
        chosen = self.resolve_interpretations(request.interpretations)
        layout = self._layout(request.layout_boxes)
        if request.banker is None:
            raise RuleError("the banker's seat is missing: give --banker N (art. 2(2) counts "
                            "from the banker)")
        banker = check_seat(request.banker, layout, "banker's seat")
        in_play = {check_seat(s, layout) for s in request.boxes} | {banker}
        if len(in_play) < 2:
            raise RuleError(f"no seat in play besides the banker's ({banker}); a round needs at "
                            f"least one seat against the bank ({art('3(1)')})")
        first = first_seat(banker=banker, in_play=in_play, dice=request.dice or None,
                           adjust=request.adjust, layout=layout, interpretations=chosen)
        return banker, in_play, first

    def ruling(self, irregularity: Irregularity, phase: Phase,
               interpretations: Mapping[str, str] | None = None) -> Ruling:
        """The remedy for an irregularity, citing the article or, where the text is silent,
        the interpretation."""
        chosen = self.resolve_interpretations(interpretations)
        try:
            irr, phase = Irregularity(irregularity), Phase(phase)
        except ValueError:
            raise RuleError(f"unknown irregularity {shown(irregularity)} or phase "
                            f"{shown(phase)}; the "
                            f"irregularities are {', '.join(i.value for i in Irregularity)} and "
                            f"the phases {', '.join(p.value for p in Phase)}") from None
        before_cards = phase in (Phase.BETTING, Phase.SHAKING)
        after_cards = phase in (Phase.DECISIONS, Phase.REVEAL, Phase.SETTLEMENT)

        if irr in (Irregularity.DIE_NOT_FLAT, Irregularity.DIE_OUT_OF_CUP):
            if not before_cards:
                raise RuleError(f"{irr.value} can only happen while the dice are shaken, not "
                                f"in {phase.value}")
            what = "a die is not lying flat (翹骰)" if irr == Irregularity.DIE_NOT_FLAT else \
                "a die fell out of the cup"
            return Ruling(Remedy.RESHAKE, art("2(4)"),
                          f"{what}: the banker shakes the dice again; bets stay as they are")
        if irr == Irregularity.DICE_MALFUNCTION:
            if not before_cards:
                return Ruling(Remedy.CONTINUE, interp("dice_malfunction"),
                              "the dice were read before the agitator failed: the round goes "
                              "on; repair or replace it before the next shake", True)
            if chosen["dice_malfunction"] == "reshake":
                return Ruling(Remedy.RESHAKE, interp("dice_malfunction"),
                              "the dice agitator failed: no card is out and bets are closed, so "
                              "the banker shakes again (as art. 2(4)) once it is repaired or "
                              "with the cup (art. 1(2))", True)
            return Ruling(Remedy.ROUND_VOID, interp("dice_malfunction"),
                          "the dice agitator failed: round void, bets returned", True)
        if irr == Irregularity.PLAYER_CARD_EXPOSED:
            return Ruling(Remedy.CONTINUE, art("4"),
                          "a card exposed while dealing stays valid; the round goes on")
        if irr == Irregularity.CROUPIER_CARD_EXPOSED:
            if chosen["banker_card_exposed"] == "continue":
                return Ruling(Remedy.CONTINUE, art("4"),
                              "the banker's card exposed while dealing stays valid, as every "
                              "exposed card; the round goes on")
            return Ruling(Remedy.ROUND_VOID, interp("banker_card_exposed"),
                          "the banker's card was exposed: round void, bets returned")
        if irr in (Irregularity.WRONG_ORDER, Irregularity.WRONG_COUNT,
                   Irregularity.CARD_TO_BOX_WITHOUT_BET, Irregularity.DEALING_ERROR,
                   Irregularity.MISDEAL, Irregularity.DEALING_ERROR_UNCORRECTABLE):
            what = {Irregularity.WRONG_ORDER: "cards dealt out of order",
                    Irregularity.WRONG_COUNT: "a seat got the wrong number of cards",
                    Irregularity.CARD_TO_BOX_WITHOUT_BET: "cards dealt to a seat not in play",
                    Irregularity.DEALING_ERROR: "a dealing error",
                    Irregularity.MISDEAL: "the croupier declared a misdeal",
                    Irregularity.DEALING_ERROR_UNCORRECTABLE: "a dealing error that cannot "
                    "be put right"}[irr]
            if (chosen["dealing_error"] == "rectify" and irr not in
                    (Irregularity.MISDEAL, Irregularity.DEALING_ERROR_UNCORRECTABLE)):
                return Ruling(Remedy.RECTIFY, interp("dealing_error"),
                              f"{what}: the croupier puts the cards where the plan says "
                              "(art. 2(3)) and the round goes on", True)
            return Ruling(Remedy.ROUND_VOID, interp("dealing_error"),
                          f"{what}: round void, bets returned, new round")
        if irr in (Irregularity.SHUFFLER_MALFUNCTION, Irregularity.SHOE_MALFUNCTION):
            device = "shuffler" if irr == Irregularity.SHUFFLER_MALFUNCTION else "shoe"
            if before_cards:
                return Ruling(Remedy.CONTINUE, interp("machine_failure"),
                              f"the {device} failed before any card: replace it or switch "
                              "device before dealing", True)
            if after_cards:
                return Ruling(Remedy.CONTINUE, interp("machine_failure"),
                              f"the {device} failed after every card was out: the round goes "
                              "on; replace it before the next round", True)
            if chosen["machine_failure"] == "rectify":
                return Ruling(Remedy.RECTIFY, interp("machine_failure"),
                              f"the {device} failed while dealing: the croupier completes the "
                              "deal by hand in the plan's order", True)
            return Ruling(Remedy.ROUND_VOID, interp("machine_failure"),
                          f"the {device} failed while dealing: round void, bets returned; "
                          "replace it or switch device", True)
        raise RuleError(f"{irr.value} is not an irregularity of Super Pan 9 (no board, no "
                        "community cards)")

    # --- settlement -------------------------------------------------------------------------

    def settle(self, round_doc: Mapping[str, Any]) -> Settlement:
        """Settle one round (docs/settle.md, "Super Pan 9")."""
        rnd = _Round.parse(self, round_doc)
        return rnd.settle()

    # --- odds -------------------------------------------------------------------------------

    def odds(self, interpretations: Mapping[str, str] | None = None,
             progress: Any = None) -> dict[str, Any]:
        """The exact return of a unit bet on a seat against the banker.

        Every two-card seat hand against every two-card banker hand from the other 50 cards
        (1326 × 1225), counted by ranks (suits never matter in Pan 9). The bank's capital is
        ignored; the commission of art. 9 is charged on the seat's win when P7 makes players
        pay it (exactly 5 %, no rounding). ``house_edge`` is positive when the banker's side
        (banker and house together) wins. ``progress``, if given, is called as
        ``progress(done, total)``."""
        chosen = self.resolve_interpretations(interpretations)
        wins, losses, total = seat_outcome_counts(chosen["equal_points"], progress)
        p_win = Fraction(wins, total)
        player_pays = chosen["commission_on"] in ("all_winners", "players_only")
        c = COMMISSION if player_pays else Fraction(0)
        edge = Fraction(losses, total) - p_win * (1 - c)
        return {
            "game": self.game_id,
            "interpretations": chosen,
            "bets": {"seat": {
                "house_edge": float(edge),
                "house_edge_exact": f"{edge.numerator}/{edge.denominator}",
                "p_seat_wins": float(p_win),
                "p_banker_wins": float(Fraction(losses, total)),
                "hands": total,
                "commission_on_seat_win": float(c),
            }},
        }


def seat_outcome_counts(equal_points: str = "highest_card",
                        progress: Any = None) -> tuple[int, int, int]:
    """(seat wins, banker wins, all deals) over every seat hand and banker hand from one deck,
    counted by card order 1 (A) .. 13 (K), four cards of each."""
    orders = range(1, 14)
    pairs = [(a, b) for a in orders for b in orders if a <= b]

    def pts(o: int) -> int:
        return o if o < 10 else 0

    def key(a: int, b: int) -> tuple[int, ...]:
        p = (pts(a) + pts(b)) % 10
        return (p, b) if equal_points == "highest_card" else (p, b, a)

    if equal_points not in ("highest_card", "each_card"):
        raise RuleError(f"equal_points cannot be {shown(equal_points)}; choose highest_card or "
                        "each_card")
    wins = losses = 0
    for done, (a, b) in enumerate(pairs, 1):
        left = [4] * 14
        n_seat = 6 if a == b else 16
        left[a] -= 1
        left[b] -= 1
        ks = key(a, b)
        for c, d in pairs:
            n_bank = left[c] * (left[c] - 1) // 2 if c == d else left[c] * left[d]
            if not n_bank:
                continue
            if ks > key(c, d):
                wins += n_seat * n_bank
            else:
                losses += n_seat * n_bank
        if callable(progress):
            progress(done, len(pairs))
    return wins, losses, wins + losses


# --- the round document -------------------------------------------------------------------


# the keys of the round document (docs/settle.md); anything else is refused, since a typo
# ("ajust", "co_banker") would otherwise settle a different round than the one played
ROUND_KEYS = {"game", "mode", "interpretations", "layout_boxes", "banker", "co_bankers", "dice",
              "adjust", "first_seat", "seats"}
BANKER_KEYS = {"seat", "player", "capital", "cards"}
SEAT_KEYS = {"seat", "cards", "bets"}
BET_KEYS = {"player", "amount"}
CO_BANKER_KEYS = {"player", "seat", "capital", "house"}
HOUSE_KEYS = {"house", "capital"}


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleError(f"{what} {shown(value)} must be a whole number of chip units")
    return value


class _Round:
    """One finished round parsed and checked from the JSON document of docs/settle.md."""

    def __init__(self) -> None:
        self.game: SuperPan9
        self.chosen: dict[str, str] = {}
        self.layout = DEFAULT_LAYOUT
        self.banker_seat = 0
        self.banker_player: str | None = None
        self.banker_cards: list[Card] = []
        self.shares: list[BankShare] = []
        self.seats: dict[int, list[Card]] = {}
        self.bets: dict[int, list[tuple[str | None, int]]] = {}
        self.first = 0
        self._share_nets: list[int] = []   # each bank share's result, set by the settling

    @classmethod
    def parse(cls, game: SuperPan9, doc: Mapping[str, Any]) -> "_Round":
        if not isinstance(doc, Mapping):
            raise RuleError("the round must be a JSON object; see docs/settle.md")
        check_keys(doc, ROUND_KEYS, "the round")
        r = cls()
        r.game = game
        if doc.get("game", game.game_id) != game.game_id:
            raise RuleError(f"this round is {shown(doc.get('game'))}, not {game.game_id}")
        overrides = doc.get("interpretations") or {}
        if not isinstance(overrides, Mapping):
            raise RuleError("\"interpretations\" must be an object of key: reading")
        r.chosen = game.resolve_interpretations(overrides)
        Mode.parse(doc.get("mode", "shoe"))
        r.layout = game._layout(doc.get("layout_boxes"))

        banker = doc.get("banker")
        if not isinstance(banker, Mapping):
            raise RuleError("the round needs \"banker\": {\"seat\": N, \"capital\": C, "
                            "\"cards\": [..]} (art. 5(3): the capital is on the table)")
        check_keys(banker, BANKER_KEYS, "\"banker\"")
        r.banker_seat = check_seat(require(banker, "seat", "\"banker\"",
                                           f"\"seat\": N, the banker's seat 1-{r.layout}"),
                                   r.layout, "banker's seat")
        r.banker_player = banker.get("player")
        capital = check_capital(banker.get("capital"), "the banker")
        r.banker_cards = parse_cards(require(banker, "cards", "\"banker\"",
                                             "\"cards\": [the banker's two cards]"), count=2,
                                     what=f"the banker's hand (seat {r.banker_seat})")

        seats = doc.get("seats")
        if not isinstance(seats, list) or not seats:
            raise RuleError("the round needs \"seats\": a list of the seats in play, each with "
                            "\"seat\", \"cards\" and \"bets\"; see docs/settle.md")
        bettors: dict[str, int] = {}
        for i, item in enumerate(seats, 1):
            check_keys(item, SEAT_KEYS, f"seat entry {i}")
            seat = check_seat(require(item, "seat", f"seat entry {i}",
                                      f"\"seat\": N, its number 1-{r.layout}"), r.layout)
            if seat == r.banker_seat:
                raise RuleError(f"seat {seat} is the banker's: no bet is placed on it (to share "
                                f"the bank, co-bank under \"co_bankers\", {art('5(5)')}); its "
                                "cards go under \"banker\"")
            if seat in r.seats:
                raise RuleError(f"seat {seat} is listed twice; give each seat once with all its "
                                "bets")
            r.seats[seat] = parse_cards(require(item, "cards", f"seat {seat}",
                                                "\"cards\": [its two cards]"), count=2,
                                        what=f"seat {seat}'s hand")
            bets = item.get("bets")
            if bets is not None and not isinstance(bets, list):
                # {"amount": 5} for [{"amount": 5}]: a shape to correct, not a seat without bets
                raise RuleError(f"seat {seat}: \"bets\" must be a list of bets, got "
                                f"{shown(bets)}: give [{{\"player\": name, \"amount\": N}}, …]")
            if not bets:
                raise RuleError(f"seat {seat} has no bets: a seat is in play only with a bet "
                                f"({art('2(5)')}); drop it or give its bets")
            r.bets[seat] = []
            for bet in bets:
                check_keys(bet, BET_KEYS, f"a bet on seat {seat}")
                amount = _int(require(bet, "amount", f"a bet on seat {seat}",
                                      "\"amount\": N, the stake in chip units"),
                              f"bet on seat {seat}")
                if amount <= 0:
                    raise RuleError(f"bet of {amount} on seat {seat}: a bet is more than 0 chip "
                                    "units")
                player = bet.get("player")
                if player is not None:
                    player = str(player)
                    bettors.setdefault(player, seat)
                r.bets[seat].append((player, amount))

        check_round_stakes(sum(a for bets in r.bets.values() for _, a in bets))
        ensure_distinct(r.banker_cards + [c for cs in r.seats.values() for c in cs],
                        what="the round (one deck, art. 1(1))")
        if r.banker_player is not None and str(r.banker_player) in bettors:
            raise RuleError(f"the banker {r.banker_player} bets on seat "
                            f"{bettors[str(r.banker_player)]}: the banker plays against every "
                            "seat and cannot bet on one")

        shares = [BankShare("banker", capital, r.banker_seat, "banker")]
        co = doc.get("co_bankers", [])
        if not isinstance(co, list):
            raise RuleError(f"\"co_bankers\" must be a list, got {shown(co)}: give [{{\"player\", "
                            "\"seat\", \"capital\"} or {\"house\": true, \"capital\"}, ...], "
                            "or leave \"co_bankers\" out when nobody co-banks")
        co_shares = []
        for i, entry in enumerate(co, 1):
            check_keys(entry, CO_BANKER_KEYS, f"co-banker {i}")
            if flag(entry, "house", f"co-banker {i}"):
                check_keys(entry, HOUSE_KEYS, f"co-banker {i} (the house)")
                co_shares.append(BankShare("house", check_capital(entry.get("capital"),
                                                                  "the house's co-bank"),
                                           None, "house"))
                continue
            name = entry.get("player")
            if not name:
                raise RuleError("a co-banking player needs a \"player\" name (or \"house\": "
                                "true for the house)")
            name = str(name)
            if name in bettors:
                raise RuleError(f"{name} co-banks and also bets on seat {bettors[name]}: a "
                                "player who joins the bank may not bet on other seats that "
                                f"round ({art('5(5)')}); remove the bet or the co-bank")
            if r.banker_player is not None and name == str(r.banker_player):
                raise RuleError(f"{name} is the banker; add to the banker's capital instead of "
                                "co-banking")
            seat = entry.get("seat")
            if seat is not None:
                seat = check_seat(seat, r.layout, f"co-banker {name}'s seat")
                if seat == r.banker_seat:
                    raise RuleError(f"co-banker {name} sits at the banker's seat {seat}; "
                                    f"co-banking players occupy other seats ({art('5(5)')})")
            co_shares.append(BankShare(name, check_capital(entry.get("capital"),
                                                           f"co-banker {name}"), seat))
        names = [s.name for s in co_shares if s.role != "house"]
        if len(set(names)) != len(names):
            raise RuleError("a co-banking player is listed twice; give each once with the whole "
                            "capital")
        r.shares = pan9_bank.order_shares(shares[0], co_shares, interpretations=r.chosen,
                                          seats=range(1, r.layout + 1))

        in_play = set(r.seats) | {r.banker_seat}
        dice = doc.get("dice")
        given_first = doc.get("first_seat")
        if dice is None and given_first is None:
            raise RuleError("the round needs \"dice\" (and \"adjust\" if declared) or "
                            "\"first_seat\": bets are settled from the first seat dealt "
                            f"({art('2(3)')})")
        if "adjust" in doc and doc["adjust"] is None:
            raise RuleError('"adjust" is null; give the declared points as a whole number such '
                            'as 2 or -1, or leave "adjust" out for 0')
        if dice is not None:
            r.first = first_seat(banker=r.banker_seat, in_play=in_play, dice=dice,
                                 adjust=doc.get("adjust", 0), layout=r.layout,
                                 interpretations=r.chosen)
            if given_first is not None and given_first != r.first:
                raise RuleError(f"first_seat {given_first} disagrees with the dice, which give "
                                f"seat {r.first}; give one of them or correct it")
        else:
            r.first = check_seat(given_first, r.layout, "first_seat")
            if r.first not in in_play:
                raise RuleError(f"first_seat {r.first} is not in play (seats in play: "
                                f"{sorted(in_play)})")
        return r

    def settle(self) -> Settlement:
        ep = self.chosen["equal_points"]
        rounding = self.chosen["commission_rounding"]
        players_pay = self.chosen["commission_on"] in ("all_winners", "players_only")
        bank_pays = self.chosen["commission_on"] in ("all_winners", "bank_only")
        in_play = set(self.seats) | {self.banker_seat}
        order = settlement_order(self.first, in_play, self.banker_seat)

        # (seat, player, stake, seat won?) in the order of art. 2(3)
        queue = [(seat, player, amount, seat_wins(self.seats[seat], self.banker_cards, ep))
                 for seat in order for player, amount in self.bets[seat]]
        moved = self._settle_in_order(queue) if self.chosen["capital_cap"] == "in_order" \
            else self._settle_net(queue)

        wagers: list[WagerResult] = []
        commission = 0
        for (seat, player, stake, won), amount in zip(queue, moved):
            fee = commission_on(amount, rounding) if won and players_pay else 0
            commission += fee
            if amount == 0:
                outcome, note = "void", ("the bank's capital is exhausted; bet returned "
                                         f"({art('5(3)')})" if won else
                                         f"the bank has won its whole capital; bet returned "
                                         f"({art('5(3)')})")
            else:
                outcome = "win" if won else "lose"
                note = "" if amount == stake else (
                    f"{'paid' if won else 'collected'} {amount} of {stake}, the rest returned: "
                    f"the bank's capital ({art('5(3)')})")
            if fee:
                note = (note + "; " if note else "") + f"commission {fee}"
            wagers.append(WagerResult(seat, "seat", stake, outcome,
                                      amount - fee if won else -amount, player, note))

        bank_rows = []
        house_net = 0
        for share, net in zip(self.shares, self._share_nets):
            fee = commission_on(net, rounding) if bank_pays and share.role != "house" else 0
            commission += fee
            if share.role == "house":
                house_net += net
            bank_rows.append({"role": share.role, "name": share.name, "seat": share.seat,
                              "player": self.banker_player if share.role == "banker"
                              else (share.name if share.role == "co_banker" else None),
                              "capital": share.capital, "won": net, "commission": fee,
                              "net": net - fee})
        house_net += commission

        hands: dict[str, dict[str, Any]] = {
            "banker": {"seat": self.banker_seat, "cards": cards_json(self.banker_cards),
                       "points": hand_points(self.banker_cards),
                       "category": describe(self.banker_cards)}}
        for seat in order:
            cards = self.seats[seat]
            hands[f"seat {seat}"] = {
                "seat": seat, "cards": cards_json(cards), "points": hand_points(cards),
                "category": describe(cards),
                "result": "win" if seat_wins(cards, self.banker_cards, ep) else "lose"}
        return Settlement(
            self.game.game_id, self.chosen, hands, wagers, house_net=house_net,
            commission=commission,
            extra={"layout_boxes": self.layout, "banker_seat": self.banker_seat,
                   "first_seat": self.first, "settlement_order": order, "bank": bank_rows,
                   "bank_net": sum(row["net"] for row in bank_rows if row["role"] != "house")})

    def _settle_in_order(self, queue: list[tuple[int, str | None, int, bool]]) -> list[int]:
        """P9 ``in_order``: each bet against the bank as it stands when its turn comes."""
        ledger = BankLedger(self.shares)
        moved = [ledger.pay(stake) if won else ledger.collect(stake)
                 for _, _, stake, won in queue]
        self._share_nets = list(ledger.nets)
        return moved

    def _settle_net(self, queue: list[tuple[int, str | None, int, bool]]) -> list[int]:
        """P9 ``net``: the cap applies to the round's net: when the bank would win more than its
        capital, the losing bets last in order are returned; when it would lose more, the
        winning bets last in order go unpaid (returned)."""
        capital = sum(s.capital for s in self.shares)
        won = sum(stake for _, _, stake, w in queue if w)
        lost = sum(stake for _, _, stake, w in queue if not w)
        collect_room = won + capital if lost - won > capital else lost
        pay_room = lost + capital if won - lost > capital else won
        moved = []
        for _, _, stake, w in queue:
            if w:
                part = min(stake, pay_room)
                pay_room -= part
            else:
                part = min(stake, collect_room)
                collect_room -= part
            moved.append(part)
        bank = sum(-m if w else m for (_, _, _, w), m in zip(queue, moved))
        self._share_nets = allocate_net(self.shares, bank)
        return moved


GAME = SuperPan9()
