"""The shuffle sentinel: from the order cards come out, catch a deck that was not shuffled.

Every card out of a deck is one step of a sequential test. Under the hypothesis that the deck was
shuffled (a uniformly random order), the next card is equally likely to be any card still in the
deck, so the *exact* conditional chance of each event below is known at every step from the
cards still in the deck:

========== ========================================================= =========================
test       event on the pair (previous card, next card)              catches
========== ========================================================= =========================
sorted     next is a rank neighbour of the same suit (A-2 and K-A     sorted, new-deck order,
           both count)                                               near-sorted, riffled once
suit_runs  next has the same suit                                    suit-sorted, suit runs
rank_runs  next has the same rank                                    rank-sorted, rank runs
blocks     next is a rank neighbour (same suit) of any card already  a sorted deck riffled once
           dealt: the dealt cards form few runs                      or twice (rising sequences)
recent     next followed the previous card in one of the last        a repeat or a mere cut of
           ``memory`` decks                                          a recent deck
fingerprint the first 6 cards equal those of one of the last        a repeat of an older deck
           ``fingerprints`` decks                                    (exact match)
========== ========================================================= =========================

For the first five tests the sentinel bets, at every pair, on the event happening with a higher
chance ``q`` than the null chance ``p`` (a likelihood ratio ``q/p`` if it happens,
``(1-q)/(1-p)`` if not), mixing a few values of ``q`` (and, for ``recent``, every remembered
deck). The running product ``M`` is a nonnegative martingale of mean 1 under the null, so by
Ville's inequality the chance that it *ever* reaches ``1/a`` during a deck is at most ``a``,
however often it is looked at: the sentinel checks after every card with no extra price, and
``1/max M`` is an anytime-valid p-value. The fingerprint test's chance is bounded by counting.
The deck's false-alarm budget ``alpha`` is split equally over the six tests (Bonferroni), so a
genuinely shuffled deck raises any alarm with probability at most ``alpha`` (default 1e-5, one
in 100,000 decks). docs/integrity.md gives the measured rate and the cards each bad deck takes
to be caught.

Across decks, a Shiryaev-Roberts statistic per pair test (the four first) folds each deck's
final martingale value in, so a shuffler that is a little weak *every* time is caught after a
few decks (``weak_shuffling``), with at least ``1 / trend_alpha`` decks (default a million) on
average between false alarms.

An unreadable card, or a card the deck cannot hold (a duplicate or foreign card, which the
ledger names), ends testing for that deck: past it the null chances are no longer exact, and
stopping a martingale keeps its guarantee.
"""
from __future__ import annotations

import functools
import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Sequence

from controller.errors import TablectlError
from controller.rules.cards import Card

from .alarms import Alarm, AlarmKind

LOCAL_TESTS = ("sorted", "suit_runs", "rank_runs", "blocks")
TESTS = LOCAL_TESTS + ("recent", "fingerprint")
# The alternatives mixed in each test: the chance of the event in a badly shuffled deck.
MIX = {
    "sorted": (0.3, 0.6, 0.9),
    "suit_runs": (0.5, 0.75, 0.95),
    "rank_runs": (0.3, 0.6, 0.9),
    "blocks": (0.5, 0.75, 0.9),
    "recent": (0.5, 0.9, 0.99),
}
FINGERPRINT_CARDS = 6
PRUNE_LOG = -40.0        # a remembered deck whose bet has fallen below e**-40 is dropped
PRUNE_MASS = math.exp(PRUNE_LOG)
KIND = {"sorted": AlarmKind.SORTED_DECK, "suit_runs": AlarmKind.SUIT_RUNS,
        "rank_runs": AlarmKind.RANK_RUNS, "blocks": AlarmKind.BADLY_SHUFFLED}
STATISTIC = {
    "sorted": "pairs of neighbouring cards of one suit",
    "suit_runs": "pairs of the same suit",
    "rank_runs": "pairs of the same rank",
    "blocks": "cards next to a card already dealt",
    "recent": "pairs that followed each other in an earlier deck",
    "fingerprint": "first cards equal to an earlier deck's",
}


