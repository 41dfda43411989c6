"""What every regulation module provides, in one vocabulary the table machine can ask.

A regulation module (``q_poker``, ``fortune_3_card_poker``, ``texas_holdem``, ``super_pan_9``)
subclasses :class:`Game` and exposes one instance as ``GAME``. It is pure: no I/O, no clock, no
randomness; the same input always gives the same answer. The table machine never holds a rule of
its own: it asks the game for the dealing plan, for the ruling on an irregularity, for the order
the hands are shown in and for the settlement, and records the article each answer cites.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Mapping, Sequence

from controller.shown import kind, shown

from .cards import Card
from .errors import RuleError


class Mode(StrEnum):
    """How the cards come out: card by card from a shoe, or hand by hand from a shuffler."""

    SHOE = "shoe"
    SHUFFLER = "shuffler"

    @classmethod
    def parse(cls, value: str) -> "Mode":
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise RuleError(f"unknown dealing mode {shown(value)}; use 'shoe' or "
                            "'shuffler'") from None


# The console page reads amounts as JavaScript numbers, which are exact up to 2^53 - 1: no
# amount the table takes (a bet, a stack, a capital, a limit) is larger.
MAX_AMOUNT = 2**53 - 1
# One round's bets together. Fortune 3 Card Poker's Play matches the Ante (twice the stake)
# and no wager pays more than 40 to 1 (the stake and its win: 41 times), so with the bets of a
# round at most this, no figure of its settlement passes MAX_AMOUNT.
MAX_ROUND_STAKES = MAX_AMOUNT // 82
AMOUNT_LIMIT = (f"{MAX_AMOUNT:,} chip units (2^53 - 1, the largest whole number the console "
                "page shows exactly)")


def check_round_stakes(together: int) -> None:
    """A round given as a document (``rules settle``) is held to the table's bound on one
    round's bets together (MAX_ROUND_STAKES; a Fortune Play, which matches its Ante, is not
    counted, as the table counts none): a round the table would have refused is not settled.
    Raises RuleError with the way out."""
    if together > MAX_ROUND_STAKES:
        raise RuleError(f"the round's bets together are {together:,} chip units, above "
                        f"{MAX_ROUND_STAKES:,}: the most a table takes in one round, so that "
                        f"every figure of its settlement (a stake paid 40 to 1, the house's "
                        f"net) stays within {AMOUNT_LIMIT}; no table took these bets: check "
                        "the stakes for a digit too many")


def check_stacks_together(together: int) -> None:
    """Hold'em: the stacks of one hand together are at most MAX_AMOUNT (a pot can hold them
    all), as the table seats them. Raises RuleError with the way out."""
    if together > MAX_AMOUNT:
        raise RuleError(f"the stacks together are {together:,} chip units: a pot can hold them "
                        f"all, and an amount is at most {AMOUNT_LIMIT}; no table seated "
                        "these stacks: check them for a digit too many")


def check_settlement_amounts(doc: Any, path: str = "") -> None:
    """Every whole number of a settlement's JSON (a stake, a net, a payout, a rake, a
    commission, a total) is within MAX_AMOUNT either way, so the console page and any reader
    of the journal reading numbers as doubles has it exactly. The input bounds above keep
    every settlement within it; this is the last word before one is journaled or printed.
    Raises RuleError naming the first figure beyond it."""
    if isinstance(doc, bool):
        return
    if isinstance(doc, int):
        if abs(doc) > MAX_AMOUNT:
            raise RuleError(f"the settlement's {path or 'figure'} would be {doc:,} chip units, "
                            f"beyond {AMOUNT_LIMIT}: the round is not settled; its stakes "
                            f"together must be smaller (at most {MAX_ROUND_STAKES:,}, "
                            "docs/settle.md)")
    elif isinstance(doc, dict):
        for key, value in doc.items():
            check_settlement_amounts(value, f"{path}.{key}" if path else str(key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            check_settlement_amounts(value, f"{path}[{i}]")


@dataclass(frozen=True, slots=True)
class Recipient:
    """Who receives a card: a box (player's betting position or Pan 9 seat), the croupier,
    the Hold'em board, or the burn (a card taken out of play face down)."""

    kind: str  # "box" | "croupier" | "board" | "burn"
    box: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("box", "croupier", "board", "burn"):
            raise ValueError(f"bad recipient kind {self.kind!r}")
        if (self.kind == "box") != (self.box is not None):
            raise ValueError("a box recipient needs a box number, and only it")

    def __str__(self) -> str:
        return f"box {self.box}" if self.kind == "box" else self.kind

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "box": self.box}


CROUPIER = Recipient("croupier")
BOARD = Recipient("board")
BURN = Recipient("burn")


def box(n: int) -> Recipient:
    """The recipient ``box n``."""
    return Recipient("box", n)


