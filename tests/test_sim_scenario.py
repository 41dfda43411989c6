"""Scenario files: parsing with clear errors, and every bundled scenario doing what it says."""
from __future__ import annotations

import pytest

from controller.errors import TablectlError
from controller.rules.cards import full_deck
from firmware_sim import ScenarioError, SimulatedTable, parse_scenario, start_device
from firmware_sim.scenario import bundled, load_scenario

GOOD = """
description = "a test"
seed = 3
speed = 40.5

[devices.shoe]
cut_at = 2
deck = ["As", "Kd", "Qh#2"]

[devices.left]
class = "dice"
dice = 4

[[faults]]
device = "shoe"
fault = "face_up"
at_card = 2

[[faults]]
device = "left"
fault = "malfunction"
code = 7
after_s = 1.5

[[faults]]
fault = "corrupt_crc"
"""


def test_a_good_scenario():
    sc = parse_scenario(GOOD, "good.toml")
    assert (sc.seed, sc.speed, sc.description) == (3, 40.5, "a test")
    assert sc.device_class("left") == "dice" and sc.device_class("shoe") == "shoe"
    f1, f2, f3 = sc.faults
    assert (f1.devices, f1.fault.name, str(f1.trigger)) == (("shoe",), "face_up", "at_card=2")
    assert f2.fault.args == {"code": 7, "text": ""} and f2.trigger.value == 1.5
    assert f3.devices is None and f3.trigger is None and f3.fault.args["count"] == 1
    # No device named: it reaches every device it applies to.
    assert [sf.fault.name for sf in sc.faults_for("shoe", "shoe")] == ["face_up", "corrupt_crc"]
    assert [sf.fault.name for sf in sc.faults_for("left", "dice")] == ["malfunction",
                                                                       "corrupt_crc"]


@pytest.mark.parametrize("text, words", [
    ("seed = 3\nspeed = = 2", ["bad.toml is not valid TOML", "line 2", "fix that line"]),
    ("sed = 3", ["unknown key 'sed' at the top", "seed"]),
    ("speed = 0", ["speed = 0 must be a finite number above 0"]),
    ("speed = inf", ["speed = inf must be a finite number above 0"]),
    ("seed = 1.5", ["seed = 1.5 must be a whole number"]),
    ("[devices.shoe]\ncutat = 3", ["[devices.shoe]: unknown key 'cutat'", "cut_at"]),
    ("[devices.table]\nseed = 1", ["[devices.table]: class 'table' is unknown", "set class ="]),
    ("[devices.shoe]\ndeck = ['As', 'Zz']", ["[devices.shoe]: deck", "'Zz'", "rank then suit"]),
    ("[devices.shoe]\ntransport = 'bluetooth'", ["transport 'bluetooth' is unknown", "pty"]),
    ("[[faults]]\nat_card = 3", ["[[faults]] #1: no fault key", "fault = \"NAME\""]),
    ("[[faults]]\nfault = 'jamm'", ["[[faults]] #1", "unknown fault 'jamm'", "jam"]),
    ("[[faults]]\nfault = 'jam'\nat_cards = 3", ["#1: unknown key 'at_cards'", "takes where",
                                                "a trigger is one of after_s, at_card"]),
    ("[[faults]]\nfault = 'jam'\nat_card = 3\nafter_s = 1",
     ["after_s and at_card both given", "keep one"]),
    ("[[faults]]\nfault = 'jam'\nat_card = 0", ["at_card = 0 must be a count from 1"]),
    ("[[faults]]\nfault = 'drop'\ncount = 'two'", ["count = 'two' has the wrong type",
                                                   "whole number"]),
    ("[[faults]]\ndevice = 'shoe'\nfault = 'die_not_flat'", ["(device 'shoe')",
                                                             "does not apply to a shoe"]),
    ("[[faults]]\ndevice = 3\nfault = 'jam'", ["device must be a device name in quotes"]),
    ("faults = 3", ["faults must be [[faults]] entries"]),
])
def test_bad_scenarios_name_the_key_and_the_fix(text, words):
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(text, "bad.toml")
    for w in words:
        assert w in str(exc.value), str(exc.value)


def test_missing_file_lists_the_bundled_scenarios(tmp_path):
    with pytest.raises(ScenarioError, match="deck-sorted"):
        load_scenario(tmp_path / "nope.toml")


