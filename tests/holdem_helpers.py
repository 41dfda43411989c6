"""Helpers for the Hold'em betting tests."""
import copy

from controller.rules.errors import RuleError


def accepts(state, seat, action, amount=None):
    """Whether tablectl's ``act`` takes this action now, tried on a copy of the hand (the hand
    itself is left as it was)."""
    try:
        copy.deepcopy(state).act(seat, action, amount)
    except RuleError:
        return False
    return True
