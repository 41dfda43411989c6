"""The simulator's firmware models as pure state machines, driven by a virtual clock."""
from __future__ import annotations

import pytest

from controller.errors import TablectlError
from controller.rules.cards import Card, full_deck
from firmware_sim.faults import FaultSchedule, Trigger, make_fault
from firmware_sim.models import (BoxSensorsModel, DiceModel, Refused, ShoeModel, ShufflerModel,
                                 SimulatorError)
from firmware_sim.models.deck import DeckCard

LONG = 10_000.0     # far beyond any timer at the speeds used here


def by_code(cards):
    return sorted(cards, key=lambda c: c.code)


def kinds(emits):
    return [e.kind for e in emits]


def shuffled(seed=0, **kw):
    m = ShufflerModel(seed=seed, speed=1000, **kw)
    m.command("shuffle", 0)
    assert kinds(m.advance(LONG)) == ["shuffle_done"]
    return m


def dispense_all(m, t=LONG):
    cards = []
    while m.state == "ready":
        m.command("dispense_card", t)
        t += 1
        out = m.advance(t)
        cards += [e.fields["card"] for e in out if e.kind == "card_dispensed"]
    return cards


# --- shuffler -------------------------------------------------------------------------------

def test_shuffler_shuffles_then_dispenses_the_whole_deck_and_is_empty():
    m = ShufflerModel(seed=1, speed=1000)
    with pytest.raises(Refused) as exc:
        m.command("dispense_card", 0)
    assert exc.value.code == "not-ready"
    assert kinds(m.command("shuffle", 0)) == ["shuffle_started"]
    assert m.state == "shuffling"
    with pytest.raises(Refused) as exc:
        m.command("dispense_card", 0)
    assert exc.value.code == "busy"
    assert m.advance(0.001) == []               # 30 s / 1000 = 0.03 s: not yet
    done = m.advance(1)
    assert done[0].kind == "shuffle_done" and done[0].fields["count"] == 52
    cards = dispense_all(m, 2)
    assert by_code(d.card for d in cards) == full_deck()
    assert m.state == "empty"
    with pytest.raises(Refused) as exc:
        m.command("dispense_card", LONG * 2)
    assert exc.value.code == "empty"


def test_shuffler_hand_is_n_distinct_cards_and_bad_sizes_are_refused():
    m = shuffled(2)
    m.command("dispense_hand", LONG, n=5)
    out = m.advance(2 * LONG)
    assert kinds(out) == ["hand_dispensed"]
    hand = out[0].fields["cards"]
    assert len(hand) == 5 and len(set(hand)) == 5
    for bad in (0, 14, "3"):
        with pytest.raises(Refused) as exc:
            m.command("dispense_hand", LONG, n=bad)
        assert exc.value.code == "bad-argument"
    assert m.status()["cards"] == 47


def test_shuffler_jam_at_the_nth_card_refuses_until_cleared():
    sched = FaultSchedule()
    sched.add(Trigger("at_card", 3), make_fault("jam", "shuffler", where="exit"))
    m = ShufflerModel(seed=3, speed=1000, schedule=sched)
    m.command("shuffle", 0)
    m.advance(LONG)
    got = []
    for i in range(3):
        m.command("dispense_card", LONG + i)
        got += m.advance(LONG + i + 1)
    assert kinds(got) == ["card_dispensed", "card_dispensed", "jam"]
    assert got[-1].fields["where"] == "exit"
    with pytest.raises(Refused) as exc:
        m.command("shuffle", LONG + 5)
    assert exc.value.code == "jammed"
    assert m.status()["state"] == "jammed"          # status still answers
    out = m.clear_jam(LONG + 6)
    assert out[0].kind == "status" and out[0].fields["state"] == "idle"
    m.command("shuffle", LONG + 7)                   # works again


