"""Every irregularity article, through the real controller process and simulated devices.

For each game and dealing mode one controller runs against the simulator over pseudo-terminals;
a scripted croupier plays a round meeting one irregularity (a card out face up, a card on a box
without a bet, a jam, a door opened, a malfunction, the link lost, a die not flat or out of the
cup, a misdeal) and the journal must show the ruling with its article and the round ending as
the article says.
"""
import io
import random

import pytest

from controller.demo import Croupier
from controller.journal import Journal
from controller.rig import Rig

pytestmark = pytest.mark.hil

# (game, mode, box sensors) -> [(fault, irregularity, remedy, article, round outcome)]
CASES = {
    ("q-poker", "shoe", True): [
        (None, None, None, None, "settled"),
        ("player_face_up", "player_card_exposed", "continue", "89/2004 art. 11(2)", "settled"),
        ("croupier_face_up", "croupier_card_exposed", "round_void", "89/2004 art. 11(3)",
         "void"),
        ("unbet_box", "card_to_box_without_bet", "box_void", "89/2004 art. 11(4)", "void"),
        ("wrong_box", "wrong_order", "round_void", "89/2004 art. 11(1)", "void"),
        ("misdeal", "misdeal", "round_void", "89/2004 art. 11(1)", "void"),
        ("shoe_jam", "shoe_malfunction", "round_void", "89/2004 art. 11(5)", "void"),
    ],
    ("q-poker", "shuffler", False): [
        (None, None, None, None, "settled"),
        ("shuffler_jam", "shuffler_malfunction", "round_void", "89/2004 art. 11(5)", "void"),
        ("shuffler_malfunction", "shuffler_malfunction", "round_void", "89/2004 art. 11(5)",
         "void"),
        ("link_lost", "shuffler_malfunction", "round_void", "89/2004 art. 11(5)", "void"),
    ],
    ("fortune-3-card-poker", "shoe", False): [
        ("croupier_face_up", "croupier_card_exposed", "set_aside", "78/2008 art. 11(2)",
         "settled"),
        ("player_face_up", "player_card_exposed", "continue", "78/2008 art. 11(2)", "settled"),
        ("misdeal", "misdeal", "round_void", "78/2008 art. 11(1)", "void"),
        ("shoe_door_open", "shoe_malfunction", "round_void", "78/2008 art. 11(4)", "void"),
    ],
    ("fortune-3-card-poker", "shuffler", False): [
        ("shuffler_jam", "shuffler_malfunction", "round_void", "78/2008 art. 11(4)", "void"),
    ],
    ("texas-holdem", "shoe", False): [
        (None, None, None, None, "settled"),
        ("player_face_up", "player_card_exposed", "rectify", "11/2008 art. 9(1)", "settled"),
        ("misdeal", "misdeal", "round_void", "11/2008 art. 9(2)", "void"),
    ],
    ("texas-holdem", "shuffler", False): [
        ("shuffler_jam", "shuffler_malfunction", "round_void", "11/2008 art. 9(2)", "void"),
    ],
    ("super-pan-9", "shoe", False): [
        ("die_not_flat", "die_not_flat", "reshake", "261/96/M art. 2(4)", "settled"),
        ("croupier_face_up", "croupier_card_exposed", "continue", "261/96/M art. 4", "settled"),
        ("player_face_up", "player_card_exposed", "continue", "261/96/M art. 4", "settled"),
        ("shoe_jam", "shoe_malfunction", "round_void",
         "261/96/M interpretation P3 (machine_failure)", "void"),
    ],
    ("super-pan-9", "shuffler", False): [
        ("shuffler_jam", "shuffler_malfunction", "round_void",
         "261/96/M interpretation P3 (machine_failure)", "void"),
    ],
}


@pytest.mark.parametrize("key", list(CASES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_every_article_through_the_real_process(tmp_path, key):
    game, mode, sensors = key
    rig = Rig(tmp_path, game, mode, seed=21, box_sensors=sensors)
    try:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        rig.must("open_table", "supervisor")
        croupier = Croupier(rig, random.Random(4), io.StringIO())
        for n, (fault, irregularity, remedy, article, outcome) in enumerate(CASES[key], 1):
            with Journal.open(rig.journal_path, readonly=True) as j:
                seq = j.head()[0]
            croupier.play_round(n, fault)
            with Journal.open(rig.journal_path, readonly=True) as j:
                new = list(j.records(since=seq))
            closes = [r for r in new if r.kind == "round_close"]
            assert closes, f"{fault}: the round did not end"
            if outcome == "void" and remedy == "box_void":
                # 89/2004 art. 11(4): the unbet box is void and the round goes on (settled)
                assert closes[0].payload["outcome"] == "settled", fault
            else:
                assert closes[0].payload["outcome"] == outcome, fault
            decisions = [r for r in new if r.kind == "decision"]
            if irregularity is None:
                assert not decisions, [d.payload for d in decisions]
                continue
            match = [d for d in decisions if d.payload["irregularity"] == irregularity]
            assert match, f"{fault}: no {irregularity} ruling in {[d.payload for d in decisions]}"
            assert match[0].payload["remedy"] == remedy and match[0].article == article
            if outcome == "void" and remedy == "round_void":
                assert closes[0].article == article
        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
    finally:
        rig.stop()
