"""The benchmark reports cards to detection for every bad deck (counts, never times)."""
import subprocess
import sys
from pathlib import Path

from controller.integrity.bench import BAD_DECKS, detection, format_report, riffle, run

ROOT = Path(__file__).resolve().parents[1]


def test_every_bad_deck_is_measured_and_the_blatant_ones_are_caught():
    res = detection(trials=12, seed=3)
    assert set(res) == set(BAD_DECKS)
    for name in ("sorted", "new_deck_order", "suit_sorted", "rank_sorted", "cut_of_previous",
                 "repeat_of_previous", "repeat_20_ago", "repeat_100_ago",
                 "near_sorted_4_swaps", "shuffler_repeat_12"):
        d = res[name]
        assert d["caught"] == d["decks"], name
        assert 2 <= d["median"] <= d["p90"] <= d["max"] <= d["cards_shown"], name
    assert set(res["cut_of_previous"]["alarm"]) == {"cut_deck"}
    assert set(res["repeat_100_ago"]["alarm"]) == {"repeated_deck"}


def test_riffle_keeps_the_cards():
    import random
    from controller.rules.cards import full_deck
    d = riffle(full_deck(), random.Random(1))
    assert sorted(d) == sorted(full_deck()) and d != full_deck()


def test_report_and_script_run():
    text = format_report(run(decks=300, trials=3, seed=5))
    assert "False alarms" in text and "cut_of_previous" in text
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks/integrity_bench.py"),
                          "--decks", "200", "--trials", "2", "--json"],
                         capture_output=True, text=True, check=True)
    assert '"false_alarms"' in out.stdout


def test_weak_shufflers_are_measured_in_decks():
    from controller.integrity.bench import WEAK_SHUFFLERS, trend_detection
    res = trend_detection(trials=3, seed=4, limit=60)
    assert set(res) == set(WEAK_SHUFFLERS)
    for name in ("riffled_twice_12", "riffled_thrice"):
        assert res[name]["caught"] == 3 and res[name]["max"] <= 20, name
