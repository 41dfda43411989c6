"""One round's data: bets, decisions, rulings and results (card identities live in the vault).

Amounts are integers in the table's smallest chip unit. Several players may share a Q Poker
box (interpretation Q2), so a bet is keyed by box, wager and player; ``player`` is ``None``
where the table does not track players.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.errors import TablectlError
from controller.shown import shown
from controller.rules.base import AMOUNT_LIMIT, MAX_AMOUNT


@dataclass(frozen=True, slots=True)
class BetKey:
    box: int
    wager: str
    player: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"box": self.box, "wager": self.wager, "player": self.player}


def check_amount(amount: Any, what: str = "a bet") -> int:
    """An amount in chip units: a positive integer, never a float or text."""
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TablectlError(f"{what} must be a whole number of chip units, got {shown(amount)}; "
                            "amounts are integers in the table's smallest chip unit")
    if amount <= 0:
        raise TablectlError(f"{what} must be more than 0 chip units, got {amount}")
    if amount > MAX_AMOUNT:
        raise TablectlError(f"{what} of {amount} chip units is too large: an amount is at most "
                            f"{AMOUNT_LIMIT}")
    return amount


@dataclass(slots=True)
class RoundData:
    """What the table knows of one round, apart from card identities (see secrecy.CardVault)."""

    round_id: int
    game: str
    mode: str
    bets: dict[BetKey, int] = field(default_factory=dict)
    decisions: dict[tuple[int, str | None], str] = field(default_factory=dict)
    actions: list[dict[str, Any]] = field(default_factory=list)      # Hold'em betting actions
    rulings: list[dict[str, Any]] = field(default_factory=list)
    void_boxes: set[int] = field(default_factory=set)
    dice: tuple[int, ...] | None = None
    adjust: int = 0                     # Super Pan 9 points declared before the shake
    banker: int | None = None           # Super Pan 9 banker's seat
    capital: int | None = None          # Super Pan 9 banker's capital
    # Super Pan 9 co-bankers in the order their capital was placed (261/96/M art. 5(5)), as the
    # settlement document lists them: {"player", "seat", "capital"} or {"house": True,
    # "capital"}
    co_bankers: list[dict[str, Any]] = field(default_factory=list)
    button: int | None = None           # Hold'em dealer button
    seats: tuple[int, ...] = ()         # Hold'em occupied seats / Pan 9 seats in play
    settlement: dict[str, Any] | None = None
    # The settlement was confirmed as paid (confirm_result): the round can no longer be void.
    paid: bool = False
    void: dict[str, Any] | None = None  # the ruling that voided the round

    def bet_boxes(self) -> tuple[int, ...]:
        """Boxes holding at least one bet, in box order."""
        return tuple(sorted({k.box for k, v in self.bets.items() if v > 0}))

    def box_bets(self, box: int) -> dict[str, int]:
        """The total per wager on ``box`` (all players together)."""
        out: dict[str, int] = {}
        for k, v in self.bets.items():
            if k.box == box:
                out[k.wager] = out.get(k.wager, 0) + v
        return out

    def players_on(self, box: int) -> list[str | None]:
        seen: list[str | None] = []
        for k in self.bets:
            if k.box == box and k.player not in seen:
                seen.append(k.player)
        return seen

    def bets_json(self) -> list[dict[str, Any]]:
        return [{**k.to_json(), "amount": v} for k, v in sorted(
            self.bets.items(), key=lambda kv: (kv[0].box, kv[0].wager, kv[0].player or ""))]

    def summary(self) -> dict[str, Any]:
        """Public summary of the round (no card identities)."""
        return {"round": self.round_id, "game": self.game, "mode": self.mode,
                "bets": self.bets_json(),
                "decisions": [{"box": b, "player": p, "decision": d}
                              for (b, p), d in sorted(self.decisions.items(),
                                                      key=lambda kv: (kv[0][0], kv[0][1] or ""))],
                "rulings": list(self.rulings), "void_boxes": sorted(self.void_boxes),
                "dice": list(self.dice) if self.dice else None, "void": self.void,
                "banker": self.banker, "capital": self.capital,
                "co_bankers": [dict(c) for c in self.co_bankers], "adjust": self.adjust,
                "settlement": self.settlement}
