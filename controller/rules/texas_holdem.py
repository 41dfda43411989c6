"""Texas Hold'em Poker, Despacho 11/2008 (Macau): the regulation, article by article.

Seats. Seat 1 is the player seat immediately left of the croupier; the numbers increase
clockwise (the direction of dealing and of the button, art. 1(2), 6(1)). A table has 10 player
seats, or more if the house chooses (art. 2(1)-(2)).

Where things live: the ranking of art. 14-15 in :mod:`.holdem_eval`, the betting of art. 5-8 and
11-13 in :mod:`.holdem_betting`, the pots, odd chip and rake of art. 10 and 16 in
:mod:`.holdem_pots`. This module holds the rest (material, seating, button, dealing plan,
irregularities) and ties the parts together: :func:`start_hand` and :func:`finish_hand` for a
hand played live at the table, :meth:`TexasHoldem.settle` for a hand history replayed through
them. The points the text leaves open are the interpretations H1-H11
(docs/interpretations.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from controller.shown import shown

from .base import (BOARD, BURN, Deal, Game, Interpretation, Irregularity, Mode, Phase,
                   PlanRequest, Recipient, Remedy, Ruling, Settlement, WagerResult, box,
                   check_stacks_together, hands_in_plan_order)
from .cards import Card, ensure_distinct, parse_cards
from .doc_keys import check_keys, require
from .errors import RuleError
from .holdem_betting import STREETS, BettingRules, HandState, Structure, clockwise_after
from .holdem_eval import HandValue, holdem_hand
from .holdem_pots import PotResult, parse_rake_percent, settle_pots

REGULATION = "11/2008"
SEATS = 10            # art. 2(1): ten player seats and the croupier's
MIN_PLAYERS = 2       # art. 2(3)
DECK = 52             # art. 1(1)(3)
HOLE_CARDS = 2        # art. 6(1)
BURNS_AND_BOARD = 3 + 5  # art. 7(1), 8(1), 8(3): three burns, five board cards


def art(ref: str) -> str:
    return f"{REGULATION} art. {ref}"


INTERPRETATIONS = (
    Interpretation(
        "limit_bet_sizes", art("11(2)"),
        "H1. In a limit game, what is the fixed bet? The text says the small blind in the first "
        "two rounds and the big blind in the last two; most rooms use the big blind, then two "
        "big blinds.",
        ("literal", "big_blind_doubled"), "literal"),
    Interpretation(
        "odd_chip", art("10(5)"),
        "H2. The remainder of a split pot goes to 'the participant still in the hand "
        "immediately left of the croupier': among the tied winners of that pot, or among every "
        "player still in the hand?",
        ("tied_winner", "nearest_in_hand"), "tied_winner"),
    Interpretation(
        "side_pots", art("10(2), 11(3)"),
        "H3. The text knows one pot, yet allows all-in (11(3)). A player all-in can win from "
        "each opponent only what he matched: chips above are side pots.",
        ("layered",), "layered"),
    Interpretation(
        "heads_up_blinds", art("5, 6(3)-(5)"),
        "H4. With two players, who posts the small blind? Literally the first player left of "
        "the button (the button posts the big blind); the usual convention puts the small "
        "blind on the button.",
        ("literal", "button_small_blind"), "literal"),
    Interpretation(
        "heads_up_raises", art("12(4)"),
        "H5. 'With only two players there is no limit on the amount of the raise': in a limit "
        "game, is the three-raise cap lifted, or may a raise be of any amount?",
        ("cap_lifted", "amount_unlimited"), "cap_lifted"),
    Interpretation(
        "short_all_in_reopens", art("12(1)"),
        "H6. An all-in that raises by less than the previous bet or raise is no raise "
        "(12(1)). Does it let players who already acted raise again?",
        ("no", "yes"), "no"),
    Interpretation(
        "rake_without_flop", art("16"),
        "H7. Is the commission taken from a pot that ends before the flop?",
        ("rake", "no_flop_no_drop"), "rake"),
    Interpretation(
        "rake_side_pots", art("16"),
        "H8. 'The pot of each hand' when there are side pots: is the rate applied to all the "
        "hand's pots together (rounded once), to each pot on its own, or to the main pot only? "
        "The cap of five big blinds is for the hand.",
        ("whole_hand", "every_pot", "main_pot_only"), "whole_hand"),
    Interpretation(
        "rake_rounding", art("16"),
        "H9. A rate of 3-5 % rarely gives whole chips: round each pot's commission down or up "
        "to the chip unit?",
        ("down", "up"), "down"),
    Interpretation(
        "four_of_a_kind_kicker", art("15(3)"),
        "H10. 'The other card does not count for any purpose': with four of a kind on the "
        "board, do the players tie whatever their fifth card?",
        ("ignored", "counts"), "ignored"),
    Interpretation(
        "machine_failure", art("9"),
        "H11. A shuffler or card-reading shoe fails while dealing: an error that can be "
        "rectified (9(1)), or one that cannot (9(2): hand void, bets returned)?",
        ("void", "rectify"), "void"),
)


# -- art. 1(2): the button --------------------------------------------------------------------
def initial_button(occupied: Sequence[int]) -> int:
    """Art. 1(2): the button starts in front of the player immediately left of the croupier,
    the occupied seat with the lowest number."""
    if not occupied:
        raise RuleError("no occupied seat to place the button in front of")
    return min(occupied)


def next_button(button: int, occupied: Sequence[int]) -> int:
    """Art. 1(2): after each hand the button moves clockwise to the next player, the next
    occupied seat after ``button`` (which may have been vacated meanwhile)."""
    if not occupied:
        raise RuleError("no occupied seat to move the button to")
    return clockwise_after(occupied, button)[0]


def check_players(seats: Sequence[int]) -> None:
    """Art. 2(3): at least two players; and a 52-card deck (art. 1(1)) must cover the deal."""
    if len(seats) < MIN_PLAYERS:
        raise RuleError(f"Texas Hold'em needs at least {MIN_PLAYERS} players to start "
                        f"({art('2(3)')}); {len(seats)} seated")
    if HOLE_CARDS * len(seats) + BURNS_AND_BOARD > DECK:
        most = (DECK - BURNS_AND_BOARD) // HOLE_CARDS
        raise RuleError(f"{len(seats)} players need {HOLE_CARDS * len(seats) + BURNS_AND_BOARD} "
                        f"cards; one deck of {DECK} ({art('1(1)')}) deals at most {most} players")


class TexasHoldem(Game):
    """Texas Hold'em Poker, 11/2008."""

    game_id = "texas-holdem"
    regulation = REGULATION
    title = "Texas Hold'em Poker"
    interpretations = INTERPRETATIONS
    # No wager is placed on the layout: chips go into the pot through the betting (art. 5-13),
    # sized by the blinds and the structure, not by per-wager table limits. settle() reports
    # each seat's share of the pot as "pot".
    wagers: tuple[str, ...] = ()

    # -- art. 2: seats ------------------------------------------------------------------------
    def check_layout(self, layout_boxes: int,
                     interpretations: Mapping[str, str] | None = None) -> None:
        """Art. 2(1)-(2): ten player seats, or more if the house chooses; never fewer. And no
        more than the one deck of art. 1(1)(3) deals in full: a seat beyond is one whose
        player could never be dealt once the others are full, for which the text has no rule."""
        if not isinstance(layout_boxes, int) or isinstance(layout_boxes, bool):
            raise RuleError(f"the number of player seats must be a whole number, "
                            f"got {shown(layout_boxes)}")
        if layout_boxes < SEATS:
            raise RuleError(f"a Texas Hold'em table has {SEATS} player seats ({art('2(1)')}), "
                            f"or more if the house chooses ({art('2(2)')}); {layout_boxes} "
                            "is too few")
        most = (DECK - BURNS_AND_BOARD) // HOLE_CARDS
        if layout_boxes > most:
            raise RuleError(f"{layout_boxes} player seats could never all be dealt: one deck of "
                            f"{DECK} ({art('1(1)(3)')}) gives two hole cards ({art('6(1)')}), "
                            f"three burns and five board cards to at most {most} players, so a "
                            f"Texas Hold'em table has {SEATS} to {most} player seats "
                            f"({art('2(1)')}, {art('2(2)')})")

    # -- art. 3(2), 6(1), 7(1), 8(1), 8(3): the deal -------------------------------------------
    def dealing_plan(self, request: PlanRequest) -> list[Deal]:
        """Hole cards two each, one at a time clockwise from the player left of the button;
        then burn + flop (three face up), burn + turn, burn + river.

        The same plan holds with the shoe and the shuffler: art. 3(1) lets the shuffler
        replace only the shuffling and cutting, and art. 6(1) has the croupier give each
        player two cards "uma de cada vez" whatever shuffled them.
        """
        layout = SEATS if request.layout_boxes is None else request.layout_boxes
        self.check_layout(layout)
        seats = sorted(request.boxes)
        outside = [s for s in seats if s > layout]
        if outside:
            raise RuleError(f"seat(s) {outside} do not exist on a table of {layout} player seats")
        check_players(seats)
        button = initial_button(seats) if request.button is None else request.button
        if button not in seats:
            raise RuleError(f"the button at seat {button} is not in front of a player; the "
                            f"occupied seats are {seats}: put it in front of one of them "
                            f"({art('1(2)')})")
        order = clockwise_after(seats, button)   # starts left of the button, button last
        plan = [Deal(box(s), 1, False, "hole") for _ in range(HOLE_CARDS) for s in order]
        plan.append(Deal(BURN, 1, False, "flop"))
        plan += [Deal(BOARD, 1, True, "flop") for _ in range(3)]
        for street in ("turn", "river"):
            plan += [Deal(BURN, 1, False, street), Deal(BOARD, 1, True, street)]
        return plan

    # -- art. 8(5): the showdown ---------------------------------------------------------------
    def reveal_order(self, request: PlanRequest) -> list[Recipient]:
        """Art. 8(5): every player still in shows his cards; the text names no order, so they
        are shown as the hole cards were dealt, from the player left of the button. There is
        no croupier's hand."""
        return hands_in_plan_order(self.dealing_plan(request))

    # -- art. 9: errors in the deal ----------------------------------------------------------
    def ruling(self, irregularity: Irregularity, phase: Phase,
               interpretations: Mapping[str, str] | None = None) -> Ruling:
        """Art. 9(1): any error in dealing hole or board cards is put right at once;
        art. 9(2): if it cannot be, the hand is void and the bets are returned."""
        chosen = self.resolve_interpretations(interpretations)
        irr = Irregularity(irregularity)
        rectify, void = art("9(1)"), art("9(2)")
        fixes = {
            Irregularity.DEALING_ERROR: "a dealing error is rectified at once",
            Irregularity.WRONG_ORDER: "a card went to the wrong place; the croupier puts it "
                                      "right at once",
            Irregularity.WRONG_COUNT: "a player or the board got a wrong number of cards; the "
                                      "croupier puts it right at once",
            Irregularity.PLAYER_CARD_EXPOSED: "a hole card was exposed while dealing; the "
                                              "croupier rectifies it (the card is replaced)",
            Irregularity.BOARD_CARD_EXPOSED: "a board card was exposed out of turn; the "
                                             "croupier rectifies it",
            Irregularity.CROUPIER_CARD_EXPOSED: "the croupier holds no hand in Hold'em: an "
                                                "exposed burn card is a dealing error the "
                                                "croupier rectifies",
            Irregularity.CARD_TO_BOX_WITHOUT_BET: "a card went to a seat without a player; the "
                                                  "croupier rectifies the deal",
        }
        if irr is Irregularity.PLAYER_CARD_EXPOSED and phase is not Phase.DEALING:
            # Art. 9(1) rectifies errors "na distribuição das cartas": a hole card exposed
            # once the hole cards are all out (in a betting round, or while a later street is
            # dealt) was dealt rightly and may have been played on. Nothing is replaced: the
            # card stays in the player's hand, face up, and the hand plays on to the end
            # (art. 10(3): "todas as mãos devem manter-se em jogo até ao desfecho final").
            return Ruling(Remedy.CONTINUE, art("9(1), 10(3)"),
                          "a hole card was exposed after the hole cards were dealt: no error "
                          "in the deal; the card stays in the player's hand, face up, and the "
                          "hand goes on")
        if irr in fixes:
            return Ruling(Remedy.RECTIFY, rectify, fixes[irr])
        if irr is Irregularity.DEALING_ERROR_UNCORRECTABLE:
            return Ruling(Remedy.ROUND_VOID, void, "the dealing error cannot be corrected: the "
                          "hand is void and the bets are returned")
        if irr is Irregularity.MISDEAL:
            return Ruling(Remedy.ROUND_VOID, void, "the croupier declared a misdeal, an error "
                          "that cannot be corrected: the hand is void and the bets are returned")
        if irr in (Irregularity.SHUFFLER_MALFUNCTION, Irregularity.SHOE_MALFUNCTION):
            device = "shuffler" if irr is Irregularity.SHUFFLER_MALFUNCTION else "shoe"
            # At the showdown (reveal) and in settlement the board is complete: nothing is
            # left to deal, so nothing is left that the failure could disorder (H11).
            if phase in (Phase.REVEAL, Phase.SETTLEMENT):
                return Ruling(Remedy.CONTINUE, art("9"), f"the {device} failed after every card "
                              "was out; the hand stands. Replace the device before the next "
                              "hand", needs_supervisor=True)
            if chosen["machine_failure"] == "rectify":
                return Ruling(Remedy.RECTIFY, rectify, f"the {device} failed; the croupier "
                              "finishes the deal by hand from the cards already shuffled "
                              "(interpretation machine_failure=rectify)",
                              needs_supervisor=True)
            return Ruling(Remedy.ROUND_VOID, void, f"the {device} failed while dealing; the "
                          "order of the cards can no longer be vouched for, so the hand is "
                          "void and the bets are returned. Replace the device or deal by hand",
                          needs_supervisor=True)
        raise RuleError(f"{irr.value} does not arise in Texas Hold'em: the game uses no dice "
                        f"({art('1(1)')})")

    # -- settlement: art. 5-8, 10-13, 16 -------------------------------------------------------
    def settle(self, round_doc: Mapping[str, Any]) -> Settlement:
        """Replay a hand history (docs/settle.md) through the betting engine and settle it."""
        return settle_hand(self, round_doc)


