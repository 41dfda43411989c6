"""Fortune 3 Card Poker — Despacho n.º 78/2008 (Macau), article by article.

Hold this module against the official text (docs/regulations/fortune-3-card-poker.md maps every
article and item to the code and the tests). Ambiguous points are interpretations
(docs/interpretations.md, "Fortune 3 Card Poker"); every reading is implemented.

Vocabulary: each *box* has three spots (art. 2(2)): *Pair Plus* (near the croupier), the *Ante*
(原注, aposta inicial) and the *Play* (加注, aposta adicional, exactly the Ante, art. 9(4)).
A player bets only on his own box (art. 6(2)): one player per box.
"""
from __future__ import annotations

from typing import Any, Mapping

from controller.shown import shown

from . import three_card
from .base import (CROUPIER, Deal, Game, Interpretation, Irregularity, Mode, Phase, PlanRequest,
                   Recipient, Remedy, Ruling, Settlement, WagerResult, cards_json,
                   check_round_stakes, hands_in_plan_order)
from .cards import ensure_distinct
from .doc_keys import check_keys
from .errors import RuleError
from .three_card import Category, HandValue, Ranking, evaluate, qualifies

REGULATION = "78/2008"


def art(article: int, item: int | str | None = None) -> str:
    """A citation such as ``78/2008 art. 11(2)``."""
    return f"{REGULATION} art. {article}" + (f"({item})" if item is not None else "")


# ---- Art. 1: one 52-card deck, a shoe with a cut card, an automatic shuffler.
# ---- Art. 2(1): eight places including the croupier's -> exactly seven boxes.
LAYOUT_BOXES = 7
# ---- Art. 2(2), art. 5: Pair Plus and Ante, either or both; Play follows the Ante.
PAIR_PLUS = "pair_plus"
ANTE = "ante"
PLAY = "play"
WAGERS = (PAIR_PLUS, ANTE, PLAY)

# ---- Art. 9(8): a qualified croupier beaten pays (x to 1), Ante and Play (F2).
ANTE_PLAY_PAYS: dict[Category, int] = {
    Category.STRAIGHT_FLUSH: 5,     # 9(8)(1) 一賠五 / 5 para 1
    Category.THREE_OF_A_KIND: 4,    # 9(8)(2) 一賠四 / 4 para 1
    Category.STRAIGHT: 1,           # 9(8)(3) 一賠一 / 1 para 1
    Category.FLUSH: 1,              # 9(8)(4) other: 1 para 1
    Category.PAIR: 1,
    Category.THREE_ODD_CARDS: 1,
}
# ---- Art. 10: Pair Plus paytable (x to 1); three odd cards lose (art. 9(1)).
PAIR_PLUS_PAYS: dict[Category, int] = {
    Category.STRAIGHT_FLUSH: 40,
    Category.THREE_OF_A_KIND: 25,
    Category.STRAIGHT: 5,
    Category.FLUSH: 4,
    Category.PAIR: 1,
}

INTERPRETATIONS = (
    Interpretation(
        key="suited_ace_king_queen", article=f"{art(4, 2)}, {art(8, 1)}",
        question="Art. 4(2) makes A-K-Q the highest sequence, art. 8(1) makes K-Q-J the highest "
                 "straight flush: is a suited A-K-Q a straight flush or a flush?",
        readings=("straight_flush", "flush"), default="straight_flush"),
    Interpretation(
        key="ante_play_odds", article=art(9, 8),
        question="Do the 5 to 1 / 4 to 1 odds pay both the Ante and the Play, or the Ante only "
                 "with the Play at 1 to 1?",
        readings=("ante_and_play", "ante_only"), default="ante_and_play"),
    Interpretation(
        key="qualified_tie", article=f"{art(8)}, {art(9, 7)}-(8)",
        question="A qualified croupier ties a player: neither (7) nor (8) applies. Are the "
                 "Ante and the Play returned, or collected?",
        readings=("push", "croupier_wins"), default="push"),
    Interpretation(
        key="croupier_card_exposed_shuffler", article=art(11, 2),
        question="A croupier's card exposed while a shuffler deals three at a time: where "
                 "does the croupier's replacement come from?",
        readings=("next_card", "next_hand", "round_void"), default="next_card"),
    Interpretation(
        key="odd_cards_equal", article=art(8, 6),
        question="Two three-odd-card hands of equal ranks: art. 8(6) has no tie sentence, "
                 "unlike (1)-(5). A tie, or does the croupier win?",
        readings=("tie", "croupier_wins"), default="tie"),
    Interpretation(
        key="croupier_card_exposed_after_deal", article=art(11, 2),
        question="A croupier's card exposed after the deal, before the players decide: set "
                 "it aside as art. 11(2) does while dealing, or void the round?",
        readings=("set_aside", "round_void"), default="set_aside"),
    Interpretation(
        key="shoe_malfunction", article=art(11, 4),
        question="The card-reading shoe fails while dealing (the text names only the "
                 "shuffler): is the round void?",
        readings=("round_void", "continue"), default="round_void"),
)


