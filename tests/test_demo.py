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
