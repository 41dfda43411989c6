"""Soak: the real daemon plays round after round with the simulator at high speed while faults
are injected at random (link noise, lost and duplicated frames, jams, unplugged devices, a
misread, a card out face up, a command the shuffler refuses), and the supervisor clears what
the table asks. The daemon's resident memory and open file descriptors must stay flat; the
journal must verify; the counts are reported (terminal and artifacts/soak.json). A few
hundred rounds by default, many thousands with --long."""
import json
import random
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from controller.bench.figures import open_fds, rss_mib
from controller.bench.rigplay import RigCroupier
from controller.journal import Journal
from controller.rig import Rig

pytestmark = pytest.mark.hil
ROOT = Path(__file__).resolve().parents[2]
# Faults armed to strike while cards are dealt (a trigger a few cards ahead).
DEALING_FAULTS = [("garbage", {}), ("corrupt_crc", {}), ("drop", {}), ("duplicate", {}),
                  ("delay", {"seconds": 0.1}), ("jam", {}), ("disconnect", {"duration_s": 0.3}),
                  ("misread", {}), ("malfunction", {})]
SHOE_ONLY = [("face_up", {})]
# The shuffler refuses the command after that card (a hand, a check, a shuffle) for a reason
# its own state would not give.
SHUFFLER_ONLY = [("refuse", {"code": "jammed"})]


def soak(tmp_path, game, mode, rounds, seed, fault_rate=0.2):
    rng = random.Random(seed)
    counts = Counter()
    samples = []
    with Rig(tmp_path, game, mode, seed=seed, speed=1000.0) as rig:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        rig.command("open_table", "supervisor")
        croupier = RigCroupier(rig, seed)
        dealer = rig.devices[mode]
        warm = max(10, rounds // 10)
        t0 = time.monotonic()
        for n in range(rounds):
            if rng.random() < fault_rate:
                pool = DEALING_FAULTS + (SHOE_ONLY if mode == "shoe" else SHUFFLER_ONLY)
                name, args = rng.choice(pool)
                if name in ("face_up", "misread") and mode == "shoe":
                    dealer.inject(name, **args)            # the next card drawn
                else:
                    # a few cards on from the device's own count (the cards of its deck
                    # checks count too, and a trigger already passed is refused)
                    dealer.inject(name, at_card=dealer.reached("at_card") + rng.randint(1, 5),
                                  **args)
                counts[f"fault:{name}"] += 1
            counts[croupier.play_round()] += 1
            if n == warm or n == rounds - 1:
                rig.events.clear()       # the test's own memory, not the daemon's
                samples.append((n, rss_mib(rig.proc.pid), open_fds(rig.proc.pid)))
        seconds = time.monotonic() - t0
        counts["stuck_rounds_voided_by_supervisor"] = len(croupier.stuck)
        assert rig.kill(signal.SIGTERM) == 0
        with Journal.open(rig.journal_path, readonly=True) as j:
            v = j.verify()
            assert v.ok, str(v)
            counts["records"] = v.records
            counts["rounds_journaled"] = len(j.rounds())
    (n0, rss0, fd0), (n1, rss1, fd1) = samples
    report = {"game": game, "mode": mode, "rounds": rounds, "seconds": round(seconds, 1),
              "rounds_per_s": round(rounds / seconds, 1), "counts": dict(counts),
              "rss_mib": [round(rss0, 1), round(rss1, 1)], "fds": [fd0, fd1],
              "sampled_after_rounds": [n0, n1]}
    print("\n" + json.dumps(report))
    art = ROOT / "artifacts"
    art.mkdir(exist_ok=True)
    with open(art / "soak.jsonl", "a") as f:
        f.write(json.dumps(report) + "\n")
    # Flat: the descriptors the same, memory within a few MiB after warm-up (Python's allocator
    # keeps some arenas; a leak per round would show as growth with the rounds played).
    assert fd1 <= fd0 + 2, report
    assert rss1 - rss0 < max(6.0, 0.10 * rss0), report
    assert counts["round_complete"] + counts["round_void"] == rounds
    return report


@pytest.mark.parametrize("game,mode", [("q-poker", "shoe"), ("super-pan-9", "shuffler")])
def test_soak_memory_and_descriptors_stay_flat(tmp_path, game, mode):
    soak(tmp_path, game, mode, rounds=60, seed=4)


@pytest.mark.long
@pytest.mark.parametrize("game", ["q-poker", "fortune-3-card-poker", "super-pan-9"])
@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_soak_thousands_of_rounds(tmp_path, game, mode):
    soak(tmp_path, game, mode, rounds=2000, seed=8)