# -- the hand, live or replayed ----------------------------------------------------------------
def start_hand(seats: Sequence[int], stacks: Mapping[int, int], button: int | None,
               small_blind: int, big_blind: int, structure: str = "no-limit",
               interpretations: Mapping[str, str] | None = None,
               layout: int = SEATS) -> HandState:
    """A new hand for the table machine: seats checked against the layout and art. 2(3), the
    button defaulting to art. 1(2), the blinds posted (art. 5). Feed it ``act`` one action at a
    time and finish it with :func:`finish_hand`."""
    chosen = GAME.resolve_interpretations(interpretations)
    GAME.check_layout(layout)
    outside = [s for s in seats if not isinstance(s, int) or s > layout]
    if outside:
        raise RuleError(f"box(es) {outside} do not exist on a table of {layout} player seats")
    check_players(seats)
    return HandState(seats, stacks, initial_button(seats) if button is None else button,
                     small_blind, big_blind, Structure.parse(structure),
                     BettingRules.from_interpretations(chosen))


@dataclass(slots=True)
class HandResult:
    """A finished hand: each shown hand's value (empty if won without a showdown), the pots
    and each seat's net (holdem_pots.PotResult), the cards."""

    values: dict[int, HandValue]
    money: PotResult
    holes: dict[int, list[Card]]
    board: list[Card]

    @property
    def showdown(self) -> bool:
        return bool(self.values)