def ranking(interpretations: Mapping[str, str]) -> Ranking:
    """Art. 4 and 8: no suit order, equal hands tie; F1 decides the suited A-K-Q."""
    return Ranking(suits_break_ties=False,
                   suited_ace_king_queen=interpretations["suited_ace_king_queen"])


def bets_open(cards_dealt: int) -> bool:
    """Art. 6(3): no bet is accepted once the first card of the round is dealt."""
    return cards_dealt == 0


def check_limits(wager: str, amount: int, limits: Mapping[str, Any] | None) -> None:
    """Art. 6(1): a stake within the minimum and maximum posted on the table for its wager.

    ``limits`` maps a wager (``pair_plus``, ``ante``) to ``{"min": m, "max": M}``; the Play
    equals the Ante (art. 9(4)) and so follows the Ante's limits.
    """
    if not limits or not amount:
        return
    posted = limits.get(ANTE if wager == PLAY else wager)
    if posted is None:
        return
    low, high = check_posted(ANTE if wager == PLAY else wager, posted)
    if amount < low or (high is not None and amount > high):
        raise RuleError(f"{wager} of {amount} is outside the table limits {low}-{high} posted "
                        f"for it ({art(6, 1)}); bet within them")


def check_posted(wager: str, posted: Mapping[str, Any]) -> tuple[int, int | None]:
    """Art. 6(1): the (minimum, maximum) posted for ``wager``; limits no stake can meet (a
    minimum above the maximum, a maximum of 0) are a mistake in what was posted, not in a bet."""
    low, high = posted.get("min", 0), posted.get("max")
    if high is not None and high < max(low, 1):
        problem = (f"minimum {low} is above its maximum {high}" if high < low
                   else "maximum of 0 takes no bet")
        raise RuleError(f"the limits posted for {wager}: the {problem} ({art(6, 1)}); give the "
                        "table's posted minimum and maximum, the minimum not above the maximum, "
                        "or leave \"max\" out")
    return low, high


