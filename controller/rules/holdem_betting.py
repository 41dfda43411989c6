"""The Texas Hold'em betting engine, 11/2008 articles 5, 6, 7(2)-(3), 8, 11, 12 and 13.

One :class:`HandState` is one hand, from the blinds to the end of the last betting round. The
table machine feeds it one action at a time (``act``) and asks whose turn it is (``to_act``) and
what that player may do (``legal_actions``); ``tablectl rules settle`` replays a whole hand
history through the same object. An action the regulation does not allow raises RuleError and
changes nothing.

Seats are numbered from the croupier's left: seat 1 is the seat immediately left of the
croupier and the numbers increase clockwise, so "clockwise" is "the next higher occupied seat,
wrapping round". Amounts are integers in the table's smallest chip unit.

Amounts of ``bet`` and ``raise`` are *totals for the betting round* ("raise to"): after
``act(4, "raise", 60)`` seat 4 has 60 in front of it in this round, whatever it had before.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Iterable, Mapping, Sequence

from controller.shown import shown

from .errors import RuleError

STREETS = ("preflop", "flop", "turn", "river")
SHOWDOWN = "showdown"
BOARD_CARDS_BY_STREET = {"preflop": 0, "flop": 3, "turn": 4, "river": 5, SHOWDOWN: 5}


class Structure(StrEnum):
    """Art. 11(2)-(3): games with a limit (fixed bet sizes) and games without."""

    LIMIT = "limit"
    NO_LIMIT = "no-limit"

    @classmethod
    def parse(cls, value: str) -> "Structure":
        text = str(value).strip().lower().replace("_", "-").replace(" ", "-")
        text = {"nolimit": "no-limit", "fixed-limit": "limit"}.get(text, text)
        try:
            return cls(text)
        except ValueError:
            raise RuleError(f"unknown betting structure {shown(value)}; use 'limit' or "
                            "'no-limit' (11/2008 art. 11)") from None


ACTIONS = ("fold", "check", "call", "bet", "raise", "allin")
_ACTION_ALIASES = {"all-in": "allin", "all_in": "allin", "allin": "allin"}


@dataclass(frozen=True, slots=True)
class BettingRules:
    """The readings of the interpretations that shape betting (docs/interpretations.md)."""

    limit_bet_sizes: str = "literal"        # H1: "literal" | "big_blind_doubled"
    heads_up_blinds: str = "literal"        # H4: "literal" | "button_small_blind"
    heads_up_raises: str = "cap_lifted"     # H5: "cap_lifted" | "amount_unlimited"
    short_all_in_reopens: str = "no"        # H6: "no" | "yes"

    _READINGS = {"limit_bet_sizes": ("literal", "big_blind_doubled"),
                 "heads_up_blinds": ("literal", "button_small_blind"),
                 "heads_up_raises": ("cap_lifted", "amount_unlimited"),
                 "short_all_in_reopens": ("no", "yes")}

    def __post_init__(self) -> None:
        for key, readings in self._READINGS.items():
            if getattr(self, key) not in readings:
                raise RuleError(f"interpretation {key} cannot be {shown(getattr(self, key))}; "
                                f"choose one of: {', '.join(readings)}")

    @classmethod
    def from_interpretations(cls, chosen: Mapping[str, str]) -> "BettingRules":
        return cls(
            limit_bet_sizes=chosen.get("limit_bet_sizes", "literal"),
            heads_up_blinds=chosen.get("heads_up_blinds", "literal"),
            heads_up_raises=chosen.get("heads_up_raises", "cap_lifted"),
            short_all_in_reopens=chosen.get("short_all_in_reopens", "no"))


@dataclass(frozen=True, slots=True)
class Action:
    """One recorded action. ``to`` is the seat's total bet in the round after it; ``added`` is
    what it put in with this action. Blinds are recorded as ``small_blind``/``big_blind``."""

    seat: int
    kind: str
    street: str
    to: int
    added: int
    all_in: bool = False

    def to_json(self) -> dict:
        return {"box": self.seat, "action": self.kind, "street": self.street, "to": self.to,
                "added": self.added, "all_in": self.all_in}


@dataclass(frozen=True, slots=True)
class LegalAction:
    """An action the seat to act may take; for bet/raise/allin the round total lies in
    ``[min_to, max_to]`` (in limit games ``min_to`` is the fixed size, ``max_to`` may be an
    all-in for less)."""

    kind: str
    min_to: int | None = None
    max_to: int | None = None


def clockwise_after(seats: Sequence[int], seat: int) -> list[int]:
    """The occupied ``seats`` in clockwise order starting just after ``seat`` (which need not
    be occupied) and ending with it if it is."""
    ordered = sorted(seats)
    after = [s for s in ordered if s > seat]
    before = [s for s in ordered if s <= seat]
    return after + before


class HandState:
    """The betting of one hand.

    ``seats``: the occupied seats taking part (at least two, art. 2(3)); ``stacks``: each
    seat's chips on the table before the blinds (a mapping seat -> chips, or a sequence in the
    order of ``seats``); ``button``: the seat holding the dealer button (art. 1(2));
    ``small_blind``/``big_blind``: art. 5; ``structure``: limit or no-limit (art. 11).
    """

    def __init__(self, seats: Iterable[int], stacks: Mapping[int, int] | Sequence[int],
                 button: int, small_blind: int, big_blind: int,
                 structure: Structure | str = Structure.NO_LIMIT,
                 rules: BettingRules | None = None) -> None:
        seat_list = list(seats)
        for s in seat_list:
            if not isinstance(s, int) or isinstance(s, bool) or s < 1:
                raise RuleError(f"seat {shown(s)} is not a seat number; seats count from 1, the "
                                "seat immediately left of the croupier")
        if len(set(seat_list)) != len(seat_list):
            raise RuleError(f"a seat is listed twice in {seat_list}")
        if len(seat_list) < 2:
            raise RuleError(f"a hand needs at least two players (11/2008 art. 2(3)); "
                            f"got {len(seat_list)}")
        self.seats: tuple[int, ...] = tuple(sorted(seat_list))
        if isinstance(stacks, Mapping):
            missing = [s for s in self.seats if s not in stacks]
            extra = [s for s in stacks if s not in self.seats]
            if missing or extra:
                raise RuleError(f"stacks must be given for exactly the seats {list(self.seats)}; "
                                f"missing {missing}, unknown {extra}")
            stack_map = {s: stacks[s] for s in self.seats}
        else:
            if len(stacks) != len(seat_list):
                raise RuleError(f"{len(stacks)} stacks for {len(seat_list)} seats")
            stack_map = dict(zip(seat_list, stacks))
        for s, v in stack_map.items():
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise RuleError(f"seat {s} has stack {shown(v)}: a player needs a positive whole "
                                "number of chip units to be dealt in (11/2008 art. 4(1))")
        if button not in self.seats:
            raise RuleError(f"the button is at seat {shown(button)}, which is not among the seats "
                            f"in the hand {list(self.seats)}; the button sits in front of a "
                            "player (11/2008 art. 1(2))")
        for name, v in (("small blind", small_blind), ("big blind", big_blind)):
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise RuleError(f"the {name} must be a positive whole number of chip units, "
                                f"got {shown(v)}")
        if small_blind > big_blind:
            raise RuleError(f"the small blind {small_blind} is above the big blind {big_blind} "
                            "(11/2008 art. 5(1): normally half of it)")
        self.structure = Structure.parse(structure)
        self.rules = rules or BettingRules()
        self.button = button
        self.small_blind = small_blind
        self.big_blind = big_blind
        self.starting_stacks = dict(stack_map)
        self.stacks = dict(stack_map)              # chips still behind
        self.committed = {s: 0 for s in self.seats}  # put in the pot over the whole hand
        self.round_bets = {s: 0 for s in self.seats}
        self.folded: set[int] = set()
        self.history: list[Action] = []
        self.street_index = 0
        self.current_bet = 0
        self.min_raise = 0
        self.raises = 0
        self.acted_level: dict[int, int | None] = {s: None for s in self.seats}
        self.to_act: int | None = None
        self._post_blinds()

    # -- positions -------------------------------------------------------------------------
    def blind_seats(self) -> tuple[int, int]:
        """(small blind seat, big blind seat). Art. 5: the first and second players left of
        the button. Heads-up the reading ``button_small_blind`` puts the small blind on the
        button (interpretation heads_up_blinds)."""
        order = clockwise_after(self.seats, self.button)
        if len(self.seats) == 2 and self.rules.heads_up_blinds == "button_small_blind":
            return self.button, order[0]
        return order[0], order[1]

    @property
    def street(self) -> str:
        """``preflop``, ``flop``, ``turn``, ``river``; ``showdown`` once betting is over."""
        return STREETS[self.street_index] if self.street_index < 4 else SHOWDOWN

    @property
    def contenders(self) -> list[int]:
        """Seats still in the hand (not folded), in seat order."""
        return [s for s in self.seats if s not in self.folded]

    @property
    def is_over(self) -> bool:
        """True once no more betting can happen: one player left, or the river round done."""
        return len(self.contenders) == 1 or self.street_index >= 4

    @property
    def won_uncontested(self) -> bool:
        return len(self.contenders) == 1

    @property
    def board_cards_due(self) -> int:
        """How many board cards should be face up for the current street."""
        if self.won_uncontested:
            return BOARD_CARDS_BY_STREET[STREETS[min(self.street_index, 3)]]
        return BOARD_CARDS_BY_STREET[self.street]

    @property
    def pot(self) -> int:
        return sum(self.committed.values())

    def is_heads_up(self) -> bool:
        """Art. 12(4): only two players still in the hand."""
        return len(self.contenders) == 2

    def bet_size(self) -> int:
        """Art. 11(2): the fixed bet of a limit game in this round (interpretation H1)."""
        first_two = self.street_index < 2
        if self.rules.limit_bet_sizes == "big_blind_doubled":
            return self.big_blind if first_two else 2 * self.big_blind
        return self.small_blind if first_two else self.big_blind

    def _min_bet(self) -> int:
        """The smallest opening bet or raise increment: the limit size, or in no-limit the
        big blind (art. 11(3): "o valor mínimo das apostas")."""
        return self.bet_size() if self.structure is Structure.LIMIT else self.big_blind

    # -- blinds and rounds -----------------------------------------------------------------
    def _post_blinds(self) -> None:
        sb, bb = self.blind_seats()
        for seat, kind, amount in ((sb, "small_blind", self.small_blind),
                                   (bb, "big_blind", self.big_blind)):
            paid = min(amount, self.stacks[seat])
            self.stacks[seat] -= paid
            self.committed[seat] += paid
            self.round_bets[seat] += paid
            self.history.append(Action(seat, kind, "preflop", self.round_bets[seat], paid,
                                       all_in=self.stacks[seat] == 0))
        self.current_bet = max(self.round_bets.values())
        self.min_raise = self._min_bet()
        self._start_round(after=bb)

    def _able(self) -> list[int]:
        return [s for s in self.contenders if self.stacks[s] > 0]

    def _needs_action(self, seat: int) -> bool:
        if seat in self.folded or self.stacks[seat] == 0:
            return False
        return self.acted_level[seat] is None or self.round_bets[seat] < self.current_bet

    def _round_done(self) -> bool:
        if len(self.contenders) <= 1:
            return True
        able = self._able()
        if not able:
            return True
        if len(able) == 1 and self.round_bets[able[0]] >= self.current_bet:
            return True   # nobody left to bet against
        return not any(self._needs_action(s) for s in able)

    def _start_round(self, after: int) -> None:
        """Find the first seat to act clockwise after ``after``, or move on while no betting
        is possible (everybody all-in but one)."""
        while True:
            if self.is_over:
                self.to_act = None
                return
            if not self._round_done():
                for s in clockwise_after(self.seats, after):
                    if self._needs_action(s):
                        self.to_act = s
                        return
            # round over: next street (art. 7(2), 8(2): start left of the button)
            self.street_index += 1
            self.round_bets = {s: 0 for s in self.seats}
            self.current_bet = 0
            self.raises = 0
            self.acted_level = {s: None for s in self.seats}
            if self.street_index >= 4:
                self.to_act = None
                return
            self.min_raise = self._min_bet()
            after = self.button

    # -- what may be done ------------------------------------------------------------------
    def _to_call(self, seat: int) -> int:
        return max(0, self.current_bet - self.round_bets[seat])

    def _may_raise(self, seat: int) -> str | None:
        """None if ``seat`` may bet or raise now, else the reason it may not."""
        if self.stacks[seat] <= self._to_call(seat):
            return "the player's chips do not cover more than a call"
        others = [s for s in self.contenders
                  if s != seat and self.round_bets[s] + self.stacks[s] > self.current_bet]
        if not others:
            return ("no other player has chips beyond the present bet, so nobody could call "
                    "a raise; call instead")
        if self.structure is Structure.LIMIT and self.current_bet > 0:
            cap_lifted = self.is_heads_up() and self.rules.heads_up_raises == "cap_lifted"
            if self.raises >= 3 and not cap_lifted:
                return ("the bet has already been raised three times in this round "
                        "(11/2008 art. 12(2))")
        level = self.acted_level[seat]
        # a player who checked faced no wager yet: any bet reopens the betting for him
        if level and self.rules.short_all_in_reopens == "no":
            if self.current_bet - level < self.min_raise:
                return ("only an all-in below a full raise has come since this player acted, "
                        "which does not reopen the betting (interpretation "
                        "short_all_in_reopens)")
        return None

    def _raise_bounds(self, seat: int) -> tuple[int, int]:
        """(smallest, largest) round total for a bet or raise that is not an all-in for less."""
        all_in_to = self.round_bets[seat] + self.stacks[seat]
        if self.structure is Structure.LIMIT:
            fixed = self.current_bet + self.bet_size()
            unlimited = (self.current_bet > 0 and self.is_heads_up()
                         and self.rules.heads_up_raises == "amount_unlimited")
            if unlimited:
                # any amount, but still at least the previous bet or raise (art. 12(1))
                return max(fixed, self.current_bet + self.min_raise), all_in_to
            return fixed, fixed
        return self.current_bet + self.min_raise, all_in_to

    def legal_actions(self) -> list[LegalAction]:
        """What the seat to act may do now (empty when nobody is to act)."""
        seat = self.to_act
        if seat is None:
            return []
        out = [LegalAction("fold")]
        to_call = self._to_call(seat)
        all_in_to = self.round_bets[seat] + self.stacks[seat]
        if to_call == 0:
            out.append(LegalAction("check"))
        else:
            call_to = min(self.current_bet, all_in_to)
            out.append(LegalAction("call", call_to, call_to))
        if self._may_raise(seat) is None:
            lo, hi = self._raise_bounds(seat)
            kind = "bet" if self.current_bet == 0 else "raise"
            if lo <= all_in_to:
                out.append(LegalAction(kind, lo, min(hi, all_in_to)))
            if all_in_to <= hi:       # in a limit game only an all-in within the fixed size
                out.append(LegalAction("allin", all_in_to, all_in_to))
        elif to_call > 0 and self.stacks[seat] <= to_call:
            out.append(LegalAction("allin", all_in_to, all_in_to))
        return out

    # -- acting ----------------------------------------------------------------------------
    def act(self, seat: int, action: str, amount: int | None = None) -> Action:
        """Apply one action of ``seat``: ``fold``, ``check``, ``call``, ``bet`` (amount),
        ``raise`` (amount = the round total raised to) or ``allin``.

        Raises RuleError, changing nothing, for an action out of turn, a check facing a bet,
        a bet or raise below the minimum (art. 12(1)) or off the fixed size of a limit game
        (art. 11(2)), a fourth raise in a limit round (art. 12(2)), or more chips than the seat
        has.
        """
        kind, to = self._plan(seat, action, amount)
        return self._apply(seat, kind, to, folds=kind == "fold")

    def _plan(self, seat: int, action: str, amount: int | None) -> tuple[str, int]:
        """Validate an action without changing anything: (recorded kind, round total)."""
        kind = _ACTION_ALIASES.get(str(action).strip().lower(), str(action).strip().lower())
        if kind not in ACTIONS:
            raise RuleError(f"unknown action {shown(action)}; the actions are "
                            f"{', '.join(ACTIONS)} (11/2008 art. 6(3), 7(3))")
        if not isinstance(seat, int) or isinstance(seat, bool):
            raise RuleError(f"the seat acting must be a seat number, got {shown(seat)}")
        if self.is_over or self.to_act is None:
            raise RuleError(f"seat {seat} cannot {kind}: the betting of this hand is over")
        if seat != self.to_act:
            raise RuleError(f"seat {seat} acted out of turn: it is seat {self.to_act}'s turn "
                            "(clockwise order, 11/2008 art. 6(3)-(5))")
        if amount is not None and (not isinstance(amount, int) or isinstance(amount, bool)):
            raise RuleError(f"amount {shown(amount)} must be a whole number of chip units")
        street = self.street
        to_call = self._to_call(seat)
        all_in_to = self.round_bets[seat] + self.stacks[seat]

        if kind == "fold":       # art. 13(1): at any betting round; chips stay (13(3))
            return "fold", self.round_bets[seat]
        if kind == "check":
            if to_call:
                raise RuleError(f"seat {seat} cannot check: there is a bet of "
                                f"{self.current_bet} to call ({to_call} more)")
            return "check", self.round_bets[seat]
        if kind == "call":
            if not to_call:
                raise RuleError(f"seat {seat} has nothing to call; check or bet instead")
            if amount is not None and amount != min(self.current_bet, all_in_to):
                raise RuleError(f"a call by seat {seat} makes its bet "
                                f"{min(self.current_bet, all_in_to)}, not {amount}")
            return "call", min(self.current_bet, all_in_to)
        if kind == "allin":
            if amount is not None and amount != all_in_to:
                raise RuleError(f"all-in for seat {seat} is {all_in_to} in this round "
                                f"(its whole stack), not {amount}")
            if all_in_to <= self.current_bet:
                return "call", all_in_to
            target = all_in_to
        else:                                      # bet or raise
            if kind == "bet" and self.current_bet > 0:
                raise RuleError(f"seat {seat} cannot bet: there is already a bet of "
                                f"{self.current_bet}; call, raise or fold")
            if kind == "raise" and self.current_bet == 0:
                raise RuleError(f"seat {seat} cannot raise: nobody has bet in this round; "
                                "bet or check")
            if amount is None:
                if self.structure is Structure.LIMIT:
                    amount = min(self._raise_bounds(seat)[0], all_in_to)
                else:
                    raise RuleError(f"a {kind} needs an amount: the total seat {seat} puts "
                                    "in front of it in this round")
            target = amount
            if target > all_in_to:
                raise RuleError(f"seat {seat} cannot {kind} to {target}: it has only "
                                f"{self.stacks[seat]} behind ({all_in_to} in this round at most)")
            if target <= self.current_bet:
                raise RuleError(f"a {kind} to {target} does not exceed the bet of "
                                f"{self.current_bet}; call or raise more")
        reason = self._may_raise(seat)
        if reason:
            raise RuleError(f"seat {seat} cannot {kind}: {reason}")
        lo, hi = self._raise_bounds(seat)
        if target != all_in_to:
            if target < lo:
                if self.structure is Structure.LIMIT and lo == hi:
                    raise RuleError(f"in this limit game a {kind} in the {street} is to exactly "
                                    f"{lo} ({self.bet_size()} more than {self.current_bet}; "
                                    "11/2008 art. 11(2)), or all-in for less")
                what = ("the minimum bet is the big blind (11/2008 art. 11(3))"
                        if self.current_bet == 0 else
                        f"a raise must be at least the previous bet or raise of the round, "
                        f"{self.min_raise} (11/2008 art. 12(1))")
                raise RuleError(f"{kind} to {target} is below the minimum {lo}: {what}")
            if target > hi:
                raise RuleError(f"in this limit game a {kind} in the {street} is to exactly "
                                f"{lo} (11/2008 art. 11(2)), not {target}")
        elif self.structure is Structure.LIMIT and target > hi:
            # all-in above the fixed size: the player bets the fixed size, not everything
            raise RuleError(f"in this limit game seat {seat} may {kind} only to {hi} "
                            f"(11/2008 art. 11(2)); its all-in of {target} is too much")
        return ("bet" if self.current_bet == 0 else "raise"), target

    def _apply(self, seat: int, kind: str, to: int, folds: bool = False) -> Action:
        added = to - self.round_bets[seat]
        self.stacks[seat] -= added
        self.committed[seat] += added
        self.round_bets[seat] = to
        if folds:
            self.folded.add(seat)
        if to > self.current_bet:
            increment = to - self.current_bet
            # art. 12(1): only an increase of at least the previous bet or raise is a raise;
            # an all-in for less raises the bet to call but is no raise (not counted, and it
            # sets no new minimum)
            if increment >= self.min_raise:
                self.min_raise = increment
                if self.current_bet > 0:
                    self.raises += 1
            self.current_bet = to
        self.acted_level[seat] = self.current_bet
        action = Action(seat, kind, STREETS[self.street_index], to, added,
                        all_in=self.stacks[seat] == 0 and not folds)
        self.history.append(action)
        self._start_round(after=seat)
        return action
