"""The daemon bench's split of a frame's latency at its input record's journal stamp: the
stamps are read from a journal the table's runner wrote, and each sample finds its own."""
import time
from collections import deque

import pytest

from controller.bench.rounds import make_table
from controller.bench.split import journal_stamps, split
from controller.errors import TablectlError
from controller.journal import Journal
from controller.table.runner import TableRunner
from drivers import events as ev


class _Clock:
    """The journal's clock, set by the test: each record's mono_ns is known."""

    def __init__(self) -> None:
        self.mono_ns = 0

    def time_ns(self) -> int:
        return time.time_ns()

    def monotonic_ns(self) -> int:
        return self.mono_ns


def _frame(runner: TableRunner, clock: _Clock, device: str, seq: int, at_s: float) -> None:
    clock.mono_ns = int(at_s * 1e9)
    event = ev.CardDrawn(device=device, ts=at_s, card=None)
    try:
        runner.device(event, link={"serial": "SN1", "session": "s1", "seq": seq})
    except TablectlError:
        pass        # refused by the table: journaled all the same, as the daemon does


def test_stamps_come_from_the_device_records_of_the_named_device(tmp_path):
    clock = _Clock()
    path = tmp_path / "j.db"
    with Journal.open(path, "t1", clock=clock) as journal:
        runner = TableRunner(make_table("q-poker"), journal)
        _frame(runner, clock, "shoe", 5, 1.0)
        _frame(runner, clock, "shuffler", 6, 2.0)       # another device: not the shoe's
        _frame(runner, clock, "shoe", 6, 3.0)
        _frame(runner, clock, "shoe", 5, 4.0)           # a new session numbers anew
        runner.command("open_table", "supervisor")      # a command has no link: left out
    stamps = journal_stamps(path, "shoe")
    assert {seq: list(v) for seq, v in stamps.items()} == {5: [1.0, 4.0], 6: [3.0]}
    assert list(journal_stamps(path, "shuffler")[6]) == [2.0]


def test_each_sample_is_split_at_its_own_stamp():
    stamps = {5: deque([1.0002, 4.0003]), 6: deque([2.0001])}
    # (written, seq, arrived): the second frame numbered 5 belongs to the later stamp
    out = split([(1.0, 5, 1.001), (2.0, 6, 2.0005), (4.0, 5, 4.0004)], stamps)
    assert out["samples"] == 3 and out["unmatched"] == 0
    assert out["to_journal_p50_s"] == pytest.approx(0.0002)
    assert out["from_journal_p50_s"] == pytest.approx(0.0004)
    assert out["to_journal_p99_s"] == pytest.approx(0.000298, rel=1e-3)
    assert out["from_journal_p99_s"] == pytest.approx(0.000792, rel=1e-3)


def test_a_stamp_outside_the_frames_time_is_not_taken():
    # seq 7 was journaled before this frame was written (an earlier frame of that number),
    # and seq 8 after its event arrived: neither can be this frame's record
    out = split([(2.0, 7, 2.001), (3.0, 8, 3.001), (5.0, 9, 5.001)],
                {7: deque([1.5]), 8: deque([3.5])})
    assert out["samples"] == 0 and out["unmatched"] == 3