class Fortune3CardPoker(Game):
    """Fortune 3 Card Poker, 78/2008."""

    game_id = "fortune-3-card-poker"
    regulation = REGULATION
    title = "Fortune 3 Card Poker"
    interpretations = INTERPRETATIONS
    wagers: tuple[str, ...] = WAGERS   # art. 2(2), 5, 9(4): as settle() names them
    # The Play is exactly the Ante (art. 9(4)) and so has the Ante's posted limits (art. 6(1)).
    limits_follow: dict[str, str] = {PLAY: ANTE}

    # ---------------------------------------------------------------- art. 2: the table
    def check_layout(self, layout_boxes: int,
                     interpretations: Mapping[str, str] | None = None) -> None:
        if isinstance(layout_boxes, bool) or not isinstance(layout_boxes, int):
            raise RuleError(f"the number of boxes must be a whole number, got "
                            f"{shown(layout_boxes)}")
        if layout_boxes != LAYOUT_BOXES:
            raise RuleError(f"a Fortune 3 Card Poker table has eight places including the "
                            f"croupier's ({art(2, 1)}), so exactly {LAYOUT_BOXES} boxes; this "
                            f"layout has {layout_boxes}")

    def check_bet(self, wager: str, amount: int,
                  interpretations: Mapping[str, str] | None = None,
                  limits: Mapping[str, Any] | None = None) -> None:
        """Refuse, at betting time, a wager this game does not have, a bad stake, or one
        outside the posted limits (art. 5, 6(1))."""
        self.resolve_interpretations(interpretations)
        if wager not in (PAIR_PLUS, ANTE):
            raise RuleError(f"the bets placed before the deal are {PAIR_PLUS} and {ANTE} "
                            f"({art(5, 1)}); {shown(wager)} is not one of them")
        three_card.stake(amount, wager)
        check_limits(wager, amount, limits)

    # ---------------------------------------------------------------- art. 6: bets
    def check_bet_change(self, phase: Phase, cards_dealt: int, *, removal: bool = False) -> None:
        """Art. 6(3): no bet is accepted once the first card of the round is dealt. The article
        speaks of new bets: taking one back is not its to refuse."""
        if not removal and not bets_open(cards_dealt):
            raise RuleError("no bet is accepted once the first card of the round is dealt "
                            f"({art(6, 3)}); wait for the next round")

    # ---------------------------------------------------------------- art. 7: dealing
    def dealing_plan(self, request: PlanRequest) -> list[Deal]:
        layout = request.layout_boxes or LAYOUT_BOXES
        self.check_layout(layout)
        return three_card.dealing_plan(request, layout_boxes=layout, regulation=REGULATION)

    # ---------------------------------------------------------------- art. 9: the reveal
    def reveal_order(self, request: PlanRequest) -> list[Recipient]:
        """Art. 9(1)-(2): each player's hand is opened first, in the order dealt; then the
        players decide whether to play against the croupier's hand, which opens last."""
        return hands_in_plan_order(self.dealing_plan(request), last=CROUPIER)

    # ---------------------------------------------------------------- art. 11: irregularities
    def ruling(self, irregularity: Irregularity, phase: Phase,
               interpretations: Mapping[str, str] | None = None,
               mode: Mode | str | None = None) -> Ruling:
        """Art. 11. ``mode`` matters for a croupier's card exposed while a shuffler deals
        (F4); without it the shoe's rule applies, which F4's default reading shares."""
        chosen = self.resolve_interpretations(interpretations)
        irregularity, phase = Irregularity(irregularity), Phase(phase)
        mode = Mode.parse(mode) if mode is not None else None
        if irregularity in (Irregularity.BOARD_CARD_EXPOSED, Irregularity.DIE_NOT_FLAT,
                            Irregularity.DIE_OUT_OF_CUP, Irregularity.DICE_MALFUNCTION):
            raise RuleError(f"Fortune 3 Card Poker has no board and no dice: "
                            f"{irregularity.value} cannot happen at this table")
        if phase is Phase.SHAKING:
            raise RuleError("Fortune 3 Card Poker has no shaking phase; use betting, dealing, "
                            "decisions, reveal or settlement")
        machine = irregularity in (Irregularity.SHUFFLER_MALFUNCTION,
                                   Irregularity.SHOE_MALFUNCTION)
        if phase is Phase.BETTING and not machine:
            raise RuleError(f"no card is dealt during betting, so {irregularity.value} cannot "
                            "have happened yet; report it once dealing has begun")
        dealing = phase is Phase.DEALING

        if irregularity in (Irregularity.WRONG_ORDER, Irregularity.WRONG_COUNT,
                            Irregularity.MISDEAL, Irregularity.DEALING_ERROR,
                            Irregularity.DEALING_ERROR_UNCORRECTABLE):
            return Ruling(Remedy.ROUND_VOID, art(11, 1),
                          "irregularity in the order or number of cards dealt: every bet is "
                          "void and the round invalid; new bets and new cards")
        if irregularity is Irregularity.PLAYER_CARD_EXPOSED:
            return Ruling(Remedy.CONTINUE, art(11, 2),
                          "a player's card exposed by mistake: the round stays valid and "
                          "goes on")
        if irregularity is Irregularity.CROUPIER_CARD_EXPOSED:
            return self._croupier_exposed(phase, mode, chosen)
        if irregularity is Irregularity.CARD_TO_BOX_WITHOUT_BET:
            return Ruling(Remedy.BOX_VOID, art(11, 3),
                          "cards dealt to a box without a bet: that box's hand is void and "
                          "the round goes on")
        return three_card.device_failure(irregularity, dealing, chosen["shoe_malfunction"],
                                         art(11, 4), "invalid")

    @staticmethod
    def _croupier_exposed(phase: Phase, mode: Mode | None, chosen: Mapping[str, str]) -> Ruling:
        if phase in (Phase.REVEAL, Phase.SETTLEMENT):
            return Ruling(Remedy.CONTINUE, art(9, 5),
                          "the croupier's hand is open once the players have decided; "
                          "nothing irregular")
        if phase is Phase.DECISIONS and chosen["croupier_card_exposed_after_deal"] == "round_void":
            return Ruling(Remedy.ROUND_VOID, art(11, 1),
                          "a croupier's card exposed after the deal, before the decisions: "
                          "the round is invalid and every bet is returned "
                          "(interpretation croupier_card_exposed_after_deal)")
        after = (" (after the deal: interpretation croupier_card_exposed_after_deal)"
                 if phase is Phase.DECISIONS else "")
        if mode is Mode.SHUFFLER:
            how = chosen["croupier_card_exposed_shuffler"]
            if how == "round_void":
                return Ruling(Remedy.ROUND_VOID, art(11, 2),
                              "a croupier's card exposed while the shuffler deals: the "
                              "shuffler cannot give one replacement card, so the round is "
                              "invalid and every bet is returned "
                              "(interpretation croupier_card_exposed_shuffler)")
            if how == "next_hand":
                return Ruling(Remedy.SET_ASIDE, art(11, 2),
                              "a croupier's card exposed: it is set aside face up with the "
                              "rest of that hand (face down, unseen) and the croupier takes "
                              "the next three-card hand from the shuffler" + after +
                              " (interpretation croupier_card_exposed_shuffler)")
            return Ruling(Remedy.SET_ASIDE, art(11, 2),
                          "a croupier's card exposed: it is set aside face up and the "
                          "croupier's hand is completed with the next card the shuffler "
                          "delivers, face down" + after +
                          " (interpretation croupier_card_exposed_shuffler)")
        return Ruling(Remedy.SET_ASIDE, art(11, 2),
                      "a croupier's card exposed: it is set aside face up and the croupier "
                      "receives the next card from the shoe instead, face down; the round "
                      "stays valid" + after)

    # ---------------------------------------------------------------- art. 9-10: settlement
    def settle(self, round_doc: Mapping[str, Any]) -> Settlement:
        check_keys(round_doc, {"game", "mode", "interpretations", "layout_boxes",
                                          "boxes", "croupier", "limits"}, "the round")
        overrides = round_doc.get("interpretations") or {}
        if not isinstance(overrides, dict):
            raise RuleError("\"interpretations\" must be an object of key to reading")
        chosen = self.resolve_interpretations(overrides)
        Mode.parse(round_doc.get("mode", "shoe"))
        layout = round_doc.get("layout_boxes", LAYOUT_BOXES)
        self.check_layout(layout)
        limits = _read_limits(round_doc.get("limits"))
        rank = ranking(chosen)
        boxes = round_doc.get("boxes")
        if not isinstance(boxes, list) or not boxes:
            raise RuleError("the round needs \"boxes\": a list of the boxes dealt, each with "
                            "its number, cards and wagers (see docs/settle.md)")

        parsed, seen = [], set()
        for raw in boxes:
            if isinstance(raw, dict) and "players" in raw:
                raise RuleError(f"box {raw.get('box')}: a player bets only on his own box "
                                f"({art(6, 2)}); give one player per box, not \"players\"")
            check_keys(raw, {"box", "player", "cards", PAIR_PLUS, ANTE, PLAY,
                                        "decision"}, three_card.box_label(raw))
            n = three_card.box_number(raw.get("box"), layout, REGULATION)
            if n in seen:
                raise RuleError(f"box {n} is listed twice; a box belongs to one player "
                                f"({art(6, 2)}): give it once")
            seen.add(n)
            parsed.append(self._box(raw, n, limits))

        # The Play matches the Ante (art. 9(4)): the table counts the bets placed, not it.
        check_round_stakes(sum(b[PAIR_PLUS] + b[ANTE] for b in parsed))
        playing = any(b["decision"] == "play" for b in parsed)
        croupier_raw = round_doc.get("croupier")
        croupier_cards = None
        if croupier_raw is not None or playing:
            if croupier_raw is not None and not isinstance(croupier_raw, dict):
                # ["Kd", "8c", "4h"] for {"cards": [...]}: the shape, not a missing hand
                raise RuleError(f"\"croupier\" must be {{\"cards\": [three cards]}}, got "
                                f"{shown(croupier_raw)}")
            if not isinstance(croupier_raw, dict):
                raise RuleError("a player plays against the croupier, so the round needs "
                                "\"croupier\": {\"cards\": [three cards]}")
            check_keys(croupier_raw, {"cards"}, "the croupier")
            croupier_cards = three_card.read_hand(croupier_raw.get("cards"), "the croupier")
        every = [c for b in parsed for c in b["cards"]] + list(croupier_cards or [])
        ensure_distinct(every, what="the round (the boxes' and the croupier's cards)")

        hands: dict[str, dict[str, Any]] = {}
        wagers: list[WagerResult] = []
        croupier = evaluate(croupier_cards, rank) if croupier_cards else None
        if croupier is not None:
            hands["croupier"] = {"cards": cards_json(croupier_cards),
                                 "category": croupier.label, "qualifies": qualifies(croupier)}
        for b in sorted(parsed, key=lambda b: b["box"]):
            n, value = b["box"], evaluate(b["cards"], rank)
            hand = {"cards": cards_json(b["cards"]), "category": value.label}
            if b["player"]:
                hand["player"] = b["player"]
            if not (b[PAIR_PLUS] or b[ANTE]):
                hand.update(void=True, note=f"no bet on this box: its hand is void ({art(11, 3)})")
                hands[f"box {n}"] = hand
                continue
            hands[f"box {n}"] = hand
            if b[PAIR_PLUS]:
                wagers.append(_pair_plus(b, value))
            if b[ANTE]:
                wagers += _ante_and_play(b, value, croupier, chosen)
        return Settlement(game=self.game_id, interpretations=chosen, hands=hands,
                          wagers=wagers, house_net=-sum(w.net for w in wagers))

    def _box(self, raw: Mapping[str, Any], n: int, limits) -> dict[str, Any]:
        name = raw.get("player")
        if name is not None and not isinstance(name, str):
            raise RuleError(f"box {n}: the player's name must be text, got {shown(name)}")
        pp = three_card.stake(raw.get(PAIR_PLUS), f"box {n} {PAIR_PLUS}")
        ante = three_card.stake(raw.get(ANTE), f"box {n} {ANTE}")
        play = three_card.stake(raw.get(PLAY), f"box {n} {PLAY}")
        for wager, amount in ((PAIR_PLUS, pp), (ANTE, ante)):
            check_limits(wager, amount, limits)
        decision = raw.get("decision")
        if decision is not None and decision not in ("play", "fold"):
            raise RuleError(f"box {n}: decision {shown(decision)} must be \"play\" or \"fold\" "
                            f"({art(9, 2)})")
        if not ante:
            if play or decision is not None:
                raise RuleError(f"box {n} has a Play or a decision but no Ante; the Play "
                                f"follows an Ante ({art(9, 4)})")
        elif decision is None:
            raise RuleError(f"box {n}: the decision to play or fold is missing ({art(9, 2)}); "
                            "give \"decision\": \"play\" or \"fold\"")
        elif decision == "play" and play != ante:
            raise RuleError(f"box {n}: the Play must be exactly the Ante ({art(9, 4)}): Ante "
                            f"{ante}, Play {play}; set \"play\": {ante}")
        elif decision == "fold" and play:
            raise RuleError(f"box {n} folds but has a Play of {play}; a folding player makes "
                            f"no Play ({art(9, 3)})")
        return {"box": n, "player": name, "cards": three_card.read_hand(raw.get("cards"),
                                                                      f"box {n}"),
                PAIR_PLUS: pp, ANTE: ante, PLAY: play, "decision": decision}

    # ---------------------------------------------------------------- odds
    def odds(self, interpretations: Mapping[str, str] | None = None,
             progress: Any = None) -> dict[str, Any]:
        """Exact house edge of the Pair Plus and of the Ante (with its Play decision)."""
        from . import odds as engine

        chosen = self.resolve_interpretations(interpretations)
        return engine.fortune_odds(chosen, progress=progress)