def test_a_fault_for_a_device_that_is_not_started(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text("[[faults]]\ndevice = 'shooe'\nfault = 'face_up'\n")
    with pytest.raises(ScenarioError, match="device shooe is not started.*started: shoe"):
        start_device("shoe", scenario=str(p))
    p.write_text("[[faults]]\nfault = 'face_up'\n")
    with pytest.raises(ScenarioError, match="applies to shoe and none is started"):
        start_device("dice", scenario=str(p))


def test_scenario_faults_fire_at_their_card(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(GOOD)
    with SimulatedTable(scenario=str(p)) as table:
        assert table.speed == 40.5
        shoe = table.add("shoe")
        got = [shoe.draw()[0] for _ in range(3)]
        assert [g["card"] for g in got] == ["As", "Kd", "Qh#2"]
        assert [g["face_up"] for g in got] == [False, True, False]
        assert shoe.status()["stats"]["faults"] >= 1    # the corrupt_crc armed at start


# --- every bundled scenario does what it says ---------------------------------------------

def draw_deck(shoe):
    cards = []
    while True:
        out = shoe.draw()
        cards += [e["card"] for e in out if e["kind"] == "card_drawn"]
        if any(e["kind"] == "empty" for e in out):
            return cards


def decks(name, n):
    """The first ``n`` decks a shoe holds under bundled scenario ``name``."""
    shoe = start_device("shoe", scenario=name, seed=21)
    try:
        out = [draw_deck(shoe)]
        for _ in range(n - 1):
            shoe.load_deck()
            out.append(draw_deck(shoe))
        return out
    finally:
        shoe.stop()


CODE_ORDER = [str(c) for c in full_deck()]


def test_bundled_scenarios_all_load():
    names = bundled()
    assert {"deck-missing-card", "deck-foreign-card", "deck-duplicate-card", "deck-sorted",
            "deck-cut", "deck-repeat", "shoe-faults", "shuffler-faults", "dice-faults",
            "link-faults"} <= set(names)
    for n in names:
        assert load_scenario(n).faults


def test_deck_scenarios():
    first, second = decks("deck-missing-card", 2)
    assert sorted(first) == sorted(CODE_ORDER)
    assert len(second) == 51 and "Qs" not in second

    _, second = decks("deck-foreign-card", 2)
    assert len(second) == 52 and "7d#2" in second and sum("#" in c for c in second) == 1

    _, second = decks("deck-duplicate-card", 2)
    assert len(second) == 52 and second.count("Ah") == 2 and len(set(second)) == 51

    one, two, three = decks("deck-sorted", 3)
    assert one != CODE_ORDER and two == CODE_ORDER and three == CODE_ORDER

    first, second = decks("deck-cut", 2)
    k = second.index(first[0])
    assert first != second and second == first[-k:] + first[:-k]

    first, second, third = decks("deck-repeat", 3)
    assert third == first and second != first


def test_shoe_faults_scenario():
    shoe = start_device("shoe", scenario="shoe-faults", seed=2)
    try:
        kinds = []
        for _ in range(11):
            kinds += [(e["kind"], e.get("face_up")) for e in shoe.draw()]
        assert kinds[2] == ("card_drawn", True)
        assert kinds[6] == ("misread", None)
        assert [e["kind"] for e in shoe.draw()] == ["jam"]
    finally:
        shoe.stop()


def test_a_scenario_fault_for_a_die_the_agitator_does_not_hold_is_refused_at_start(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text("[devices.dice]\ndice = 2\n\n[[faults]]\ndevice = 'dice'\n"
                 "fault = 'die_not_flat'\ndie = 3\nat_shake = 1\n")
    with SimulatedTable(scenario=str(p)) as table:
        with pytest.raises(TablectlError, match="die 3 does not exist.*dice 0 to 1"):
            table.add("dice")
        assert "dice" not in table.devices


def test_a_device_whose_scenario_fault_cannot_apply_is_not_left_half_started(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text("[[faults]]\ndevice = 'shoe'\nfault = 'deck_missing'\ncard = 'Zz'\n")
    with SimulatedTable(scenario=str(p), link_dir=str(tmp_path)) as table:
        with pytest.raises(TablectlError, match="shoe: the scenario's fault 'deck_missing'.*'Zz'"):
            table.add("shoe")
        assert "shoe" not in table.devices
        assert not (tmp_path / "shoe").exists()        # no stable name left to a dead port

def test_a_scenario_path_that_is_a_directory_is_named_plainly(tmp_path):
    with pytest.raises(ScenarioError) as info:
        load_scenario(tmp_path)
    msg = str(info.value)
    assert "is a directory" in msg and "Errno" not in msg and ".toml" in msg
