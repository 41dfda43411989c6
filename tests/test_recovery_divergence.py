"""A replay that does not give what was played is a defect recovery does not swallow.

Recovery rebuilds the round from its journaled inputs; each was accepted when played, or
refused (a ``refused`` record follows it). An input accepted then and refused on replay, or
refused then and accepted on replay, means the table rebuilt is not the table that played (a
configuration the journal does not record, another version of the controller): the recovery
journals an ``alarm`` naming the input and stops before it acts on anything. The tables here
differ only by their bet limit, and the journal is one written without the configuration's
record, as an earlier version wrote it.
"""
import asyncio
import json

import pytest

from controller.config import parse_text
from controller.errors import TablectlError
from controller.journal import Journal
from controller.rules import get_game
from controller.sdnotify import Notifier
from controller.service import EXIT_UNRECOVERABLE, Service
from controller.table import Table
from controller.table.runner import TableRunner

NO_MAX = {"versus_croupier": (1, 0), "pair_bonus": (1, 0)}
MAX_20 = {"versus_croupier": (1, 20), "pair_bonus": (1, 20)}


def runner_on(path, limits):
    journal = Journal.open(path, "T1")
    table = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, limits=limits)
    return TableRunner(table, journal), journal


def betting(runner):
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")


def tail(path, since):
    with Journal.open(path, readonly=True) as j:
        assert j.verify().ok
        return [(r.kind, r.payload) for r in j.records(since=since)]


def head(path):
    with Journal.open(path, readonly=True) as j:
        return j.head()[0]


def test_an_input_accepted_when_played_and_refused_on_replay_stops_the_recovery(tmp_path):
    path = tmp_path / "j.db"
    runner, journal = runner_on(path, NO_MAX)
    betting(runner)
    runner.command("place_bet", box=1, wager="versus_croupier", amount=50)
    runner.command("place_bet", box=3, wager="versus_croupier", amount=20)
    bet_seq = [r.seq for r in journal.records(kinds=["command"])][-2]
    journal.close()

    before = head(path)
    runner, journal = runner_on(path, MAX_20)
    with pytest.raises(TablectlError, match=r"(?s)record %d.*accepted when played.*refused"
                       % bet_seq) as err:
        runner.recover()
    journal.close()
    assert "configuration" in str(err.value)          # the way out is named
    # Only the alarm was written: no restart, no ruling, no recovery record.
    written = tail(path, before)
    assert [k for k, _ in written] == ["alarm"]
    alarm = written[0][1]
    assert alarm["kind"] == "replay_divergence" and alarm["input_seq"] == bet_seq
    assert (alarm["played"], alarm["replayed"]) == ("accepted", "refused")
    assert alarm["input"] == {"source": "command", "name": "place_bet"}


def test_an_input_refused_when_played_and_accepted_on_replay_stops_the_recovery(tmp_path):
    path = tmp_path / "j.db"
    runner, journal = runner_on(path, MAX_20)
    betting(runner)
    with pytest.raises(TablectlError, match="above the table limit"):
        runner.command("place_bet", box=1, wager="versus_croupier", amount=50)
    journal.close()

    before = head(path)
    runner, journal = runner_on(path, NO_MAX)
    with pytest.raises(TablectlError, match="refused when played"):
        runner.recover()
    journal.close()
    written = tail(path, before)
    assert [k for k, _ in written] == ["alarm"]
    assert (written[0][1]["played"], written[0][1]["replayed"]) == ("refused", "accepted")


def test_a_last_input_whose_decisions_the_crash_kept_from_the_journal_is_decided_now(tmp_path):
    """A journal of an earlier version wrote an input and its decisions in two commits: the
    last input, with nothing after it, was never ruled on in the journal; a refusal on replay
    is its decision, journaled then, not a divergence."""
    path = tmp_path / "j.db"
    runner, journal = runner_on(path, MAX_20)
    betting(runner)
    rid = str(runner.table.round.round_id)
    journal.append("command", {"source": "command", "name": "place_bet", "role": "dealer",
                               "args": {"box": 1, "wager": "versus_croupier", "amount": 50}},
                   rid, "dealer")
    journal.close()

    runner, journal = runner_on(path, MAX_20)
    runner.recover()
    refused = list(journal.records(kinds=["refused"]))
    assert len(refused) == 1 and "above the table limit" in refused[0].payload["error"]
    assert runner.table.round.bets == {}
    journal.close()


