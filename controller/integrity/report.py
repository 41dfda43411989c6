"""``tablectl integrity report``: deck checks, alarms and the sentinel's statistics.

:func:`summarise` reads journal records as dicts (the shape of
:meth:`controller.journal.Record.to_json`: ``seq``, ``wall``, ``kind``, ``source``, ``round_id``,
``payload``) and keeps what concerns deck integrity:

* ``device`` records holding a ``deck_check_result`` or ``shuffle_done`` event (the shuffler's
  checks, with or without card identities), or a card out (``card_drawn``, ``card_dispensed``,
  ``hand_dispensed``, ``misread``: counted for the deck in play until its ``deck`` record);
* ``table`` records of a deck the croupier shuffled by hand and declared ready (``deck_ready``);
* ``config`` records (each service start): the decks per shoe, so that a count is judged
  against ``52 × decks``;
* ``integrity`` records written by :class:`~controller.integrity.monitor.IntegrityMonitor`:
  ``record = "alarm"`` (each alarm) and ``record = "deck"`` (each deck whose life ended, with
  its cards out and the sentinel's statistics).

Besides counts, the report holds the sentinel up to its guarantee on this table's own decks:
how many decks' martingale ever reached 10, 100, 1000 against the at most ``decks / x`` that
Ville's inequality allows for shuffled decks. Far more than that is itself a finding: the
table's shuffling is weaker than random even where no alarm was raised.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from .sentinel import TESTS

TAIL_LEVELS = (10, 100, 1000)
# Device events that are cards out of the deck in play (a deck's ``deck`` record, with its
# cards out, is only written when its life ends).
CARD_EVENTS = ("card_drawn", "card_dispensed", "hand_dispensed", "misread")


@dataclass
class IntegrityReport:
    """What :func:`summarise` found (JSON-ready through :meth:`to_json`)."""

    records: int = 0
    first: str | None = None
    last: str | None = None
    checks: int = 0
    identity_checks: int = 0
    count_only_checks: int = 0
    short_checks: int = 0
    shuffles: int = 0
    shuffle_counts_wrong: int = 0
    hand_shuffles: int = 0        # decks the croupier shuffled and declared ready (deck_ready)
    decks: int = 0
    cards_out: int = 0
    complete_decks: int = 0
    in_play_cards: int = 0        # cards out of the deck in play, whose life has not ended
    alarms: list[dict[str, Any]] = field(default_factory=list)
    sentinel: dict[str, dict[str, Any]] = field(default_factory=dict)
    trend: dict[str, float] = field(default_factory=dict)   # log(1 + R) after the last deck

    def to_json(self) -> dict[str, Any]:
        return {"records": self.records, "first": self.first, "last": self.last,
                "deck_checks": {"total": self.checks, "with_identities": self.identity_checks,
                                "count_only": self.count_only_checks,
                                "short_or_long": self.short_checks},
                "shuffles": {"total": self.shuffles, "wrong_count": self.shuffle_counts_wrong,
                             "by_hand": self.hand_shuffles},
                "decks": {"closed": self.decks, "cards_out": self.cards_out,
                          "dealt_to_the_end": self.complete_decks,
                          "in_play_cards_out": self.in_play_cards},
                "alarms": {"total": len(self.alarms),
                           "by_kind": dict(Counter(a["kind"] for a in self.alarms)),
                           "list": self.alarms},
                "sentinel": self.sentinel, "trend": self.trend}


def summarise(records: Iterable[dict[str, Any]]) -> IntegrityReport:
    """The integrity report over journal records (any order of kinds; others are skipped)."""
    rep = IntegrityReport()
    size = 52           # the cards of the table's decks, from its configuration ([integrity] decks)
    tests = {t: {"decks": 0, "pairs": 0, "hits": 0, "expected": 0.0, "alarmed": 0,
                 "smallest_p": 1.0, "reached": {str(x): 0 for x in TAIL_LEVELS}}
             for t in TESTS}
    for rec in records:
        kind = rec.get("kind")
        payload = rec.get("payload")
        if not isinstance(payload, dict):
            continue
        if kind == "config":
            # A two-deck table's shuffler counts 104: right for it, not a wrong count.
            decks = _dict(payload.get("integrity")).get("decks")
            size = 52 * decks if _whole(decks) > 0 else 52
            continue
        if kind == "device":
            event = payload.get("event", payload)
            ekind = event.get("kind") if isinstance(event, dict) else None
            if ekind == "deck_check_result":
                _seen(rep, rec)
                rep.checks += 1
                if event.get("cards") is not None:
                    rep.identity_checks += 1
                else:
                    rep.count_only_checks += 1
                if event.get("count") != size and event.get("cards") is None:
                    rep.short_checks += 1
            elif ekind == "shuffle_done":
                _seen(rep, rec)
                rep.shuffles += 1
                rep.shuffle_counts_wrong += event.get("count") != size
            elif ekind in CARD_EVENTS:
                _seen(rep, rec)
                cards = event.get("cards")
                rep.in_play_cards += len(cards) if ekind == "hand_dispensed" and \
                    isinstance(cards, list) else 1
            continue
        if kind == "table":
            # A deck the croupier shuffled for the shoe (deck_ready): no device reports it.
            if payload.get("kind") == "shuffle" and payload.get("status") == "done" \
                    and payload.get("device") == "croupier":
                _seen(rep, rec)
                rep.hand_shuffles += 1
            continue
        if kind != "integrity":
            continue
        _seen(rep, rec)
        what = payload.get("record")
        if what == "alarm":
            cards, kind = payload.get("cards") or [], payload.get("kind")
            rep.alarms.append({"seq": rec.get("seq"), "wall": rec.get("wall"),
                               "round": rec.get("round_id"), "device": payload.get("device"),
                               "kind": kind if isinstance(kind, str) else json.dumps(kind),
                               "deck": payload.get("deck"),
                               "cards": cards if isinstance(cards, list) else [cards],
                               "cards_seen": payload.get("cards_seen"),
                               "p_value": payload.get("p_value"),
                               "message": payload.get("message", "")})
        elif what == "deck":
            rep.in_play_cards = 0         # the cards out so far were this deck's
            rep.decks += 1
            rep.cards_out += _whole(payload.get("cards_out"))
            rep.complete_decks += bool(payload.get("complete"))
            sentinel = _dict(payload.get("sentinel"))
            trend = sentinel.get("trend")
            if isinstance(trend, dict):
                rep.trend = {str(k): v for k, v in trend.items() if isinstance(v, (int, float))}
            for t, st in _dict(sentinel.get("tests")).items():
                agg = tests.get(t)
                if agg is None or not isinstance(st, dict):
                    continue
                if not st.get("pairs"):
                    continue
                agg["decks"] += 1
                agg["pairs"] += _whole(st.get("pairs"))
                agg["hits"] += _whole(st.get("hits"))
                agg["expected"] += _number(st.get("expected"))
                agg["alarmed"] += bool(st.get("alarmed"))
                p = st.get("p_value")
                if _number(p) == p and not isinstance(p, bool):
                    agg["smallest_p"] = min(agg["smallest_p"], float(p))
                top = st.get("max_log_m")
                if _number(top) == top and not isinstance(top, bool):
                    for x in TAIL_LEVELS:
                        agg["reached"][str(x)] += top >= math.log(x)
    for t, agg in tests.items():
        agg["expected"] = round(agg["expected"], 3)
        agg["ville_bound"] = {str(x): round(agg["decks"] / x, 3) for x in TAIL_LEVELS}
    rep.sentinel = tests
    return rep


# A record rewritten with its chain may hold any JSON where a count or an object belongs:
# the report reads such a value as nothing rather than stop on it.
def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _whole(value: Any) -> int:
    return value if type(value) is int else 0


def _number(value: Any) -> float:
    return float(value) if type(value) in (int, float) and math.isfinite(value) else 0.0


def _seen(rep: IntegrityReport, rec: dict[str, Any]) -> None:
    rep.records += 1
    wall = rec.get("wall")
    if wall:
        rep.first = rep.first or wall
        rep.last = wall


def format_text(rep: IntegrityReport, table_id: str | None = None,
                since: str | None = None) -> str:
    """The report for a person at a terminal; ``since``, the --since given (printable), if
    any: a report on nothing after it is not a journal with nothing in it."""
    empty = f": nothing journaled after --since {since}" if since else ": nothing journaled yet"
    lines = [f"Deck integrity{' of table ' + table_id if table_id else ''}"
             + (f", {rep.first} to {rep.last}" if rep.first else empty)]
    lines.append(f"  deck checks: {rep.checks} ({rep.identity_checks} with card identities, "
                 f"{rep.count_only_checks} count only"
                 + (f", {rep.short_checks} with a wrong count" if rep.short_checks else "") + ")")
    lines.append(f"  shuffles: {rep.shuffles}"
                 + (f" by the shuffler, {rep.hand_shuffles} by hand (deck_ready)"
                    if rep.hand_shuffles else "")
                 + (f" ({rep.shuffle_counts_wrong} with a count other than the table's decks "
                    "hold)"
                    if rep.shuffle_counts_wrong else "") + "")
    lines.append(f"  decks dealt: {rep.decks} ({rep.cards_out} cards out, "
                 f"{rep.complete_decks} dealt to the end)")
    if rep.in_play_cards:
        n = rep.in_play_cards
        lines.append(f"  deck in play: {n} card{'s' if n != 1 else ''} out so far (a deck is counted "
                     "above, with its checks and sentinel figures, once its life ends: at its "
                     "last card, the next shuffle or deck check, or a new deck)")
    by_kind = Counter(a["kind"] for a in rep.alarms)
    lines.append(f"  alarms: {len(rep.alarms)}"
                 + (" (" + ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items())) + ")"
                    if by_kind else ""))
    for a in rep.alarms:
        where = f"round {a['round']}" if a["round"] else f"deck {a['deck']}"
        lines.append(f"    #{a['seq']} {a['wall'] or ''} {where}: {a['kind']}"
                     + (f" [{' '.join(map(str, a['cards']))}]" if a["cards"] else "")
                     + f" — {a['message']}")
    lines.append("  shuffle sentinel, per test: decks tested; pairs with hits against those "
                 "a shuffled deck gives; decks whose martingale reached 10/100/1000, against "
                 "the most expected of shuffled decks (decks / x):")
    for t, s in rep.sentinel.items():
        if t == "fingerprint" or not s["decks"]:
            continue
        reached = "/".join(str(s["reached"][str(x)]) for x in TAIL_LEVELS)
        bound = "/".join(f"{s['ville_bound'][str(x)]:g}" for x in TAIL_LEVELS)
        lines.append(f"    {t:<10} {s['decks']:>6} decks; {s['pairs']} pairs: {s['hits']} hits "
                     f"vs {s['expected']:g} expected; reached {reached} (expected at most "
                     f"{bound}); "
                     f"alarms {s['alarmed']}")
    if rep.trend:
        lines.append("  trend across decks after the last deck, log(1 + R) (a good shuffler "
                     "stays near 0 to 2; weak_shuffling is raised at about 15): "
                     + ", ".join(f"{t} {v:.1f}" for t, v in rep.trend.items()))
    return "\n".join(lines)
