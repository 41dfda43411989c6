"""Q Poker, 89/2004: points of the text the per-article suite (test_q_poker.py) did not hold.

Each class is cited by its article in docs/regulations/q-poker.md and names that article in its
docstring (tests/test_rules_traceability.py checks both)."""
from __future__ import annotations

import pytest

from controller.rules.base import Mode, PlanRequest
from controller.rules.errors import RuleError
from controller.rules.q_poker import GAME
from test_q_poker import nets, round_doc


class TestArt1OneDeckDealsAtMostSixteenBoxes:
    """89/2004 art. 1(1), art. 7: one deck of 52 cards (一副共五十二張, reading Q3 ``decks=one``)
    and three cards to every box with a bet and to the croupier. 17 boxes and the croupier
    would need 54 cards: no plan can deal them from one deck."""

    @staticmethod
    def plan(n, mode=Mode.SHOE, **interpretations):
        return GAME.dealing_plan(PlanRequest(boxes=tuple(range(1, n + 1)), mode=mode,
                                             layout_boxes=20, interpretations=interpretations))

    @pytest.mark.parametrize("mode", [Mode.SHOE, Mode.SHUFFLER])
    def test_seventeen_boxes_are_more_than_one_deck_deals(self, mode):
        with pytest.raises(RuleError, match=r"54 cards.*89/2004 art\. 1\(1\).*at most 16"):
            self.plan(17, mode)
        assert sum(d.cards for d in self.plan(16, mode)) == 51

    def test_several_decks_deal_any_number_of_boxes(self):
        assert sum(d.cards for d in self.plan(17, decks="several")) == 54


class TestQ3SeveralDecksAHandMayHoldACardTwice:
    """89/2004 art. 1(1), reading Q3 ``decks=several`` ("um baralho ou mais"): a card may
    appear more than once, in the round and in one hand; the categories of art. 8 apply as
    written (three identical cards are three of a kind, three cards of one suit a flush)."""

    SEVERAL = {"decks": "several"}

    def test_a_box_holding_a_card_twice_is_settled(self):
        doc = round_doc([{"box": 1, "cards": ["Ks", "Ks", "Kd"], "pair_bonus": 10},
                         {"box": 2, "cards": ["Ks", "Ks", "Qs"], "pair_bonus": 10}],
                        croupier=None, interpretations=self.SEVERAL)
        s = GAME.settle(doc)
        assert (s.hands["box 1"]["category"], s.hands["box 2"]["category"]) == (
            "three of a kind", "flush")
        assert nets(s) == {(1, None, "pair_bonus"): 300, (2, None, "pair_bonus"): 40}

    def test_the_croupier_may_hold_a_card_twice(self):
        doc = round_doc([{"box": 1, "cards": ["9s", "9d", "5h"], "versus_croupier": 10,
                          "decision": "play"}], croupier=("Qd", "Qd", "3c"),
                        interpretations=self.SEVERAL)
        assert nets(GAME.settle(doc)) == {(1, None, "versus_croupier"): -10}

    def test_one_deck_still_refuses_a_card_twice_in_a_hand(self):
        doc = round_doc([{"box": 1, "cards": ["Ks", "Ks", "Kd"], "pair_bonus": 10}],
                        croupier=None)
        with pytest.raises(RuleError, match="duplicate card Ks"):
            GAME.settle(doc)


class TestQ2SeatedPlayerDecidesWithoutABetOfHisOwn:
    """89/2004 art. 6(1), 9(2), reading Q2 ``shared_box_decision=seated_player``: the seated
    player, who holds the box's cards (art. 6(3)), decides play or fold for every bet versus
    the croupier on the box, also when his own bet is only the pair bonus."""

    SEATED = {"shared_box_decision": "seated_player"}

    def doc(self, ana_decision=None, bo_decision=None, **interpretations):
        ana = {"player": "Ana", "seated": True, "pair_bonus": 10}
        if ana_decision:
            ana["decision"] = ana_decision
        bo = {"player": "Bo", "versus_croupier": 10}
        if bo_decision:
            bo["decision"] = bo_decision
        return round_doc([{"box": 3, "cards": ["9s", "9d", "5h"], "players": [ana, bo]}],
                         interpretations=interpretations or self.SEATED)

    def test_the_seated_players_decision_binds_the_backers_bet(self):
        assert nets(GAME.settle(self.doc("fold"))) == {(3, "Ana", "pair_bonus"): 10,
                                                       (3, "Bo", "versus_croupier"): -5}
        assert nets(GAME.settle(self.doc("play", "play"))) == {
            (3, "Ana", "pair_bonus"): 10, (3, "Bo", "versus_croupier"): 10}

    def test_his_decision_is_needed_and_a_backer_cannot_overrule_it(self):
        with pytest.raises(RuleError, match="binds the box and is missing"):
            GAME.settle(self.doc(bo_decision="play"))
        with pytest.raises(RuleError, match="binds the box"):
            GAME.settle(self.doc("fold", "play"))

    def test_per_player_a_decision_without_a_bet_versus_the_croupier_is_refused(self):
        with pytest.raises(RuleError, match="decision but no bet versus the croupier"):
            GAME.settle(self.doc("fold", "play", shared_box_decision="per_player"))
