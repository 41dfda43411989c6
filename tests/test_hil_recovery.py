"""SIGKILL the real controller at random points over many rounds; it must recover every time.

A state-driven croupier plays Q Poker with the shoe, one action at a time, and the controller
process is killed after a random number of actions. After each restart the test checks that the
journal verifies, that every command the controller acknowledged is in the journal (nothing
lost), that no round is opened or closed twice (nothing duplicated), and that a round caught in
the deal was voided as 89/2004 art. 11(5) says.
"""
import random
import signal

import pytest

from controller.journal import Journal
from controller.rig import Rig

pytestmark = pytest.mark.hil


class StateCroupier:
    """One action per call, chosen from the table's current state."""

    def __init__(self, rig, rng):
        self.rig, self.rng = rig, rng
        self.acked = []            # every command the controller answered ok

    def cmd(self, name, role="dealer", **args):
        reply = self.rig.command(name, role, **args)
        if reply.get("ok"):
            self.acked.append((name, role, args))
        return reply

    def step(self):
        r, rng = self.rig, self.rng
        view = r.view()
        st = view["state"]
        if st == "out_of_service":
            self.cmd("open_table", "supervisor")
        elif st == "shuffling" and view["mode"] == "shoe":
            r.devices["shoe"].load_deck(fresh=True)
            self.cmd("deck_ready")
        elif st == "bets_open" and not view["round"]["bets"]:
            for b in rng.sample(range(1, 8), rng.randint(1, 2)):
                self.cmd("place_bet", box=b, wager="versus_croupier", amount=2 * rng.randint(1, 5))
        elif st == "shuffling":
            r.wait_state("bets_open", "malfunction", timeout=20)
        elif st == "bets_open" and view["mode"] == "shuffler":
            self.cmd("close_bets")
        elif st in ("bets_closed", "dealing") and view["mode"] == "shuffler":
            r.wait_state("player_decisions", "round_void", "malfunction", timeout=20)
        elif st in ("bets_open", "dealing"):
            mark = r.mark()
            r.devices["shoe"].draw()
            r.wait_event(lambda e: e["kind"] in ("card", "irregular_event", "ruling"),
                         since=mark, timeout=10)
        elif st == "player_decisions":
            decided = {d["box"] for d in view["round"]["decisions"]}
            for b in sorted({x["box"] for x in view["round"]["bets"]} - decided):
                self.cmd("decide", box=b, decision=rng.choice(["play", "fold"]))
                break
        elif st == "settlement":
            self.cmd("confirm_result")
        elif st in ("round_complete", "round_void"):
            if view["mode"] == "shoe":
                r.devices["shoe"].load_deck(fresh=True)
            self.cmd("next_round")
        elif st == "malfunction":
            self.cmd("clear_malfunction", "supervisor")
        return st


def check_journal(path, acked):
    with Journal.open(path, readonly=True) as j:
        assert j.verify().ok
        opens = [r.round_id for r in j.records(kinds=["round_open"])]
        closes = [r.round_id for r in j.records(kinds=["round_close"])]
        assert len(opens) == len(set(opens)), "a round opened twice"
        assert len(closes) == len(set(closes)), "a round closed twice"
        assert set(closes) <= set(opens)
        assert len(set(opens) - set(closes)) <= 1          # only the round in play is open
        journaled = [(r.payload["name"], r.payload["role"], r.payload["args"])
                     for r in j.records(kinds=["command"])]
        refused = {r.payload["input"]["name"] for r in j.records(kinds=["refused"])}
        it = iter(journaled)
        for a in acked:                                     # in order, none missing
            assert any(a == x for x in it), f"acknowledged command {a} not journaled"
        for rec in j.records(kinds=["recovery"]):
            report = rec.payload["report"]
            if report["state_at_crash"] == "dealing":
                assert report["void"]      # 89/2004 art. 11(5): a failure while dealing
        voids = [r for r in j.records(kinds=["round_close"]) if r.payload["outcome"] == "void"]
        return len(opens), len(voids), refused


def run(tmp_path, rounds, seed, mode="shoe"):
    rng = random.Random(seed)
    rig = Rig(tmp_path, "q-poker", mode, seed=seed)
    rig.start_devices()
    croupier = StateCroupier(rig, rng)
    kills = 0
    try:
        rig.start_controller()
        rig.wait_links()
        while True:
            with Journal.open(rig.journal_path, readonly=True) as j:
                done = sum(1 for _ in j.records(kinds=["round_close"]))
            if done >= rounds:
                break
            for _ in range(rng.randint(3, 25)):
                croupier.step()
            rig.kill(signal.SIGKILL)
            kills += 1
            check_journal(rig.journal_path, croupier.acked)
            rig.start_controller()
            rig.wait_links()
    finally:
        rig.stop()
    opened, voided, _ = check_journal(rig.journal_path, croupier.acked)
    return kills, opened, voided


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_sigkill_at_random_points_recovers_without_loss(tmp_path, mode):
    kills, opened, voided = run(tmp_path, rounds=6, seed=11, mode=mode)
    assert kills >= 2 and opened >= 6


@pytest.mark.long
@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_sigkill_soak_many_rounds(tmp_path, mode):
    kills, opened, voided = run(tmp_path, rounds=60, seed=12, mode=mode)
    assert kills >= 10 and voided >= 1
