"""A round's records are found through the round marks' index (Journal._round_span): between
the round_open before the round's own and the one after it. Held against a walk over every
record, on journals the table machine wrote for every game, with a restart in the middle."""
import pytest

from controller.bench.rounds import ALL_GAMES, make_table, record_rounds
from controller.bench.throughput import feed
from controller.journal import Journal
from controller.table.runner import TableRunner


@pytest.mark.parametrize("game", ALL_GAMES)
def test_each_rounds_records_are_those_a_full_walk_finds(tmp_path, game):
    inputs = record_rounds(game, 8, seed=3)
    path = tmp_path / "journal.db"
    half = len(inputs) // 2 + 7             # a restart in the middle of some round
    with Journal.open(path, "rounds-1") as j:
        runner = TableRunner(make_table(game), j)
        for rec in inputs[:half]:
            feed(runner, rec)
    with Journal.open(path, "rounds-1") as j:
        runner = TableRunner(make_table(game), j)
        runner.recover()
        for rec in inputs[half:]:
            feed(runner, rec)
        everything = list(j.records())
        ids = sorted({r.round_id for r in everything if r.round_id is not None})
        assert len(ids) >= 4     # the restart voids a round; inputs after it may be refused
        for rid in ids:
            walked = [r.seq for r in everything if r.round_id == rid]
            assert [r.seq for r in j.records(round_id=rid)] == walked, rid
            state = j.round(rid)
            assert [r.seq for r in state.records] == walked
            assert state.closed == any(r.kind == "round_close" and r.round_id == rid
                                       for r in everything)
        assert j.last_round().round_id == max(
            (r for r in everything if r.kind == "round_open"), key=lambda r: r.seq).round_id
        # A round id no round_open carries is still found, by a walk over every record.
        j.append("note", {"n": 1}, "no-such-open", "test")
        assert [r.kind for r in j.records(round_id="no-such-open")] == ["note"]
