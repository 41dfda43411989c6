"""Q Poker — Despacho Regulamentar Externo n.º 89/2004 (Macau), article by article.

Hold this module against the official text (docs/regulations/q-poker.md maps every article and
item to the code and the tests). Ambiguous points are interpretations (docs/interpretations.md,
"Q Poker"); each has a configuration key and every reading is implemented.

Vocabulary: a *box* is a player's betting position (門); several players may bet on one box
(art. 6(1)), so wagers belong to players and cards to boxes. The two wagers of a box are the
*pair bonus* (多寶) and the bet *versus the croupier* (與莊荷博彩) (art. 2(2), art. 5).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

from controller.shown import shown

from . import three_card
from .base import (CROUPIER, Deal, Game, Interpretation, Irregularity, Mode, Phase, PlanRequest,
                   Recipient, Remedy, Ruling, Settlement, WagerResult, cards_json,
                   check_round_stakes, hands_in_plan_order)
from .cards import ensure_distinct
from .doc_keys import check_keys, flag
from .errors import RuleError
from .three_card import Category, HandValue, Ranking, evaluate, qualifies

REGULATION = "89/2004"


def art(article: int, item: int | str | None = None) -> str:
    """A citation such as ``89/2004 art. 11(3)``."""
    return f"{REGULATION} art. {article}" + (f"({item})" if item is not None else "")


# ---- Art. 1: material. One 52-card deck (Chinese text), or "one or more" (Portuguese): Q3.
# ---- Art. 2(1): eight or more places including the croupier's -> at least seven boxes.
MIN_BOXES = 7
# ---- Art. 1(1) with art. 7: one deck deals its three cards to at most 16 boxes and the croupier.
DECK_CARDS = 52
HAND_CARDS = 3
DEFAULT_LAYOUT_BOXES = 7
# ---- Art. 2(2), art. 5: two wagers per box, either or both.
PAIR_BONUS = "pair_bonus"
VERSUS_CROUPIER = "versus_croupier"
WAGERS = (PAIR_BONUS, VERSUS_CROUPIER)

# ---- Art. 9(7): a qualified croupier beaten pays the player (x to 1).
VERSUS_CROUPIER_PAYS: dict[Category, Fraction] = {
    Category.STRAIGHT_FLUSH: Fraction(3),      # 9(7)(1) 一賠三 / 3 por 1
    Category.THREE_OF_A_KIND: Fraction(2),     # 9(7)(2) 一賠二 / 2 por 1
    Category.STRAIGHT: Fraction(3, 2),         # 9(7)(3) 二賠三 / 3 por 2
    Category.FLUSH: Fraction(1),               # 9(7)(4) other: 1 por 1
    Category.PAIR: Fraction(1),
    Category.THREE_ODD_CARDS: Fraction(1),
}
FOLD_LOSES = Fraction(1, 2)            # art. 9(3): not playing loses half the bet
NOT_QUALIFIED_PAYS = Fraction(1, 2)    # art. 9(5): croupier below Q-high pays half the bet

# ---- Art. 10: pair bonus paytable (x to 1); three odd cards lose it (art. 9(1)).
PAIR_BONUS_PAYS: dict[Category, int] = {
    Category.STRAIGHT_FLUSH: 40,
    Category.THREE_OF_A_KIND: 30,
    Category.STRAIGHT: 6,
    Category.FLUSH: 4,
    Category.PAIR: 1,
}

INTERPRETATIONS = (
    Interpretation(
        key="straight_suit_card", article=art(8, 3),
        question="Two straights of equal ranks: whose suit decides, the top card of the "
                 "sequence (the 3 of A-2-3) or the card of highest face value (its ace)?",
        readings=("top_of_sequence", "highest_face_value"), default="top_of_sequence"),
    Interpretation(
        key="shared_box_decision", article=art(6, 1),
        question="Several players on one box: does each decide play or fold for his own "
                 "bet versus the croupier, or does the seated player's decision bind the box?",
        readings=("per_player", "seated_player"), default="per_player"),
    Interpretation(
        key="decks", article=art(1, 1),
        question="One 52-card deck (Chinese text) or one or more decks (Portuguese text)?",
        readings=("one", "several"), default="one"),
    Interpretation(
        key="odd_chip", article=art(9),
        question="Half a bet (fold, croupier not qualified) or 3 to 2 on an odd stake is not "
                 "a whole chip: refuse odd stakes, or round in whose favour?",
        readings=("even_stakes", "house", "player"), default="even_stakes"),
    Interpretation(
        key="shoe_malfunction", article=art(11, 5),
        question="The card-reading shoe fails while dealing (the text names only the "
                 "shuffler): is the round void?",
        readings=("round_void", "continue"), default="round_void"),
    Interpretation(
        key="misdeal", article=art(11, 1),
        question="The croupier declares a misdeal the text does not list: what happens?",
        readings=("round_void",), default="round_void"),
)


def ranking(interpretations: Mapping[str, str]) -> Ranking:
    """Art. 4 and 8: suits break every tie; Q1 picks the straights' deciding card."""
    return Ranking(suits_break_ties=True,
                   straight_suit_card=interpretations["straight_suit_card"])


