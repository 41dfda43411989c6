"""Deck identity through a deck's life: the check, the cards out, the cards given back.

A count is not the identity of a deck: 52 cards with one missing and one from another deck
count 52. The ledger therefore keeps the *multiset of faces* it has been shown and holds every
card against what the table's decks contain:

* the shuffler's deck check (:meth:`DeckLedger.deck_check`): with identities, every missing,
  duplicated or foreign card is named; with a count only, a short or long deck is still caught
  (without the card's name, which the device cannot give);
* every card out of the shoe or the shuffler (:meth:`DeckLedger.card_out`): a card whose back
  id is not the table's is foreign; a face seen more often than the decks hold it is a
  duplicate; a card that the check did not find, or one beyond the deck's count, is extra;
* the cards given back after a round (:meth:`DeckLedger.cards_returned`): a dealt card not
  given back is named;
* the end of a deck dealt to its last card (:meth:`DeckLedger.end_deck` with
  ``complete=True``): every card that never came out is missing.

One or several decks per shoe (``decks``): each face may then appear ``decks`` times. Each
alarm is raised once per deck and card. The ledger is pure: no I/O, no clock.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Collection, Iterable, Sequence

from controller.errors import TablectlError
from controller.rules.cards import Card, full_deck

from .alarms import Alarm, AlarmKind, card_list

FULL_DECK = tuple(full_deck())


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


@dataclass
class DeckLife:
    """What the ledger knows of one deck (numbered from 1 by the ledger)."""

    number: int
    checked: Counter | None = None          # faces found by an identity deck check
    checked_count: int | None = None        # the count of the last check
    identity_checked: bool = False
    check_unread: int = 0                   # cards the check counted but could not read
    unread_out: int = 0                     # cards out taken as those unread cards
    out: Counter = field(default_factory=Counter)
    out_order: list[Card | None] = field(default_factory=list)
    unreadable: int = 0
    foreign_out: int = 0
    round_out: Counter = field(default_factory=Counter)
    raised: set = field(default_factory=set)
    alarms: list[Alarm] = field(default_factory=list)
    complete: bool = False

    @property
    def cards_out(self) -> int:
        return len(self.out_order)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready account of the deck for the journal and the report."""
        return {"deck": self.number, "cards_out": self.cards_out,
                "checked_count": self.checked_count,
                "identity_checked": self.identity_checked,
                "unreadable": self.unreadable, "foreign_out": self.foreign_out,
                "complete": self.complete,
                "alarms": [str(a.kind) for a in self.alarms]}


