"""Measuring the shuffle sentinel: false alarms on genuine shuffles, cards to catch bad decks.

Two measurements, both seeded and repeatable:

* :func:`false_alarms` deals ``n`` genuinely shuffled decks (``random.Random(seed).shuffle``,
  one after the other, so each deck is also compared with the decks before it) through
  :func:`null_batch`, a numpy twin of :class:`~controller.integrity.sentinel.ShuffleSentinel`
  that runs many decks side by side (a test holds it to the sentinel itself, deck by deck). It
  reports how many decks raised an alarm, per test, and the tail of each test's largest
  martingale value, against Ville's bound ``P(max M >= x) <= 1/x``.
* :func:`detection` deals each kind of bad deck (:data:`BAD_DECKS`) through the sentinel itself
  and reports how many cards it took to raise the first alarm (median, 90th centile, largest)
  and which alarm it was.

:func:`run` does both and returns one JSON-ready dict; :func:`format_report` prints it. The
command-line entry is ``benchmarks/integrity_bench.py``. Numbers, never timings, are the result.
"""
from __future__ import annotations

import math
import random
import statistics
from collections import Counter, deque
from typing import Any, Callable, Sequence

import numpy as np

from controller.rules.cards import Card, full_deck

from .sentinel import (FINGERPRINT_CARDS, LOCAL_TESTS, MIX, NEIGHBOURS, PRUNE_LOG, TESTS,
                       ShuffleSentinel)

DECK = full_deck()
_NB = np.array(NEIGHBOURS, dtype=np.int64)


# --- genuine shuffles, many at once -----------------------------------------------------------

def genuine_orders(n: int, seed: int | random.Random) -> np.ndarray:
    """``n`` decks as rows of card codes, each shuffled by ``random.Random(seed).shuffle`` (one
    generator for the whole run, decks in sequence)."""
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    out = np.empty((n, 52), dtype=np.int64)
    codes = list(range(52))
    for i in range(n):
        rng.shuffle(codes)
        out[i] = codes
    return out


def _successors(orders: np.ndarray) -> np.ndarray:
    """Row i: for each card code, the code that followed it in deck i (-1 for the last)."""
    n = len(orders)
    succ = np.full((n, 52), -1, dtype=np.int64)
    rows = np.arange(n)[:, None]
    succ[rows, orders[:, :-1]] = orders[:, 1:]
    return succ


