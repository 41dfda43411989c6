"""The shuffle sentinel: bad orders are caught within a few cards, shuffled decks are not."""
import copy
import math
import random

import pytest

from controller.errors import TablectlError
from controller.integrity import AlarmKind, ShuffleSentinel
from controller.integrity.sentinel import TESTS
from controller.rules.cards import Card, full_deck

DECK = full_deck()


def shuffled(seed):
    d = DECK[:]
    random.Random(seed).shuffle(d)
    return d


def feed(sentinel, order):
    """Feed a deck; the first alarms and the number of cards it took."""
    for i, card in enumerate(order, 1):
        alarms = sentinel.card(card)
        if alarms:
            return i, alarms
    return None, []


def new_deck_order():
    """A new deck as it leaves the box: A-K spades, A-K diamonds, K-A clubs, K-A hearts."""
    up = lambda s: [Card(14, s)] + [Card(r, s) for r in range(2, 14)]
    return up("s") + up("d") + up("c")[::-1] + up("h")[::-1]


def test_sorted_deck_is_caught_within_the_first_cards():
    n, alarms = feed(ShuffleSentinel(), DECK)
    assert alarms[0].kind is AlarmKind.SORTED_DECK
    assert n <= 8
    assert alarms[0].cards[-1] == DECK[n - 1]       # the card that tipped it is named
    assert alarms[0].p_value < 1e-5 / len(TESTS)


def test_new_deck_order_of_a_shuffler_in_sort_mode():
    n, alarms = feed(ShuffleSentinel(), new_deck_order())
    assert alarms[0].kind is AlarmKind.SORTED_DECK and n <= 8


def test_near_sorted_deck_with_random_swaps():
    rng = random.Random(7)
    for _ in range(20):
        d = DECK[:]
        for _ in range(4):
            i, j = rng.randrange(52), rng.randrange(52)
            d[i], d[j] = d[j], d[i]
        n, alarms = feed(ShuffleSentinel(), d)
        assert alarms and alarms[0].kind is AlarmKind.SORTED_DECK, d


def test_suit_sorted_deck():
    rng = random.Random(3)
    d = []
    for s in "hdsc":
        part = [c for c in DECK if c.suit == s]
        rng.shuffle(part)
        d += part
    n, alarms = feed(ShuffleSentinel(), d)
    assert alarms[0].kind is AlarmKind.SUIT_RUNS and n <= 20


def test_rank_sorted_deck():
    rng = random.Random(4)
    d = sorted(DECK, key=lambda c: (c.rank, rng.random()))
    n, alarms = feed(ShuffleSentinel(), d)
    assert alarms[0].kind is AlarmKind.RANK_RUNS and n <= 16


def test_sorted_deck_riffled_twice():
    """Two riffles leave at most four interleaved runs: each card but a few is the rank
    neighbour of one already dealt."""
    from controller.integrity.bench import riffle
    caught = 0
    for seed in range(20):
        rng = random.Random(seed)
        n, alarms = feed(ShuffleSentinel(), riffle(riffle(DECK, rng), rng))
        caught += bool(alarms) and alarms[0].kind is AlarmKind.BADLY_SHUFFLED
    assert caught >= 18


def test_cut_of_the_previous_deck():
    s = ShuffleSentinel()
    prev = shuffled(11)
    assert feed(s, prev) == (None, [])
    s.new_deck()
    n, alarms = feed(s, prev[17:] + prev[:17])
    assert alarms[0].kind is AlarmKind.CUT_DECK
    assert alarms[0].related_deck == 1 and "previous deck" in alarms[0].message
    assert n <= 8


def test_repeat_of_an_earlier_deck():
    s = ShuffleSentinel()
    first = shuffled(21)
    feed(s, first)
    s.new_deck()
    feed(s, shuffled(22))
    s.new_deck()
    n, alarms = feed(s, first)
    assert {a.kind for a in alarms} == {AlarmKind.REPEATED_DECK}
    assert alarms[0].related_deck == 1 and n <= 8


def test_repeat_older_than_the_pair_memory_is_caught_by_its_fingerprint():
    s = ShuffleSentinel(memory=2)
    first = shuffled(31)
    feed(s, first)
    for seed in range(5):
        s.new_deck()
        feed(s, shuffled(100 + seed))
    s.new_deck()
    n, alarms = feed(s, first)
    assert n == 6
    assert alarms[0].kind is AlarmKind.REPEATED_DECK and alarms[0].related_deck == 1
    assert alarms[0].cards == tuple(first[:6])


