"""Fortune 3 Card Poker, 78/2008: points of the text the per-article suite
(test_fortune_3_card_poker.py) did not hold.

Each class is cited by its article in docs/regulations/fortune-3-card-poker.md and names that
article in its docstring (tests/test_rules_traceability.py checks both)."""
from __future__ import annotations

import pytest

from controller.rules.errors import RuleError
from controller.rules.fortune_3_card_poker import GAME


def round_doc(boxes, croupier=("Qd", "7c", "3d"), **extra):
    doc = {"game": "fortune-3-card-poker", "boxes": boxes, **extra}
    if croupier is not None:
        doc["croupier"] = {"cards": list(croupier)}
    return doc


class TestArt6_1PostedLimitsThatCannotBeMet:
    """78/2008 art. 6(1): the bets respect the minimum and maximum posted on the table. Posted
    limits that no stake can meet (a minimum above the maximum, a maximum of 0) are a mistake
    in the posted limits, named as such, not a stake "outside the limits" to be bet again."""

    BOX = {"box": 1, "cards": ["9s", "9d", "5h"], "ante": 50, "play": 50, "decision": "play"}

    @pytest.mark.parametrize("posted,match", [
        ({"min": 100, "max": 10}, r"minimum 100 is above its maximum 10 .*art\. 6\(1\)"),
        ({"min": 0, "max": 0}, r"maximum of 0 .*art\. 6\(1\)"),
    ])
    def test_impossible_posted_limits_are_named(self, posted, match):
        with pytest.raises(RuleError, match=match):
            GAME.settle(round_doc([dict(self.BOX)], limits={"ante": posted}))
        with pytest.raises(RuleError, match=match):
            GAME.check_bet("ante", 50, limits={"ante": posted})
        # named even when no box bets that wager
        with pytest.raises(RuleError, match=match):
            GAME.settle(round_doc([dict(self.BOX)], limits={"pair_plus": posted}))

    def test_limits_that_can_be_met_still_judge_the_stake(self):
        GAME.settle(round_doc([dict(self.BOX)], limits={"ante": {"min": 50, "max": 50}}))
        GAME.settle(round_doc([dict(self.BOX)], limits={"ante": {"max": 50}}))
        with pytest.raises(RuleError, match=r"outside the table limits 60-100"):
            GAME.settle(round_doc([dict(self.BOX)], limits={"ante": {"min": 60, "max": 100}}))
