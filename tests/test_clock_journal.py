"""A journal holding ``clock_step`` and ``clock_behind`` records is read as any other: it
verifies, the daemon's recovery replays the round they fall in, and ``journal export``,
``show``, ``rounds`` and ``integrity report`` take them, the readable ones saying what
happened to the clock. Written by the daemon in process, its journal's clock shifted by the
test (tests/test_clock_service.py)."""
import asyncio
import json

from controller.config import parse_text
from controller.journal import Journal

from test_clock_service import CONFIG, HOUR_NS, ShiftedClock, clock_records, started
from test_journal import tablectl


def test_a_journal_with_clock_records_verifies_replays_and_exports(tmp_path):
    path = tmp_path / "j.db"
    cfg = parse_text(CONFIG.format(journal=path))
    clock = ShiftedClock(2 * HOUR_NS)

    async def first():
        svc, task = await started(cfg, clock)
        for role, name, args in (("supervisor", "open_table", {}), ("dealer", "deck_ready", {}),
                                 ("dealer", "place_bet", {"box": 3, "wager": "versus_croupier",
                                                          "amount": 20})):
            assert (await svc.submit(name, role, args))["ok"], name
        clock.shift_ns += HOUR_NS                 # mid-round, bets on the layout
        assert (await svc.submit("place_bet", "dealer", {"box": 4, "wager": "versus_croupier",
                                                         "amount": 10}))["ok"]
        rid = svc.runner.table.round.round_id
        svc.stop()
        await task
        return rid

    async def second():
        # Restarted with the clock three hours back, the round still open: recovery replays
        # it over the clock records.
        svc, task = await started(cfg, ShiftedClock())
        view = svc.runner.table.public_view()
        svc.stop()
        await task
        return view

    rid = asyncio.run(first())
    view = asyncio.run(second())
    assert view["state"] == "bets_open"
    assert sorted((b["box"], b["amount"]) for b in view["round"]["bets"]) == [(3, 20), (4, 10)]
    with Journal.open(path, readonly=True) as j:
        # the step mid-round, and (same boot) the three hours back while the daemon was down
        step, stopped = clock_records(j)
        behind, = clock_records(j, "clock_behind")
        assert j.verify().ok
        recovery = [r.payload["report"] for r in j.records(kinds=["recovery"])]
    assert step.round_id == str(rid) and step.payload["step_ns"] == HOUR_NS
    # (two ShiftedClocks: their bases were read microseconds apart)
    assert stopped.payload["while_stopped"] and abs(stopped.payload["step_ns"] + 3 * HOUR_NS) \
        < 10**9
    assert behind.round_id is None and behind.payload["behind_ns"] > 2 * HOUR_NS
    assert recovery[-1]["state_now"] == "bets_open"

    args = ("--journal", str(path))
    assert tablectl("journal", "verify", *args).returncode == 0
    exported = tablectl("journal", "export", *args)
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [d["payload"] for d in lines if d["kind"] == "clock_step"] == [step.payload,
                                                                          stopped.payload]
    assert [d["payload"] for d in lines if d["kind"] == "clock_behind"] == [behind.payload]

    shown = tablectl("journal", "show", str(rid), *args)
    assert shown.returncode == 0, shown.stderr
    line = next(x for x in shown.stdout.splitlines() if "clock_step" in x)
    assert "wall clock stepped forward 3600.000 s" in line

    rounds = tablectl("journal", "rounds", *args)
    assert rounds.returncode == 0, rounds.stderr
    notes = [x for x in rounds.stdout.splitlines() if x.startswith("Clock:")]
    assert any(f"record {step.seq}" in x and f"round {rid}" in x
               and "stepped forward 3600.000 s" in x for x in notes), rounds.stdout
    assert any(f"record {behind.seq}" in x and "behind" in x for x in notes), rounds.stdout
    # the step across the stop says so: its wall times before it are of the last run
    assert any(f"record {stopped.seq}" in x and "stepped back" in x
               and "while the service was stopped" in x for x in notes), rounds.stdout
    assert not any(f"record {step.seq}" in x and "stopped" in x for x in notes), rounds.stdout

    report = tablectl("integrity", "report", *args)
    assert report.returncode == 0, report.stderr