def finish_hand(state: HandState, holes: Mapping[int, Sequence[Card | str]],
                board: Sequence[Card | str], *, rake: Any = 0,
                interpretations: Mapping[str, str] | None = None) -> HandResult:
    """Settle a hand whose betting is over: the showdown of art. 8(5) and 10, the rake of
    art. 16 (``rake`` in percent, 3-5 or 0). ``holes`` needs the cards of every player still in
    at a showdown; ``board`` the cards dealt (five at a showdown)."""
    chosen = GAME.resolve_interpretations(interpretations)
    if not state.is_over:
        raise RuleError(f"the betting is not over: box {state.to_act} is to act in the "
                        f"{state.street} round")
    hole_cards = {s: parse_cards(h, count=2, what=f"box {s}'s hole cards")
                  for s, h in holes.items() if h is not None}
    unknown = [s for s in hole_cards if s not in state.seats]
    if unknown:
        raise RuleError(f"hole cards given for box(es) {unknown}, which are not in the hand")
    board_cards = parse_cards(board, what="the board")
    due = state.board_cards_due
    if len(board_cards) != due:
        raise RuleError(f"the board has {len(board_cards)} cards but the hand ended at the "
                        f"{_street_reached(state)} with {due} board cards dealt "
                        f"({art('7(1), 8(1), 8(3)')})")
    ensure_distinct([c for h in hole_cards.values() for c in h] + board_cards,
                    what="the hole cards and the board")
    values: dict[int, HandValue] = {}
    if not state.won_uncontested:
        missing = [s for s in state.contenders if s not in hole_cards]
        if missing:
            raise RuleError(f"box(es) {missing} reached the showdown ({art('8(5)')}) without "
                            "hole cards; give their two cards")
        kicker = chosen["four_of_a_kind_kicker"] == "counts"
        values = {s: holdem_hand(hole_cards[s], board_cards, four_of_a_kind_kicker=kicker)
                  for s in state.contenders}
    money = settle_pots(state.committed, state.folded, values.__getitem__ if values else None,
                        big_blind=state.big_blind, rake_percent=parse_rake_percent(rake),
                        flop_seen=state.street_index >= 1, interpretations=chosen)
    return HandResult(values, money, hole_cards, board_cards)