def test_shuffler_door_open_stops_a_shuffle_and_needs_a_new_one():
    m = ShufflerModel(seed=4, speed=1000)
    m.command("shuffle", 0)
    assert kinds(m.open_door(0.001)) == ["door_opened"]
    assert m.advance(LONG) == []                     # the shuffle never finishes
    with pytest.raises(Refused) as exc:
        m.command("dispense_card", LONG)
    assert exc.value.code == "door-open"
    assert kinds(m.close_door(LONG)) == ["door_closed"]
    assert m.state == "idle"
    with pytest.raises(Refused):
        m.command("dispense_card", LONG)


def test_malfunction_lasts_until_reboot():
    m = shuffled(5)
    out = m.inject(make_fault("malfunction", code=0x0003, text="elevator"), LONG)
    assert out[0].kind == "malfunction" and out[0].fields["code"] == 3
    with pytest.raises(Refused) as exc:
        m.command("dispense_card", LONG)
    assert exc.value.code == "fault"
    m.reboot(LONG)
    assert m.state == "idle"
    with pytest.raises(Refused) as exc:               # the order made before is lost
        m.command("dispense_card", LONG)
    assert exc.value.code == "not-ready"


def test_deck_check_of_a_sound_deck():
    m = ShufflerModel(seed=6, speed=1000)
    m.command("deck_check", 0)
    assert m.state == "checking"
    (res,) = m.advance(LONG)
    f = res.fields
    assert res.kind == "deck_check_result" and f["count"] == 52
    assert (f["missing"], f["extra"], f["duplicate"]) == ([], [], [])
    assert by_code(d.card for d in f["cards"]) == full_deck()


def test_deck_check_names_missing_foreign_and_duplicated_cards():
    m = ShufflerModel(seed=7, speed=1000)
    m.inject(make_fault("deck_missing", card="7h"), 0)
    m.command("shuffle", 0)
    m.advance(LONG)
    m.command("deck_check", LONG)
    f = m.advance(2 * LONG)[0].fields
    assert f["count"] == 51 and f["missing"] == [Card.parse("7h")]

    # A foreign card in place of one of ours: the count is right, the identity is not.
    m = ShufflerModel(seed=8, speed=1000)
    m.inject(make_fault("deck_extra", card="As", deck_id=9, replace=True), 0)
    m.command("shuffle", 0)
    m.advance(LONG)
    m.command("deck_check", LONG)
    f = m.advance(2 * LONG)[0].fields
    assert f["count"] == 52
    assert f["extra"] == [DeckCard(Card.parse("As"), 9)]
    assert len(f["missing"]) == 1 and 9 in f["deck_ids"]

    m = ShufflerModel(seed=9, speed=1000)
    m.inject(make_fault("deck_duplicate", card="Kd"), 0)
    m.command("shuffle", 0)
    m.advance(LONG)
    cards = dispense_all(m)
    assert len(cards) == 52
    assert [d.card for d in cards].count(Card.parse("Kd")) == 2


def test_sorted_cut_and_repeated_decks():
    m = shuffled(10)
    first = dispense_all(m)
    assert [d.card for d in first] != full_deck()
    m.inject(make_fault("deck_sorted"), 0)
    m.command("shuffle", 3 * LONG)
    m.advance(4 * LONG)
    assert [d.card for d in dispense_all(m, 4 * LONG)] == full_deck()

    m.inject(make_fault("deck_repeat", back=2), 0)    # two decks ago: the first one
    m.command("shuffle", 6 * LONG)
    m.advance(7 * LONG)
    assert dispense_all(m, 7 * LONG) == first

    m.inject(make_fault("deck_cut"), 0)
    m.command("shuffle", 9 * LONG)
    m.advance(10 * LONG)
    cut = dispense_all(m, 10 * LONG)
    k = cut.index(first[0])
    assert 0 < k and cut == first[-k:] + first[:-k]  # the previous order, rotated once


def test_explicit_deck_order():
    order = ["As", "Kd", "Qh#2", "2c"]
    m = ShufflerModel(seed=11, speed=1000, deck=order)
    m.command("shuffle", 0)
    assert m.advance(LONG)[0].fields["count"] == 4
    got = dispense_all(m)
    assert [str(d) for d in got] == order


