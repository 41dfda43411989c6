"""`tablectl demo`: the real controller process on simulated devices, shown on the terminal."""
import re
import subprocess
import sys

import pytest

from controller.journal import Journal

pytestmark = pytest.mark.hil


def demo(tmp_path, *args):
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "demo", "--dir",
                           str(tmp_path), *args], capture_output=True, text=True, timeout=120)
    return proc


def test_demo_plays_rounds_with_faults_and_verifies_journals(tmp_path):
    proc = demo(tmp_path, "--game", "q-poker", "--rounds", "2", "--faults", "--seed", "5")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Q Poker (89/2004) — shoe" in out and "Q Poker (89/2004) — shuffler" in out
    assert re.search(r"ROUND VOID \[89/2004 art\. 11\(\d\)\]", out)
    assert "house" in out and "every hash chain verifies" in out
    for mode in ("shoe", "shuffler"):
        with Journal.open(tmp_path / f"q-poker-{mode}" / "journal.db", readonly=True) as j:
            assert j.verify().ok
            closes = list(j.records(kinds=["round_close"]))
            assert len(closes) == 2
            assert any(c.payload["outcome"] == "void" for c in closes)


def test_demo_screen_never_shows_a_croupier_card_before_its_reveal(tmp_path):
    proc = demo(tmp_path, "--game", "fortune-3-card-poker", "--mode", "shoe", "--rounds", "3",
                "--seed", "9")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s+croupier\s+(.*)$", line)
        if not m:
            continue
        start = max(j for j in range(i) if re.match(r"\s+round \d", lines[j]))
        for card in m.group(1).split():
            earlier = "\n".join(lines[start:i])
            assert not re.search(rf"(?<!\w){re.escape(card)}(?!\w)", earlier), card


def test_demo_refuses_a_bad_option_with_a_clear_error(tmp_path):
    proc = demo(tmp_path, "--game", "baccarat")
    assert proc.returncode == 2 and "unknown game 'baccarat'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_super_pan_9_banker_seat_is_labelled_and_its_bank_balances(tmp_path):
    proc = demo(tmp_path, "--game", "super-pan-9", "--mode", "shoe", "--rounds", "1",
                "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    banker = int(next(re.match(r"\s+banker at box (\d+)", s).group(1) for s in lines
                      if re.match(r"\s+banker at box", s)))
    bets = next(s for s in lines if "bets closed" in s)
    # 261/96/M art. 5: the banker's seat takes no bet; its hand is the one labelled banker
    assert f"box {banker} " not in bets.split(":", 1)[1] + " "
    hands = [s for s in lines if re.match(r"\s+box \d+( \(banker\))?\s+(\w\w )\w\w$", s)]
    assert len(hands) >= 2
    for s in hands:
        labelled = "(banker)" in s
        assert labelled == (re.match(r"\s+box (\d+)", s).group(1) == str(banker)), s
    assert sum("(banker)" in s for s in hands) == 1
    # chips are conserved: the seats' nets, the banker's and the house's sum to nothing
    nets = [int(re.search(r"([+-]\d+)$", s).group(1)) for s in lines
            if re.match(r"\s+box \d+\s+seat\s+stake", s)]
    bank = next(s for s in lines if re.match(rf"\s+box {banker} \(banker\)\s+capital", s))
    # art. 5(5): seed 3's first round has a banker of small capital joined by a player and
    # the house; the co-banking players' shares count (the house's is in the house's net)
    assert re.search(r"co-bank: c\d at box \d, capital \d+", proc.stdout)
    assert "co-bank: the house, capital 200" in proc.stdout
    co = [int(re.search(r"([+-]\d+)$", s).group(1)) for s in lines
          if re.match(r"\s+\S+ \(co-banker\)\s+capital", s)]
    house = int(re.search(r"house ([+-]\d+)", proc.stdout).group(1))
    assert nets and co and sum(nets) + int(re.search(r"([+-]\d+)$", bank).group(1)) \
        + sum(co) + house == 0


def test_screen_labels_whose_hand_it_is():
    import io
    from controller.demo import Screen
    screen = Screen(io.StringIO())
    assert screen.format({"kind": "banker", "seat": 7, "capital": 500}) == \
        "    banker at box 7, capital 500"
    shown = {r: screen.format({"kind": "hand_revealed", "recipient": r, "hand": ["Qd", "7h"]})
             for r in ("box 7", "box 2", "croupier")}
    assert shown["box 7"].split() == ["box", "7", "(banker)", "Qd", "7h"]
    assert shown["box 2"].split() == ["box", "2", "Qd", "7h"]
    assert shown["croupier"].split() == ["croupier", "Qd", "7h"]
    assert "box 7 (banker) 9s" in screen.format({"kind": "card_exposed", "recipient": "box 7",
                                                 "card": "9s"})
    # the next round's banker moves the label
    screen.format({"kind": "banker", "seat": 2, "capital": 500})
    again = screen.format({"kind": "hand_opened", "recipient": "box 7", "hand": ["As", "2c"]})
    assert "(banker)" not in again
    # co-banks (261/96/M art. 5(5)): placed, and withdrawn (capital 0)
    assert screen.format({"kind": "co_banker", "player": "c5", "seat": 5, "house": False,
                          "capital": 30}) == "    co-bank: c5 at box 5, capital 30"
    assert screen.format({"kind": "co_banker", "player": None, "seat": None, "house": True,
                          "capital": 0}) == "    co-bank withdrawn: the house"
