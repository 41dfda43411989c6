"""Main pot, side pots, split pots, the odd chip and the rake: 11/2008 articles 10, 13(3), 16.

Pure arithmetic on integers in the table's smallest chip unit. The input is what each seat put
in over the hand, who folded, and (at a showdown) a comparable hand value per seat still in;
the output says who receives what and what the house keeps. Chips are conserved: the seats'
nets and the rake add up to zero.

- Side pots (interpretation H3): the text describes one pot; with all-in players the chips are
  layered by contribution, and a seat can win only the layers it matched in full. A layer only
  one seat put chips into is that seat's uncalled bet: it goes back untouched and is no pot.
- Split pots (art. 10(4)): equal hands share a pot in equal parts down to the chip unit.
- The odd chip (art. 10(5), interpretation H2): what does not divide goes to one seat.
- Rake (art. 16, interpretations H7-H9): a rate of 3-5 % of the hand's pot (by default all its
  pots together, rounded once to the chip unit), at most five big blinds in the hand.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

from controller.shown import shown

from .errors import RuleError

RAKE_CAP_BIG_BLINDS = 5
RAKE_MIN_PERCENT = Fraction(3)
RAKE_MAX_PERCENT = Fraction(5)


@dataclass(slots=True)
class Pot:
    """One pot: ``amount`` before rake, the seats that may win it (``eligible``), the rake taken
    from it, and after the award the ``winners`` and what each received (``shares``)."""

    amount: int
    eligible: tuple[int, ...]
    rake: int = 0
    winners: tuple[int, ...] = ()
    shares: dict[int, int] = field(default_factory=dict)
    odd_chips: int = 0
    odd_chip_to: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"amount": self.amount, "eligible": list(self.eligible), "rake": self.rake,
                "winners": list(self.winners),
                "shares": {str(k): v for k, v in sorted(self.shares.items())},
                "odd_chips": self.odd_chips, "odd_chip_to": self.odd_chip_to}


@dataclass(slots=True)
class PotResult:
    """The outcome of a hand's money: pots, uncalled bets returned, payouts, nets and rake."""

    pots: list[Pot]
    returned: dict[int, int]
    payouts: dict[int, int]
    nets: dict[int, int]
    rake: int


def parse_rake_percent(value: Any) -> Fraction:
    """A rake rate in percent (``5``, ``"4.5"``, ``"3%"``); 0 means no rake. Art. 16 allows
    3 to 5 %. Exact (a Fraction) so money never meets a float."""
    if value is None:
        return Fraction(0)
    if isinstance(value, bool):
        raise RuleError(f"rake rate {shown(value)} must be a percentage from 3 to 5 (11/2008 "
                        "art. 16), or 0")
    text = str(value).strip().rstrip("%").strip()
    try:
        rate = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise RuleError(f"rake rate {shown(value)} must be a percentage such as 5 or 4.5 "
                        "(11/2008 art. 16: 3 to 5 %), or 0 for none") from None
    if rate != 0 and not RAKE_MIN_PERCENT <= rate <= RAKE_MAX_PERCENT:
        raise RuleError(f"rake rate {shown(value)} % is outside 3-5 % (11/2008 art. 16); "
                        "use a rate from 3 to 5, or 0 for none")
    return rate


def build_pots(committed: Mapping[int, int], folded: set[int] | frozenset[int]
               ) -> tuple[list[Pot], dict[int, int]]:
    """Layer the chips into the main pot and side pots (H3).

    Returns the pots, main pot first, and the uncalled chips to return per seat. Adjacent
    layers with the same eligible seats are one pot.
    """
    contenders = [s for s in committed if s not in folded]
    if not contenders:
        raise RuleError("every seat has folded; at least one player must remain in the hand")
    returned = {s: 0 for s in committed}
    pots: list[Pot] = []
    levels = sorted({c for c in committed.values() if c > 0})
    prev = 0
    for level in levels:
        amount = sum(min(c, level) - min(c, prev) for c in committed.values())
        payers = [s for s, c in committed.items() if c > prev]
        eligible = tuple(sorted(s for s in contenders if committed[s] >= level))
        if len(payers) == 1 and eligible == (payers[0],):
            returned[payers[0]] += amount      # uncalled: back to its owner, no pot
        elif not eligible:
            # chips of folded seats above every contender's stake: they join the pot below
            if pots:
                pots[-1].amount += amount
            else:   # not from real betting: every contender put in nothing
                pots.append(Pot(amount, tuple(sorted(contenders))))
        elif pots and pots[-1].eligible == eligible:
            pots[-1].amount += amount
        else:
            pots.append(Pot(amount, eligible))
        prev = level
    return pots, returned


def _rounded(amount: int, percent: Fraction, rounding: str) -> int:
    exact = amount * percent / 100
    cut = exact.numerator // exact.denominator
    if rounding == "up" and exact != cut:
        cut += 1
    return cut


