"""One transaction per input with its decisions, group commit of a burst, and a failed commit
that acts on nothing.

The COMMITs are counted on the journal's own SQLite connection (its trace callback), not on a
counter of the runner's.
"""
import sqlite3

import pytest

from controller.errors import TablectlError
from controller.journal import Journal, JournalError
from controller.rules import get_game
from controller.rules.cards import Card
from controller.table import Table
from controller.table.runner import INPUT_KINDS, TableRunner
from drivers import events as ev

from table_helpers import DEVICES

CARDS = ("As", "Kd", "Ah", "Kc", "Ad", "Ks")      # box 1 three aces, croupier three kings


def runner_on(path, **kw):
    journal = Journal.open(path, "T1")
    table = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices=DEVICES)
    return TableRunner(table, journal, **kw), journal


def commits_of(journal):
    seen = []
    journal._conn.set_trace_callback(lambda sql: seen.append(sql) if sql == "COMMIT" else None)
    return seen


def betting(runner):
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)


def card(c):
    return ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c))


def content(journal):
    """The journal as what it says, without its clocks and hashes."""
    return [(r.kind, r.round_id, r.source, r.article, r.payload) for r in journal.records()]


def test_each_input_is_one_commit_with_its_decisions(tmp_path):
    runner, journal = runner_on(tmp_path / "j.db")
    commits = commits_of(journal)
    betting(runner)
    assert len(commits) == 3                       # open_table, deck_ready, place_bet
    runner.device(card("As"))                      # closes bets, deals: several decisions
    assert len(commits) == 4
    # the input is followed by its decisions before the next input
    recs = list(journal.records())
    last_input = max(i for i, r in enumerate(recs) if r.kind in INPUT_KINDS)
    assert recs[last_input].payload["event"]["card"] == "As"
    assert {r.kind for r in recs[last_input + 1:]} >= {"state"}


