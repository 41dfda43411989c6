"""The Texas Hold'em pots the table's view shows: the main pot and each side pot, with its
amount and the boxes that may win it (11/2008 art. 10, 11(3); interpretation H3).

Once no more betting can happen the pots are the settlement's own
(:func:`controller.rules.holdem_pots.build_pots`). While the betting runs, a seat that is not
all-in may still put in more chips, so it may win every pot: only an all-in seat's stake closes
a pot below the chips above it. A layer only one seat put chips into, that only it may win, is
its bet nobody has called: no pot.

A hand that is void has no pot at all: what each seat put in is given back (11/2008 art. 9(2),
the ``round_void`` event's ``returned``), so :func:`void_view` shows the chips in the stacks
again and what each seat got back.
"""
from __future__ import annotations

from typing import Any, Mapping

from controller.rules.holdem_pots import build_pots


def view_pots(committed: Mapping[int, int], folded: set[int] | frozenset[int],
              all_in: set[int] | frozenset[int], betting_over: bool) -> list[dict[str, Any]]:
    """``[{"amount", "eligible"}]``, main pot first. ``committed``: each seat's chips put in
    over the hand; ``all_in``: the seats with no chips left behind."""
    if not any(committed.values()) or all(s in folded for s in committed):
        return []
    if betting_over:
        pots, _ = build_pots(committed, folded)
        return [{"amount": p.amount, "eligible": list(p.eligible)} for p in pots]
    contenders = sorted(s for s in committed if s not in folded)
    capped = {committed[s] for s in contenders if s in all_in}
    out: list[dict[str, Any]] = []
    prev = 0
    for level in sorted(capped | {max(committed.values())}):
        amount = sum(min(c, level) - min(c, prev) for c in committed.values())
        payers = [s for s, c in committed.items() if c > prev]
        eligible = [s for s in contenders if s not in all_in or committed[s] >= level]
        prev = level
        if amount == 0 or (len(payers) == 1 and eligible == payers):
            continue
        if not eligible and out:      # folded chips above every stake still in: the pot below
            out[-1]["amount"] += amount
        elif out and out[-1]["eligible"] == eligible:
            out[-1]["amount"] += amount
        else:
            out.append({"amount": amount, "eligible": eligible or contenders})
    return out


def void_view(view: Mapping[str, Any], stacks: Mapping[int, int],
              committed: Mapping[int, int]) -> dict[str, Any]:
    """The Hold'em view of a void hand (11/2008 art. 9(2): the stakes are returned to the
    players): no pot, each stack with its chips back, nobody to act, and ``returned``, what
    each seat got back (``{"seat": chips}``, the blinds included)."""
    back = {s: c for s, c in sorted(committed.items()) if c > 0}
    return {**view, "pot": 0, "pots": [], "to_act": None, "legal": [],
            "stacks": {str(s): c + back.get(s, 0) for s, c in stacks.items()},
            "returned": {str(s): c for s, c in back.items()}}
