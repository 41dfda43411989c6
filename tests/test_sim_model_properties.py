"""Properties of the firmware models under arbitrary sequences of commands, actions and faults:
they never fail in an unexpected way, a refused command changes nothing, and no card is made
or lost by the firmware itself."""
from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_sim.faults import make_fault
from firmware_sim.models import DiceModel, Refused, ShoeModel, ShufflerModel, SimulatorError

SHUFFLER_STATES = {"idle", "shuffling", "ready", "dispensing", "checking", "empty", "jammed",
                   "door-open", "fault"}

shuffler_steps = st.lists(st.one_of(
    st.tuples(st.just("cmd"), st.sampled_from(["shuffle", "dispense_card", "deck_check",
                                               "status"])),
    st.tuples(st.just("hand"), st.integers(-1, 15)),
    st.tuples(st.just("advance"), st.floats(0, 0.2)),
    st.tuples(st.just("fault"), st.sampled_from(["jam", "malfunction", "door_open",
                                                 "door_close", "misread", "deck_missing",
                                                 "deck_extra", "deck_duplicate", "deck_sorted",
                                                 "deck_cut", "deck_repeat"])),
    st.tuples(st.just("act"), st.sampled_from(["clear_jam", "reboot", "open_door",
                                               "close_door", "load_deck"])),
), max_size=60)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**16), steps=shuffler_steps)
def test_shuffler_never_loses_a_card_and_refusals_change_nothing(seed, steps):
    m = ShufflerModel(seed=seed, speed=1000)
    now = 0.0
    out_since_shuffle: Counter = Counter()
    deck_at_shuffle: Counter | None = None
    for step in steps:
        kind, arg = step
        try:
            if kind == "cmd" or kind == "hand":
                before = m.status()
                try:
                    if kind == "hand":
                        emits = m.command("dispense_hand", now, n=arg)
                    else:
                        emits = m.command(arg, now)
                except Refused as r:
                    assert r.code in ("unknown-command", "bad-argument", "busy", "not-ready",
                                      "empty", "door-open", "jammed", "fault")
                    assert m.status() == before
                    continue
                if kind == "cmd" and arg == "shuffle":
                    deck_at_shuffle = Counter(m.held)
                    out_since_shuffle = Counter()
                elif kind == "cmd" and arg == "deck_check":
                    deck_at_shuffle = None
            elif kind == "advance":
                now += arg
                emits = m.advance(now)
            elif kind == "fault":
                emits = m.inject(make_fault(arg), now)
            else:
                if arg == "reboot":
                    m.reboot(now)
                    deck_at_shuffle = None
                    emits = []
                elif arg == "load_deck":
                    m.load_deck(now)
                    deck_at_shuffle = None
                    emits = []
                else:
                    emits = getattr(m, arg)(now)
        except SimulatorError:
            continue
        for e in emits:
            if e.kind == "card_dispensed" and e.fields["card"] is not None:
                out_since_shuffle[e.fields["card"]] += 1
            if e.kind == "hand_dispensed":
                out_since_shuffle.update(c for c in e.fields["cards"] if c is not None)
        assert m.state in SHUFFLER_STATES
        if deck_at_shuffle is not None:
            # What came out plus what is inside is at most what the shuffle made (a misread
            # card left unnamed, so equality does not hold then).
            assert out_since_shuffle + Counter(m.held) <= deck_at_shuffle


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**16), draws=st.integers(0, 60),
       faults=st.lists(st.sampled_from(["face_up", "misread", "jam"]), max_size=5))
def test_shoe_deals_each_card_of_its_deck_once(seed, draws, faults):
    s = ShoeModel(seed=seed)
    deck = Counter(s.peek())
    seen: Counter = Counter()
    gone = 0
    for i in range(draws):
        if faults and i % 7 == 3:
            s.inject(make_fault(faults.pop()), 0)
        try:
            out = s.draw(0)
        except SimulatorError:
            if s.state == "jammed":
                s.clear_jam(0)
            continue
        for e in out:
            if e.kind == "card_drawn":
                seen[e.fields["card"]] += 1
            elif e.kind == "misread":
                gone += 1
    assert seen + Counter(s.peek()) <= deck
    assert sum(seen.values()) + gone + len(s.peek()) == 52


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**16), shakes=st.integers(1, 8))
def test_dice_faces_are_between_one_and_six_and_repeat_with_the_seed(seed, shakes):
    def run():
        d = DiceModel(seed=seed, speed=1000)
        out = []
        for i in range(shakes):
            d.command("shake", i)
            out += [e.fields["dice"] for e in d.advance(i + 0.5) if e.kind == "dice_result"]
        return out
    a = run()
    assert len(a) == shakes and all(len(x) == 4 and all(1 <= v <= 6 for v in x) for x in a)
    assert run() == a