def test_a_failed_commit_acts_on_nothing_and_stops_the_runner(tmp_path):
    acted = []
    runner, journal = runner_on(tmp_path / "j.db", publish=acted.append, send=acted.append)
    betting(runner)
    state, before, acted[:] = runner.table.state, journal.head()[0], []
    confirmed = []
    # Another writer holds the journal past the busy timeout: the commit fails for real.
    journal._conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(tmp_path / "j.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(JournalError, match="NOT recorded"):
            runner.device(card("As"), durable=lambda: confirmed.append(1))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert acted == [] and confirmed == []         # not published, sent or acknowledged
    assert journal.head()[0] == before             # not written either
    assert "restart the service" in runner.broken.lower()
    with pytest.raises(JournalError, match="input not taken"):
        runner.command("close_bets")
    journal.close()
    # The restarted service rebuilds the table from the journal: as before the card.
    fresh, journal2 = runner_on(tmp_path / "j.db")
    fresh.recover()
    assert fresh.table.state == state and fresh.table.round.bets_json() \
        and fresh.table.tracker is None
    journal2.close()


def test_a_batch_is_one_commit_and_journals_what_inputs_one_by_one_would(tmp_path):
    one, j1 = runner_on(tmp_path / "one.db")
    grouped, j2 = runner_on(tmp_path / "grouped.db")
    for r in (one, grouped):
        betting(r)
    for c in CARDS:
        one.device(card(c))
    published = []
    grouped.publish = lambda e: published.append((e.kind, j2.head()[0]))
    commits = commits_of(j2)
    confirmed = []
    with grouped.batch():
        for c in CARDS:
            grouped.device(card(c), durable=lambda: confirmed.append(j2.head()[0]))
        assert published == [] and confirmed == []   # nothing acted on inside the batch
    assert len(commits) == 1
    end = j2.head()[0]
    assert confirmed == [end] * len(CARDS)            # acknowledged after the one commit
    assert published and all(seq == end for _, seq in published)
    assert grouped.table.state == one.table.state == "player_decisions"
    assert content(j1) == content(j2)


def test_a_refusal_inside_a_batch_is_journaled_and_the_rest_still_commits(tmp_path):
    runner, journal = runner_on(tmp_path / "j.db")
    betting(runner)
    with pytest.raises(TablectlError, match="cannot place a bet while the table is in dealing"):
        with runner.batch():
            runner.device(card("As"))
            runner.command("place_bet", box=99, wager="versus_croupier", amount=10)
    kinds = [r.kind for r in journal.records()]
    assert "refused" in kinds
    assert any(r.kind == "device" and r.payload["event"]["card"] == "As"
               for r in journal.records())
    assert runner.broken is None


def test_publish_comes_before_the_acknowledgement_and_a_failing_publish_still_acknowledges(
        tmp_path):
    order = []

    def publish(e):
        order.append(("publish", e.kind))
        if e.kind == "card":
            raise RuntimeError("console gone")

    runner, journal = runner_on(tmp_path / "j.db", publish=publish)
    betting(runner)
    order.clear()
    with pytest.raises(RuntimeError, match="console gone"):
        runner.device(card("As"), durable=lambda: order.append(("ack", journal.head()[0])))
    # Everything published up to the failure, then the acknowledgement, once on disk.
    assert order[-1] == ("ack", journal.head()[0])
    assert [k for k, _ in order[:-1]] == ["publish"] * (len(order) - 1) and len(order) >= 2
    assert ("publish", "card") in order
    journal.close()


def test_published_comes_once_a_commit_after_all_its_events_and_before_the_acknowledgement(
        tmp_path):
    order = []
    runner, journal = runner_on(tmp_path / "j.db", publish=lambda e: order.append(e.kind),
                                published=lambda: order.append("published"))
    betting(runner)
    order.clear()
    # The first card closes betting: one commit with several events.
    runner.device(card("As"), durable=lambda: order.append("ack"))
    assert order[-2:] == ["published", "ack"]
    assert order.count("published") == 1 and "bets_closed" in order and "card" in order
    # A batch of two inputs is one commit: published once, after both inputs' events.
    order.clear()
    with runner.batch():
        runner.device(card("Kd"), durable=lambda: order.append("ack"))
        runner.device(card("Ah"), durable=lambda: order.append("ack"))
    assert order == ["card", "card", "published", "ack", "ack"]
    journal.close()


def test_published_is_called_even_when_publishing_fails(tmp_path):
    order = []

    def publish(e):
        order.append(e.kind)
        if e.kind == "card":
            raise RuntimeError("console gone")

    runner, journal = runner_on(tmp_path / "j.db", publish=publish,
                                published=lambda: order.append("published"))
    betting(runner)
    order.clear()
    with pytest.raises(RuntimeError, match="console gone"):
        runner.device(card("As"), durable=lambda: order.append("ack"))
    assert order[-3:] == ["card", "published", "ack"]
    journal.close()


@pytest.mark.parametrize("amount,why", [(float("nan"), "Out of range float"),
                                        (float("inf"), "Out of range float"),
                                        ("deep", None),
                                        (b"10", "bytes")])
def test_a_command_the_journal_cannot_hold_is_refused_and_the_table_goes_on(tmp_path, amount,
                                                                            why):
    # Before, such a command was decided on, failed its commit and left the runner taking no
    # input at all (device events included) until the service restarted.
    runner, journal = runner_on(tmp_path / "j.db")
    betting(runner)
    if why is None:                                   # nested past the encoder's limit
        deep: list = []
        for _ in range(100_000):
            deep = [deep]
        amount = deep
    before = list(journal.records())
    with pytest.raises(TablectlError, match="cannot be journaled") as err:
        runner.command("place_bet", box=2, wager="versus_croupier", amount=amount)
    assert str(err.value).startswith('command "place_bet" not taken')    # quoted as JSON
    if why:
        assert why in str(err.value)
    assert runner.broken is None and list(journal.records()) == before
    runner.command("place_bet", box=2, wager="versus_croupier", amount=10)   # still taking input
    assert runner.table.round.bets_json()[-1]["amount"] == 10
