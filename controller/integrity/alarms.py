"""Integrity alarms and what the table does about them.

An :class:`Alarm` says what is wrong with a deck (a card missing, extra, duplicated or foreign;
a deck that was not shuffled, was only cut, or repeats an earlier one), names the card(s) where
they are known, carries the evidence (the statistic, its anytime-valid p-value bound, how many
cards had been seen) and a sentence in plain words for the pit display.

What the table does is configured per table (``warn`` or ``stop``). :class:`IntegrityGate` is
the decision helper the table machine uses; its contract:

* every alarm is journaled (kind ``integrity``) at once and shown on the display, and the tower
  light turns amber (``warn``) or red (``stop``), at once unless cards of the round in play are
  out (then when the round ends: the table machine holds them, docs/integrity.md): :meth:`IntegrityGate.raise_alarms` returns the
  :class:`Reaction` to apply, one per kind of deck fault found (a deck check that finds twelve
  cards missing is one line on the display, not twelve). What is shown names no card
  (:attr:`Alarm.public_message`): a card named by an alarm may still be face down at the table;
  the journal keeps the names;
* an alarm never interrupts what the table is doing: the round in progress (its settlement
  above all) finishes as the regulation says. With ``stop``, the table machine asks
  :meth:`IntegrityGate.may_open_round` at the round boundary (before bets open for the next
  round) and, while it answers ``False``, keeps the table out of service;
* a supervisor clears the stop (:meth:`IntegrityGate.clear`) after replacing or checking the
  deck; the clearing is journaled too.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Iterable

from controller.errors import TablectlError
from controller.rules.cards import Card


class AlarmKind(StrEnum):
    """What an alarm is about. The first five are certain (deck identity); the rest are the
    shuffle sentinel's statistical findings (with a p-value)."""

    MISSING_CARD = "missing_card"        # a card of the deck is not there (a short deck)
    EXTRA_CARD = "extra_card"            # more cards than the deck holds, or one not in the checked deck
    DUPLICATE_CARD = "duplicate_card"    # the same card more often than the table's decks hold it
    FOREIGN_CARD = "foreign_card"        # a card whose back/deck id is not one of the table's decks
    NOT_RETURNED = "not_returned"        # a card dealt in the round was not given back
    SORTED_DECK = "sorted_deck"          # sorted or near-sorted order (neighbouring cards together)
    SUIT_RUNS = "suit_runs"              # too many cards of the same suit one after the other
    RANK_RUNS = "rank_runs"              # too many cards of the same rank one after the other
    BADLY_SHUFFLED = "badly_shuffled"    # a few sorted runs interleaved (riffled once or twice)
    WEAK_SHUFFLING = "weak_shuffling"    # deck after deck a little less shuffled than random
    REPEATED_DECK = "repeated_deck"      # the same order as an earlier deck
    CUT_DECK = "cut_deck"                # an earlier deck's order cut, or barely shuffled


IDENTITY_KINDS = frozenset({AlarmKind.MISSING_CARD, AlarmKind.EXTRA_CARD,
                            AlarmKind.DUPLICATE_CARD, AlarmKind.FOREIGN_CARD,
                            AlarmKind.NOT_RETURNED})
SENTINEL_KINDS = frozenset(AlarmKind) - IDENTITY_KINDS


@dataclass(frozen=True, slots=True)
class Alarm:
    """One integrity finding.

    ``deck`` is the monitor's sequence number of the deck (its life from check or loading to
    its end); ``cards_seen`` how many of its cards had come out when the alarm was raised.
    For sentinel alarms ``statistic`` names the test, ``observed``/``expected`` are its hit
    count and the count expected of a shuffled deck, and ``p_value`` bounds the chance that a
    genuinely shuffled deck would have raised it by now (anytime-valid, see docs/integrity.md).
    """

    kind: AlarmKind
    message: str
    cards: tuple[Card, ...] = ()
    deck: int = 0
    cards_seen: int = 0
    device: str | None = None
    deck_ids: tuple[int, ...] = ()
    statistic: str | None = None
    observed: int | None = None
    expected: float | None = None
    p_value: float | None = None
    related_deck: int | None = None      # the earlier deck a repeat or cut matches

    @property
    def certain(self) -> bool:
        """Identity alarms are facts the device reported; sentinel alarms are statistical."""
        return self.kind in IDENTITY_KINDS

    @property
    def public_message(self) -> str:
        """The alarm in plain words *without naming any card*: what the display, the event
        stream and the logs may show while cards of the deck are still face down. ``message``
        (with the cards) stays in the journal and the integrity report."""
        n = len(self.cards)
        some = "a card" if n <= 1 else f"{n} cards"
        back = (f" (back id {', '.join(map(str, self.deck_ids))})" if self.deck_ids else "")
        odds = (f" (chance at most {self.p_value:.1g} for a shuffled deck, after "
                f"{self.cards_seen} cards)" if self.p_value is not None else "")
        earlier = (f" deck {self.related_deck}" if self.related_deck is not None
                   else " an earlier deck")
        text = {
            AlarmKind.MISSING_CARD: (f"{some} missing from the deck" if n else
                                     "the deck is short of a card"),
            AlarmKind.EXTRA_CARD: f"the deck holds {some} too many",
            AlarmKind.DUPLICATE_CARD: f"{some} twice in the deck",
            AlarmKind.FOREIGN_CARD: (f"a card of another deck{back} is in the deck" if n <= 1
                                     else f"{n} cards of other decks{back} are in the deck"),
            AlarmKind.NOT_RETURNED: f"{some} dealt this round not given back",
            AlarmKind.SORTED_DECK: "the deck comes out in sorted order: not shuffled",
            AlarmKind.SUIT_RUNS: "the deck comes out in runs of one suit: not shuffled",
            AlarmKind.RANK_RUNS: "the deck comes out in runs of one rank: not shuffled",
            AlarmKind.BADLY_SHUFFLED: "the deck comes out in a few sorted runs: badly "
                                      "shuffled",
            AlarmKind.WEAK_SHUFFLING: "over the recent decks the shuffling has been weak",
            AlarmKind.REPEATED_DECK: f"the deck repeats the order of{earlier}: not shuffled",
            AlarmKind.CUT_DECK: f"the deck follows the order of{earlier} too closely: "
                                "only cut or barely shuffled",
        }[self.kind]
        return f"deck {self.deck}: {text}{odds}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (cards as text); :meth:`from_json` reads it back."""
        return {"kind": str(self.kind), "message": self.message,
                "cards": [str(c) for c in self.cards], "deck": self.deck,
                "cards_seen": self.cards_seen, "device": self.device,
                "deck_ids": list(self.deck_ids), "statistic": self.statistic,
                "observed": self.observed, "expected": self.expected,
                "p_value": self.p_value, "related_deck": self.related_deck}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "Alarm":
        return cls(kind=AlarmKind(doc["kind"]), message=doc.get("message", ""),
                   cards=tuple(Card.parse(c) for c in doc.get("cards") or ()),
                   deck=int(doc.get("deck") or 0), cards_seen=int(doc.get("cards_seen") or 0),
                   device=doc.get("device"), deck_ids=tuple(doc.get("deck_ids") or ()),
                   statistic=doc.get("statistic"), observed=doc.get("observed"),
                   expected=doc.get("expected"), p_value=doc.get("p_value"),
                   related_deck=doc.get("related_deck"))

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def card_list(cards: Iterable[Card]) -> str:
    """``"7 of hearts (7h), K of spades (Ks)"`` for a message."""
    return ", ".join(f"{c.name} ({c})" for c in cards)