def test_same_seed_same_decks_other_seed_other_decks():
    a, b, c = shuffled(42), shuffled(42), shuffled(43)
    da, db, dc = dispense_all(a), dispense_all(b), dispense_all(c)
    assert da == db and da != dc


def test_unrecognising_shuffler_reports_no_identities():
    m = shuffled(12, recognises_cards=False)
    m.command("dispense_card", LONG)
    (e,) = m.advance(2 * LONG)
    assert e.fields == {"card": None, "deck_id": None}


# --- shoe -----------------------------------------------------------------------------------

def draw_all(shoe):
    out = []
    while shoe.cards:
        out += shoe.draw(0)
    return out


def test_shoe_reads_every_card_reports_cut_card_and_empty():
    s = ShoeModel(seed=13, cut_at=40)
    out = draw_all(s)
    drawn = [e.fields["card"].card for e in out if e.kind == "card_drawn"]
    assert by_code(drawn) == full_deck()
    assert kinds(out).index("cut_card_reached") == 40     # right after the 40th card
    assert kinds(out)[-1] == "empty" and s.state == "empty"
    with pytest.raises(SimulatorError, match="load_deck"):
        s.draw(0)
    s.load_deck(0)
    assert s.state == "ready" and len(s.cards) == 52


def test_shoe_face_up_and_misread():
    s = ShoeModel(seed=14)
    (e,) = s.draw(0, face_up=True)
    assert e.kind == "card_drawn" and e.fields["face_up"] is True
    (e,) = s.draw(0)
    assert e.fields["face_up"] is False
    s.inject(make_fault("face_up"), 0)
    assert s.draw(0)[0].fields["face_up"] is True
    s.inject(make_fault("misread"), 0)
    assert kinds(s.draw(0)) == ["misread"]
    assert len(s.cards) == 48                 # the misread card left the shoe all the same


def test_shoe_jam_blocks_drawing_until_cleared():
    sched = FaultSchedule()
    sched.add(Trigger("at_card", 2), make_fault("jam"))
    s = ShoeModel(seed=15, schedule=sched)
    s.draw(0)
    assert kinds(s.draw(0)) == ["jam"]
    with pytest.raises(SimulatorError, match="clear_jam"):
        s.draw(0)
    s.clear_jam(0)
    assert s.draw(0)[0].kind == "card_drawn" and len(s.cards) == 50


def test_shoe_deck_faults_apply_at_the_next_load():
    s = ShoeModel(seed=16, deck=["As", "Ks"])
    assert [e.fields["card"].card for e in draw_all(s) if e.kind == "card_drawn"] == [
        Card.parse("As"), Card.parse("Ks")]
    s.inject(make_fault("deck_missing", card="Ah"), 0)
    s.load_deck(0)
    cards = [d.card for d in s.peek()]
    assert len(cards) == 51 and Card.parse("Ah") not in cards


# --- dice -----------------------------------------------------------------------------------

def test_dice_shake_gives_four_faces_and_same_seed_same_faces():
    def shake(seed):
        d = DiceModel(seed=seed, speed=1000)
        assert kinds(d.command("shake", 0)) == ["shake_started"]
        (e,) = d.advance(LONG)
        return e.fields["dice"]
    a = shake(17)
    assert len(a) == 4 and all(1 <= v <= 6 for v in a)
    assert [shake(17) for _ in range(3)] == [a] * 3
    assert any(shake(s) != a for s in range(18, 24))