def rake_pots(pots: Sequence[Pot], *, percent: Fraction, big_blind: int,
              flop_seen: bool, without_flop: str = "rake", side_pots: str = "whole_hand",
              rounding: str = "down") -> int:
    """Take the art. 16 rake from ``pots`` in place; returns the total.

    ``percent`` of the pot, rounded to the chip unit (``rounding`` ``down`` or ``up``), never
    more than five big blinds in all for the hand. ``side_pots`` (H8): ``whole_hand`` rates
    the hand's pots together and rounds once, each pot then giving its share (the rounded-down
    rate of it, main pot first, any unit the single rounding leaves over from the pots in
    order); ``every_pot`` rates and rounds each pot on its own, main pot first, under the one
    cap; ``main_pot_only`` rakes the main pot alone. ``without_flop="no_flop_no_drop"`` (H7)
    takes nothing from a hand that ended before the flop.
    """
    if percent == 0 or not pots:
        return 0
    if not flop_seen and without_flop == "no_flop_no_drop":
        return 0
    cap = RAKE_CAP_BIG_BLINDS * big_blind
    if side_pots == "main_pot_only":
        pots[0].rake = min(_rounded(pots[0].amount, percent, rounding), cap, pots[0].amount)
        return pots[0].rake
    if side_pots == "every_pot":
        total = 0
        for pot in pots:
            pot.rake = min(_rounded(pot.amount, percent, rounding), cap - total, pot.amount)
            total += pot.rake
        return total
    # whole_hand
    due = min(_rounded(sum(p.amount for p in pots), percent, rounding), cap)
    taken = 0
    for pot in pots:
        pot.rake = min(_rounded(pot.amount, percent, "down"), due - taken)
        taken += pot.rake
    while taken < due:                       # what the single rounding leaves: main pot first
        for pot in pots:
            if taken < due and pot.rake < pot.amount:
                pot.rake += 1
                taken += 1
    return taken


def nearest_croupier_left(seats: Sequence[int]) -> int:
    """Art. 10(5): the seat nearest the croupier's left going clockwise. Seat 1 sits
    immediately left of the croupier and numbers increase clockwise, so it is the lowest."""
    return min(seats)


def award_pots(pots: Sequence[Pot], contenders: Sequence[int],
               strength: Callable[[int], Any] | None, *,
               odd_chip: str = "tied_winner") -> dict[int, int]:
    """Award each pot (after its rake) to the best hand among its eligible seats; equal hands
    split (art. 10(4)). ``strength(seat)`` returns a comparable value; ``None`` when only one
    seat is left (no showdown). The remainder of a split goes to one seat (art. 10(5)):
    ``tied_winner`` - the tied winner of that pot nearest the croupier's left;
    ``nearest_in_hand`` - the player still in the hand nearest the croupier's left, winner of
    that pot or not (the literal words)."""
    payouts: dict[int, int] = {}
    for pot in pots:
        net_amount = pot.amount - pot.rake
        if len(pot.eligible) == 1 or strength is None:
            if len(pot.eligible) != 1:
                raise RuleError("a pot contested by several players needs their hands to be "
                                "compared; give the hole cards and the board")
            winners = pot.eligible
        else:
            values = {s: strength(s) for s in pot.eligible}
            best = max(values.values())
            winners = tuple(s for s in pot.eligible if values[s] == best)
        share, rest = divmod(net_amount, len(winners))
        pot.winners = tuple(winners)
        pot.shares = {s: share for s in winners}
        if rest:
            to = (nearest_croupier_left(winners) if odd_chip == "tied_winner"
                  else nearest_croupier_left(contenders))
            pot.shares[to] = pot.shares.get(to, 0) + rest
            pot.odd_chips, pot.odd_chip_to = rest, to
        for s, v in pot.shares.items():
            payouts[s] = payouts.get(s, 0) + v
    return payouts


def settle_pots(committed: Mapping[int, int], folded: set[int] | frozenset[int],
                strength: Callable[[int], Any] | None, *, big_blind: int,
                rake_percent: Fraction = Fraction(0), flop_seen: bool = True,
                interpretations: Mapping[str, str] | None = None) -> PotResult:
    """Everything from the chips put in to each seat's net result, with the rake."""
    chosen = interpretations or {}
    pots, returned = build_pots(committed, folded)
    rake = rake_pots(pots, percent=rake_percent, big_blind=big_blind, flop_seen=flop_seen,
                     without_flop=chosen.get("rake_without_flop", "rake"),
                     side_pots=chosen.get("rake_side_pots", "whole_hand"),
                     rounding=chosen.get("rake_rounding", "down"))
    contenders = [s for s in sorted(committed) if s not in folded]
    payouts = award_pots(pots, contenders, strength,
                         odd_chip=chosen.get("odd_chip", "tied_winner"))
    nets = {s: payouts.get(s, 0) + returned[s] - committed[s] for s in committed}
    assert sum(nets.values()) + rake == 0, "chips must be conserved"
    return PotResult(pots, returned, payouts, nets, rake)