# --- the table's reaction ------------------------------------------------------------------

class AlarmAction(StrEnum):
    """The configured reaction to an integrity alarm."""

    WARN = "warn"    # tell the supervisor (display, amber light); play goes on
    STOP = "stop"    # tell the supervisor and stop the table before the next round


def parse_action(value: Any) -> AlarmAction:
    """The configured action, with an error naming the choices."""
    try:
        return AlarmAction(str(value).strip().lower())
    except ValueError:
        raise TablectlError(f"integrity alarm action {value!r} is not known; write "
                            "'warn' (tell the supervisor) or 'stop' (stop the table before "
                            "the next round)") from None


@dataclass(frozen=True, slots=True)
class Reaction:
    """What the table machine does for one alarm, or for the alarms of one kind about one deck
    raised together (``alarms``): journal them, show ``display`` once on the pit display and
    console, set the tower light, and stop before the next round if
    ``stop_before_next_round``. It never voids or interrupts the round in progress.
    ``display`` names no card (cards of the deck may still be face down); the cards are in
    the journaled alarms (``message``, ``cards``) for the supervisor's report."""

    alarms: tuple[Alarm, ...]
    action: AlarmAction
    display: str
    tower_light: str                 # "amber" (warn) or "red" (stop)
    stop_before_next_round: bool

    @property
    def alarm(self) -> Alarm:
        """The first of the alarms (they share their kind and deck)."""
        return self.alarms[0]


@dataclass
class IntegrityGate:
    """The decision helper for the configured action (see the module docstring)."""

    action: AlarmAction = AlarmAction.WARN
    pending: list[Alarm] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.action = parse_action(self.action)

    def raise_alarms(self, alarms: Iterable[Alarm]) -> list[Reaction]:
        """Record alarms; return the reactions for the table machine to apply, in the order
        the alarms came: one for each kind of identity fault about one deck (every missing
        card of a deck check in one), one for each statistical finding."""
        stop = self.action is AlarmAction.STOP
        groups: dict[tuple[Any, ...], list[Alarm]] = {}
        for i, alarm in enumerate(alarms):
            if stop:
                self.pending.append(alarm)
            key = ((alarm.kind, alarm.deck) if alarm.kind in IDENTITY_KINDS else (i,))
            groups.setdefault(key, []).append(alarm)
        tail = (" The table stops before the next round until a supervisor clears it."
                if stop else " Supervisor: check the deck.")
        return [Reaction(alarms=tuple(group), action=self.action,
                         display=f"DECK ALARM: {_shown(group).public_message}.{tail}",
                         tower_light="red" if stop else "amber",
                         stop_before_next_round=stop)
                for group in groups.values()]

    def may_open_round(self) -> bool:
        """Asked at the round boundary, before bets open: ``False`` while a stop is pending."""
        return not self.pending

    def clear(self, supervisor: str) -> list[Alarm]:
        """A supervisor has dealt with the deck: lift the stop; returns the alarms cleared
        (the table machine journals the clearing with the supervisor's name)."""
        if not supervisor or not str(supervisor).strip():
            raise TablectlError("clearing an integrity stop needs the supervisor's name or id")
        cleared, self.pending = self.pending, []
        return cleared


def _shown(group: list[Alarm]) -> Alarm:
    """One alarm standing for a group of the same kind about one deck, for its display text
    only: the distinct cards (the text gives their number, never their names) and back ids."""
    if len(group) == 1:
        return group[0]
    cards = tuple(dict.fromkeys(c for a in group for c in a.cards))
    ids = tuple(dict.fromkeys(i for a in group for i in a.deck_ids))
    return replace(group[0], cards=cards, deck_ids=ids)
