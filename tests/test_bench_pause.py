"""The pause benchmark's parts: its pauses are what they say, and it times exactly the inputs
it names, each under its turn's condition. No time is asserted as a speed."""
import resource
import time

import pytest

from controller.bench import pause as P
from controller.journal import Journal
from drivers import events as ev


def _during(condition: str) -> tuple[float, float, int]:
    """Wall time, this thread's CPU time and its voluntary context switches (the times it
    gave up the CPU to wait) over one pause: the switches say spun or slept whatever else
    the machine runs, which a share of CPU time cannot on a loaded machine."""
    wall, cpu = time.perf_counter(), time.thread_time()
    waits = resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw
    P.pause(condition, 0.02)
    return (time.perf_counter() - wall, time.thread_time() - cpu,
            resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw - waits)


def test_a_busy_pause_keeps_the_cpu_busy_and_a_sleep_does_not():
    wall, cpu, waits = _during("busy")
    assert wall >= 0.02 and waits == 0             # spun on the clock, never waited
    wall, cpu, waits = _during("sleep")
    assert wall >= 0.02 and waits >= 1             # gave up the CPU to sleep
    wall, cpu, waits = _during("back_to_back")
    assert cpu < 0.02 and waits == 0               # did nothing at all


def test_an_unknown_condition_is_named_with_the_choices():
    with pytest.raises(ValueError, match="'nap'.*back_to_back, busy, sleep"):
        P.pause("nap")


def test_turns_go_round_the_conditions():
    turns = P._Turns()
    for _ in range(7):
        turns.timed(lambda: None)
    assert {c: len(v) for c, v in turns.times.items()} == {"back_to_back": 3, "busy": 2,
                                                          "sleep": 2}
    assert turns.count() == 2


@pytest.mark.parametrize("game,event_type,kind", [("super-pan-9", ev.DiceResult, "dice_result"),
                                                  ("q-poker", ev.CardDrawn, "card_drawn")])
def test_only_the_named_inputs_are_timed(tmp_path, game, event_type, kind):
    turns = P._rounds(game, tmp_path, 3, event_type)
    timed = sum(len(v) for v in turns.times.values())
    with Journal.open(tmp_path / f"{game}.db", readonly=True) as j:
        journaled = sum(1 for r in j.records()
                        if r.kind == "device" and (r.payload.get("event") or {}).get("kind")
                        == kind)
    assert turns.count() >= 3
    assert timed == journaled      # every one of them, and nothing else


def test_every_jam_voids_its_round_and_is_timed(tmp_path):
    turns = P._jams(tmp_path, 2)
    with Journal.open(tmp_path / "jam.db", readonly=True) as j:
        voids = [r for r in j.records() if r.kind == "round_close"
                 and r.payload.get("outcome") == "void"]
        assert j.verify().ok
    assert sum(len(v) for v in turns.times.values()) == len(voids) >= 6
    assert {r.payload["article"] for r in voids} == {"89/2004 art. 11(5)"}
