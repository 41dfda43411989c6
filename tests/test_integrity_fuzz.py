"""Whatever the devices report, in whatever order, the monitor answers with alarms and
journal-ready records, never an exception (the table machine calls it on every event)."""
import json

from hypothesis import given, settings, strategies as st

from controller.integrity import IntegrityConfig, IntegrityMonitor
from controller.journal import canonical_json
from controller.rules.cards import Card
from drivers import events as ev

cards = st.one_of(st.none(), st.integers(0, 51).map(Card.from_code))
ids = st.one_of(st.none(), st.integers(0, 4))
dev = st.sampled_from(["shuffler", "shoe"])


def event():
    real = st.integers(0, 51).map(Card.from_code)
    return st.one_of(
        st.builds(lambda d, c, i: ev.CardDrawn(device=d, ts=0.0, card=c, deck_id=i), dev, cards, ids),
        st.builds(lambda d, c, i: ev.CardDispensed(device=d, ts=0.0, card=c, deck_id=i), dev, cards, ids),
        st.builds(lambda d, cs, i: ev.HandDispensed(device=d, ts=0.0, cards=tuple(cs),
                                                    deck_ids=tuple(i)),
                  dev, st.lists(cards, max_size=5), st.lists(ids, max_size=6)),
        st.builds(lambda cs, n, i, m, x, u: ev.DeckCheckResult(
            device="shuffler", ts=0.0, count=n, cards=None if cs is None else tuple(cs),
            deck_ids=tuple(i), missing=tuple(m), extra=tuple(x), duplicate=tuple(u)),
            st.one_of(st.none(), st.lists(real, max_size=60)), st.integers(0, 120),
            st.lists(st.integers(0, 4), max_size=60), st.lists(real, max_size=3),
            st.lists(real, max_size=3), st.lists(real, max_size=3)),
        st.builds(lambda n: ev.ShuffleDone(device="shuffler", ts=0.0, count=n), st.integers(0, 120)),
        st.just(ev.ShuffleStarted(device="shuffler", ts=0.0)),
        st.just(ev.Empty(device="shoe", ts=0.0)),
        st.just(ev.Misread(device="shoe", ts=0.0)),
        st.just(ev.CutCardReached(device="shoe", ts=0.0)),
        st.sampled_from(["new_deck", "round_ended", "returned"]),
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(event(), max_size=80), st.integers(1, 3), st.booleans(), st.booleans())
def test_any_event_sequence(events, decks, with_ids, per_round):
    mon = IntegrityMonitor(IntegrityConfig(decks=decks, memory=4,
                                           deck_ids=frozenset({1}) if with_ids else None,
                                           deck_per_round=per_round))
    for e in events:
        if e == "new_deck":
            up = mon.new_deck()
        elif e == "round_ended":
            up = mon.round_ended()
        elif e == "returned":
            up = mon.cards_returned([Card.from_code(3)])
        else:
            up = mon.observe(e)
        for rec in up.records:
            assert json.loads(canonical_json(rec)) == rec
        for alarm in up.alarms:
            assert alarm.message and alarm.public_message
            for c in alarm.cards:
                assert str(c) not in alarm.public_message.split()
