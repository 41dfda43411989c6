"""``tablectl integrity report``: deck checks, integrity alarms and the shuffle sentinel's
statistics, read from the table's journal (read-only, so it runs beside the daemon)."""
from __future__ import annotations

import argparse
import itertools
import json
from typing import Callable, Iterator

from controller.integrity.report import format_text, summarise
from controller.journal import Record
from controller.journal_cli import (DEFAULT_CONFIG, export_open_round, held, open_journal,
                                    parse_since, refuses, stopped, verified_only)
from controller.printable import printable, printable_value


def register(sub: argparse._SubParsersAction) -> None:
    integrity = sub.add_parser("integrity", help="deck integrity and the shuffle sentinel")
    isub = integrity.add_subparsers(dest="integrity_command", metavar="ACTION")
    isub.required = True
    report = isub.add_parser("report", help="deck checks, alarms and the sentinel's "
                             "statistics from the journal")
    report.add_argument("--since", default="0", metavar="SEQ|TIME",
                        help="a sequence number N (records after N; 0, the default, is all) or "
                             "an ISO 8601 time such as 2026-11-21T19:00:00Z (a time without a "
                             "zone is UTC)")
    g = report.add_mutually_exclusive_group()
    g.add_argument("--journal", metavar="PATH", help="the journal file")
    g.add_argument("--config", metavar="FILE",
                   help=f"the table's configuration (default {DEFAULT_CONFIG})")
    report.add_argument("--json", action="store_true", help="machine-readable output")
    report.add_argument("--open-round", action="store_true",
                        help="also the cards named by alarms of the round still open (they "
                             "may be face down at the table: for an inquiry, not the pit)")
    verified_only(report, "report on the records")
    report.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    """The report, read from a snapshot whose chain was verified first: a journal that does
    not verify is not reported on (exit 1) unless ``--verified-only``, which reports on the
    records the chain vouches for and still exits 1."""
    since, since_wall = parse_since(args.since)
    if since_wall is not None:
        since_wall = min(since_wall, 2**63 - 1)      # SQLite's integers stop at 2262
    with open_journal(args) as journal, journal.verified() as snap:
        report = snap.report
        if refuses(journal, report, args.verified_only, "reported",
                   "report on the records it vouches for"):
            return 1
        open_id = export_open_round(journal, args, report)
        # As text, what the records say reaches a terminal: every control character escaped
        # (JSON escapes them by itself).
        readable = (lambda doc: doc) if args.json else printable_value
        records = (readable(r.to_json()) for r in snap.records(
            since=since, since_wall_ns=since_wall,
            kinds=("config", "device", "integrity", "table")) if not held(r, open_id))
        rep = summarise(itertools.chain(_config_before(snap.records, since, since_wall),
                                        records))
        table_id = journal.table_id
        if args.json:
            print(json.dumps({"table_id": table_id, **rep.to_json()}, indent=2))
        else:
            given = args.since.strip()
            print(format_text(rep, printable(table_id),
                              printable(given) if given.lstrip("0") else None))
    return stopped(journal, report, "The report stops", "read")


def _config_before(records: Callable[..., Iterator[Record]], since: int | None,
                   since_wall: int | None) -> list[dict]:
    """The configuration in force where the report begins (the decks per shoe, against which
    counts are judged), when ``--since`` leaves its record out."""
    if not since and since_wall is None:
        return []
    inside = {r.seq for r in records(since=since, since_wall_ns=since_wall, kinds=("config",))}
    before = [r for r in records(kinds=("config",)) if r.seq not in inside]
    return [before[-1].to_json()] if before else []

