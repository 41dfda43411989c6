"""``tablectl integrity report`` over a real journal written the way the table runner writes it
(device events as ``device``, the monitor's records as ``integrity``)."""
import json
import random

import pytest

from controller.cli import main
from controller.integrity import IntegrityMonitor
from controller.integrity.report import format_text, summarise
from controller.journal import Entry, Journal
from controller.rules.cards import full_deck
from drivers import events as ev

DECK = full_deck()


def journal_rounds(path, rounds):
    """Journal ``rounds`` (a list of (check cards, dealt cards)) as a Super Pan 9 table in
    shuffler mode would; returns the alarms raised."""
    mon = IntegrityMonitor(deck_per_round=True, deck_ids={1})
    alarms = []
    with Journal.open(path, "T7") as j:
        for i, (checked, dealt) in enumerate(rounds, 1):
            rid = f"r{i}"
            events = [ev.DeckCheckResult(device="shuffler", ts=float(i), count=len(checked),
                                         cards=tuple(checked)),
                      ev.ShuffleStarted(device="shuffler", ts=float(i)),
                      ev.ShuffleDone(device="shuffler", ts=float(i), count=len(checked)),
                      ev.HandDispensed(device="shuffler", ts=float(i), cards=tuple(dealt),
                                       deck_ids=(1,) * len(dealt))]
            for e in events:
                j.append("device", {"source": "device", "event": e.to_json()}, rid, e.device)
                up = mon.observe(e)
                alarms += up.alarms
                j.append_many([Entry("integrity", r, rid, e.device) for r in up.records])
            up = mon.round_ended()
            j.append_many([Entry("integrity", r, rid, "table") for r in up.records])
    return alarms


@pytest.fixture
def journal(tmp_path):
    rng = random.Random(4)
    rounds = []
    for i in range(6):
        order = DECK[:]
        rng.shuffle(order)
        rounds.append((DECK, order[:8]))
    rounds.append(([c for c in DECK if str(c) != "Th"], DECK[:8]))      # short and sorted
    path = tmp_path / "journal.db"
    alarms = journal_rounds(path, rounds)
    # the sorted 8 cards also read as a few sorted runs (badly_shuffled)
    assert {str(a.kind) for a in alarms} == {"missing_card", "sorted_deck", "badly_shuffled"}
    return path


def test_summary_counts_checks_decks_alarms_and_sentinel(journal):
    with Journal.open(journal, readonly=True) as j:
        rep = summarise(r.to_json() for r in j.records())
    assert rep.checks == 7 and rep.identity_checks == 7
    assert rep.shuffles == 7 and rep.shuffle_counts_wrong == 1    # the 51-card deck
    assert rep.decks == 7 and rep.cards_out == 56
    kinds = sorted(a["kind"] for a in rep.alarms)
    assert kinds == ["badly_shuffled", "missing_card", "sorted_deck"]
    missing = next(a for a in rep.alarms if a["kind"] == "missing_card")
    assert missing["cards"] == ["Th"] and missing["round"] == "r7"
    s = rep.sentinel["sorted"]
    # 7 pairs a deck, less those whose outcome was certain (no neighbour left in the deck)
    assert s["decks"] == 7 and s["alarmed"] == 1 and 40 <= s["pairs"] <= 7 * 7
    assert s["reached"]["1000"] >= 1 and s["ville_bound"]["1000"] == 0.007
    assert set(rep.trend) == {"sorted", "suit_runs", "rank_runs", "blocks"}


