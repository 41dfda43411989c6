"""The sentinel's trend across decks comes back exactly after a restart.

The monitor restored from the journal's ``integrity`` records (``IntegrityMonitor.restore``)
must hold the Shiryaev-Roberts statistic of each test and the count of decks behind it as they
were, so that a shuffler weak every time raises ``weak_shuffling`` at the same deck, with the
same count of decks, whether or not the controller restarted on the way.
"""
import json
import random

from controller.integrity import AlarmKind, IntegrityMonitor
from controller.integrity.bench import riffle
from controller.integrity.sentinel import LOCAL_TESTS, STATISTIC
from controller.rules.cards import full_deck
from drivers import events as ev

DECK = full_deck()


def weak_decks(seed, n=60):
    """Decks from a shuffler that riffles a sorted deck three times: no single deck of 12
    cards gives it away, the trend does within a few dozen."""
    rng = random.Random(seed)
    return [riffle(riffle(riffle(DECK, rng), rng), rng)[:12] for _ in range(n)]


def play(monitor, decks):
    """Each deck dealt and its round ended (a fresh deck each round, as in Super Pan 9);
    the journal's records and the alarms raised, deck by deck."""
    records, alarms = [], []
    for deck in decks:
        for card in deck:
            up = monitor.observe(ev.CardDispensed(device="shuffler", ts=0.0, card=card))
            records += up.records
            alarms += up.alarms
        up = monitor.round_ended()
        records += up.records
        alarms += up.alarms
    return records, alarms


def journaled(records):
    """As the journal gives them back: through canonical JSON."""
    return json.loads(json.dumps(records, sort_keys=True, separators=(",", ":")))


def weak(alarms):
    return [(a.deck, a.observed, a.statistic) for a in alarms
            if a.kind is AlarmKind.WEAK_SHUFFLING]


def test_the_trend_and_its_decks_come_back_exactly_and_the_alarm_fires_at_the_same_deck():
    decks = weak_decks(21)
    alone = IntegrityMonitor(deck_per_round=True)
    _, alarms = play(alone, decks)
    raised = weak(alarms)
    assert raised, "the weak shuffler is caught without a restart"
    first_alarm = raised[0][0]

    for cut in (1, first_alarm // 2, first_alarm - 1):
        before = IntegrityMonitor(deck_per_round=True)
        records, _ = play(before, decks[:cut])
        again = IntegrityMonitor(deck_per_round=True)
        again.restore(journaled(records))
        assert again.sentinel.trend == before.sentinel.trend, cut
        assert again.sentinel.trend_decks == before.sentinel.trend_decks, cut
        _, later = play(again, decks[cut:])
        assert weak(later) == raised, cut


def test_the_count_of_decks_starts_again_after_a_trend_alarm_across_a_restart():
    decks = weak_decks(21)
    alone = IntegrityMonitor(deck_per_round=True)
    _, alarms = play(alone, decks)
    first_alarm = weak(alarms)[0][0]
    before = IntegrityMonitor(deck_per_round=True)
    records, _ = play(before, decks[:first_alarm + 2])
    assert min(before.sentinel.trend_decks.values()) <= 2     # one test started afresh
    again = IntegrityMonitor(deck_per_round=True)
    again.restore(journaled(records))
    assert again.sentinel.trend_decks == before.sentinel.trend_decks
    assert again.sentinel.trend == before.sentinel.trend


def test_a_journal_written_before_the_exact_trend_still_gives_the_count_of_decks():
    """Deck records of an earlier version hold the trend as log(1 + R) to four places and no
    count: the count is rebuilt from the decks that fed the trend since its last alarm, and
    the statistic is taken as the record gives it."""
    decks = weak_decks(21)
    alone = IntegrityMonitor(deck_per_round=True)
    _, alarms = play(alone, decks)
    first_alarm = weak(alarms)[0][0]
    before = IntegrityMonitor(deck_per_round=True)
    records, _ = play(before, decks[:first_alarm + 3])
    old = [{k: v for k, v in r.items() if k != "trend_state"} for r in journaled(records)]
    again = IntegrityMonitor(deck_per_round=True)
    again.restore(old)
    assert again.sentinel.trend_decks == before.sentinel.trend_decks
    assert set(again.sentinel.trend) == set(LOCAL_TESTS) == {
        t for t in STATISTIC if t in LOCAL_TESTS}
