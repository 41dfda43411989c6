"""The four regulations as pure rules (no I/O, no clock).

``get_game(game_id)`` returns the :class:`~controller.rules.base.Game` of one regulation. Adding
a fifth regulation means adding one module with a ``GAME`` instance and one line below.
"""
from __future__ import annotations

import importlib

from controller.shown import shown

from .base import Game
from .errors import RuleError

GAME_MODULES = {
    "q-poker": "controller.rules.q_poker",                           # 89/2004
    "fortune-3-card-poker": "controller.rules.fortune_3_card_poker",  # 78/2008
    "texas-holdem": "controller.rules.texas_holdem",                 # 11/2008
    "super-pan-9": "controller.rules.super_pan_9",                   # 261/96/M
}
GAME_IDS = tuple(GAME_MODULES)


def get_game(game_id: str) -> Game:
    """The rules of ``game_id``; RuleError naming the known ids otherwise."""
    try:
        module = GAME_MODULES[game_id]
    except KeyError:
        raise RuleError(f"unknown game {shown(game_id)}; the games are: "
                        f"{', '.join(GAME_IDS)}") from None
    return importlib.import_module(module).GAME


__all__ = ["GAME_IDS", "Game", "RuleError", "get_game"]