def test_die_not_flat_and_out_of_cup():
    d = DiceModel(seed=18, speed=1000)
    d.inject(make_fault("die_not_flat", die=3), 0)
    d.command("shake", 0)
    assert [(e.kind, e.fields) for e in d.advance(LONG)] == [("die_not_flat", {"die": 3})]
    d.command("shake", LONG)                              # a reshake is allowed
    assert kinds(d.advance(2 * LONG)) == ["dice_result"]
    d.inject(make_fault("die_out_of_cup", die=1), 0)
    d.command("shake", 2 * LONG)
    assert kinds(d.advance(3 * LONG)) == ["die_out_of_cup"]
    with pytest.raises(Refused) as exc:
        d.command("shake", 3 * LONG)
    assert exc.value.code == "not-ready"
    d.return_die(3 * LONG)
    d.command("shake", 3 * LONG)
    with pytest.raises(SimulatorError):
        d.inject(make_fault("die_not_flat", die=4), 0)   # four dice: 0-3


def test_dice_lid_and_given_faces():
    d = DiceModel(seed=19, speed=1000)
    assert kinds(d.open_lid(0)) == ["door_opened"]
    with pytest.raises(Refused) as exc:
        d.command("shake", 0)
    assert exc.value.code == "door-open"
    d.close_lid(0)
    d.set_next_dice([6, 6, 1, 2])
    d.command("shake", 0)
    assert d.advance(LONG)[0].fields["dice"] == [6, 6, 1, 2]
    with pytest.raises(SimulatorError, match="4 faces"):
        d.set_next_dice([7, 1, 1, 1])


# --- box sensors ----------------------------------------------------------------------------

def test_box_sensors_report_placed_and_removed_cards():
    b = BoxSensorsModel(boxes=5)
    assert [(e.kind, e.fields["box"]) for e in b.place_card(0, 2)] == [("card_placed", 2)]
    b.place_card(0, 2)
    assert b.status()["cards_on_box"] == [0, 2, 0, 0, 0]
    assert len(b.clear_boxes(0)) == 2
    for bad in (0, 6):
        with pytest.raises(SimulatorError, match="boxes 1 to 5"):
            b.place_card(0, bad)
    with pytest.raises(SimulatorError, match="no card"):
        b.remove_card(0, 1)
    with pytest.raises(SimulatorError):
        b.open_door(0)


# --- fault validation -----------------------------------------------------------------------

@pytest.mark.parametrize("name, cls, args, words", [
    ("jamm", None, {}, ["unknown fault 'jamm'", "jam"]),
    ("face_up", "shuffler", {}, ["does not apply to a shuffler", "shoe"]),
    ("drop", None, {"cont": 2}, ["no argument 'cont'", "count"]),
    ("drop", None, {"count": "2"}, ["count", "whole number"]),
    ("drop", None, {"count": 0}, ["count must be 1 or more"]),
    ("deck_order", "shoe", {}, ["needs cards"]),
])
def test_bad_faults_are_named(name, cls, args, words):
    with pytest.raises(TablectlError) as exc:
        make_fault(name, cls, **args)
    for w in words:
        assert w in str(exc.value)


def test_shuffler_load_deck_fresh_or_given_cards():
    m = ShufflerModel(seed=20, speed=1000)
    m.inject(make_fault("deck_missing", card="2c"), 0)
    m.load_deck(0)                                   # gathered again: the 2c is lost
    assert m.status()["cards"] == 51 and m.state == "idle"
    m.load_deck(0, fresh=True)
    assert m.status()["cards"] == 52
    m.load_deck(0, ["As", "Ad"])
    m.command("shuffle", 0)
    assert m.advance(LONG)[0].fields["count"] == 2
    m.command("dispense_card", LONG)
    with pytest.raises(SimulatorError, match="idle"):
        m.load_deck(LONG)


def test_a_device_in_fault_reports_nothing_of_what_still_happens():
    b = BoxSensorsModel(boxes=3)
    b.inject(make_fault("malfunction", code=2), 0)
    assert b.place_card(0, 1) == [] and b.status()["cards_on_box"] == [1, 0, 0]
    s = ShoeModel(seed=22)
    s.inject(make_fault("malfunction"), 0)
    assert s.draw(0) == [] and len(s.cards) == 51
    s.reboot(0)
    assert s.state == "ready" and s.draw(0)[0].kind == "card_drawn"