def test_cli_text_and_json(journal, capsys):
    assert main(["integrity", "report", "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    assert "table T7" in out and "deck checks: 7 (7 with card identities" in out
    assert "missing_card" in out and "[Th]" in out and "trend across decks" in out
    assert main(["integrity", "report", "--journal", str(journal), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["table_id"] == "T7" and doc["alarms"]["by_kind"] == {
        "missing_card": 1, "sorted_deck": 1, "badly_shuffled": 1}


def test_since_keeps_only_later_records(journal, capsys):
    with Journal.open(journal, readonly=True) as j:
        last_round_start = next(r.seq for r in j.records() if r.round_id == "r7") - 1
    assert main(["integrity", "report", "--journal", str(journal), "--json",
                 "--since", str(last_round_start)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["deck_checks"]["total"] == 1 and doc["alarms"]["total"] == 3
    assert main(["integrity", "report", "--journal", str(journal), "--json",
                 "--since", "2999-01-01"]) == 0          # beyond the journal's clock range
    assert json.loads(capsys.readouterr().out)["records"] == 0


@pytest.mark.parametrize("argv, needle", [
    (["--since", "yesterday"], "--since"),
    (["--journal", "/nonexistent/j.db"], "does not exist"),
])
def test_bad_input_is_one_clear_line(journal, capsys, argv, needle):
    if "--journal" not in argv:
        argv = argv + ["--journal", str(journal)]
    assert main(["integrity", "report", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_empty_report_reads_plainly():
    text = format_text(summarise([]))
    assert "nothing journaled yet" in text and "alarms: 0" in text


@pytest.mark.parametrize("since", ["2062-11-21", "999999"])
def test_a_report_after_the_last_record_says_so_not_that_nothing_was_journaled(journal, capsys,
                                                                            since):
    """A --since past the last record (a mistyped year) reads no record: the journal is not
    empty, and the report must not say that nothing was journaled."""
    assert main(["integrity", "report", "--since", since, "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    assert "nothing journaled yet" not in out
    assert f"nothing journaled after --since {since}" in out


def test_an_alarm_of_the_round_still_open_names_no_card(journal, capsys):
    # A duplicate card seen coming out may be face down at the table until the round closes:
    # the alarm is not listed at all meanwhile (that there is one says it is a card seen).
    with Journal.open(journal, "T7") as j:
        j.append("round_open", {"game": "super-pan-9", "mode": "shuffler"}, "r8", "table")
        j.append("integrity", {"record": "alarm", "kind": "duplicate_card", "deck": 8,
                               "cards": ["Qs"], "message": "Qs (queen of spades) has come out "
                               "twice from this deck"}, "r8", "shuffler")
    assert main(["integrity", "report", "--journal", str(journal), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [a for a in doc["alarms"]["list"] if a["round"] == "r8"] == []
    assert "duplicate" not in json.dumps(doc) and "Qs" not in json.dumps(doc)
    assert main(["integrity", "report", "--journal", str(journal)]) == 0
    assert "Qs" not in capsys.readouterr().out
    assert main(["integrity", "report", "--journal", str(journal), "--open-round"]) == 0
    assert "Qs" in capsys.readouterr().out
    with Journal.open(journal, "T7") as j:
        j.append("round_close", {"outcome": "settled"}, "r8", "table")
    assert main(["integrity", "report", "--journal", str(journal)]) == 0
    assert "Qs" in capsys.readouterr().out


def test_a_shoe_deck_still_in_play_is_reported_as_such(tmp_path, capsys):
    """A shoe deck's record is written when the deck ends (its last card, the next shuffle):
    until then its cards are out and the report says so, not "nothing journaled yet"."""
    path = tmp_path / "shoe.db"
    mon = IntegrityMonitor(deck_ids={1})
    order = DECK[:]
    random.Random(9).shuffle(order)

    def deal(j, rid, cards):
        for c in cards:
            e = ev.CardDrawn(device="shoe", ts=1.0, card=c, deck_id=1)
            j.append("device", {"source": "device", "event": e.to_json()}, rid, "shoe")
            j.append_many([Entry("integrity", r, rid, "shoe") for r in mon.observe(e).records])

    with Journal.open(path, "T8") as j:
        deal(j, "r1", order[:6])
        deal(j, "r2", order[6:11])
    assert main(["integrity", "report", "--journal", str(path)]) == 0
    out = capsys.readouterr().out
    assert "nothing journaled yet" not in out
    assert "decks dealt: 0" in out and "deck in play: 11 cards out" in out
    assert main(["integrity", "report", "--journal", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["decks"]["closed"] == 0 and doc["decks"]["in_play_cards_out"] == 11
    # The deck dealt to its last card ends: it is counted as dealt, nothing is left in play.
    with Journal.open(path, "T8") as j:
        deal(j, "r3", order[11:])
        e = ev.Empty(device="shoe", ts=2.0)
        j.append("device", {"source": "device", "event": e.to_json()}, "r3", "shoe")
        j.append_many([Entry("integrity", r, "r3", "shoe") for r in mon.observe(e).records])
    assert main(["integrity", "report", "--journal", str(path)]) == 0
    out = capsys.readouterr().out
    assert "decks dealt: 1 (52 cards out, 1 dealt to the end)" in out
    assert "deck in play" not in out


def test_decks_shuffled_by_hand_are_counted_apart_from_the_shufflers():
    """At a shoe table the croupier shuffles and declares the deck ready: the report does not
    read "shuffles: 0" as if no deck had been shuffled."""
    rows = []
    for rid in ("r1", "r2"):
        rows.append(("command", {"source": "command", "name": "deck_ready", "role": "dealer",
                                 "args": {}}, rid, "dealer"))
        rows.append(("table", {"kind": "shuffle", "device": "croupier", "status": "done",
                               "state": "shuffling", "round": 1, "table": "T9"}, rid, "table"))
    rows.append(("table", {"kind": "shuffle", "device": "shuffler", "status": "done",
                           "count": 52}, "r3", "table"))
    rows.append(("device", {"source": "device", "event": ev.ShuffleDone(
        device="shuffler", ts=1.0, count=52).to_json()}, "r3", "shuffler"))
    rep = summarise({"kind": k, "payload": p, "round_id": r, "source": s, "seq": n,
                     "wall": None} for n, (k, p, r, s) in enumerate(rows, 1))
    assert rep.shuffles == 1 and rep.hand_shuffles == 2
    text = format_text(rep)
    assert "shuffles: 1 by the shuffler, 2 by hand (deck_ready)" in text
    assert rep.to_json()["shuffles"]["by_hand"] == 2