def test_partial_decks_as_a_shuffler_deals_them():
    """Shuffler mode shows only the cards of one round (e.g. 12); a repeat is still seen."""
    s = ShuffleSentinel()
    first = shuffled(41)[:12]
    feed(s, first)
    s.new_deck()
    n, alarms = feed(s, first)
    assert alarms and alarms[0].kind is AlarmKind.REPEATED_DECK


def test_genuine_shuffles_raise_nothing():
    s = ShuffleSentinel()
    for seed in range(300):
        assert feed(s, shuffled(seed)) == (None, []), seed
        s.new_deck()


def test_two_deck_shoe():
    s = ShuffleSentinel(decks=2)
    rng = random.Random(5)
    for _ in range(50):
        d = DECK + DECK
        rng.shuffle(d)
        assert feed(s, d) == (None, [])
        s.new_deck()
    n, alarms = feed(s, [c for c in DECK for _ in range(2)])   # sorted, each card twice
    assert alarms and n <= 12


@pytest.mark.parametrize("seed", range(6))
def test_the_bet_is_fair_under_a_shuffled_deck(seed):
    """Soundness: averaged over every card that can come next, each test's martingale keeps
    its value (a fair bet), so Ville's inequality bounds the false-alarm rate."""
    rng = random.Random(seed)
    s = ShuffleSentinel(decks=1 + seed % 2, memory=4)
    for _ in range(3):                   # remembered decks for the 'recent' test
        d = DECK * s.decks
        rng.shuffle(d)
        feed(s, d[:30])
        s.new_deck()
    d = DECK * s.decks
    rng.shuffle(d)
    prefix = d[:rng.randrange(1, 40)]
    feed(s, prefix)
    before = {t: math.exp(s.tests[t].log_m) for t in ("sorted", "suit_runs", "rank_runs",
                                                         "blocks", "recent")}
    left = d[len(prefix):]               # the cards still in the deck, each equally likely
    after = {t: 0.0 for t in before}
    for card in left:
        probe = copy.deepcopy(s)
        probe.card(card)
        for t in after:
            after[t] += math.exp(probe.tests[t].log_m) / len(left)
    for t in before:
        assert after[t] == pytest.approx(before[t], rel=1e-9), t


def test_unreadable_card_stops_testing_the_deck():
    s = ShuffleSentinel()
    s.card(DECK[0])
    assert s.card(None) == []
    assert feed(s, DECK[1:]) == (None, [])
    assert s.stats()["frozen"]


def test_bad_settings_are_refused():
    with pytest.raises(TablectlError, match="alpha"):
        ShuffleSentinel(alpha=0)
    with pytest.raises(TablectlError, match="decks"):
        ShuffleSentinel(decks=0)


def test_a_shuffler_weak_every_time_is_caught_across_decks():
    """Three riffles of a sorted deck rarely give one deck away, but deck after deck the
    evidence adds up (Shiryaev-Roberts across decks)."""
    from controller.integrity.bench import riffle
    rng = random.Random(12)
    s = ShuffleSentinel()
    for _ in range(30):                  # a good shuffler first: nothing builds up
        feed(s, shuffled(rng.random()))
        s.new_deck()
        assert s.trend_alarms == []
    for k in range(1, 41):
        feed(s, riffle(riffle(riffle(DECK, rng), rng), rng)[:12])
        s.new_deck()
        if s.trend_alarms:
            break
    assert s.trend_alarms and s.trend_alarms[0].kind is AlarmKind.WEAK_SHUFFLING
    assert k <= 30 and "weak" in s.trend_alarms[0].message


def test_trend_reaches_the_monitor_at_the_end_of_a_deck():
    from controller.integrity import IntegrityMonitor
    from controller.integrity.bench import riffle
    from drivers import events as ev
    rng = random.Random(13)
    mon = IntegrityMonitor(deck_per_round=True)
    kinds = []
    for _ in range(40):
        for card in riffle(riffle(riffle(DECK, rng), rng), rng)[:12]:
            kinds += [a.kind for a in mon.observe(ev.CardDispensed(device="shuffler", ts=0.0,
                                                                   card=card)).alarms]
        up = mon.round_ended()
        kinds += [a.kind for a in up.alarms]
        deck = [r for r in up.records if r["record"] == "deck"][0]
        assert set(deck["sentinel"]["trend"]) == {"sorted", "suit_runs", "rank_runs", "blocks"}
        if AlarmKind.WEAK_SHUFFLING in kinds:
            break
    assert AlarmKind.WEAK_SHUFFLING in kinds
