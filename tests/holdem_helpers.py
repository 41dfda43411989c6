"""Helpers for the Hold'em betting tests."""
import copy

from controller.rig import Rig
from controller.rules.cards import Card
from controller.rules.errors import RuleError


def accepts(state, seat, action, amount=None):
    """Whether tablectl's ``act`` takes this action now, tried on a copy of the hand (the hand
    itself is left as it was)."""
    try:
        copy.deepcopy(state).act(seat, action, amount)
    except RuleError:
        return False
    return True


def full_deck(first):
    """A 52-card deck that deals ``first`` first, the other cards after them in code order."""
    return first + [str(c) for c in (Card.from_code(i) for i in range(52))
                    if str(c) not in first]


def holdem_rig(tmp_path, seed, holdem, deck):
    """A daemon (tablectl run) at a Hold'em table dealt from a simulated shoe loaded with
    ``deck``, opened and waiting for bets. The caller stops it (``rig.stop()``)."""
    rig = Rig(tmp_path, "texas-holdem", "shoe", seed=seed, holdem=holdem)
    try:
        rig.open_with_deck(deck)
    except BaseException:
        rig.stop()
        raise
    return rig