def _neighbours(code: int) -> tuple[int, int]:
    suit, rank = divmod(code, 13)
    return suit * 13 + (rank + 1) % 13, suit * 13 + (rank - 1) % 13


NEIGHBOURS = tuple(_neighbours(c) for c in range(52))


@functools.lru_cache(maxsize=None)
def _factors(name: str, k: int, r: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Log likelihood ratios (miss, hit) per mixed alternative q, when k of the r cards left
    make the event happen (null chance p = k/r)."""
    p = k / r
    return (tuple(math.log((1 - q) / (1 - p)) for q in MIX[name]),
            tuple(math.log(q / p) for q in MIX[name]))


@dataclass
class TestState:
    """The running state of one test over the current deck."""

    name: str
    pairs: int = 0            # pairs on which the test bet (the outcome was not certain)
    hits: int = 0
    expected: float = 0.0     # sum of the null chances over those pairs
    log_m: float = 0.0        # log of the mixture martingale now
    max_log_m: float = 0.0    # its running maximum
    alarmed: bool = False

    @property
    def p_value(self) -> float:
        """Anytime-valid p-value bound: 1 / max M (Ville's inequality)."""
        return min(1.0, math.exp(-self.max_log_m))

    def to_json(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "hits": self.hits, "expected": round(self.expected, 4),
                "log_m": round(self.log_m, 4) if math.isfinite(self.log_m) else None,
                "max_log_m": round(self.max_log_m, 4),
                "p_value": self.p_value, "alarmed": self.alarmed}


@dataclass
class _Remembered:
    """An earlier deck's observed order, as successor sets and positions."""

    number: int
    order: tuple[int, ...]
    succ: tuple[frozenset[int], ...]


def _remember(number: int, order: Sequence[int]) -> _Remembered:
    succ: list[set[int]] = [set() for _ in range(52)]
    for a, b in zip(order, order[1:]):
        succ[a].add(b)
    return _Remembered(number, tuple(order), tuple(frozenset(s) for s in succ))


class ShuffleSentinel:
    """Sequential tests of the order of one table's decks (see the module docstring).

    ``alpha``: the false-alarm bound per deck, all tests together. ``decks``: decks per shoe.
    ``memory``: recent decks whose order a new deck is compared with pair by pair (a repeat or
    a mere cut). ``fingerprints``: older decks compared by their first six cards.
    """

    def __init__(self, alpha: float = 1e-5, decks: int = 1, memory: int = 32,
                 fingerprints: int = 10_000, trend_alpha: float = 1e-6) -> None:
        if not 0 < alpha < 0.5:
            raise TablectlError(f"sentinel alpha {alpha!r} must be between 0 and 0.5, "
                                "e.g. 1e-5 (one false alarm in 100,000 decks at most)")
        if not isinstance(decks, int) or not 1 <= decks <= 8:
            raise TablectlError(f"decks per shoe {decks!r} must be a whole number from 1 to 8")
        if memory < 1 or fingerprints < 0:
            raise TablectlError("sentinel memory must be at least 1 deck and fingerprints "
                                "at least 0")
        self.alpha = alpha
        self.decks = decks
        self.memory = memory
        self.fingerprints = fingerprints
        self.test_alpha = alpha / len(TESTS)
        self.log_threshold = math.log(1.0 / self.test_alpha)
        # Chance that a shuffled deck's first six cards equal one given sequence, at most.
        p6 = 1.0
        for i in range(FINGERPRINT_CARDS):
            p6 *= decks / (52 * decks - i)
        self.fingerprint_p = p6
        self.fingerprint_capacity = (min(fingerprints, int(self.test_alpha / p6))
                                     if fingerprints else 0)
        self._recent: deque[_Remembered] = deque(maxlen=memory)
        self._prints: dict[tuple[int, ...], int] = {}
        self._print_order: deque[tuple[int, ...]] = deque()
        self._log_w_local = {t: -math.log(len(MIX[t])) for t in LOCAL_TESTS}
        self._log_w_recent = -math.log(memory * len(MIX["recent"]))
        if not 0 < trend_alpha < 0.5:
            raise TablectlError(f"sentinel trend_alpha {trend_alpha!r} must be between 0 and "
                                "0.5, e.g. 1e-6 (a false trend alarm once in a million decks "
                                "on average at most)")
        self.trend_alpha = trend_alpha
        # Shiryaev-Roberts statistics, one per local test, across decks (see _trend).
        self.trend = dict.fromkeys(LOCAL_TESTS, 0.0)
        self.trend_decks = dict.fromkeys(LOCAL_TESTS, 0)
        self.trend_threshold = len(LOCAL_TESTS) / trend_alpha
        self.trend_alarms: list[Alarm] = []
        self.number = 0
        self._start(1)

    # --- deck boundaries ----------------------------------------------------------------

    def _start(self, number: int) -> None:
        self.number = number
        self.order: list[int] = []
        self.frozen = False
        self.frozen_reason = ""
        self.remaining = [self.decks] * 52
        self.left = 52 * self.decks
        self.suit_left = [13 * self.decks] * 4
        self.rank_left = [4 * self.decks] * 13
        self.dealt = [False] * 52          # a copy of the card has come out
        self.touching = 0                  # cards left with a rank neighbour already dealt
        self.tests = {t: TestState(t) for t in TESTS}
        self._logs = {t: [0.0] * len(MIX[t]) for t in LOCAL_TESTS}
        # one row of log-bets per remembered deck still in play: [deck, [log per q]]
        self._recent_logs = [self._recent_entry(r) for r in self._recent]
        self._reset_recent_level()

    def _reset_recent_level(self) -> None:
        # The mixture starts at (decks remembered) / memory: unfilled slots bet nothing.
        n = len(self._recent_logs)
        self.tests["recent"].log_m = math.log(n / self.memory) if n else -math.inf

    def _recent_entry(self, deck: _Remembered) -> tuple[_Remembered, list[float], list]:
        # (deck, log-bet per q, [pairs bet, hits, expected hits, sum of exp(log-bets)])
        return (deck, [0.0] * len(MIX["recent"]), [0, 0, 0.0, float(len(MIX["recent"]))])

    def new_deck(self, number: int | None = None) -> dict[str, Any]:
        """The current deck is finished (its order is remembered); a new one begins.
        Returns the finished deck's statistics (for the journal); the trend alarms it raised
        are in :attr:`trend_alarms`."""
        stats = self.stats()
        self.trend_alarms = self._trend() if len(self.order) >= 2 else []
        stats["trend"] = {t: round(math.log1p(r), 4) for t, r in self.trend.items()}
        if len(self.order) >= 2 and not self.frozen:
            self._recent.append(_remember(self.number, self.order))
        if len(self.order) >= FINGERPRINT_CARDS and self.fingerprint_capacity:
            self._add_print(tuple(self.order[:FINGERPRINT_CARDS]), self.number)
        self._start(self.number + 1 if number is None else number)
        return stats

    def _trend(self) -> list[Alarm]:
        """Fold the finished deck into the Shiryaev-Roberts statistics across decks.

        Each test's martingale at the deck's end, ``M``, has mean at most 1 for a shuffled deck
        whatever came before, so ``R = (1 + R) * M`` minus the decks counted is a
        supermartingale: raising when any of the four ``R`` reaches ``4 / trend_alpha`` gives
        at least ``1 / trend_alpha`` decks on average between false alarms (Pollak's bound).
        A shuffler that shuffles weakly every time lifts ``M`` a little on every deck, which
        adds up over decks even when no single deck says enough. A deck that alarmed on the
        test counts as 1 (its own alarm said it)."""
        out = []
        for name in LOCAL_TESTS:
            st = self.tests[name]
            # A deck that raised its own alarm counts as 1: its bet stopped at the alarm,
            # where it stood above the threshold, so the mean stays at most 1.
            m = 1.0 if st.alarmed else math.exp(min(st.log_m, 700.0))
            r = (1.0 + self.trend[name]) * m
            self.trend_decks[name] += 1
            if r >= self.trend_threshold:
                out.append(self._trend_alarm(name, r))
                r = 0.0                           # watch afresh from the next deck
                self.trend_decks[name] = 0
            self.trend[name] = r
        return out

    def trend_state(self) -> dict[str, Any]:
        """The trend across decks exactly as it stands, JSON-ready: per test the statistic
        ``R`` (a float, which JSON carries to the last bit) and the decks counted in it since it
        last started afresh. Journaled with each deck, so a restart takes it back whole
        (:meth:`restore_trend`): an alarm then fires at the same deck with the same count."""
        return {"r": dict(self.trend), "decks": dict(self.trend_decks)}

    def restore_trend(self, state: Any) -> bool:
        """Take back what :meth:`trend_state` gave; False (nothing changed) for anything
        else, such as a record of an earlier version without it."""
        if not isinstance(state, dict):
            return False
        r, decks = state.get("r"), state.get("decks")
        if not isinstance(r, dict) or not isinstance(decks, dict) \
                or set(r) != set(LOCAL_TESTS) or set(decks) != set(LOCAL_TESTS):
            return False
        values = {t: r[t] for t in LOCAL_TESTS}
        counts = {t: decks[t] for t in LOCAL_TESTS}
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                   and math.isfinite(v) and v >= 0 for v in values.values()) or \
                not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                        for n in counts.values()):
            return False
        self.trend = {t: float(v) for t, v in values.items()}
        self.trend_decks = counts
        return True

    def _trend_alarm(self, name: str, r: float) -> Alarm:
        what = {"sorted": "neighbouring cards of one suit together",
                "suit_runs": "runs of one suit", "rank_runs": "runs of one rank",
                "blocks": "a few sorted runs"}[name]
        n = self.trend_decks[name]
        return Alarm(kind=AlarmKind.WEAK_SHUFFLING, deck=self.number, cards_seen=len(self.order),
                     statistic=f"Shiryaev-Roberts over decks: {STATISTIC[name]}",
                     p_value=None, observed=n,
                     message=(f"over the recent decks the cards have come out in {what} more "
                              f"often than shuffled decks do (statistic {r:.3g}, threshold "
                              f"{self.trend_threshold:.3g}, at most one false alarm in "
                              f"{1 / self.trend_alpha:,.0f} decks on average): the shuffling "
                              "is weak"))

    def remember(self, number: int, cards: Sequence[Card]) -> None:
        """Reload an earlier deck's order (after a restart, from the journal)."""
        order = [c.code for c in cards]
        if len(order) >= 2:
            self._recent.append(_remember(number, order))
        if len(order) >= FINGERPRINT_CARDS and self.fingerprint_capacity:
            self._add_print(tuple(order[:FINGERPRINT_CARDS]), number)
        if not self.order:
            self._recent_logs = [self._recent_entry(r) for r in self._recent]
            self._reset_recent_level()

    def _add_print(self, key: tuple[int, ...], number: int) -> None:
        if key not in self._prints:
            self._print_order.append(key)
        self._prints[key] = number
        while len(self._print_order) > self.fingerprint_capacity:
            self._prints.pop(self._print_order.popleft(), None)

    # --- one card -----------------------------------------------------------------------

    def card(self, card: Card | None) -> list[Alarm]:
        """One more card of the current deck came out; returns the alarms it raises."""
        if self.frozen:
            self.order.append(-1)
            return []
        if card is None:
            self._freeze("a card could not be read")
            return []
        c = card.code
        if self.remaining[c] == 0:
            self._freeze(f"{card} came out more often than the deck holds it")
            return []
        crossed: list[str] = self._pair(self.order[-1], c) if self.order else []
        self.order.append(c)
        self.remaining[c] -= 1
        self.left -= 1
        self.suit_left[c // 13] -= 1
        self.rank_left[c % 13] -= 1
        self._deal(c)
        alarms = [self._recent_alarm(self.tests[n]) if n == "recent"
                  else self._local_alarm(n, self.tests[n]) for n in crossed]
        if len(self.order) == FINGERPRINT_CARDS and self._prints:
            alarms += self._fingerprint()
        return alarms

    def _touches(self, y: int) -> bool:
        n0, n1 = NEIGHBOURS[y]
        return self.dealt[n0] or self.dealt[n1]

    def _deal(self, c: int) -> None:
        """Keep ``touching`` (for the blocks test) as card ``c`` leaves the deck."""
        if self._touches(c):
            self.touching -= 1                     # one copy of a touching card left
        if not self.dealt[c]:
            for y in set(NEIGHBOURS[c]):
                if not self._touches(y):           # y touches a dealt card from now on
                    self.touching += self.remaining[y]
            self.dealt[c] = True

    def _freeze(self, reason: str) -> None:
        self.frozen = True
        self.frozen_reason = reason
        self.order.append(-1)

    def _pair(self, a: int, b: int) -> list[str]:
        """Score the pair (a, b) before b leaves the deck; the tests that cross their
        threshold for the first time."""
        r = self.left
        rem = self.remaining
        crossed: list[str] = []
        na, nb = NEIGHBOURS[a]
        events = (
            ("sorted", rem[na] + (rem[nb] if nb != na else 0), b == na or b == nb),
            ("suit_runs", self.suit_left[a // 13], b // 13 == a // 13),
            ("rank_runs", self.rank_left[a % 13], b % 13 == a % 13),
            ("blocks", self.touching, self._touches(b)),
        )
        for name, k, hit in events:
            if 0 < k < r:
                st = self.tests[name]
                p = k / r
                logs = self._logs[name]
                f = _factors(name, k, r)[hit]
                logs[0] += f[0]
                logs[1] += f[1]
                logs[2] += f[2]
                st.pairs += 1
                st.hits += hit
                st.expected += p
                st.log_m = math.log(math.exp(logs[0]) + math.exp(logs[1]) + math.exp(logs[2])) \
                    + self._log_w_local[name]
                if st.log_m > st.max_log_m:
                    st.max_log_m = st.log_m
                if st.log_m >= self.log_threshold and not st.alarmed:
                    st.alarmed = True
                    crossed.append(name)
        if self._recent_logs and self._recent_pair(a, b, r):
            crossed.append("recent")
        return crossed

    def _recent_pair(self, a: int, b: int, r: int) -> bool:
        st = self.tests["recent"]
        rem = self.remaining
        keep = []
        total = 0.0
        for entry in self._recent_logs:
            deck, logs, score = entry
            succ = deck.succ[a]
            if succ:
                k = 0
                for x in succ:
                    k += rem[x]
                if 0 < k < r:
                    hit = b in succ
                    f = _factors("recent", k, r)[hit]
                    for i in range(len(logs)):
                        logs[i] += f[i]
                    score[0] += 1
                    score[1] += hit
                    score[2] += k / r
                    score[3] = sum(math.exp(v) for v in logs)
                    if score[3] <= PRUNE_MASS:
                        continue            # dropped: its bet is worth nothing any more
            keep.append(entry)
            total += score[3]
        self._recent_logs = keep
        st.log_m = (math.log(total) if total > 0 else -math.inf) + self._log_w_recent
        if st.log_m > st.max_log_m:
            st.max_log_m = st.log_m
        if st.log_m >= self.log_threshold and not st.alarmed:
            st.alarmed = True
            return True
        return False

    def _best_recent(self):
        if not self._recent_logs:
            return None
        return max(self._recent_logs, key=lambda e: e[2][3])

    def _fingerprint(self) -> list[Alarm]:
        number = self._prints.get(tuple(self.order))
        st = self.tests["fingerprint"]
        st.pairs = 1
        st.expected = self.fingerprint_p * len(self._prints)
        if number is None:
            return []
        st.hits = 1
        st.alarmed = True
        # Chance a shuffled deck matches any stored fingerprint: at most capacity * p6.
        p = min(1.0, self.fingerprint_p * len(self._prints))
        st.max_log_m = st.log_m = -math.log(p)
        first = " ".join(str(Card.from_code(c)) for c in self.order)
        return [Alarm(kind=AlarmKind.REPEATED_DECK, deck=self.number, cards_seen=len(self.order),
                      cards=tuple(Card.from_code(c) for c in self.order),
                      statistic=STATISTIC["fingerprint"], observed=FINGERPRINT_CARDS,
                      expected=0.0, p_value=p, related_deck=number,
                      message=(f"the deck begins {first}, exactly as deck {number} did: the "
                               "same order as an earlier deck (not shuffled since)"))]

    # --- alarms ---------------------------------------------------------------------------

    def _cards(self, last: int) -> tuple[Card, ...]:
        return tuple(Card.from_code(c) for c in self.order[-last:] if c >= 0)

    def _local_alarm(self, name: str, st: TestState) -> Alarm:
        seen = len(self.order)
        what = {
            "sorted": "cards come out next to their neighbour of the same suit (as in a "
                      "sorted deck)",
            "suit_runs": "cards come out in runs of one suit",
            "rank_runs": "cards come out in runs of one rank",
            "blocks": "cards come out next to cards already dealt, as from a sorted deck "
                      "riffled only once or twice",
        }[name]
        verdict = "badly shuffled" if name == "blocks" else "not shuffled"
        return Alarm(kind=KIND[name], deck=self.number, cards_seen=seen,
                     cards=self._cards(5),
                     statistic=STATISTIC[name], observed=st.hits,
                     expected=round(st.expected, 3), p_value=st.p_value,
                     message=(f"the deck was {verdict}: {what}; {st.hits} of {st.pairs} "
                              f"pairs so far where a shuffled deck gives about "
                              f"{st.expected:.1f} (chance at most {st.p_value:.1g}) after "
                              f"{seen} cards"))

    def _recent_alarm(self, st: TestState) -> Alarm:
        best = self._best_recent()
        deck = best[0]
        st.pairs, st.hits, st.expected = best[2][0], best[2][1], best[2][2]
        seen = len(self.order)
        mine = self.order
        same_place = sum(1 for i, c in enumerate(mine) if i < len(deck.order)
                         and deck.order[i] == c)
        repeat = same_place >= 0.8 * max(1, len(mine))
        ago = self.number - deck.number
        which = "the previous deck" if ago == 1 else f"deck {deck.number} ({ago} decks ago)"
        if repeat:
            kind, msg = (AlarmKind.REPEATED_DECK,
                         f"the cards come out in the same order as {which}: the deck was "
                         "not shuffled")
        else:
            kind, msg = (AlarmKind.CUT_DECK,
                         f"the cards follow the order of {which} too closely: the deck was "
                         "only cut, or barely shuffled")
        return Alarm(kind=kind, deck=self.number, cards_seen=seen, cards=self._cards(5),
                     statistic=STATISTIC["recent"], observed=st.hits,
                     expected=round(st.expected, 3), p_value=st.p_value,
                     related_deck=deck.number,
                     message=f"{msg} (chance at most {st.p_value:.1g} after {seen} cards)")

    # --- reporting ------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """The current deck's statistics: cards seen and, per test, pairs, hits, expected
        hits, the martingale's log and its anytime p-value bound (JSON-ready). For
        ``recent`` the counts are those of the remembered deck that matches best."""
        best = self._best_recent()
        if best is not None:
            st = self.tests["recent"]
            st.pairs, st.hits, st.expected = best[2][0], best[2][1], best[2][2]
        return {"deck": self.number, "cards_seen": len(self.order),
                "frozen": self.frozen_reason or None,
                "tests": {t: s.to_json() for t, s in self.tests.items()}}