def _read_limits(raw) -> dict[str, dict[str, int]] | None:
    if raw is None:
        return None
    check_keys(raw, {PAIR_PLUS, ANTE}, "\"limits\"")
    out = {}
    for wager, posted in raw.items():
        check_keys(posted, {"min", "max"}, f"the limits of {wager}")
        out[wager] = {k: three_card.stake(v, f"{wager} limit {k}") for k, v in posted.items()}
        check_posted(wager, out[wager])
    return out


def _pair_plus(b: dict, value: HandValue) -> WagerResult:
    stake = b[PAIR_PLUS]
    odds = PAIR_PLUS_PAYS.get(value.category)
    if odds is None:
        return WagerResult(b["box"], PAIR_PLUS, stake, "lose", -stake, b["player"],
                           f"three odd cards lose the Pair Plus ({art(9, 1)})")
    return WagerResult(b["box"], PAIR_PLUS, stake, "win", stake * odds, b["player"],
                       f"{value.label} pays {odds} to 1 ({art(10)})")


def _ante_and_play(b: dict, value: HandValue, croupier: HandValue | None,
                   chosen: Mapping[str, str]) -> list[WagerResult]:
    n, who, ante, play = b["box"], b["player"], b[ANTE], b[PLAY]
    if b["decision"] == "fold":
        return [WagerResult(n, ANTE, ante, "lose", -ante, who,
                            f"not playing loses the box: the Ante is collected ({art(9, 3)})")]
    assert croupier is not None
    if not qualifies(croupier):
        return [WagerResult(n, ANTE, ante, "win", ante, who,
                            f"croupier below Q: the Ante is paid 1 to 1 ({art(9, 6)})"),
                WagerResult(n, PLAY, play, "push", 0, who,
                            f"croupier below Q: the Play is returned ({art(9, 6)})")]
    result = (croupier.key < value.key) - (croupier.key > value.key)
    if result == 0:
        both_odd = value.category is Category.THREE_ODD_CARDS
        if both_odd and chosen["odd_cards_equal"] == "croupier_wins":
            return _collect(n, who, ante, play, "equal three odd cards: the croupier wins "
                            "(interpretation odd_cards_equal)")
        if chosen["qualified_tie"] == "croupier_wins":
            return _collect(n, who, ante, play, "a tie with a qualified croupier: the "
                            "croupier wins (interpretation qualified_tie)")
        note = f"a tie with a qualified croupier: returned (interpretation qualified_tie, {art(8)})"
        return [WagerResult(n, ANTE, ante, "push", 0, who, note),
                WagerResult(n, PLAY, play, "push", 0, who, note)]
    if result < 0:
        return _collect(n, who, ante, play, f"croupier's {croupier.label} is higher "
                                            f"({art(9, 7)})")
    odds = ANTE_PLAY_PAYS[value.category]
    play_odds = odds if chosen["ante_play_odds"] == "ante_and_play" else 1
    return [WagerResult(n, ANTE, ante, "win", ante * odds, who,
                        f"{value.label} pays {odds} to 1 ({art(9, 8)})"),
            WagerResult(n, PLAY, play, "win", play * play_odds, who,
                        f"{value.label} pays {play_odds} to 1 ({art(9, 8)}, "
                        "interpretation ante_play_odds)")]


def _collect(n: int, who: str | None, ante: int, play: int, why: str) -> list[WagerResult]:
    return [WagerResult(n, ANTE, ante, "lose", -ante, who, why),
            WagerResult(n, PLAY, play, "lose", -play, who, why)]


GAME = Fortune3CardPoker()