class NullRun:
    """The sentinel's tests over single-deck orders dealt one after the other, fed in chunks
    (each deck is compared with the ``memory`` decks before it, across chunks, and with up to
    ``fingerprints`` earlier first-six cards)."""

    def __init__(self, *, alpha: float = 1e-5, memory: int = 32,
                 fingerprints: int = 10_000) -> None:
        self.sentinel = ShuffleSentinel(alpha=alpha, memory=memory, fingerprints=fingerprints)
        self.memory = memory
        self.tail = np.empty((0, 52), dtype=np.int64)
        self.prints: dict[bytes, int] = {}
        self.fifo: deque[bytes] = deque()
        self.seen = 0
        self.trend = dict.fromkeys(LOCAL_TESTS, 0.0)

    def feed(self, orders: np.ndarray, chunk: int = 20_000) -> dict[str, dict[str, np.ndarray]]:
        """Per test, the largest log-martingale of every deck (``max_log_m``) and the card at
        which it first crossed its threshold (``alarm_at``, 0 for none)."""
        orders = np.asarray(orders, dtype=np.int64)
        n = len(orders)
        out = {t: {"max_log_m": np.zeros(n), "alarm_at": np.zeros(n, dtype=np.int64)}
               for t in TESTS}
        for t in LOCAL_TESTS:
            out[t]["final_log_m"] = np.zeros(n)
        for lo in range(0, n, chunk):
            part = orders[lo:lo + chunk]
            full = np.concatenate([self.tail, part])
            off = len(self.tail)
            res = _chunk(full, _successors(full), off, len(full), self.memory,
                         self.sentinel.log_threshold)
            for t in res:
                for key in res[t]:
                    out[t][key][lo:lo + len(part)] = res[t][key]
            self.tail = full[-self.memory:]
        self._fingerprints(orders, out["fingerprint"])
        self._trend(out)
        self.seen += n
        return out

    def _trend(self, out: dict[str, dict[str, np.ndarray]]) -> None:
        """The Shiryaev-Roberts statistics across decks, as ShuffleSentinel._trend keeps
        them: ``trend_log`` (log(1 + R) after each deck) and ``trend_alarm`` per test."""
        thr = self.sentinel.trend_threshold
        for t in LOCAL_TESTS:
            final = out[t]["final_log_m"]
            m_all = np.where(out[t]["alarm_at"] > 0, 1.0, np.exp(np.minimum(final, 700.0)))
            r = self.trend[t]
            logs = np.empty(len(final))
            alarms = np.zeros(len(final), dtype=bool)
            for i, m in enumerate(m_all.tolist()):
                r = (1.0 + r) * m
                if r >= thr:
                    alarms[i] = True
                    r = 0.0
                logs[i] = math.log1p(r)
            self.trend[t] = r
            out[t]["trend_log"] = logs
            out[t]["trend_alarm"] = alarms

    def _fingerprints(self, orders: np.ndarray, fp: dict[str, np.ndarray]) -> None:
        cap = self.sentinel.fingerprint_capacity
        p6 = self.sentinel.fingerprint_p
        prints, fifo = self.prints, self.fifo
        for i in range(len(orders)):
            key = orders[i, :FINGERPRINT_CARDS].tobytes()
            if key in prints:
                fp["alarm_at"][i] = FINGERPRINT_CARDS
                fp["max_log_m"][i] = -math.log(min(1.0, p6 * len(fifo)))
            else:
                fifo.append(key)
            prints[key] = self.seen + i
            while len(fifo) > cap:
                prints.pop(fifo.popleft(), None)


def null_batch(orders: np.ndarray, *, alpha: float = 1e-5, memory: int = 32,
               fingerprints: int = 10_000, chunk: int = 20_000) -> dict[str, dict[str, np.ndarray]]:
    """:class:`NullRun` over one array of orders (rows dealt one after the other)."""
    return NullRun(alpha=alpha, memory=memory, fingerprints=fingerprints).feed(orders, chunk)