def bets_open(cards_dealt: int) -> bool:
    """Art. 6(2): no bet is accepted once the first card of the round is dealt."""
    return cards_dealt == 0


def portion(stake: int, ratio: Fraction, *, to_player: bool, odd_chip: str) -> int:
    """``stake × ratio`` in whole chips: exact when it is whole, else rounded by ``odd_chip``.

    ``to_player`` says which way the chips move (a payout or a loss), so that ``house`` and
    ``player`` round the fraction to that side.
    """
    exact = stake * ratio
    if exact.denominator == 1:
        return int(exact)
    if odd_chip == "even_stakes":  # check_stake refuses such stakes before this point
        raise RuleError(f"a stake of {stake} cannot be settled in whole chips under "
                        f"{art(9)}; with odd_chip=even_stakes the stake must be even")
    floor, ceil = exact.numerator // exact.denominator, -(-exact.numerator // exact.denominator)
    favour_player = odd_chip == "player"
    return (ceil if to_player else floor) if favour_player else (floor if to_player else ceil)


class QPoker(Game):
    """Q Poker, 89/2004."""

    game_id = "q-poker"
    regulation = REGULATION
    title = "Q Poker"
    interpretations = INTERPRETATIONS
    wagers: tuple[str, ...] = WAGERS   # art. 2(2), 5: as settle() and check_bet() name them

    # ---------------------------------------------------------------- art. 2: the table
    def check_layout(self, layout_boxes: int,
                     interpretations: Mapping[str, str] | None = None, *,
                     decks: int | None = None) -> None:
        """Art. 2(1): at least seven boxes and the croupier's place, with no upper limit of
        its own. Given the table's readings, also a layout its decks deal to a full table,
        three cards to every box and three to the croupier (art. 7): one deck (Q3 ``one``)
        at most 16 boxes; ``decks`` of them (Q3 ``several``, the shoe's count, 1 to 8; left
        out, the most a shoe holds) at most ``52 × decks // 3 - 1``."""
        if isinstance(layout_boxes, bool) or not isinstance(layout_boxes, int):
            raise RuleError(f"the number of boxes must be a whole number, got "
                            f"{shown(layout_boxes)}")
        if layout_boxes < MIN_BOXES:
            raise RuleError(f"a Q Poker table has eight or more places including the "
                            f"croupier's ({art(2, 1)}), so at least {MIN_BOXES} boxes; "
                            f"this layout has {layout_boxes}")
        # Without the table's readings only the seating article is checked: a plan checks
        # the boxes it is asked to deal (dealing_plan).
        if interpretations is None:
            return
        if self.resolve_interpretations(interpretations)["decks"] == "one":
            most = DECK_CARDS // HAND_CARDS - 1
            if layout_boxes > most:
                raise RuleError(f"one deck of {DECK_CARDS} ({art(1, 1)}, interpretation "
                                f"decks=one) deals three cards ({art(7)}) to at most {most} "
                                f"boxes and the croupier; this layout has {layout_boxes}, so a "
                                "full table could not be dealt")
            return
        count = 8 if decks is None else decks      # 8: the most one shoe holds (integrity.md)
        most = count * DECK_CARDS // HAND_CARDS - 1
        if layout_boxes > most:
            raise RuleError(f"{count} deck{'s' if count > 1 else ''} of {DECK_CARDS} "
                            f"({art(1, 1)}, interpretation decks=several"
                            f"{'' if decks is not None else ', the most a shoe holds'}) "
                            f"deal{'s' if count == 1 else ''} three cards ({art(7)}) to at most "
                            f"{most} boxes and the croupier; this layout has {layout_boxes}, so "
                            "a full table could not be dealt")

    def check_bet(self, wager: str, amount: int,
                  interpretations: Mapping[str, str] | None = None) -> None:
        """Refuse, at betting time, a wager this game does not have or a stake it cannot
        settle (art. 5; odd stakes on the bet versus the croupier under ``odd_chip``)."""
        chosen = self.resolve_interpretations(interpretations)
        if wager not in WAGERS:
            raise RuleError(f"Q Poker has no wager {shown(wager)}; its wagers are "
                            f"{', '.join(WAGERS)} ({art(5, 1)})")
        three_card.stake(amount, wager)
        if (wager == VERSUS_CROUPIER and amount % 2
                and chosen["odd_chip"] == "even_stakes"):
            raise RuleError(f"a bet versus the croupier of {amount} is odd: half of it "
                            f"({art(9, 3)}, {art(9, 5)}) and 3 to 2 ({art(9, 7)}) must be "
                            "whole chips, so bet an even amount (interpretation odd_chip)")

    # ---------------------------------------------------------------- art. 6: bets
    def check_bet_change(self, phase: Phase, cards_dealt: int, *, removal: bool = False) -> None:
        """Art. 6(2): no bet is accepted once the first card of the round is dealt. The article
        speaks of new bets: taking one back is not its to refuse."""
        if not removal and not bets_open(cards_dealt):
            raise RuleError("no bet is accepted once the first card of the round is dealt "
                            f"({art(6, 2)}); wait for the next round")

    # ---------------------------------------------------------------- art. 7: dealing
    def dealing_plan(self, request: PlanRequest) -> list[Deal]:
        layout = request.layout_boxes or DEFAULT_LAYOUT_BOXES
        self.check_layout(layout)
        plan = three_card.dealing_plan(request, layout_boxes=layout, regulation=REGULATION)
        chosen = self.resolve_interpretations(request.interpretations)
        needed = sum(d.cards for d in plan)
        if chosen["decks"] == "one" and needed > DECK_CARDS:
            most = DECK_CARDS // HAND_CARDS - 1
            raise RuleError(f"{len(request.boxes)} boxes with a bet and the croupier need "
                            f"{needed} cards, three each ({art(7)}); one deck of {DECK_CARDS} "
                            f"({art(1, 1)}, interpretation decks=one) deals at most {most} "
                            f"boxes: take bets on at most {most} boxes")
        return plan

    # ---------------------------------------------------------------- art. 9: the reveal
    def reveal_order(self, request: PlanRequest) -> list[Recipient]:
        """Art. 9(1)-(3): the players' hands are opened first, in the order dealt; each player
        decides "antes da abertura das cartas da mão do croupier", whose hand opens last."""
        return hands_in_plan_order(self.dealing_plan(request), last=CROUPIER)

    # ---------------------------------------------------------------- art. 11: irregularities
    def ruling(self, irregularity: Irregularity, phase: Phase,
               interpretations: Mapping[str, str] | None = None,
               mode: Mode | str | None = None) -> Ruling:
        chosen = self.resolve_interpretations(interpretations)
        irregularity, phase = Irregularity(irregularity), Phase(phase)
        if irregularity in (Irregularity.BOARD_CARD_EXPOSED, Irregularity.DIE_NOT_FLAT,
                            Irregularity.DIE_OUT_OF_CUP, Irregularity.DICE_MALFUNCTION):
            raise RuleError(f"Q Poker has no board and no dice: {irregularity.value} cannot "
                            "happen at this table; report the card irregularity that did")
        if phase is Phase.SHAKING:
            raise RuleError("Q Poker has no shaking phase; use betting, dealing, decisions, "
                            "reveal or settlement")
        machine = irregularity in (Irregularity.SHUFFLER_MALFUNCTION,
                                   Irregularity.SHOE_MALFUNCTION)
        if phase is Phase.BETTING and not machine:
            raise RuleError(f"no card is dealt during betting, so {irregularity.value} cannot "
                            "have happened yet; report it once dealing has begun")
        dealing = phase is Phase.DEALING
        croupier_closed = phase in (Phase.DEALING, Phase.DECISIONS)

        if irregularity in (Irregularity.WRONG_ORDER, Irregularity.WRONG_COUNT,
                            Irregularity.DEALING_ERROR, Irregularity.DEALING_ERROR_UNCORRECTABLE):
            return Ruling(Remedy.ROUND_VOID, art(11, 1),
                          "cards dealt out of order or a wrong number of cards to a box: the "
                          "round is void, every bet is returned, new round and new cards")
        if irregularity is Irregularity.MISDEAL:
            return Ruling(Remedy.ROUND_VOID, art(11, 1),
                          "misdeal declared by the croupier, treated as a dealing "
                          "irregularity: the round is void, every bet is returned, new round "
                          "(interpretation misdeal)")
        if irregularity is Irregularity.PLAYER_CARD_EXPOSED:
            return Ruling(Remedy.CONTINUE, art(11, 2),
                          "a player's card exposed by mistake: the round stays valid and "
                          "goes on")
        if irregularity is Irregularity.CROUPIER_CARD_EXPOSED:
            if croupier_closed:
                return Ruling(Remedy.ROUND_VOID, art(11, 3),
                              "a croupier's card exposed by mistake: the round is void and "
                              "every bet is returned")
            return Ruling(Remedy.CONTINUE, art(9, 3),
                          "the croupier's hand is already open once decisions are made; "
                          "nothing irregular")
        if irregularity is Irregularity.CARD_TO_BOX_WITHOUT_BET:
            return Ruling(Remedy.BOX_VOID, art(11, 4),
                          "cards dealt to a box without a bet: that box's hand is void and "
                          "the round goes on")
        # SHUFFLER_MALFUNCTION, SHOE_MALFUNCTION (interpretation shoe_malfunction)
        return three_card.device_failure(irregularity, dealing, chosen["shoe_malfunction"],
                                         art(11, 5), "void")

    # ---------------------------------------------------------------- art. 9-10: settlement
    def settle(self, round_doc: Mapping[str, Any]) -> Settlement:
        check_keys(round_doc, {"game", "mode", "interpretations", "layout_boxes",
                                          "boxes", "croupier"}, "the round")
        chosen = self.resolve_interpretations(_overrides(round_doc))
        Mode.parse(round_doc.get("mode", "shoe"))
        layout = round_doc.get("layout_boxes", DEFAULT_LAYOUT_BOXES)
        # As config check holds the table: a layout its decks could not deal to in full is no
        # table a round was played at (the round names no shoe's deck count: at most eight).
        self.check_layout(layout, chosen)
        rank = ranking(chosen)
        one_deck = chosen["decks"] == "one"  # art. 1(1): one deck holds each card once (Q3)
        boxes = round_doc.get("boxes")
        if not isinstance(boxes, list) or not boxes:
            raise RuleError("the round needs \"boxes\": a list of the boxes dealt, each with "
                            "its number, cards and wagers (see docs/settle.md)")

        seen_boxes: set[int] = set()
        parsed = []
        for raw in boxes:
            check_keys(raw, {"box", "cards", "players", "player", PAIR_BONUS,
                                        VERSUS_CROUPIER, "decision", "seated"}, three_card.box_label(raw))
            n = three_card.box_number(raw.get("box"), layout, REGULATION)
            if n in seen_boxes:
                raise RuleError(f"box {n} is listed twice; give each box once, with all of "
                                "its players' wagers")
            seen_boxes.add(n)
            players = self._players(raw, n, chosen)
            cards = three_card.read_hand(raw.get("cards"), f"box {n}", distinct=one_deck)
            parsed.append((n, cards, players))

        check_round_stakes(sum(p["pair_bonus"] + p["versus"]
                               for _, _, players in parsed for p in players))
        playing = any(p["versus"] and p["decision"] == "play"
                      for _, _, players in parsed for p in players)
        croupier_raw = round_doc.get("croupier")
        croupier_cards = None
        if croupier_raw is not None or playing:
            if croupier_raw is not None and not isinstance(croupier_raw, dict):
                # ["Kd", "8c", "4h"] for {"cards": [...]}: the shape, not a missing hand
                raise RuleError(f"\"croupier\" must be {{\"cards\": [three cards]}}, got "
                                f"{shown(croupier_raw)}")
            if not isinstance(croupier_raw, dict):
                raise RuleError("a player plays versus the croupier, so the round needs "
                                "\"croupier\": {\"cards\": [three cards]}")
            check_keys(croupier_raw, {"cards"}, "the croupier")
            croupier_cards = three_card.read_hand(croupier_raw.get("cards"), "the croupier",
                                                  distinct=one_deck)

        if one_deck:
            every = [c for _, cards, _ in parsed for c in cards] + list(croupier_cards or [])
            ensure_distinct(every, what="the round (the boxes' and the croupier's cards)")

        hands: dict[str, dict[str, Any]] = {}
        wagers: list[WagerResult] = []
        croupier_value = evaluate(croupier_cards, rank) if croupier_cards else None
        if croupier_value is not None:
            hands["croupier"] = {"cards": cards_json(croupier_cards),
                                 "category": croupier_value.label,
                                 "qualifies": qualifies(croupier_value)}
        for n, cards, players in sorted(parsed, key=lambda t: t[0]):
            value = evaluate(cards, rank)
            if not any(p["pair_bonus"] or p["versus"] for p in players):
                hands[f"box {n}"] = {"cards": cards_json(cards), "category": value.label,
                                     "void": True,
                                     "note": f"no bet on this box: its hand is void ({art(11, 4)})"}
                continue
            hands[f"box {n}"] = {"cards": cards_json(cards), "category": value.label}
            for p in players:
                if p["pair_bonus"]:
                    wagers.append(_pair_bonus(n, p, value))
                if p["versus"]:
                    wagers.append(_versus(n, p, value, croupier_value, rank, chosen))
        house_net = -sum(w.net for w in wagers)
        return Settlement(game=self.game_id, interpretations=chosen, hands=hands,
                          wagers=wagers, house_net=house_net)

    def _players(self, raw: Mapping[str, Any], n: int, chosen: Mapping[str, str]) -> list[dict]:
        """The players betting on box ``n`` (art. 6(1)): wagers per player, cards per box (Q2)."""
        if "players" in raw:
            for k in (PAIR_BONUS, VERSUS_CROUPIER, "decision", "player", "seated"):
                if k in raw:
                    raise RuleError(f"box {n} gives both \"players\" and a box-level {shown(k)}; "
                                    "with several players put every wager in \"players\"")
            items = raw["players"]
            if not isinstance(items, list) or not items:
                raise RuleError(f"box {n}: \"players\" must be a non-empty list of players")
        else:
            flag(raw, "seated", f"box {n}", default=True)
            items = [dict(raw, seated=True)]
        players = []
        for i, item in enumerate(items, 1):
            if "players" not in raw:
                item = {k: v for k, v in item.items() if k not in ("box", "cards")}
            check_keys(item, {"player", PAIR_BONUS, VERSUS_CROUPIER, "decision",
                                         "seated"}, f"a player of box {n}")
            name = item.get("player")
            if name is not None and not isinstance(name, str):
                raise RuleError(f"box {n}: a player's name must be text, got {shown(name)}")
            who = f"box {n}" + (f" ({name})" if name else "")
            pb = three_card.stake(item.get(PAIR_BONUS), f"{who} {PAIR_BONUS}")
            vs = three_card.stake(item.get(VERSUS_CROUPIER), f"{who} {VERSUS_CROUPIER}")
            for wager, amount in ((PAIR_BONUS, pb), (VERSUS_CROUPIER, vs)):
                if amount:
                    self.check_bet(wager, amount, chosen)
            decision = item.get("decision")
            if decision is not None and decision not in ("play", "fold"):
                raise RuleError(f"{who}: decision {shown(decision)} must be \"play\" or \"fold\" "
                                f"({art(9, 2)})")
            players.append({"player": name, "pair_bonus": pb, "versus": vs,
                            "decision": decision, "seated": flag(item, "seated", who),
                            "who": who})
        decider = None   # under seated_player, the seated player deciding for the box
        if chosen["shared_box_decision"] == "seated_player" and "players" in raw:
            seated = [p for p in players if p["seated"]]
            versus = any(p["versus"] for p in players)
            # the seated player's decision binds the box; with no bet versus the croupier on
            # the box there is nothing to decide, and nobody need be marked
            if len(seated) > 1 or (versus and not seated):
                raise RuleError(f"box {n}: with shared_box_decision=seated_player mark exactly "
                                "one player \"seated\": true (the one holding the cards, "
                                f"{art(6, 3)}); found {len(seated)}")
            if seated:
                boss = seated[0]
                if versus:
                    # he decides for the box even when his own bet is only the pair bonus
                    decider = boss
                    if boss["decision"] is None:
                        raise RuleError(f"{boss['who']}: the seated player's decision (play "
                                        f"or fold) binds the box and is missing ({art(9, 2)})")
                for p in players:
                    if p["decision"] not in (None, boss["decision"]):
                        raise RuleError(f"{p['who']} decided {p['decision']} but the seated "
                                        f"player's {boss['decision']} binds the box "
                                        "(shared_box_decision=seated_player)")
                    p["decision"] = boss["decision"] if p["versus"] else p["decision"]
        for p in players:
            if p["versus"] and p["decision"] is None:
                raise RuleError(f"{p['who']}: the decision to play or fold versus the "
                                f"croupier is missing ({art(9, 2)}); give \"decision\": "
                                "\"play\" or \"fold\"")
            if not p["versus"] and p["decision"] is not None and p is not decider:
                raise RuleError(f"{p['who']} has a decision but no bet versus the croupier; "
                                "drop the decision or give the bet")
        return players

    # ---------------------------------------------------------------- odds
    def odds(self, interpretations: Mapping[str, str] | None = None,
             progress: Any = None) -> dict[str, Any]:
        """Exact house edge of the pair bonus and of the bet versus the croupier."""
        from . import odds as engine

        chosen = self.resolve_interpretations(interpretations)
        return engine.q_poker_odds(chosen, progress=progress)