CONFIG = """
[table]
id = "T1"
game = "q-poker"
mode = "shoe"
boxes = 7
{limits}
[journal]
path = "{journal}"
"""


def test_the_daemon_stops_on_a_journal_it_cannot_replay_and_loses_nothing(tmp_path):
    """A journal written without the configuration's record (an earlier version) meets a
    lower limit: the daemon journals the alarm and stops with status 1, acting on nothing;
    with the configuration put back, it recovers the round with every bet."""
    path = tmp_path / "j.db"
    runner, journal = runner_on(path, NO_MAX)
    betting(runner)
    runner.command("place_bet", box=1, wager="versus_croupier", amount=50)
    journal.close()

    def daemon(limits):
        cfg = parse_text(CONFIG.format(limits=limits, journal=path))
        return Service(cfg, notifier=Notifier(None), open_panel=False)

    async def run(svc, then=None):
        task = asyncio.create_task(svc.run())
        if then is not None:
            while svc.runner is None or task.done():
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            then(svc)
            svc.stop()
        return await asyncio.wait_for(task, 30)

    lowered = daemon("[limits]\nmax = 20\n")
    assert asyncio.run(run(lowered)) == EXIT_UNRECOVERABLE
    assert "replay" in lowered.failed and "configuration" in lowered.failed
    with Journal.open(path, readonly=True) as j:
        assert j.verify().ok
        kinds = [r.kind for r in j.records()]
        stop = j.last(kind="service").payload
    assert "alarm" in kinds and "recovery" not in kinds and "restart" not in kinds
    assert stop["event"] == "stop" and "replay" in stop["failed"]

    seen = {}
    put_back = daemon("")
    assert asyncio.run(run(put_back, lambda svc: seen.update(
        bets=dict(svc.runner.table.round.bets)))) == 0
    assert list(seen["bets"].values()) == [50]


def with_an_edited_bet(path, edit):
    """A journal whose round in play holds a bet of 50, then its record's payload column
    rewritten by ``edit(payload)`` on the file, as a hand on it would: the bet's record."""
    import sqlite3
    runner, journal = runner_on(path, NO_MAX)
    betting(runner)
    runner.command("place_bet", box=1, wager="versus_croupier", amount=50)
    bet = [r for r in journal.records(kinds=["command"])][-1]
    journal.close()
    assert bet.payload["args"]["amount"] == 50
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE records SET payload = ? WHERE seq = ?",
                     (json.dumps(edit(bet.payload)), bet.seq))
    conn.close()
    return bet


def test_a_round_whose_journaled_inputs_were_edited_is_not_rebuilt_from_them(tmp_path):
    """The records the round in play is rebuilt from are checked against the hash chain
    first: a bet's record edited on the file (50 made 5000) is named, journaled as an alarm,
    and nothing is replayed or acted on, since the journal no longer says what was played."""
    path = tmp_path / "j.db"
    bet = with_an_edited_bet(path, lambda p: {**p, "args": {**p["args"], "amount": 5000}})

    runner, journal = runner_on(path, NO_MAX)
    with pytest.raises(TablectlError, match=r"(?s)record %d.*journal verify" % bet.seq) as err:
        runner.recover()
    journal.close()
    assert runner.table.round is None or not runner.table.round.bets, "nothing replayed"
    with Journal.open(path, readonly=True) as j:
        alarm = j.last(kind="alarm").payload
        kinds = [r.kind for r in j.records(since=bet.seq)]
    assert alarm["kind"] == "journal_damaged" and alarm["bad_seq"] == bet.seq
    assert "recovery" not in kinds and "restart" not in kinds
    assert "Nothing was acted on" in str(err.value)


def test_the_daemon_stops_on_a_round_whose_records_were_edited(tmp_path):
    """The service: status 65 (the unit does not restart it), the reason in ``failed``, the
    alarm in the journal and no device opened or input taken."""
    path = tmp_path / "j.db"
    bet = with_an_edited_bet(path, lambda p: {**p, "role": "supervisor"})

    svc = Service(parse_text(CONFIG.format(limits="", journal=path)), notifier=Notifier(None),
                  open_panel=False)
    assert asyncio.run(asyncio.wait_for(svc.run(), 30)) == EXIT_UNRECOVERABLE
    assert f"record {bet.seq}" in svc.failed and "does not verify" in svc.failed
    with Journal.open(path, readonly=True) as j:
        after = [r.kind for r in j.records(since=bet.seq)]
    assert "alarm" in after and "recovery" not in after and "restart" not in after