def _chunk(orders, succ_all, lo, hi, memory, thr) -> dict[str, dict[str, np.ndarray]]:
    """Rows lo..hi of ``orders`` (rows before lo are the remembered decks)."""
    o = orders[lo:hi]
    n = hi - lo
    rows = np.arange(n)
    out = {t: {"max_log_m": np.zeros(n), "alarm_at": np.zeros(n, dtype=np.int64)}
           for t in TESTS}
    rem = np.ones((n, 52), dtype=np.int64)
    suit_left = np.full((n, 4), 13, dtype=np.int64)
    rank_left = np.full((n, 13), 4, dtype=np.int64)
    qs = {t: np.array(MIX[t]) for t in MIX}
    logs = {t: np.zeros((n, len(MIX[t]))) for t in LOCAL_TESTS}
    # Remembered decks: lag l compares row i with row i-l (none before the first deck);
    # one deck per shoe, so a successor is one card (k is 0 or 1 and p = 1/r).
    nlag = memory
    base = np.arange(lo, hi)[None, :] - np.arange(1, nlag + 1)[:, None]     # (lags, n)
    alive = base >= 0
    base52 = np.clip(base, 0, None) * 52
    succ_flat = succ_all.ravel()
    rows52 = rows * 52
    rem_flat = rem.ravel()
    q_rec = qs["recent"]
    nq = len(q_rec)
    mass = np.ones((nlag, n, nq))            # exp of each remembered deck's log-bet per q
    prune = math.exp(PRUNE_LOG)
    log_w_recent = -math.log(memory * nq)
    rmax = np.zeros(n)
    ralarm = np.zeros(n, dtype=np.int64)
    dealt = np.zeros((n, 52), dtype=bool)
    touching = np.zeros(n, dtype=np.int64)

    def deal(c, hit_c):
        """Card c leaves every row's deck (hit_c: it touched a dealt card)."""
        nonlocal touching
        rem[rows, c] -= 1
        suit_left[rows, c // 13] -= 1
        rank_left[rows, c % 13] -= 1
        touching = touching - hit_c
        for y in (_NB[c, 0], _NB[c, 1]):
            was = dealt[rows, _NB[y, 0]] | dealt[rows, _NB[y, 1]]
            touching = touching + (~was) * rem[rows, y]
        dealt[rows, c] = True

    deal(o[:, 0], np.zeros(n, dtype=np.int64))         # the first card leaves the deck
    for step in range(1, o.shape[1]):
        a = o[:, step - 1]
        b = o[:, step]
        r = 52 - step
        n0, n1 = _NB[a, 0], _NB[a, 1]
        events = {
            "sorted": (rem[rows, n0] + rem[rows, n1], (b == n0) | (b == n1)),
            "suit_runs": (suit_left[rows, a // 13], b // 13 == a // 13),
            "rank_runs": (rank_left[rows, a % 13], b % 13 == a % 13),
            "blocks": (touching, dealt[rows, _NB[b, 0]] | dealt[rows, _NB[b, 1]]),
        }
        for name, (k, hit) in events.items():
            bet = (k > 0) & (k < r)
            p = np.where(bet, k / r, 0.5)[:, None]
            q = qs[name][None, :]
            f = np.where(hit[:, None], np.log(q / p), np.log((1 - q) / (1 - p)))
            logs[name] += np.where(bet[:, None], f, 0.0)
            log_m = _lse(logs[name]) - math.log(len(MIX[name]))
            mx = out[name]["max_log_m"]
            np.maximum(mx, log_m, out=mx)
            at = out[name]["alarm_at"]
            at[(log_m >= thr) & (at == 0)] = step + 1
        # recent decks
        sc = succ_flat[base52 + a[None, :]]                  # (lags, n) successor or -1
        ok = sc >= 0
        k = np.where(ok, rem_flat[rows52[None, :] + np.where(ok, sc, 0)], 0)
        bet = alive & (k > 0) & (r > 1)
        hit = sc == b[None, :]
        if r > 1:
            f = np.where(hit[..., None], q_rec * r, (1 - q_rec) / (1 - 1 / r))
            mass *= np.where(bet[..., None], f, 1.0)
        msum = mass.sum(axis=2)
        alive &= ~(bet & (msum <= prune))
        total = (msum * alive).sum(axis=0)
        with np.errstate(divide="ignore"):
            log_m = np.log(total) + log_w_recent
        np.maximum(rmax, log_m, out=rmax)
        ralarm[(log_m >= thr) & (ralarm == 0)] = step + 1
        deal(b, events["blocks"][1].astype(np.int64))
    out["recent"]["max_log_m"][:] = rmax
    out["recent"]["alarm_at"][:] = ralarm
    for name in LOCAL_TESTS:
        out[name]["final_log_m"] = _lse(logs[name]) - math.log(len(MIX[name]))
    return out


def _lse(x: np.ndarray) -> np.ndarray:
    top = x.max(axis=1)
    return top + np.log(np.exp(x - top[:, None]).sum(axis=1))


def false_alarms(n: int = 20_000, seed: int = 2024, *, alpha: float = 1e-5,
                 memory: int = 32) -> dict[str, Any]:
    """The false-alarm run on ``n`` genuine shuffles (see the module docstring)."""
    rng = random.Random(seed)
    run = NullRun(alpha=alpha, memory=memory)
    per_test = dict.fromkeys(TESTS, 0)
    trend = dict.fromkeys(LOCAL_TESTS, 0)
    trend_top = 0.0
    tails = {t: {f"1e{e}": 0 for e in range(1, 7)} for t in TESTS if t != "fingerprint"}
    k = 0
    block = 20_000
    for lo in range(0, n, block):
        res = run.feed(genuine_orders(min(block, n - lo), rng))
        any_alarm = np.zeros(min(block, n - lo), dtype=bool)
        for t in TESTS:
            hit = res[t]["alarm_at"] > 0
            any_alarm |= hit
            per_test[t] += int(hit.sum())
            if t in tails:
                mx = res[t]["max_log_m"]
                for e in range(1, 7):
                    tails[t][f"1e{e}"] += int((mx >= e * math.log(10)).sum())
        k += int(any_alarm.sum())
        for t in LOCAL_TESTS:
            trend[t] += int(res[t]["trend_alarm"].sum())
            trend_top = max(trend_top, float(res[t]["trend_log"].max()))
    return {"decks": n, "seed": seed, "alpha": alpha, "alarmed_decks": k,
            "rate": k / n, "upper_95": _upper_95(k, n), "per_test": per_test,
            "tail_counts": tails, "trend_alarms": trend,
            "trend_threshold_log": round(math.log(run.sentinel.trend_threshold), 3),
            "trend_largest_log": round(trend_top, 3)}


def _upper_95(k: int, n: int) -> float:
    """One-sided 95% upper confidence bound on a rate after k events in n (Clopper-Pearson;
    for k = 0 it is 1 - 0.05**(1/n), about 3/n)."""
    if k == 0:
        return 1 - 0.05 ** (1 / n)
    lo, hi = k / n, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if _binom_cdf(k, n, mid) > 0.05:
            lo = mid
        else:
            hi = mid
    return hi


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space."""
    total = 0.0
    for i in range(k + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                          + i * math.log(p) + (n - i) * math.log1p(-p))
    return total


# --- bad decks ----------------------------------------------------------------------------

def new_deck_order() -> list[Card]:
    """A new deck out of its box: A-K spades, A-K diamonds, K-A clubs, K-A hearts."""
    up = lambda s: [Card(14, s)] + [Card(r, s) for r in range(2, 14)]  # noqa: E731
    return up("s") + up("d") + up("c")[::-1] + up("h")[::-1]


def riffle(cards: Sequence[Card], rng: random.Random) -> list[Card]:
    """One riffle shuffle (Gilbert-Shannon-Reeds: binomial cut, drops in proportion)."""
    n = len(cards)
    k = sum(rng.random() < 0.5 for _ in range(n))
    left, right = list(cards[:k]), list(cards[k:])
    out = []
    while left or right:
        if rng.random() < len(left) / (len(left) + len(right)):
            out.append(left.pop(0))
        else:
            out.append(right.pop(0))
    return out


def _swaps(cards, rng, k):
    d = list(cards)
    for _ in range(k):
        i, j = rng.randrange(52), rng.randrange(52)
        d[i], d[j] = d[j], d[i]
    return d


def _suit_sorted(rng):
    suits = list("shcd")
    rng.shuffle(suits)
    out = []
    for s in suits:
        part = [c for c in DECK if c.suit == s]
        rng.shuffle(part)
        out += part
    return out


def _rank_sorted(rng):
    return sorted(DECK, key=lambda c: (c.rank, rng.random()))


def _shuffled(rng):
    d = DECK[:]
    rng.shuffle(d)
    return d


# name -> (what it is, earlier decks to deal first, the bad deck from them, cards shown per deck)
BadDeck = tuple[str, Callable[[random.Random], list[list[Card]]],
                Callable[[random.Random, list[list[Card]]], list[Card]], int]
BAD_DECKS: dict[str, BadDeck] = {
    "sorted": ("code order (2s..As, 2h..Ah, ...)", lambda r: [],
               lambda r, h: DECK[:], 52),
    "new_deck_order": ("a new deck's order (a shuffler in sort mode)", lambda r: [],
                       lambda r, h: new_deck_order(), 52),
    "near_sorted_4_swaps": ("sorted, then 4 random swaps", lambda r: [],
                            lambda r, h: _swaps(DECK, r, 4), 52),
    "near_sorted_10_swaps": ("sorted, then 10 random swaps", lambda r: [],
                             lambda r, h: _swaps(DECK, r, 10), 52),
    "suit_sorted": ("grouped by suit, ranks shuffled", lambda r: [],
                    lambda r, h: _suit_sorted(r), 52),
    "rank_sorted": ("grouped by rank, suits shuffled", lambda r: [],
                    lambda r, h: _rank_sorted(r), 52),
    "riffled_once": ("a sorted deck riffled once", lambda r: [],
                     lambda r, h: riffle(DECK, r), 52),
    "riffled_twice": ("a sorted deck riffled twice", lambda r: [],
                      lambda r, h: riffle(riffle(DECK, r), r), 52),
    "riffled_thrice": ("a sorted deck riffled three times", lambda r: [],
                       lambda r, h: riffle(riffle(riffle(DECK, r), r), r), 52),
    "cut_of_previous": ("the previous deck, cut once", lambda r: [_shuffled(r)],
                        lambda r, h: (lambda k: h[-1][k:] + h[-1][:k])(r.randrange(1, 52)), 52),
    "repeat_of_previous": ("the previous deck's order again", lambda r: [_shuffled(r)],
                           lambda r, h: h[-1][:], 52),
    "repeat_20_ago": ("the order of the deck 20 decks before",
                      lambda r: [_shuffled(r) for _ in range(20)],
                      lambda r, h: h[-20][:], 52),
    "repeat_100_ago": ("the order of the deck 100 decks before (fingerprint)",
                       lambda r: [_shuffled(r) for _ in range(100)],
                       lambda r, h: h[-100][:], 52),
    "previous_riffled_once": ("the previous deck riffled once", lambda r: [_shuffled(r)],
                              lambda r, h: riffle(h[-1], r), 52),
    "shuffler_repeat_12": ("shuffler mode, 12 cards a round: the previous round's order again",
                           lambda r: [_shuffled(r)], lambda r, h: h[-1][:], 12),
    "shuffler_cut_12": ("shuffler mode, 12 cards a round: the previous deck cut",
                        lambda r: [_shuffled(r)],
                        lambda r, h: (lambda k: h[-1][k:] + h[-1][:k])(r.randrange(1, 52)), 12),
}


def detection(trials: int = 200, seed: int = 7, *, alpha: float = 1e-5,
              kinds: Sequence[str] | None = None) -> dict[str, Any]:
    """Cards needed to catch each bad deck, over ``trials`` seeded decks of each kind."""
    out: dict[str, Any] = {}
    for name in kinds or BAD_DECKS:
        what, before, make, shown = BAD_DECKS[name]
        at: list[int] = []
        first_kind: Counter = Counter()
        for trial in range(trials if name not in ("sorted", "new_deck_order") else 1):
            rng = random.Random(f"{seed}:{name}:{trial}")
            s = ShuffleSentinel(alpha=alpha)
            history = before(rng)
            for deck in history:
                for card in deck[:shown]:
                    s.card(card)
                s.new_deck()
            bad = make(rng, history)
            for i, card in enumerate(bad[:shown], 1):
                alarms = s.card(card)
                if alarms:
                    at.append(i)
                    first_kind[str(alarms[0].kind)] += 1
                    break
        n = trials if name not in ("sorted", "new_deck_order") else 1
        out[name] = {"what": what, "decks": n, "cards_shown": shown,
                     "caught": len(at), "caught_rate": len(at) / n,
                     "median": statistics.median(at) if at else None,
                     "p90": sorted(at)[max(0, math.ceil(0.9 * len(at)) - 1)] if at else None,
                     "max": max(at) if at else None,
                     "alarm": dict(first_kind)}
    return out


# A shuffler that is weak every time: name -> (what, one weak deck, cards shown per deck)
WEAK_SHUFFLERS: dict[str, tuple[str, Callable[[random.Random], list[Card]], int]] = {
    "riffled_twice_12": ("a sorted deck riffled twice, 12 cards a round",
                         lambda r: riffle(riffle(DECK, r), r), 12),
    "riffled_thrice_12": ("a sorted deck riffled three times, 12 cards a round",
                          lambda r: riffle(riffle(riffle(DECK, r), r), r), 12),
    "riffled_thrice": ("a sorted deck riffled three times, whole decks",
                       lambda r: riffle(riffle(riffle(DECK, r), r), r), 52),
    "riffled_4_times": ("a sorted deck riffled four times, whole decks",
                        lambda r: riffle(riffle(riffle(riffle(DECK, r), r), r), r), 52),
}


def trend_detection(trials: int = 50, seed: int = 7, *, limit: int = 300) -> dict[str, Any]:
    """Decks dealt by a weak shuffler until the first alarm (after 20 genuine decks)."""
    out: dict[str, Any] = {}
    for name, (what, make, shown) in WEAK_SHUFFLERS.items():
        decks_to: list[int] = []
        kinds: Counter = Counter()
        for trial in range(trials):
            rng = random.Random(f"{seed}:{name}:{trial}")
            s = ShuffleSentinel()
            for _ in range(20):
                for card in _shuffled(rng)[:shown]:
                    s.card(card)
                s.new_deck()
            for k in range(1, limit + 1):
                alarms = [a for c in make(rng)[:shown] for a in s.card(c)]
                s.new_deck()
                alarms += s.trend_alarms
                if alarms:
                    decks_to.append(k)
                    kinds[str(alarms[0].kind)] += 1
                    break
        out[name] = {"what": what, "shuffles": trials, "cards_shown": shown,
                     "caught": len(decks_to), "limit": limit,
                     "median": statistics.median(decks_to) if decks_to else None,
                     "p90": sorted(decks_to)[max(0, math.ceil(0.9 * len(decks_to)) - 1)]
                     if decks_to else None,
                     "max": max(decks_to) if decks_to else None, "alarm": dict(kinds)}
    return out


def run(decks: int = 20_000, trials: int = 200, seed: int = 2024) -> dict[str, Any]:
    """All three measurements, JSON-ready."""
    return {"false_alarms": false_alarms(decks, seed), "detection": detection(trials, seed),
            "weak_shufflers": trend_detection(max(1, trials // 4), seed)}


def format_report(res: dict[str, Any]) -> str:
    fa = res["false_alarms"]
    lines = [f"False alarms: {fa['alarmed_decks']} of {fa['decks']:,} genuinely shuffled decks "
             f"(seed {fa['seed']}); rate {fa['rate']:.2g}, 95% upper bound "
             f"{fa['upper_95']:.2g}; designed bound alpha = {fa['alpha']:g} per deck",
             "  per test: " + ", ".join(f"{k} {v}" for k, v in fa["per_test"].items()),
             "  decks whose martingale ever reached x (Ville: at most decks/x):"]
    for t, tail in fa["tail_counts"].items():
        lines.append(f"    {t:<10} " + "  ".join(f"x={k}: {v}" for k, v in tail.items()))
    lines.append(f"  trend across decks: {sum(fa['trend_alarms'].values())} false alarms "
                 f"(largest log statistic {fa['trend_largest_log']}, threshold "
                 f"{fa['trend_threshold_log']})")
    lines.append("")
    lines.append(f"{'bad deck':<24}{'caught':>10}{'median':>8}{'p90':>6}{'max':>6}  alarm")
    for name, d in res["detection"].items():
        lines.append(f"{name:<24}{d['caught']:>5}/{d['decks']:<4}{d['median'] or '-':>8}"
                     f"{d['p90'] or '-':>6}{d['max'] or '-':>6}  "
                     + ", ".join(f"{k} {v}" for k, v in d["alarm"].items()))
    if "weak_shufflers" in res:
        lines.append("")
        lines.append(f"{'weak shuffler (decks)':<24}{'caught':>10}{'median':>8}{'p90':>6}"
                     f"{'max':>6}  alarm")
        for name, d in res["weak_shufflers"].items():
            lines.append(f"{name:<24}{d['caught']:>5}/{d['shuffles']:<4}"
                         f"{d['median'] or '-':>8}{d['p90'] or '-':>6}{d['max'] or '-':>6}  "
                         + ", ".join(f"{k} {v}" for k, v in d["alarm"].items()))
    return "\n".join(lines)