@dataclass(frozen=True, slots=True)
class Deal:
    """One step of a dealing plan: ``cards`` cards to ``recipient`` in one go.

    With the shoe every step is one card; with a shuffler a step can be a whole hand (three
    cards at a time in the three-card games). ``street`` names the Hold'em stage or ``deal``.
    """

    recipient: Recipient
    cards: int = 1
    face_up: bool = False
    street: str = "deal"

    def to_json(self) -> dict[str, Any]:
        return {"recipient": str(self.recipient), **self.recipient.to_json(),
                "cards": self.cards, "face_up": self.face_up, "street": self.street}


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """Everything a dealing plan depends on.

    ``boxes`` are the boxes holding a bet (Pan 9: the seats in play); ``layout_boxes`` is how
    many player boxes the table has (validated against the regulation's seating article).
    Hold'em uses ``button``; Super Pan 9 uses ``banker``, ``adjust`` and ``dice``.
    """

    boxes: tuple[int, ...]
    mode: Mode
    layout_boxes: int | None = None
    button: int | None = None
    banker: int | None = None
    adjust: int = 0
    dice: tuple[int, ...] | None = None
    interpretations: Mapping[str, str] = field(default_factory=dict)


class Irregularity(StrEnum):
    """Every irregularity any of the four regulations speaks of, by one name each."""

    WRONG_ORDER = "wrong_order"                      # card to the wrong recipient
    WRONG_COUNT = "wrong_count"                      # a box got too many or too few cards
    PLAYER_CARD_EXPOSED = "player_card_exposed"      # a player's card turned face up by mistake
    CROUPIER_CARD_EXPOSED = "croupier_card_exposed"  # a croupier's (or banker's) card exposed
    BOARD_CARD_EXPOSED = "board_card_exposed"        # Hold'em: a board card out of turn
    CARD_TO_BOX_WITHOUT_BET = "card_to_box_without_bet"
    SHUFFLER_MALFUNCTION = "shuffler_malfunction"    # includes jam and link lost while dealing
    SHOE_MALFUNCTION = "shoe_malfunction"            # card-reading shoe: jam, misread, link lost
    DEALING_ERROR = "dealing_error"                  # Hold'em art. 9(1): rectifiable
    DEALING_ERROR_UNCORRECTABLE = "dealing_error_uncorrectable"  # Hold'em art. 9(2)
    DIE_NOT_FLAT = "die_not_flat"                    # Pan 9 翹骰
    DIE_OUT_OF_CUP = "die_out_of_cup"
    DICE_MALFUNCTION = "dice_malfunction"            # the electronic agitator fails
    MISDEAL = "misdeal"                              # the croupier declares a misdeal


class Remedy(StrEnum):
    """What the regulation says happens next."""

    CONTINUE = "continue"        # the round goes on as normal
    ROUND_VOID = "round_void"    # round void, every bet returned, new round
    BOX_VOID = "box_void"        # that box's hand is void (its bets returned); round goes on
    SET_ASIDE = "set_aside"      # the card is set aside face up; the next card takes its place
    RESHAKE = "reshake"          # the banker shakes the dice again
    RECTIFY = "rectify"          # Hold'em: the croupier corrects the error and play goes on


class Phase(StrEnum):
    """Round phases as the rules see them (the table machine has finer states)."""

    BETTING = "betting"
    SHAKING = "shaking"
    DEALING = "dealing"
    DECISIONS = "decisions"
    REVEAL = "reveal"
    SETTLEMENT = "settlement"


@dataclass(frozen=True, slots=True)
class Ruling:
    """The regulation's answer to an irregularity.

    ``article`` cites the text (e.g. ``89/2004 art. 11(3)``); ``reason`` says it in plain words
    for the display and the journal; ``needs_supervisor`` is set where the table may not go on
    until a supervisor acts (e.g. replace the shuffler or switch to the shoe).
    """

    remedy: Remedy
    article: str
    reason: str
    needs_supervisor: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"remedy": self.remedy.value, "article": self.article, "reason": self.reason,
                "needs_supervisor": self.needs_supervisor}


@dataclass(frozen=True, slots=True)
class Interpretation:
    """One ambiguous point of a regulation, with every reading and the one chosen by default.

    ``key`` is the configuration key (``[interpretations]`` in table.toml, ``--set KEY=VALUE``
    on the command line, ``interpretations`` in round JSON).
    """

    key: str
    article: str
    question: str
    readings: tuple[str, ...]
    default: str


@dataclass(slots=True)
class WagerResult:
    """The outcome of one wager: ``net`` is what the player gains (positive) or loses
    (negative) in chip units; a returned (void) wager has net 0 and outcome ``void``."""

    box: int
    wager: str
    stake: int
    outcome: str  # win | lose | push | void | half (Q Poker fold / croupier not qualified)
    net: int
    player: str | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        d = {"box": self.box, "player": self.player, "wager": self.wager, "stake": self.stake,
             "outcome": self.outcome, "net": self.net}
        if self.note:
            d["note"] = self.note
        return d