def _overrides(round_doc: Mapping[str, Any]) -> Mapping[str, str]:
    overrides = round_doc.get("interpretations") or {}
    if not isinstance(overrides, dict):
        raise RuleError("\"interpretations\" must be an object of key to reading")
    return overrides


def _pair_bonus(n: int, p: dict, value: HandValue) -> WagerResult:
    stake = p["pair_bonus"]
    odds = PAIR_BONUS_PAYS.get(value.category)
    if odds is None:
        return WagerResult(n, PAIR_BONUS, stake, "lose", -stake, p["player"],
                           f"three odd cards lose the pair bonus ({art(9, 1)})")
    return WagerResult(n, PAIR_BONUS, stake, "win", stake * odds, p["player"],
                       f"{value.label} pays {odds} to 1 ({art(10)})")


def _versus(n: int, p: dict, value: HandValue, croupier: HandValue | None, rank: Ranking,
            chosen: Mapping[str, str]) -> WagerResult:
    stake, odd_chip = p["versus"], chosen["odd_chip"]
    if p["decision"] == "fold":
        loss = portion(stake, FOLD_LOSES, to_player=False, odd_chip=odd_chip)
        return WagerResult(n, VERSUS_CROUPIER, stake, "half", -loss, p["player"],
                           f"not playing loses half the bet ({art(9, 3)})")
    assert croupier is not None
    if not qualifies(croupier):
        win = portion(stake, NOT_QUALIFIED_PAYS, to_player=True, odd_chip=odd_chip)
        return WagerResult(n, VERSUS_CROUPIER, stake, "half", win, p["player"],
                           f"croupier below Q-high: half the bet is paid ({art(9, 5)})")
    if croupier.key > value.key:
        return WagerResult(n, VERSUS_CROUPIER, stake, "lose", -stake, p["player"],
                           f"croupier's {croupier.label} is higher ({art(9, 6)})")
    if croupier.key == value.key:  # only possible with several decks (interpretation decks)
        return WagerResult(n, VERSUS_CROUPIER, stake, "push", 0, p["player"],
                           "identical hands (several decks): the bet is returned "
                           "(interpretation decks)")
    ratio = VERSUS_CROUPIER_PAYS[value.category]
    win = portion(stake, ratio, to_player=True, odd_chip=odd_chip)
    return WagerResult(n, VERSUS_CROUPIER, stake, "win", win, p["player"],
                       f"{value.label} pays {_ratio_text(ratio)} ({art(9, 7)})")


def _ratio_text(ratio: Fraction) -> str:
    return f"{ratio.numerator} to {ratio.denominator}"


GAME = QPoker()
