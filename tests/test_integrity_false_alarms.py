"""False alarms of the shuffle sentinel on genuinely shuffled decks.

The large runs use the numpy twin of the sentinel (controller.integrity.bench.null_batch); the
first test holds the twin to the sentinel itself, deck by deck, so the runs measure the real
thing. Counts are judged against the designed bound (alpha per deck) with a binomial margin.
"""
import math

import numpy as np
import pytest

from controller.integrity.bench import _binom_cdf, false_alarms, genuine_orders, null_batch
from controller.integrity.sentinel import TESTS, ShuffleSentinel
from controller.rules.cards import Card

ALPHA = 1e-5


def binomial_ceiling(n, p, tail=1e-3):
    """The smallest count c with P(X > c) < tail for X ~ Binomial(n, p)."""
    cdf = 0.0
    for c in range(n + 1):
        cdf += math.exp(math.lgamma(n + 1) - math.lgamma(c + 1) - math.lgamma(n - c + 1)
                        + c * math.log(p) + (n - c) * math.log1p(-p))
        if 1 - cdf < tail:
            return c
    return n


def test_the_numpy_twin_matches_the_sentinel_deck_by_deck():
    orders = genuine_orders(240, seed=9)
    orders[40] = np.arange(52)                       # sorted
    orders[90] = orders[89]                          # repeat of the previous deck
    orders[150] = np.roll(orders[149], 13)           # a cut
    orders[200] = orders[170]                        # repeat of an older deck
    res = null_batch(orders, memory=8, chunk=64)
    s = ShuffleSentinel(memory=8)
    for i, row in enumerate(orders):
        at = dict.fromkeys(TESTS, 0)
        for j, code in enumerate(row, 1):
            s.card(Card.from_code(int(code)))
            for t in TESTS:
                if s.tests[t].alarmed and not at[t]:
                    at[t] = j
        for t in TESTS:
            assert res[t]["max_log_m"][i] == pytest.approx(s.tests[t].max_log_m, rel=1e-9,
                                                           abs=1e-9), (i, t)
            assert res[t]["alarm_at"][i] == at[t], (i, t)
        s.new_deck()
    assert res["sorted"]["alarm_at"][40] and res["recent"]["alarm_at"][90]
    assert res["recent"]["alarm_at"][150] and res["fingerprint"]["alarm_at"][200]


def _check(fa):
    n = fa["decks"]
    assert fa["alarmed_decks"] <= binomial_ceiling(n, ALPHA)
    # The trend across decks: at least 1e6 decks on average between false alarms.
    assert sum(fa["trend_alarms"].values()) <= binomial_ceiling(n, 1e-6)
    assert fa["trend_largest_log"] < fa["trend_threshold_log"] or fa["trend_alarms"]
    # Ville's inequality, test by test: P(the martingale ever reaches x) <= 1/x.
    for test, tail in fa["tail_counts"].items():
        for label, count in tail.items():
            x = float(label)
            assert count <= binomial_ceiling(n, 1 / x), (test, label, count)


def test_false_alarm_rate_on_20000_genuine_shuffles():
    fa = false_alarms(20_000, seed=2024, alpha=ALPHA)
    _check(fa)
    # The bound is not vacuous: small martingale values do occur on shuffled decks.
    assert fa["tail_counts"]["suit_runs"]["1e1"] > 0


@pytest.mark.long
def test_false_alarm_rate_on_a_million_genuine_shuffles():
    fa = false_alarms(1_000_000, seed=1_000_003, alpha=ALPHA)
    print(fa)
    _check(fa)


def test_binomial_ceiling_is_what_it_says():
    # mean 0.2: P(X > 2) = 1.15e-3, P(X > 3) = 5.7e-5
    assert binomial_ceiling(20_000, 1e-5) == 3
    assert binomial_ceiling(1000, 0.5) > 500
    assert 1 - _binom_cdf(binomial_ceiling(5000, 0.1), 5000, 0.1) < 1e-3
    assert math.isclose(_binom_cdf(1000, 1000, 0.3), 1.0)


def test_feeding_in_parts_gives_the_same_as_at_once():
    from controller.integrity.bench import NullRun
    orders = genuine_orders(150, seed=3)
    orders[100] = orders[60]                         # a repeat across the two parts
    orders[101] = np.roll(orders[99], 5)             # a cut across the two parts
    whole = NullRun(memory=40).feed(orders)
    run = NullRun(memory=40)
    parts = [run.feed(orders[:90]), run.feed(orders[90:])]
    for t in TESTS:
        for key in ("max_log_m", "alarm_at"):
            joined = np.concatenate([p[t][key] for p in parts])
            assert np.allclose(joined, whole[t][key]), (t, key)
    assert whole["recent"]["alarm_at"][100] and whole["recent"]["alarm_at"][101]


def test_the_numpy_twin_keeps_the_trend_as_the_sentinel_does():
    from controller.integrity.bench import NullRun, riffle
    import random
    rng = random.Random(2)
    orders = genuine_orders(120, seed=4)
    for i in range(60, 120):             # a weak shuffler from deck 60 on: riffled 3 times
        d = riffle(riffle(riffle(list(range(52)), rng), rng), rng)
        orders[i] = d
    res = NullRun(memory=4).feed(orders, chunk=50)
    s = ShuffleSentinel(memory=4)
    trend_alarm_decks = []
    for i, row in enumerate(orders):
        for code in row:
            s.card(Card.from_code(int(code)))
        stats = s.new_deck()
        if s.trend_alarms:
            trend_alarm_decks.append(i)
        for t in ("sorted", "suit_runs", "rank_runs", "blocks"):
            assert res[t]["trend_log"][i] == pytest.approx(stats["trend"][t], abs=1e-3), (i, t)
    batch = sorted({int(i) for t in ("sorted", "suit_runs", "rank_runs", "blocks")
                    for i in np.flatnonzero(res[t]["trend_alarm"])})
    assert trend_alarm_decks == batch
    assert batch and 60 <= batch[0] < 80          # the weak shuffler is caught, not before