@dataclass(slots=True)
class Settlement:
    """A settled round. ``house_net`` is what the house gains; chips are conserved:
    ``sum(player nets) + house_net + sum(banker nets) == 0`` where bankers take part."""

    game: str
    interpretations: dict[str, str]
    hands: dict[str, dict[str, Any]]          # "box 3" / "croupier" -> {"cards", "category", ...}
    wagers: list[WagerResult]
    house_net: int = 0
    commission: int = 0                       # Pan 9 commission or Hold'em rake (in house_net)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "interpretations": dict(self.interpretations),
                "hands": self.hands, "wagers": [w.to_json() for w in self.wagers],
                "commission": self.commission, "house_net": self.house_net, **self.extra}


class Game(abc.ABC):
    """One regulation. Subclasses fill the class attributes and the abstract methods."""

    game_id: str
    regulation: str        # e.g. "89/2004"
    title: str
    interpretations: tuple[Interpretation, ...] = ()

    def resolve_interpretations(self, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
        """The default reading of every interpretation, with ``overrides`` applied.

        An unknown key or reading raises RuleError listing what is allowed.
        """
        chosen = {i.key: i.default for i in self.interpretations}
        by_key = {i.key: i for i in self.interpretations}
        if overrides is not None and not isinstance(overrides, Mapping):
            raise RuleError(f"interpretations must be an object of key: reading, e.g. "
                            f"{{\"{next(iter(by_key), 'key')}\": \"...\"}}, not "
                            f"{kind(overrides)}")
        for key, value in (overrides or {}).items():
            if key not in by_key:
                known = ", ".join(sorted(by_key)) or "none"
                raise RuleError(f"{self.game_id} has no interpretation {shown(key)}; "
                                f"its interpretation keys are: {known}")
            given, value = value, str(value)
            if value not in by_key[key].readings:
                raise RuleError(f"interpretation {key} ({by_key[key].article}) cannot be "
                                f"{shown(given)}; choose one of: {', '.join(by_key[key].readings)}")
            chosen[key] = value
        return chosen

    @abc.abstractmethod
    def check_layout(self, layout_boxes: int,
                     interpretations: Mapping[str, str] | None = None) -> None:
        """Raise RuleError when a table with ``layout_boxes`` player boxes breaks the
        regulation's seating article, or, given the table's ``interpretations``, when its
        deck could not deal every box of the layout."""

    @abc.abstractmethod
    def dealing_plan(self, request: PlanRequest) -> list[Deal]:
        """The exact sequence of recipients and card counts for one round."""

    @abc.abstractmethod
    def reveal_order(self, request: PlanRequest) -> list[Recipient]:
        """The hands dealt from ``request``'s plan, in the order the regulation has them shown
        at the reveal; the hand every other plays against (the croupier's, the banker's) last."""

    @abc.abstractmethod
    def ruling(self, irregularity: Irregularity, phase: Phase,
               interpretations: Mapping[str, str] | None = None) -> Ruling:
        """What the regulation says happens when ``irregularity`` occurs in ``phase``."""

    def check_bet_change(self, phase: Phase, cards_dealt: int, *, removal: bool = False) -> None:
        """Raise RuleError citing the article when the regulation takes no bet now (with
        ``removal``: lets none be taken back), in ``phase`` with ``cards_dealt`` cards of the
        round out. A game whose chips go in through its own betting (Hold'em) has no bet on
        the layout to refuse."""

    @abc.abstractmethod
    def settle(self, round_doc: Mapping[str, Any]) -> Settlement:
        """Settle one finished round given as the JSON document of docs/settle.md."""

    def odds(self, interpretations: Mapping[str, str] | None = None,
             progress: Any = None) -> dict[str, Any]:
        """Exact house edge per wager (``{"bets": {name: {"house_edge": ...}}}``).

        Games without a fixed house edge (Hold'em, a peer game) raise RuleError.
        """
        raise RuleError(f"{self.game_id} has no house-banked wager to compute odds for")


def parse_boxes(text: str | Sequence[int]) -> tuple[int, ...]:
    """Parse ``1,3,5`` into (1, 3, 5), refusing duplicates and non-positive numbers."""
    if isinstance(text, str):
        parts = [p for p in text.replace(" ", "").split(",") if p]
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            raise RuleError(f"boxes {shown(text)} must be box numbers separated by commas, "
                            "e.g. 1,3,5") from None
    else:
        nums = list(text)
    if any(n < 1 for n in nums):
        raise RuleError(f"box numbers start at 1; got {nums}")
    if len(set(nums)) != len(nums):
        raise RuleError(f"a box is listed twice in {nums}")
    return tuple(nums)


def hands_in_plan_order(plan: Sequence[Deal], last: Recipient | None = None) -> list[Recipient]:
    """The hands a plan deals (boxes and the croupier; not the board or the burn) in the order
    of their first card, with ``last`` moved to the end."""
    hands = [r for r in dict.fromkeys(d.recipient for d in plan)
             if r.kind in ("box", "croupier") and r != last]
    return hands + ([last] if last is not None and any(d.recipient == last for d in plan)
                    else [])


def cards_json(cards: Sequence[Card]) -> list[str]:
    """Cards as their canonical strings, for JSON."""
    return [str(c) for c in cards]