class DeckLedger:
    """Identity ledger of the decks of one table.

    ``decks``: decks in one shoe or shuffler load (1 unless the regulation and configuration
    use more). ``deck_ids``: the back ids of the table's decks, where devices report them;
    ``None`` when no device reports one (then a foreign card shows as a duplicate, or as a
    missing card plus an extra one).
    """

    def __init__(self, decks: int = 1, deck_ids: Collection[int] | None = None) -> None:
        if not isinstance(decks, int) or isinstance(decks, bool) or not 1 <= decks <= 8:
            raise TablectlError(f"decks per shoe {decks!r} must be a whole number from 1 to 8")
        self.decks = decks
        self.deck_ids = None if deck_ids is None else frozenset(int(i) for i in deck_ids)
        self.expected = Counter({c: decks for c in FULL_DECK})
        self.size = 52 * decks
        self.deck: DeckLife | None = None
        self._number = 0

    # --- deck boundaries ----------------------------------------------------------------

    def begin_deck(self) -> DeckLife:
        """A new deck's life begins (a shuffle, a deck check, a freshly loaded shoe)."""
        self._number += 1
        self.deck = DeckLife(self._number)
        return self.deck

    def current(self) -> DeckLife:
        """The deck in play, beginning one if there is none yet."""
        return self.deck if self.deck is not None else self.begin_deck()

    def end_deck(self, *, complete: bool = False, device: str | None = None) -> list[Alarm]:
        """The deck's life ends. ``complete``: every card of it has come out (a shoe dealt to
        the end), so any card that never appeared is missing."""
        deck = self.deck
        if deck is None:
            return []
        alarms: list[Alarm] = []
        if complete:
            deck.complete = True
            should = deck.checked if deck.checked is not None else self.expected
            never = sorted((should - deck.out).elements())
            if never and len(never) > deck.unreadable:
                if deck.unreadable:
                    msg = (f"the deck was dealt to its end and {len(never) - deck.unreadable} "
                           f"card(s) never came out; {deck.unreadable} card(s) could not be "
                           f"read, so the missing ones are among: {card_list(never)}")
                else:
                    msg = (f"the deck was dealt to its end and {card_list(never)} never came "
                           "out: the deck is short")
                alarms += self._raise(AlarmKind.MISSING_CARD, msg, never, device)
        self.deck = None
        return alarms

    # --- the shuffler's deck check --------------------------------------------------------

    def deck_check(self, count: int, cards: Sequence[Card | None] | None = None, *,
                   deck_ids: Sequence[int] = (),
                   card_deck_ids: Sequence[int | None] | None = None,
                   missing: Sequence[Card] = (),
                   extra: Sequence[Card] = (), duplicate: Sequence[Card] = (),
                   device: str | None = None) -> list[Alarm]:
        """Hold a deck check against the table's decks. ``cards`` are the identities read
        (``None`` for a card the device saw but could not read), ``deck_ids`` their back ids
        (parallel to ``cards``) where the device reports them; ``missing``, ``extra`` (cards
        of no deck of this table) and ``duplicate`` are the device's own findings, which are
        added to the ledger's, except ``missing`` and ``duplicate`` when ``cards`` are given:
        the ledger then counts each face against the ``decks`` copies the table holds itself,
        and takes ``count`` minus the cards given as cards seen but not read. ``deck_ids`` may instead be the set of back ids seen (as the
        project's shuffler driver reports it); when all of them are the table's, the device's
        ``extra`` (cards of another back than its most common one) is not foreign.
        ``card_deck_ids``, each card's back id parallel to ``cards``, takes precedence: every
        card is then judged by its own back, and the device's ``extra`` is not needed.
        The check describes the deck about to be dealt: it begins a new deck if cards of the
        current one are already out."""
        deck = self.current()
        if deck.cards_out:
            self.end_deck(device=device)
            deck = self.begin_deck()
        alarms: list[Alarm] = []
        deck.checked_count = count
        foreign: list[tuple[Card, int | None]] = []
        if cards is not None:
            if card_deck_ids is not None and len(card_deck_ids) == len(cards):
                deck_ids = card_deck_ids
            parallel = len(deck_ids) == len(cards)
            ids = list(deck_ids) if parallel else [None] * len(cards)
            faces: Counter = Counter()
            unread = 0
            for card, did in zip(cards, ids):
                if card is None:
                    unread += 1
                elif self.deck_ids is not None and did is not None and did not in self.deck_ids:
                    foreign.append((card, did))
                else:
                    faces[card] += 1
            # A driver may leave unread cards out of ``cards`` (the project's shuffler driver
            # does): the cards counted but not listed were seen and not read.
            unread += max(0, count - len(cards))
            # The device's own list of foreign cards (cards with another back; their ids may
            # come as the set of ids seen rather than card by card): not the table's cards.
            known = {c for c, _ in foreign}
            strange = self._strange_ids(deck_ids) if not parallel else []
            if self.deck_ids is not None and (parallel or not strange):
                # Each card was judged by its own back above, or every back the device saw is
                # one of the table's: the device's list, made against its most common back,
                # holds the table's own cards of its other back(s) (two decks, red and blue),
                # not foreign ones.
                extra = ()
            for card in extra:
                if card not in known:
                    foreign.append((card, strange[0] if len(strange) == 1 else None))
                    faces[card] -= 1
            if parallel and foreign and not faces:
                # Not one card of the table's backs: the deck is another one. One alarm says
                # so, not a foreign and a missing alarm for each of its cards.
                strange = sorted({d for _, d in foreign if d is not None})
                foreign = []
            if strange and not foreign:
                # The device's majority back is not the table's: the whole deck is foreign.
                alarms += self._raise(
                    AlarmKind.FOREIGN_CARD,
                    f"the deck check read back id(s) {', '.join(map(str, strange))}, which "
                    f"are not this table's ({', '.join(map(str, sorted(self.deck_ids)))}): "
                    "the deck is not the table's", [], device, deck_ids=tuple(strange))
            faces += Counter()      # drop zero counts
            deck.checked = faces
            deck.check_unread, deck.unread_out = unread, 0
            deck.identity_checked = unread == 0
            lack = self.expected - faces
            if parallel and strange and not faces:
                short = []          # the alarm above names the deck: none of it is the table's
            elif unread:
                # An unreadable card may be any of those not found: name the candidates.
                if sum(lack.values()) > unread:
                    cand = sorted(lack)
                    alarms += self._raise(
                        AlarmKind.MISSING_CARD,
                        f"the deck check read {sum(faces.values())} cards and could not read "
                        f"{unread}; the deck is short of {sum(lack.values()) - unread} card(s), "
                        f"among: {card_list(cand)}", cand, device)
                short = []
            else:
                short = sorted(lack)
            # Not the device's ``missing`` either: a face whose only copy was unread is in the
            # driver's list, though the count says the deck is whole.
            # With the faces read, the ledger alone counts them against ``decks`` copies each:
            # a device's own duplicate list is not added (the project's shuffler driver
            # compares with one deck, so two correct decks would be 52 duplicates).
            dups = sorted(faces - self.expected)
        else:
            faces = Counter()
            strange = self._strange_ids(deck_ids)
            foreign = [(c, strange[0] if len(strange) == 1 else None) for c in extra]
            short = sorted(set(missing))
            dups = sorted(set(duplicate))
        for card in short:
            found = faces[card]
            msg = (f"the deck check found no {card.name} ({card})" if not found else
                   f"the deck check found {card.name} ({card}) {_times(found)}; the table's "
                   f"{self._decks_text()} hold it {_times(self.decks)}")
            alarms += self._raise(AlarmKind.MISSING_CARD, msg + ": the deck is short",
                                  [card], device)
        for card in dups:
            seen = faces[card]
            alarms += self._raise(AlarmKind.DUPLICATE_CARD,
                                  f"{card.name} ({card}) is in the deck "
                                  f"{_times(seen) if seen else 'more than once'}; the table's "
                                  f"{self._decks_text()} hold it {_times(self.decks)}",
                                  [card], device)
        for card, did in foreign:
            alarms += self._foreign(card, did, device, "in the deck check")
        if cards is None and not short and count < self.size:
            alarms += self._raise(AlarmKind.MISSING_CARD,
                                  f"the shuffler counted {count} cards; {self._decks_text()} "
                                  f"hold {self.size} (the device does not read identities, "
                                  "so it cannot name the card)", [], device)
        if cards is None and not dups and not foreign and count > self.size:
            alarms += self._raise(AlarmKind.EXTRA_CARD,
                                  f"the shuffler counted {count} cards; {self._decks_text()} "
                                  f"hold {self.size} (the device cannot name the extra card)",
                                  [], device)
        return alarms

    # --- cards out, cards back --------------------------------------------------------

    def card_out(self, card: Card | None, deck_id: int | None = None, *,
                 device: str | None = None) -> list[Alarm]:
        """One card came out of the shoe or the shuffler (``None``: seen but not read)."""
        deck = self.current()
        deck.out_order.append(card)
        alarms: list[Alarm] = []
        # A card the check could not read is in the deck all the same: it counts, and may be
        # any face (a dirty card read as it comes out is not one that entered after the check).
        capacity = (sum(deck.checked.values()) + deck.check_unread if deck.checked is not None
                    else self.size)
        if card is None:
            deck.unreadable += 1
        elif self.deck_ids is not None and deck_id is not None and deck_id not in self.deck_ids:
            deck.foreign_out += 1
            return self._foreign(card, deck_id, device, "came out")
        else:
            deck.out[card] += 1
            deck.round_out[card] += 1
            n = deck.out[card]
            if n > self.decks:
                alarms += self._raise(AlarmKind.DUPLICATE_CARD,
                                      f"{card.name} ({card}) has come out {_times(n)} from this "
                                      f"deck; the table's {self._decks_text()} hold it "
                                      f"{_times(self.decks)}", [card], device)
            elif (deck.checked is not None and n > deck.checked[card]
                  and deck.unread_out < deck.check_unread):
                deck.unread_out += 1        # one of the cards the check could not read
            elif deck.checked is not None and n > deck.checked[card]:
                alarms += self._raise(AlarmKind.EXTRA_CARD,
                                      f"{card.name} ({card}) came out but was not in the deck "
                                      "the shuffler checked: it entered the deck after the "
                                      "check", [card], device)
        if deck.cards_out - deck.foreign_out > capacity:
            named = [card] if card is not None else []
            alarms += self._raise(AlarmKind.EXTRA_CARD,
                                  f"card {deck.cards_out - deck.foreign_out}"
                                  f"{' (' + str(card) + ')' if card else ''} came out of a deck of "
                                  f"{capacity}: the deck holds more cards than it should",
                                  named, device, key="over-count")
        return alarms

    def cards_returned(self, cards: Iterable[Card], *, device: str | None = None) -> list[Alarm]:
        """The cards of the round were given back (read by the shuffler or the discard reader).
        Every card dealt since the last return must be among them; a card given back that was
        not dealt is extra. Starts the next round's account."""
        deck = self.current()
        back = Counter(c for c in cards if c is not None)
        alarms: list[Alarm] = []
        kept = sorted((deck.round_out - back).elements())
        if kept:
            alarms += self._raise(AlarmKind.NOT_RETURNED,
                                  f"{card_list(kept)} was dealt this round but not given back",
                                  kept, device)
        more = sorted((back - deck.round_out).elements())
        if more:
            alarms += self._raise(AlarmKind.EXTRA_CARD,
                                  f"{card_list(more)} was given back but was not dealt this round",
                                  more, device)
        deck.round_out = Counter()
        return alarms

    # --- helpers ------------------------------------------------------------------------

    def _strange_ids(self, deck_ids: Iterable[int | None]) -> list[int]:
        if self.deck_ids is None:
            return []
        return sorted({i for i in deck_ids if i is not None and i not in self.deck_ids})

    def _decks_text(self) -> str:
        return "deck" if self.decks == 1 else f"{self.decks} decks"

    def _foreign(self, card: Card, deck_id: int | None, device: str | None,
                 where: str) -> list[Alarm]:
        back = f" with back id {deck_id}" if deck_id is not None else ""
        ours = (f" (this table's: {', '.join(map(str, sorted(self.deck_ids)))})"
                if self.deck_ids else "")
        return self._raise(AlarmKind.FOREIGN_CARD,
                           f"{card.name} ({card}){back} {where}: it is not a card of this "
                           f"table's decks{ours}", [card], device,
                           deck_ids=() if deck_id is None else (deck_id,))

    def _raise(self, kind: AlarmKind, message: str, cards: Sequence[Card],
               device: str | None, *, deck_ids: tuple[int, ...] = (),
               key: str | None = None) -> list[Alarm]:
        deck = self.current()
        ident = (kind, key or tuple(cards), deck_ids)
        if ident in deck.raised:
            return []
        deck.raised.add(ident)
        alarm = Alarm(kind=kind, message=message, cards=tuple(cards), deck=deck.number,
                      cards_seen=deck.cards_out, device=device, deck_ids=deck_ids)
        deck.alarms.append(alarm)
        return [alarm]
