"""The table's integrity monitor: the ledger and the sentinel behind one call per event.

The table machine hands every device event to :meth:`IntegrityMonitor.observe` (after
journaling the event, as it does for every event) and gets back an :class:`Update`: the alarms
raised (for :class:`~controller.integrity.alarms.IntegrityGate`) and the records to journal
under kind ``integrity`` (each alarm, and a summary of every deck whose life ended, which
``tablectl integrity report`` reads). Deck lives are delimited by the events themselves:

* ``shuffle_started`` ends the deck in play if cards of it came out (a check made just before
  the shuffle stays with the deck being shuffled); ``deck_check_result`` and ``shuffle_done``
  check the deck about to be dealt (a check after cards came out begins a new deck), but a
  ``shuffle_done`` that ends no shuffle seen to start, with cards of the deck in play out, is
  a report no shuffle was owed for and changes nothing;
* ``card_drawn``, ``card_dispensed``, ``hand_dispensed`` and ``misread`` are cards out;
* ``empty``: the deck was dealt to its end (so every card that never came out is missing).

and by three calls the device events cannot tell: :meth:`new_deck` (a freshly shuffled deck was
loaded into the shoe by hand), :meth:`round_ended` (with ``deck_per_round``, as in Super Pan 9,
each round's deck ends with the round) and :meth:`cards_returned`. Pure: no I/O, no clock.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Collection, Iterable

from controller.errors import TablectlError
from controller.rules.cards import Card
from drivers import events as ev

from .alarms import Alarm, AlarmKind
from .ledger import DeckLedger
from .sentinel import LOCAL_TESTS, STATISTIC, ShuffleSentinel

RECORD_ALARM = "alarm"
RECORD_DECK = "deck"
WEAK_SHUFFLING = AlarmKind.WEAK_SHUFFLING.value


@dataclass(frozen=True, slots=True)
class IntegrityConfig:
    """Per-table settings. ``deck_ids``: the table's back ids where devices report them.
    ``alpha``: the sentinel's false-alarm bound per deck. ``deck_per_round``: a fresh deck
    every round (Super Pan 9, article 2(1))."""

    decks: int = 1
    deck_ids: frozenset[int] | None = None
    alpha: float = 1e-5
    trend_alpha: float = 1e-6
    memory: int = 32
    fingerprints: int = 10_000
    deck_per_round: bool = False


@dataclass
class Update:
    """What one call produced: ``alarms`` to react to, ``records`` to journal (kind
    ``integrity``), each a JSON-ready dict with ``record`` = ``alarm`` or ``deck``."""

    alarms: list[Alarm] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.alarms or self.records)


class IntegrityMonitor:
    """Deck identity and shuffle sentinel for one table (see the module docstring)."""

    def __init__(self, config: IntegrityConfig | None = None, *,
                 decks: int | None = None, deck_ids: Collection[int] | None = None,
                 deck_per_round: bool | None = None) -> None:
        cfg = config or IntegrityConfig()
        if decks is not None or deck_ids is not None or deck_per_round is not None:
            cfg = IntegrityConfig(
                decks=cfg.decks if decks is None else decks,
                deck_ids=cfg.deck_ids if deck_ids is None else frozenset(deck_ids),
                alpha=cfg.alpha, trend_alpha=cfg.trend_alpha, memory=cfg.memory,
                fingerprints=cfg.fingerprints,
                deck_per_round=cfg.deck_per_round if deck_per_round is None else deck_per_round)
        self.config = cfg
        self.ledger = DeckLedger(cfg.decks, cfg.deck_ids)
        self.sentinel = ShuffleSentinel(cfg.alpha, cfg.decks, cfg.memory, cfg.fingerprints,
                                        cfg.trend_alpha)
        self._raised: set[tuple] = set()
        self._in_play = False       # a deck life is open
        # A shuffle seen to start and not yet done: the ShuffleDone that ends it is the deck
        # about to be dealt. One that ends none, with cards of the deck in play out, is a
        # report no shuffle was owed for (sent again under a new session's number): the table
        # takes it as an irregular event and the round's cards stay this deck's.
        self._shuffling = False

    # --- events ---------------------------------------------------------------------------

    def observe(self, event: ev.DeviceEvent) -> Update:
        """Take one device event; events of no concern to deck integrity give an empty
        update."""
        up = Update()
        dev = event.device
        if isinstance(event, ev.ShuffleStarted):
            # A new order begins; a check made just before describes the deck being shuffled.
            self._shuffling = True
            if self._in_play and self.ledger.current().cards_out:
                self._end(up, complete=False)
        elif isinstance(event, ev.DeckCheckResult):
            self._ensure_fresh(up)
            self._alarms(up, self.ledger.deck_check(
                event.count, event.cards, deck_ids=event.deck_ids,
                card_deck_ids=event.card_deck_ids or None, missing=event.missing,
                extra=event.extra, duplicate=event.duplicate, device=dev))
        elif isinstance(event, ev.ShuffleDone):
            started, self._shuffling = self._shuffling, False
            if not started and self._in_play and self.ledger.current().cards_out:
                return up           # no shuffle owed: not the next deck (see __init__)
            self._ensure_fresh(up)
            if self.ledger.current().checked_count is None:
                self._alarms(up, self.ledger.deck_check(event.count, device=dev))
        elif isinstance(event, (ev.CardDrawn, ev.CardDispensed)):
            self._card(up, event.card, event.deck_id, dev)
        elif isinstance(event, ev.HandDispensed):
            ids = list(event.deck_ids) + [None] * (len(event.cards) - len(event.deck_ids))
            for card, did in zip(event.cards, ids):
                self._card(up, card, did, dev)
        elif isinstance(event, ev.Misread):
            self._card(up, None, None, dev)
        elif isinstance(event, ev.Empty):
            if self._in_play and self.ledger.current().cards_out:
                self._end(up, complete=True, device=dev)
        return up

    def new_deck(self) -> Update:
        """A new deck begins that no device event announces (a shoe loaded by hand)."""
        up = Update()
        self._end(up, complete=False)
        return up

    def round_ended(self) -> Update:
        """The round is over. With ``deck_per_round`` its deck's life ends here."""
        up = Update()
        if self.config.deck_per_round:
            self._end(up, complete=False)
        return up

    def cards_returned(self, cards: Iterable[Card], device: str | None = None) -> Update:
        """The round's cards were given back and read (shuffler or discard reader)."""
        up = Update()
        self._alarms(up, self.ledger.cards_returned(list(cards), device=device))
        return up

    def remember(self, number: int, cards: Iterable[Card]) -> None:
        """Reload the order of an earlier deck (after a restart, from the journal)."""
        self.sentinel.remember(number, list(cards))

    def restore(self, records: Iterable[dict[str, Any]]) -> int:
        """After a restart: reload the orders of earlier decks from the journal's ``integrity``
        payloads (``record = "deck"``, oldest first) so repeats and cuts of decks dealt before
        the restart are still caught, take back the trend across decks exactly as the last
        deck left it (each statistic and the count of decks behind it, ``trend_state``), and
        continue the deck numbering. Returns the decks reloaded. Call it on a fresh monitor,
        before the first event.

        Deck records written before ``trend_state`` existed give the statistic rounded (as
        ``log(1 + R)`` to four places) and no count: the count is rebuilt from the decks that
        fed the trend since that test's last ``weak_shuffling`` alarm."""
        if self._in_play:
            raise TablectlError("restore the integrity monitor before it sees any event")
        n = top = 0
        sentinel = self.sentinel
        by_statistic = {f"Shiryaev-Roberts over decks: {STATISTIC[t]}": t for t in LOCAL_TESTS}
        afresh: set[str] = set()      # tests whose trend alarmed on the deck being read
        for rec in records:
            if not isinstance(rec, dict):
                continue
            if rec.get("record") == RECORD_ALARM and rec.get("kind") == WEAK_SHUFFLING:
                test = by_statistic.get(str(rec.get("statistic")))
                if test is not None:
                    afresh.add(test)
                continue
            if rec.get("record") != RECORD_DECK:
                continue
            try:
                number, stats, order = _deck_record(rec)
            except (TypeError, ValueError, AttributeError) as exc:
                # Not a record this monitor wrote: the journal was edited or damaged.
                raise TablectlError(
                    f"an integrity record of deck {rec.get('deck')!r:.40} in the journal is not "
                    f"one the integrity monitor writes ({exc}): the journal was damaged or "
                    "edited; run `tablectl journal verify` on it and restore it from a backup "
                    "(docs/journal.md)") from None
            top = max(top, number)
            if not sentinel.restore_trend(rec.get("trend_state")):
                self._restore_rounded_trend(stats, afresh)
            afresh = set()
            if any(c is None for c in order):
                continue                 # an unread card: the order is not known
            try:
                cards = [Card.parse(c) for c in order]
            except TablectlError:
                continue
            self.sentinel.remember(number, cards)
            n += 1
        self.ledger._number = max(self.ledger._number, top)
        self.sentinel.number = self.ledger._number + 1
        return n

    def _restore_rounded_trend(self, stats: dict[str, Any], afresh: set[str]) -> None:
        """A deck record of an earlier version: the trend as it rounded it, and the deck
        counted as the sentinel counts it (a deck of two cards or more feeds the trend; an
        alarm starts the count afresh)."""
        sentinel = self.sentinel
        for name, value in (stats.get("trend") or {}).items():
            if name in sentinel.trend and isinstance(value, (int, float)):
                sentinel.trend[name] = math.expm1(value)
        if int(stats.get("cards_seen") or 0) >= 2:
            for name in LOCAL_TESTS:
                sentinel.trend_decks[name] = (0 if name in afresh
                                              else sentinel.trend_decks[name] + 1)

    # --- internals ----------------------------------------------------------------------

    def _card(self, up: Update, card: Card | None, deck_id: int | None, dev: str) -> None:
        self._ensure_open()
        foreign = (card is not None and deck_id is not None and self.config.deck_ids is not None
                   and deck_id not in self.config.deck_ids)
        self._alarms(up, self.ledger.card_out(card, deck_id, device=dev))
        if not foreign:     # a foreign card is not part of the deck's order
            self._alarms(up, self.sentinel.card(card), device=dev)

    def _ensure_open(self) -> None:
        if not self._in_play:
            deck = self.ledger.begin_deck()
            if self.sentinel.order or self.sentinel.number != deck.number:
                self.sentinel.new_deck(deck.number)
            self._in_play = True

    def _ensure_fresh(self, up: Update) -> None:
        """A check describes the deck about to be dealt: begin one if cards are out."""
        if self._in_play and self.ledger.current().cards_out:
            self._end(up, complete=False)
        self._ensure_open()

    def _end(self, up: Update, *, complete: bool, device: str | None = None) -> None:
        if not self._in_play:
            return
        deck = self.ledger.current()
        self._alarms(up, self.ledger.end_deck(complete=complete, device=device))
        order = [None if c < 0 else str(Card.from_code(c)) for c in self.sentinel.order]
        stats = self.sentinel.new_deck(deck.number + 1)
        self._alarms(up, self.sentinel.trend_alarms)
        # The trend exactly (the sentinel's stats round it for reading), so a restart resumes it.
        rec = {"record": RECORD_DECK, **deck.summary(), "sentinel": stats,
               "trend_state": self.sentinel.trend_state()}
        if order:
            rec["order"] = order
        up.records.append(rec)
        self._in_play = False
        self._raised.clear()

    def _alarms(self, up: Update, alarms: list[Alarm], device: str | None = None) -> None:
        for alarm in alarms:
            if device and alarm.device is None:
                alarm = _with_device(alarm, device)
            key = (alarm.deck, alarm.kind, alarm.cards if alarm.certain else ())
            if key in self._raised:
                continue
            self._raised.add(key)
            up.alarms.append(alarm)
            up.records.append({"record": RECORD_ALARM, **alarm.to_json()})


def _deck_record(rec: dict[str, Any]) -> tuple[int, dict[str, Any], list[Any]]:
    """A ``deck`` record's number, sentinel statistics and order, each checked to be of the
    shape the monitor writes (TypeError or ValueError otherwise)."""
    number = rec.get("deck") or 0
    if type(number) is not int:
        raise TypeError(f"its deck number is {number!r}")
    stats = rec.get("sentinel") or {}
    if not isinstance(stats, dict) or not isinstance(stats.get("trend") or {}, dict) \
            or type(stats.get("cards_seen") or 0) is not int:
        raise TypeError("its sentinel statistics are not the monitor's")
    order = rec.get("order") or []
    if not isinstance(order, list):
        raise TypeError(f"its order is {order!r}")
    return number, stats, order


def _with_device(alarm: Alarm, device: str) -> Alarm:
    return replace(alarm, device=device)
