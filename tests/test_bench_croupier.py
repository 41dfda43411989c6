"""The bench's croupier on a slow table: the daemon bench's dice play and the rig croupier
against the real daemon with simulated devices made slow (a shake, a card's frame take longer
than the croupier's first look), as on a Raspberry Pi or a loaded machine. The play must go
on: wait for what matters, never ask twice for what may still be on its way."""
import asyncio

from controller.bench import daemon as D
from controller.bench.live import LiveCroupier, LiveTable
from controller.bench.rigplay import RigCroupier
from controller.rig import Rig


class _AskingRig(Rig):
    """The real rig, keeping the name of every command the croupier sends the daemon."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.asked: list[str] = []

    def command(self, name, role="dealer", **args):
        self.asked.append(name)
        return super().command(name, role, **args)


def _shakes(rig) -> int:
    return rig.devices["dice"].runtime.model.shakes


def test_the_dice_play_goes_on_when_each_card_comes_late(tmp_path):
    # Each card's frame is held back 1.5 s on the link, as a slow machine's daemon takes
    # its time: a croupier that draws again when its look runs out deals a card too many.
    with Rig(tmp_path, "super-pan-9", "shoe", seed=5, speed=1000.0) as rig:
        D._start(rig)
        rig.devices["shoe"].inject("delay", seconds=1.5, count=1000)
        samples = D.play_dice(rig, 2, seed=4)
        assert len(samples) == 2
        # Both rounds were dealt and settled: none voided (a card too many, or a supervisor
        # taking a slow deal for a stuck one), no malfunction.
        assert [e["dest"] for e in rig.events if e.get("kind") == "state"
                and e.get("dest") in ("round_complete", "round_void", "malfunction")] \
            == ["round_complete"] * 2


def test_the_rig_croupier_shakes_once_when_the_agitator_is_slow(tmp_path):
    # At speed 2 the agitator's shake and settle take 2.5 s, longer than the croupier's
    # fixed looks at the shaking table.
    with _AskingRig(tmp_path, "super-pan-9", "shoe", seed=5, speed=2.0) as rig:
        D._start(rig)
        D._ready_for_bets(rig)
        croupier = RigCroupier(rig, seed=4)
        ends = [croupier.play_round() for _ in range(2)]
        assert ends == ["round_complete"] * 2 and croupier.stuck == []
        # One shake asked a round, never a second while the first was still shaking.
        assert rig.asked.count("shake") == 2 and _shakes(rig) == 2


def test_a_shake_refused_because_the_table_moved_on_is_read_and_played_out(tmp_path):
    # The table is already dealing when the bench asks for its shake, as a slow machine's
    # was: the refusal names the state; the round is played out and the next one measured.
    with _AskingRig(tmp_path, "super-pan-9", "shoe", seed=5, speed=1000.0) as rig:
        D._start(rig)
        D._ready_for_bets(rig)
        RigCroupier(rig, seed=3).place_bets()
        rig.must("shake")
        rig.wait_state("dealing")
        samples = D.play_dice(rig, 1, seed=4)
        assert len(samples) == 1
        assert [e["dest"] for e in rig.events if e.get("kind") == "state"
                and e.get("dest") in ("round_complete", "round_void", "malfunction")] \
            == ["round_complete"] * 2


class _AskingLive(LiveTable):
    """The real in-process table, keeping the name of every command the croupier gives."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.asked: list[str] = []

    async def command(self, name, role="dealer", **args):
        self.asked.append(name)
        return await super().command(name, role, **args)


def _live_rounds(tmp_path, speed: float, late_cards_s: float = 0.0):
    async def main():
        async with _AskingLive(tmp_path, "super-pan-9", "shoe", seed=5, speed=speed) as live:
            if late_cards_s:
                await live.act("shoe", "inject", "delay", seconds=late_cards_s, count=1000)
            croupier = LiveCroupier(live, seed=4)
            ends = [await croupier.play_round() for _ in range(2)]
            return ends, croupier.stuck, live.asked.count("shake")

    return asyncio.run(main())


def test_the_live_croupier_shakes_once_when_the_agitator_is_slow(tmp_path):
    ends, stuck, shakes = _live_rounds(tmp_path, speed=2.0)
    assert ends == ["round_complete"] * 2 and stuck == []
    assert shakes == 2                             # one a round, never a second


def test_the_live_croupier_deals_each_card_once_when_cards_come_late(tmp_path):
    # Each card's frame held back 1.5 s: no card drawn twice, no slow deal voided as stuck.
    ends, stuck, shakes = _live_rounds(tmp_path, speed=1000.0, late_cards_s=1.5)
    assert ends == ["round_complete"] * 2 and stuck == []
