"""Match every card that comes out against the round's dealing plan.

The plan (``Game.dealing_plan``) says who receives each card or hand. The tracker takes the
card events as they come (the shoe's ``CardDrawn`` card by card, the shuffler's
``HandDispensed`` hand by hand or ``CardDispensed`` card by card, the box sensors'
``CardPlaced``) and answers, for each, either where the card went or which
:class:`~controller.rules.base.Irregularity` it is. It never decides what the irregularity
means: the machine asks the game for the ruling.

Box sensors: a ``CardPlaced`` on box *n* is one placement on that box (with the shuffler, a hand
is placed as one stack). It is matched with the oldest card or hand drawn for a box and not yet
placed; a placement on a box without a bet is ``card_to_box_without_bet``: where the ruling
leaves that card on the unbet box (a void hand there) it is re-attributed to it and the plan
still owes its card to the planned box (``astray``); where the ruling has the deal rectified it
is put on the planned box and stays that box's card (``put_right``). On another box with a bet
it is ``wrong_order``.

A board that starts watching again mid-deal (``watching_again``: its failure cleared, or back
from a restart) did not see the cards dealt before: those are no longer matched in order. The
cards drawn after are matched as above; a placement that is not the next of them, on a box one
of the earlier cards was dealt for, is that card placed.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

from controller.rules.base import CROUPIER, Deal, Irregularity, Recipient
from controller.rules.cards import Card


@dataclass(frozen=True, slots=True)
class Step:
    """One planned step, numbered from 0 in the plan."""

    index: int
    deal: Deal


@dataclass(slots=True)
class Outcome:
    """What one card event was: ``irregularity`` is None when it followed the plan."""

    step: Step | None
    recipient: Recipient | None
    cards: tuple[Card | None, ...] = ()
    face_up: bool = False
    irregularity: Irregularity | None = None
    detail: str = ""
    street_done: bool = False        # the last card of a street (Hold'em) was dealt
    done: bool = False               # the last card of the plan was dealt
    box: int | None = None           # for box-sensor outcomes: the box the card landed on

    @property
    def ok(self) -> bool:
        return self.irregularity is None


@dataclass(slots=True, eq=False)
class _Pending:
    step: Step
    cards: int
    watched: bool = True    # dealt while the box sensors watched (or since they came back)


class DealingTracker:
    """Follows one round's dealing plan card by card (shoe) or hand by hand (shuffler)."""

    def __init__(self, plan: Sequence[Deal], bet_boxes: Sequence[int]) -> None:
        self.plan: list[Step] = [Step(i, d) for i, d in enumerate(plan)]
        self.bet_boxes = set(bet_boxes)
        self._next = 0
        self._cards_in_step = 0          # cards already dealt of the current step (shoe)
        self._pending_place: deque[_Pending] = deque()
        self.extra_to_croupier = 0       # set-aside croupier cards replaced (Fortune art. 11(2))
        self.unbet_boxes: dict[int, int] = {}   # cards that landed on boxes without a bet

    # --- queries ------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self._next >= len(self.plan)

    @property
    def expected(self) -> Step | None:
        return None if self.done else self.plan[self._next]

    def owed_in_step(self) -> int:
        """Cards still owed to the expected step (all of it, unless a short hand came)."""
        step = self.expected
        return 0 if step is None else step.deal.cards - self._cards_in_step

    def owed_to(self, recipient: Recipient) -> int:
        """Cards the plan still owes ``recipient`` (those of the step under way included)."""
        owed = sum(s.deal.cards for s in self.plan[self._next:] if s.deal.recipient == recipient)
        step = self.expected
        return owed - (self._cards_in_step if step and step.deal.recipient == recipient else 0)

    def remaining_cards(self) -> int:
        return sum(s.deal.cards for s in self.plan[self._next:]) - self._cards_in_step

    def placement_due(self, box: int) -> bool:
        """Whether the oldest card (or hand) dealt for a box and not yet placed was meant for
        ``box`` (or one the box sensors did not watch was): the last card of a deal lands after
        the plan is complete."""
        if self._unwatched(box) is not None:
            return True
        nxt = self._watched()
        return nxt is not None and nxt.step.deal.recipient.box == box

    def current_street(self) -> str | None:
        step = self.expected
        return step.deal.street if step else None

    # --- card events ----------------------------------------------------------------------
    def card(self, card: Card | None, face_up: bool = False) -> Outcome:
        """One card out of the shoe (or one card out of the shuffler)."""
        step = self.expected
        if step is None:
            return Outcome(None, None, (card,), face_up, Irregularity.WRONG_COUNT,
                           "a card beyond the dealing plan")
        deal = step.deal
        exposed = face_up and not deal.face_up
        self._cards_in_step += 1
        if self._cards_in_step >= deal.cards:
            self._advance()
        if deal.recipient.kind == "box":
            self._pending_place.append(_Pending(step, 1))
        out = Outcome(step, deal.recipient, (card,), face_up or deal.face_up,
                      street_done=self._street_done(step), done=self.done)
        if exposed:
            out.irregularity = _exposed(deal.recipient)
            out.detail = f"a card for {deal.recipient} came out face up"
        return out

    def hand(self, cards: Sequence[Card | None]) -> Outcome:
        """One hand out of the shuffler."""
        step = self.expected
        cards = tuple(cards)
        if step is None:
            return Outcome(None, None, cards, False, Irregularity.WRONG_COUNT,
                           f"a hand of {len(cards)} beyond the dealing plan")
        deal = step.deal
        owed = self.owed_in_step()
        if len(cards) != owed:
            return Outcome(step, deal.recipient, cards, False, Irregularity.WRONG_COUNT,
                           f"{deal.recipient} should receive {owed} "
                           f"card{'s' if owed != 1 else ''} in one hand, "
                           f"the shuffler put out {len(cards)}")
        self._advance()
        if deal.recipient.kind == "box":
            self._pending_place.append(_Pending(step, len(cards)))
        return Outcome(step, deal.recipient, cards, deal.face_up,
                       street_done=self._street_done(step), done=self.done)

    def placed(self, box: int) -> Outcome:
        """A box sensor saw a card (or a hand) land on ``box``."""
        if box not in self.bet_boxes:
            self.unbet_boxes[box] = self.unbet_boxes.get(box, 0) + 1
            moved = self._pending_place[-1] if self._pending_place else None
            # ``step``/``recipient``: whose card it was meant to be; ``cards``: how many cards
            # went astray. What becomes of them is the ruling's: ``astray`` or ``put_right``.
            return Outcome(moved.step if moved else None,
                           moved.step.deal.recipient if moved else None,
                           cards=(None,) * (moved.cards if moved else 0),
                           irregularity=Irregularity.CARD_TO_BOX_WITHOUT_BET,
                           detail=f"a card landed on box {box}, which holds no bet", box=box)
        pending = self._watched()
        if pending is None or pending.step.deal.recipient.box != box:
            unwatched = self._unwatched(box)
            if unwatched is not None:
                # Dealt before the board came back: that card placed, its order not watched.
                self._pending_place.remove(unwatched)
                return Outcome(unwatched.step, unwatched.step.deal.recipient, box=box)
        if pending is None:
            return Outcome(None, None, irregularity=Irregularity.WRONG_ORDER,
                           detail=f"a card landed on box {box} when none was due to a box",
                           box=box)
        self._pending_place.remove(pending)
        planned = pending.step.deal.recipient
        if planned.box != box:
            return Outcome(pending.step, planned, irregularity=Irregularity.WRONG_ORDER,
                           detail=f"the card for {planned} landed on box {box}", box=box)
        return Outcome(pending.step, planned, box=box)

    def watching_again(self) -> None:
        """The box sensors start watching again mid-deal (their failure cleared, or back from a
        restart): the cards dealt and not yet seen placed were laid out of their sight, and are
        no longer matched in the dealing order. Only the cards drawn from now on are."""
        for pending in self._pending_place:
            pending.watched = False

    # --- remedies -------------------------------------------------------------------------
    def astray(self) -> None:
        """The last card (or hand) meant for a box stays on the box without a bet it landed
        on, a void hand there: the plan still owes it to the box it was meant for."""
        if self._pending_place:
            self._unconsume(self._pending_place.pop())

    def put_right(self) -> None:
        """The last card (or hand) that landed on a box without a bet is put on the box the
        plan gave it (a rectified deal): it is placed, and nothing more is owed for it."""
        if self._pending_place:
            self._pending_place.pop()

    def rectify_count(self, cards: Sequence[Card | None]) -> tuple[list[Outcome],
                                                                   tuple[Card | None, ...]]:
        """A hand of the wrong size, its deal rectified (11/2008 art. 9(1); 261/96/M P5
        ``rectify``): its cards, in the order they left the device, go to the recipients the
        plan owes them to next: the rest of the expected step first, then the steps after it.
        A short hand leaves the rest of its step owed. The cards stay within the street being
        dealt (Hold'em: the next street's burn and board come after the betting, art. 7(1),
        8(1), 8(3)); those beyond it, or beyond the plan, are returned: no recipient is owed
        them. One outcome per recipient given cards, in the plan's order."""
        rest = list(cards)
        street = self.current_street()
        parts: list[Outcome] = []
        while rest and self.expected is not None and self.expected.deal.street == street:
            step = self.expected
            deal = step.deal
            n = min(len(rest), self.owed_in_step())
            given, rest = tuple(rest[:n]), rest[n:]
            self._cards_in_step += n
            if self._cards_in_step >= deal.cards:
                self._advance()
            if deal.recipient.kind == "box":
                self._pending_place.append(_Pending(step, n))
            parts.append(Outcome(step, deal.recipient, given, deal.face_up,
                                 street_done=self._street_done(step), done=self.done))
        return parts, tuple(rest)

    def replace_croupier_card(self, cards: int = 1) -> None:
        """After set-aside croupier card(s), the croupier receives the next card(s) instead."""
        self.extra_to_croupier += cards
        self.plan.insert(self._next, Step(-1, Deal(CROUPIER, cards)))

    def replace_card(self, recipient: Recipient, street: str = "deal") -> None:
        """An exposed card taken out of play (Hold'em art. 9(1)): the same recipient receives
        the next card instead, before the plan goes on."""
        self.plan.insert(self._next, Step(-1, Deal(recipient, 1, False, street)))

    def skip_street(self) -> None:
        """Hold'em: nothing more to deal (every player but one folded)."""
        self._next = len(self.plan)
        self._cards_in_step = 0

    # --- internals ------------------------------------------------------------------------
    def _advance(self) -> None:
        self._next += 1
        self._cards_in_step = 0

    def _street_done(self, step: Step) -> bool:
        if self._cards_in_step:
            return False
        nxt = self.expected
        return nxt is None or nxt.deal.street != step.deal.street

    def _unwatched(self, box: int) -> _Pending | None:
        """The oldest card (or hand) not watched in order that was dealt for ``box``."""
        return next((p for p in self._pending_place
                     if not p.watched and p.step.deal.recipient.box == box), None)

    def _watched(self) -> _Pending | None:
        """The oldest card (or hand) watched in order and not yet placed."""
        return next((p for p in self._pending_place if p.watched), None)

    def _unconsume(self, pending: _Pending) -> None:
        """The last card meant for a bet box went to an unbet box: the plan still owes it."""
        d = pending.step.deal
        self.plan.insert(self._next, Step(-1, Deal(d.recipient, pending.cards, d.face_up,
                                                   d.street)))


def _exposed(recipient: Recipient) -> Irregularity:
    if recipient.kind == "box":
        return Irregularity.PLAYER_CARD_EXPOSED
    if recipient.kind == "croupier":
        return Irregularity.CROUPIER_CARD_EXPOSED
    if recipient.kind == "board":
        return Irregularity.BOARD_CARD_EXPOSED
    return Irregularity.DEALING_ERROR    # a burn card seen: Hold'em art. 9(1)