# the keys of the round document (docs/settle.md); anything else is refused, since a typo
# ("rak") would otherwise settle a different hand than the one played
ROUND_KEYS = {"game", "mode", "interpretations", "structure", "blinds", "button", "layout",
              "seats", "actions", "board", "rake"}
SEAT_KEYS = {"box", "seat", "player", "stack", "cards"}
ACTION_KEYS = {"box", "seat", "action", "amount"}
BLIND_KEYS = {"small", "big"}


def _blind(blinds: Mapping[str, Any], key: str) -> int:
    value = require(blinds, key, '"blinds"', f'"{key}": N, the {key} blind in chip units')
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuleError(f"the {key} blind must be a whole number of chip units, got {shown(value)}")
    return value


def _box(entry: Mapping[str, Any], what: str, way_out: str) -> Any:
    """The seat number of a seat or an action: "box" (or its alias "seat"), not both."""
    if "box" in entry and "seat" in entry:
        raise RuleError(f'{what} gives both "box" and "seat"; give only "box"')
    return require(entry, "seat" if "seat" in entry else "box", what, way_out)


def _seat_entries(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    seats = doc.get("seats")
    if not isinstance(seats, list) or not seats:
        raise RuleError('a Hold\'em hand needs "seats": a list of {"box", "stack", "cards"} '
                        "objects, one per player (docs/settle.md)")
    out = []
    for i, entry in enumerate(seats, 1):
        check_keys(entry, SEAT_KEYS, f"seat entry {i}")
        b = _box(entry, f"seat entry {i}",
                 '"box": N, the seat number, 1 being immediately left of the croupier')
        if not isinstance(b, int) or isinstance(b, bool) or b < 1:
            raise RuleError(f"seat entry {i} has box {shown(b)}; give \"box\": N, the seat number, "
                            "1 being immediately left of the croupier")
        require(entry, "stack", f"seat entry {i} (box {b})",
                '"stack": the chips in front of the player before the blinds')
        out.append(dict(entry, box=b))
    return out


def settle_hand(game: TexasHoldem, doc: Mapping[str, Any]) -> Settlement:
    """Replay the hand history ``doc`` (docs/settle.md) and settle it."""
    check_keys(doc, ROUND_KEYS, "the round")
    chosen = game.resolve_interpretations(doc.get("interpretations") or {})
    if doc.get("mode") is not None:
        Mode.parse(doc["mode"])
    entries = _seat_entries(doc)
    seats = [e["box"] for e in entries]
    if len(set(seats)) != len(seats):
        raise RuleError(f"a box is listed twice among the seats {seats}")
    blinds = doc.get("blinds")
    if not isinstance(blinds, Mapping):
        raise RuleError('a Hold\'em hand needs "blinds": {"small": N, "big": N} '
                        f"({art('5')})")
    check_keys(blinds, BLIND_KEYS, '"blinds"')
    small, big = _blind(blinds, "small"), _blind(blinds, "big")
    state = start_hand(seats, {e["box"]: e.get("stack") for e in entries}, doc.get("button"),
                       small, big, doc.get("structure", "no-limit"), chosen,
                       doc.get("layout", SEATS))
    check_stacks_together(sum(e["stack"] for e in entries))
    actions = doc.get("actions", [])
    if not isinstance(actions, list):
        raise RuleError('"actions" must be a list of {"box", "action", "amount"} objects')
    for i, a in enumerate(actions, 1):
        check_keys(a, ACTION_KEYS, f"action {i}")
        b = _box(a, f"action {i}", '"box": N, the seat that acts')
        require(a, "action", f"action {i} (box {b})",
                '"action": one of fold, check, call, bet, raise, allin')
        try:
            state.act(b, a["action"], a.get("amount"))
        except RuleError as exc:
            raise RuleError(f"action {i} ({b} {a['action']}"
                            f"{' ' + str(a['amount']) if a.get('amount') is not None else ''}): "
                            f"{exc}") from None
    if not state.is_over:
        raise RuleError(f"the hand history stops before the betting is over: box {state.to_act} "
                        f"is to act in the {state.street} round")
    outcome = finish_hand(state, {e["box"]: e.get("cards") for e in entries},
                          doc.get("board") or [], rake=doc.get("rake"), interpretations=chosen)
    result, values, holes, board = outcome.money, outcome.values, outcome.holes, outcome.board
    showdown = outcome.showdown

    hands: dict[str, dict[str, Any]] = {}
    players = {e["box"]: e.get("player") for e in entries}
    for s in state.seats:
        # hole cards are shown only at a showdown (art. 8(5)); a folded hand goes face down
        # to the croupier (art. 13(2)) and a hand won without showdown is never turned over
        h: dict[str, Any] = {"cards": []}
        if s in state.folded:
            h["category"] = "folded"
        elif s in values:
            h["cards"] = [str(c) for c in holes[s]]
            h.update(values[s].to_json())
        else:
            h["category"] = "not shown"
        hands[f"box {s}"] = h
    hands["board"] = {"cards": [str(c) for c in board]}
    wagers = []
    for s in state.seats:
        net = result.nets[s]
        notes = []
        if s in state.folded:
            notes.append(f"folded ({art('13')})")
        if result.returned[s]:
            notes.append(f"uncalled {result.returned[s]} returned")
        odd = [p for p in result.pots if p.odd_chip_to == s]
        if odd:
            notes.append(f"odd chip(s) {sum(p.odd_chips for p in odd)} ({art('10(5)')})")
        wagers.append(WagerResult(s, "pot", state.committed[s],
                                  "win" if net > 0 else "lose" if net < 0 else "push",
                                  net, players.get(s), "; ".join(notes)))
    extra = {
        "button": state.button,
        "blinds": {"small": small, "big": big, "small_blind_box": state.blind_seats()[0],
                   "big_blind_box": state.blind_seats()[1]},
        "structure": state.structure.value,
        "ended": "showdown" if showdown else f"uncontested in the {_street_reached(state)}",
        "pots": [p.to_json() for p in result.pots],
        "final_stacks": {str(s): state.stacks[s] + result.payouts.get(s, 0)
                         + result.returned[s] for s in state.seats},
        "next_button": next_button(state.button, state.seats),
    }
    return Settlement(game.game_id, chosen, hands, wagers, house_net=result.rake,
                      commission=result.rake, extra=extra)


def _street_reached(state: HandState) -> str:
    return STREETS[min(state.street_index, 3)] if state.won_uncontested else state.street


GAME = TexasHoldem()

__all__ = ["GAME", "INTERPRETATIONS", "HandResult", "TexasHoldem", "check_players",
           "finish_hand", "initial_button", "next_button", "settle_hand", "start_hand"]
