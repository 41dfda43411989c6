"""Super Pan 9 (261/96/M), article 5: the banker, the bank's capital and co-banking.

Pure functions and small objects the table machine calls between rounds (who banks next, with
what capital) and the settlement calls during a round (how far the bank's capital reaches).

Seats are numbered 1..N clockwise as seen from above, seat 1 at the croupier's left, so
*counter-clockwise* means decreasing seat numbers, seat 1 being followed by seat N (see
``super_pan_9`` for the whole orientation).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from controller.shown import shown

from .errors import RuleError

MAX_ROUNDS_PER_TURN = 2  # art. 5(1)


def counter_clockwise(seats: Iterable[int], start: int) -> list[int]:
    """``seats`` in counter-clockwise order beginning at ``start`` (decreasing numbers, wrapping
    from the lowest to the highest). ``start`` need not be one of ``seats``: the list then begins
    with the first of them counter-clockwise from it."""
    ordered = sorted(set(seats), reverse=True)
    first = [s for s in ordered if s <= start]
    rest = [s for s in ordered if s > start]
    return first + rest


# --- art. 5(1)-(2): the bank goes round ---------------------------------------------------


def may_keep_bank(rounds_held: int, *, all_agree: bool = False) -> bool:
    """Art. 5(1): a seat holds the bank at most two rounds at a time, unless every player of
    the other seats agrees otherwise. ``rounds_held`` counts the rounds already played in this
    turn (1 after the first round)."""
    if not isinstance(rounds_held, int) or rounds_held < 0:
        raise RuleError(f"rounds held {shown(rounds_held)} must be a whole number of rounds, 0 "
                        "or more")
    return rounds_held < MAX_ROUNDS_PER_TURN or all_agree


def bank_offer_order(seats: Iterable[int], banker: int, *, bet_previous_round: Iterable[int],
                     occupied: Iterable[int] | None = None,
                     interpretations: Mapping[str, str] | None = None) -> list[int]:
    """Art. 5(1)-(2): the seats to which the bank is offered, in turn, when ``banker`` gives it
    up: counter-clockwise from the banker's seat, seat by seat. A seat may decline; the bank then
    passes to the next one counter-clockwise. Only a player who bet in the previous round may
    take it: for every candidate (reading ``always`` of ``bank_requires_previous_bet``, the
    Chinese text), or only for one to whom it passed after a refusal (``when_passed``, the
    Portuguese text; the first occupied seat in turn then takes it without that condition).
    ``occupied`` are the seats with a player (default: those who bet in the previous round)."""
    seats = set(seats)
    if banker not in seats:
        raise RuleError(f"banker's seat {banker} is not one of the table's seats {sorted(seats)}")
    bettors = set(bet_previous_round)
    occupied_seats = set(occupied) if occupied is not None else bettors
    reading = (interpretations or {}).get("bank_requires_previous_bet", "always")
    if reading not in ("always", "when_passed"):
        raise RuleError(f"bank_requires_previous_bet cannot be {shown(reading)}; "
                        "choose always or when_passed")
    order = [s for s in counter_clockwise(seats, banker) if s != banker]
    offers: list[int] = []
    first_in_turn = True  # the first occupied seat counter-clockwise: its turn, not a pass
    for seat in order:
        if seat not in occupied_seats:
            continue
        if seat in bettors or (reading == "when_passed" and first_in_turn):
            offers.append(seat)
        first_in_turn = False
    return offers


def check_taker(seats: Iterable[int], banker: int, taker: int, *,
                bet_previous_round: Iterable[int],
                interpretations: Mapping[str, str] | None = None) -> None:
    """Art. 5(2): RuleError unless ``taker`` may take the bank that ``banker`` gives up: it
    is offered counter-clockwise, and the seats before ``taker`` in that order declined it;
    only a player who bet in the previous round may take it (reading ``always``), or under
    ``when_passed`` also the first occupied seat in turn. The seats between the banker and
    ``taker`` that did not bet are taken to be empty; a seat that bet has a player."""
    bettors = set(bet_previous_round)
    offers = bank_offer_order(seats, banker, bet_previous_round=bettors,
                              occupied=bettors | {taker}, interpretations=interpretations)
    if taker in offers:
        return
    eligible = bank_offer_order(seats, banker, bet_previous_round=bettors,
                                interpretations=interpretations)
    listed = ", ".join(str(s) for s in eligible) or "none"
    raise RuleError(f"seat {taker} did not bet in the previous round: the bank seat {banker} "
                    "gives up passes counter-clockwise to a player who did (261/96/M art. "
                    f"5(2)); seats that may take it, in turn: {listed}")


# --- art. 5(3)-(4): the banker's capital -------------------------------------------------


def check_capital(capital: object, who: str = "the banker") -> int:
    """Art. 5(3): capital in chips on the table before the shake; a whole, positive amount."""
    if capital is None:
        raise RuleError(f"{who} has no capital: art. 5(3) requires the capital in chips on the "
                        "table before the dice are shaken; give it as a whole number of chip units")
    if isinstance(capital, bool) or not isinstance(capital, int):
        raise RuleError(f"capital of {who} {shown(capital)} must be a whole number of chip units")
    if capital <= 0:
        raise RuleError(f"capital of {who} is {capital}; it must be more than 0 chip units "
                        "(art. 5(3): the bank's win or loss is limited to it)")
    return capital


def second_round_capital(first_capital: int, first_round_net: int,
                         offered: int | None = None) -> int:
    """Art. 5(4): the capital for the second round of a banker who keeps the bank.

    After a winning first round (``first_round_net`` > 0, the banker's net after commission),
    the whole win stays on the table with the capital: the new capital is at least
    ``first_capital + first_round_net``; the banker may add (``offered`` above it) and never
    reduce (RuleError). After a round lost or even, the text sets no floor: the banker offers any
    capital (the first capital when ``offered`` is None, if the chips are still there).
    """
    first_capital = check_capital(first_capital, "the banker's first round")
    if isinstance(first_round_net, bool) or not isinstance(first_round_net, int):
        raise RuleError(f"first round net {shown(first_round_net)} must be a whole number of "
                        "chip units")
    if first_round_net < -first_capital:
        raise RuleError(f"the banker cannot have lost {-first_round_net}: art. 5(3) limits the "
                        f"loss to the capital {first_capital}")
    if first_round_net > 0:
        floor = first_capital + first_round_net
        if offered is None:
            return floor
        offered = check_capital(offered, "the banker's second round")
        if offered < floor:
            raise RuleError(f"second-round capital {offered} is less than {floor} (capital "
                            f"{first_capital} + winnings {first_round_net}): art. 5(4) lets a "
                            "banker who won keep the whole win on the table and add to it, never "
                            f"reduce it; put at least {floor}")
        return offered
    if offered is None:
        remaining = first_capital + first_round_net
        if remaining <= 0:
            raise RuleError("the banker's capital is spent; offer a new capital to keep the bank")
        return remaining
    return check_capital(offered, "the banker's second round")


# --- art. 5(1), 5(4): the bank's turn at the table -----------------------------------------


@dataclass(frozen=True, slots=True)
class BankTurn:
    """The seat holding the bank and what its turn has played so far (art. 5(1), 5(4)).

    ``rounds`` counts the rounds this seat has banked in a row (settled rounds only: a void
    round is not a round played). ``first_capital`` and ``first_net`` are the capital of the
    turn's first round and the banker's own net of it after commission (co-bankers' and the
    house's shares not included): art. 5(4) carries that win into the second round.
    """

    seat: int
    rounds: int
    first_capital: int
    first_net: int

    @property
    def capital_floor(self) -> int | None:
        """The least capital with which this seat may bank the next round of its turn: after a
        winning first round, capital plus the win (art. 5(4)); otherwise none. The text sets
        the floor for the second round only, so a round beyond it (art. 5(1) agreement) has
        none."""
        if self.rounds == 1 and self.first_net > 0:
            return second_round_capital(self.first_capital, self.first_net)
        return None

    def check(self, seat: int, capital: int, *, all_agree: bool = False) -> None:
        """RuleError when ``seat`` may not bank the next round with ``capital``: a seat that
        has banked two rounds in a row, unless every player agrees (art. 5(1)); a banker who
        won his first round and keeps the bank with less than capital plus win (art. 5(4)).
        Another seat starts a turn of its own and is not checked here."""
        if seat != self.seat:
            return
        if not may_keep_bank(self.rounds, all_agree=all_agree):
            raise RuleError(f"seat {seat} has banked {_rounds(self.rounds)} in a row (261/96/M "
                            f"art. 5(1)); pass the bank counter-clockwise, or give "
                            "all_agree=true when every player agrees")
        floor = self.capital_floor
        if floor is not None and capital < floor:
            raise RuleError(f"capital {capital} is less than {floor} = {self.first_capital} + "
                            f"winnings {self.first_net} (261/96/M art. 5(4)); put at least "
                            f"{floor}")

    def to_json(self) -> dict[str, int]:
        return {"seat": self.seat, "rounds": self.rounds, "first_capital": self.first_capital,
                "first_net": self.first_net}

    @classmethod
    def from_json(cls, doc: Mapping[str, int]) -> "BankTurn":
        return cls(int(doc["seat"]), int(doc["rounds"]), int(doc["first_capital"]),
                   int(doc["first_net"]))


def _rounds(n: int) -> str:
    return {2: "two rounds", 3: "three rounds"}.get(n, f"{n} rounds")


def after_round(turn: BankTurn | None, seat: int, capital: int, net: int) -> BankTurn:
    """The turn once ``seat`` has banked a settled round with ``capital``, the banker's own
    net of it being ``net``: the same seat's turn goes on one round longer; another seat's
    begins (art. 5(1))."""
    if turn is not None and turn.seat == seat:
        return BankTurn(seat, turn.rounds + 1, turn.first_capital, turn.first_net)
    return BankTurn(seat, 1, capital, net)


# --- art. 5(5): co-banking ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BankShare:
    """One part of the bank: the banker, a co-banking player or the house (art. 5(5))."""

    name: str               # "banker", the co-banking player's name, or "house"
    capital: int
    seat: int | None = None
    role: str = "co_banker"  # "banker" | "co_banker" | "house"


def order_shares(banker: BankShare, co_bankers: Sequence[BankShare], *,
                 interpretations: Mapping[str, str] | None = None,
                 seats: Iterable[int] | None = None) -> list[BankShare]:
    """Art. 5(5): the banker first, co-banking players after him, the house last.

    The order among players is the order their capital was placed (``as_placed``, the
    Portuguese "conforme a ordem em que são colocadas"), or counter-clockwise from the banker's
    seat (``counter_clockwise``), by ``co_banker_order``.
    """
    reading = (interpretations or {}).get("co_banker_order", "as_placed")
    players = [s for s in co_bankers if s.role != "house"]
    house = [s for s in co_bankers if s.role == "house"]
    if len(house) > 1:
        raise RuleError("the house is listed twice among the co-bankers; art. 5(5) gives it one "
                        "predetermined capital, settled last")
    if reading == "counter_clockwise":
        missing = [s.name for s in players if s.seat is None]
        if missing:
            raise RuleError(f"co-banker(s) {', '.join(missing)} need a seat: with co_banker_order="
                            "counter_clockwise they are settled by seat from the banker's")
        ring = counter_clockwise(list(seats or []) + [s.seat for s in players] + [banker.seat],
                                 banker.seat)
        players.sort(key=lambda s: ring.index(s.seat))
    elif reading != "as_placed":
        raise RuleError(f"co_banker_order cannot be {shown(reading)}; choose as_placed or "
                        "counter_clockwise")
    return [banker, *players, *house]


class BankLedger:
    """The bank's chips while a round is settled seat after seat (art. 5(3), 5(5)).

    Each share wins or loses at most its capital. A collection goes to the shares in order
    (banker first, house last) as far as each may still win; a payment comes from them in the
    same order as far as each still has chips (capital plus what it has won so far this round).
    What no share can take or pay is left with the player: the bet is returned.
    """

    def __init__(self, shares: Sequence[BankShare]):
        if not shares:
            raise RuleError("a bank needs at least the banker")
        self.shares = list(shares)
        self.nets = [0] * len(self.shares)

    def collect(self, amount: int) -> int:
        """Take up to ``amount`` from a losing bet; returns what the bank could take."""
        left = amount
        for i, share in enumerate(self.shares):
            take = min(left, share.capital - self.nets[i])
            if take > 0:
                self.nets[i] += take
                left -= take
        return amount - left

    def pay(self, amount: int) -> int:
        """Pay up to ``amount`` to a winning bet; returns what the bank could pay."""
        left = amount
        for i, share in enumerate(self.shares):
            give = min(left, share.capital + self.nets[i])
            if give > 0:
                self.nets[i] -= give
                left -= give
        return amount - left

    @property
    def capital(self) -> int:
        return sum(s.capital for s in self.shares)


def allocate_net(shares: Sequence[BankShare], net: int) -> list[int]:
    """Split the bank's net for the round over the shares in order, each up to its capital
    (art. 5(5): wins and losses settled in order, banker first, house last)."""
    out = []
    left = abs(net)
    for share in shares:
        part = min(left, share.capital)
        out.append(part if net >= 0 else -part)
        left -= part
    if left:
        raise RuleError(f"the bank's net {net} exceeds its capital {sum(s.capital for s in shares)}")
    return out
