"""``tablectl journal verify|show|rounds|export``: read a table's journal (never write it).

The journal is found with ``--journal PATH``, or from ``[journal] path`` of ``--config FILE``
(default ``/etc/tablectl/table.toml``). Every command opens the journal read-only, so it can run
beside the daemon. ``verify`` exits 0 when the chain verifies and 1 naming the first bad record.
``export`` writes only records the chain vouches for: it refuses a journal that does not verify
(exit 1) unless ``--verified-only``, which exports the records before the first bad one and
still exits 1.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import stat
import sys
import time
from pathlib import Path
from typing import Any

from controller.access import exists
from controller.clock_watch import CLOCK_BEHIND, CLOCK_STEP, seconds
from controller.errors import TablectlError
from controller.journal import (ANCHOR_BROKEN, META_EDITED, Journal, Kind, Record,
                                VerifyReport)
from controller.printable import json_line, printable, printable_value
from controller.since_time import parse_since_time

DEFAULT_CONFIG = Path("/etc/tablectl/table.toml")


# --- what reaches the terminal --------------------------------------------------------------
# A journal's text is what was written to it, or what someone who rewrote it and its chain put
# there: every text the readers print from a journal goes through printable(); their JSON
# through json_line() (controller.printable).

def printable_record(rec: Record) -> Record:
    """``rec`` with every text in it made :func:`printable`, for a readable account."""
    texts = {name: printable(getattr(rec, name)) for name in
             ("table_id", "round_id", "kind", "source", "article")
             if isinstance(getattr(rec, name), str)}
    return dataclasses.replace(rec, payload=printable_value(rec.payload), **texts)


def heading(journal: Journal) -> str:
    """``PATH: table ID`` as the readers begin a line about a journal, printable."""
    return f"{printable(str(journal.path))}: table {printable(journal.table_id)}"


def register(sub: argparse._SubParsersAction) -> None:
    journal = sub.add_parser("journal", help="verify, read and export the table's journal")
    jsub = journal.add_subparsers(dest="journal_command", metavar="ACTION")
    jsub.required = True

    def where(p: argparse.ArgumentParser) -> None:
        g = p.add_mutually_exclusive_group()
        g.add_argument("--journal", metavar="PATH", help="the journal file")
        g.add_argument("--config", metavar="FILE",
                       help=f"the table's configuration (default {DEFAULT_CONFIG})")

    def open_round(p: argparse.ArgumentParser) -> None:
        p.add_argument("--open-round", action="store_true",
                       help="also what the devices reported in the round still open (its "
                            "cards may be face down at the table: for an inquiry, not the pit)")

    verify = jsub.add_parser("verify", help="check every record and the hash chain")
    where(verify)
    verify.add_argument("--anchor", metavar="SEQ:HASH",
                        help="a record's sequence number and hash written down earlier: it must "
                             "still be there unchanged (catches a cut-off or rewritten tail)")
    verify.set_defaults(func=cmd_verify)

    show = jsub.add_parser("show", help="a readable account of one round")
    show.add_argument("round", metavar="ROUND", help="the round id (`journal rounds` lists them), "
                      "or 'last' for the latest round")
    where(show)
    show.add_argument("--json", action="store_true", help="the round's records as JSON lines")
    open_round(show)
    verified_only(show, "show the part of the round")
    show.set_defaults(func=cmd_show)

    rounds = jsub.add_parser("rounds", help="every round: when, how many records, outcome")
    rounds.add_argument("--since", default=None, metavar="SEQ",
                        help="only rounds that began after this sequence number")
    where(rounds)
    verified_only(rounds, "list the rounds")
    rounds.set_defaults(func=cmd_rounds)

    export = jsub.add_parser("export", help="records as JSON lines, one per line")
    export.add_argument("--since", default="0", metavar="SEQ|TIME",
                        help="a sequence number N (records after N; 0, the default, is all) or "
                             "an ISO 8601 time such as 2026-11-21T19:00:00Z (records at or after "
                             "it; a time without a zone is UTC; a time after 2262-04-11, past "
                             "every record the journal can hold, selects none)")
    export.add_argument("--round", metavar="ROUND", help="only this round's records ('last' "
                        "for the latest round)")
    export.add_argument("--verified-only", action="store_true",
                        help="from a journal that does not verify, still export the records "
                             "the hash chain vouches for: those before the first bad record "
                             "(stderr says where it stops; the exit status is 1)")
    open_round(export)
    where(export)
    export.set_defaults(func=cmd_export)


def verified_only(p: argparse.ArgumentParser, doing: str) -> None:
    """``--verified-only`` for a reader: from a journal that does not verify, ``doing``
    (``show the part of the round``) only as far as the chain vouches for."""
    p.add_argument("--verified-only", action="store_true",
                   help=f"from a journal that does not verify, still {doing} the hash chain "
                        "vouches for: the records before the first bad one (stderr says where "
                        "it stops; the exit status is 1)")


# --- finding the journal --------------------------------------------------------------------

def journal_path(args: argparse.Namespace) -> Path:
    """The journal named by ``--journal``, or by ``[journal] path`` of the configuration."""
    return journal_source(args)[0]


def journal_source(args: argparse.Namespace) -> tuple[Path, str | None, Path | None]:
    """The journal's path and, when it was found through a configuration, that
    configuration's table id and file (the journal must be that table's)."""
    if getattr(args, "journal", None):
        return Path(args.journal), None, None
    config = Path(args.config) if getattr(args, "config", None) else DEFAULT_CONFIG
    if _pipe(config):                           # reading it would wait for a writer, for good
        raise TablectlError(f"configuration {config} is a named pipe (FIFO), not a file: give "
                            "the table's config file (--config FILE) or the journal "
                            "(--journal PATH)")
    if not exists(config, "configuration"):
        if getattr(args, "config", None):
            raise TablectlError(f"configuration {config} does not exist; give the table's "
                                "config file (--config FILE) or the journal (--journal PATH)")
        raise TablectlError(f"no --journal PATH given and {DEFAULT_CONFIG} does not exist; "
                            "name the journal with --journal PATH or the config with --config")
    from controller.config import ConfigError, load_config  # only needed on this path
    try:
        cfg = load_config(config)
    except ConfigError as exc:
        raise TablectlError(f"{exc}\n(to read the journal meanwhile, name it with "
                            "--journal PATH)") from None
    return cfg.journal_path, cfg.table_id, config


def _pipe(path: Path) -> bool:
    try:
        return stat.S_ISFIFO(path.stat().st_mode)
    except OSError:
        return False


def open_journal(args: argparse.Namespace) -> Journal:
    path, table_id, config = journal_source(args)
    journal = Journal.open(path, readonly=True)
    if table_id is not None and journal.table_id != table_id:
        journal.close()
        raise TablectlError(f"journal {path}, named by [journal] path in {config}, belongs to "
                            f"table {journal.table_id!r}, not {table_id!r}, the table of "
                            f"{config}; correct [journal] path there, or name the journal with "
                            "--journal PATH to read it as the journal it is")
    return journal


# --- the round still open -------------------------------------------------------------------

# Kinds whose payload may name a card still face down at the table: the devices' own reports,
# the integrity monitor's records and a refused input. In the round not yet closed they are
# held back, as the table holds back those cards from its console and its display; the
# published events (kind ``table`` and the rest) are shown as they are.
PRIVATE_KINDS = frozenset((Kind.DEVICE.value, Kind.INTEGRITY.value, "refused"))
WITHHELD = ("the round is still open and its cards may be face down at the table: shown once "
            "it closes, or with --open-round")


def open_round_id(journal: Journal, args: argparse.Namespace) -> str | None:
    """The round whose private records are held back: the latest, when it is not closed
    (an earlier round left open is closed by the next start's recovery) and --open-round
    was not given."""
    if getattr(args, "open_round", False):
        return None
    last = journal.last_round()
    return last.round_id if last is not None and not last.closed else None


def held(rec: Record, open_id: str | None) -> bool:
    """Whether ``rec`` is left out altogether while its round is open: an integrity alarm.
    The display shows an alarm raised by a card out only once the round ends, since even that
    there is one says something of a card still face down (a duplicate raised as the
    croupier's card comes out says it is a card already seen); its record, even with its cards
    held back, would say the same (docs/integrity.md)."""
    return (open_id is not None and rec.round_id == open_id
            and rec.kind == Kind.INTEGRITY.value and isinstance(rec.payload, dict)
            and rec.payload.get("record") == "alarm")


def shown(rec: Record, open_id: str | None) -> Record:
    """``rec`` as it may be shown: in the open round, a private record keeps only what it is
    (the event's kind and device, the integrity record's kind) and says why the rest is not
    there. The hash is the stored record's: a withheld record does not verify, on purpose."""
    if open_id is None or rec.round_id != open_id or rec.kind not in PRIVATE_KINDS:
        return rec
    p = rec.payload if isinstance(rec.payload, dict) else {}
    kept: dict[str, Any] = {}
    event = p.get("event") if isinstance(p.get("event"), dict) else None
    if event is not None:
        kept["event"] = {k: event[k] for k in ("kind", "device") if k in event}
    for k in ("source", "record", "kind"):
        if isinstance(p.get(k), str):
            kept[k] = p[k]
    kept["withheld"] = WITHHELD
    return dataclasses.replace(rec, payload=kept)


# --- verify ---------------------------------------------------------------------------------

def parse_anchor(text: str) -> tuple[int, str]:
    seq, sep, digest = text.partition(":")
    digest = digest.strip().lower()
    if not sep or not seq.strip().isascii() or not seq.strip().isdigit() or \
            len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise TablectlError(f"--anchor {_cut(text)} must be SEQ:HASH, a sequence number and its "
                            "64-digit hash as `journal verify` prints them")
    seq = seq.strip()
    if len(seq.lstrip("0")) > 19 or int(seq) > INT64_MAX:
        # (checked by length first: int() refuses thousands of digits with a ValueError)
        raise TablectlError(f"--anchor {_cut(text)} names a record beyond 2^63 - 1, the most a "
                            "journal can number: give SEQ:HASH as `journal verify` printed "
                            "them (head record SEQ hash HASH)")
    if int(seq) == 0:
        raise TablectlError(f"--anchor {text!r} names record 0, and sequence numbers start at "
                            "1: give SEQ:HASH as `journal verify` printed them (head record "
                            "SEQ hash HASH)")
    return int(seq), digest


def cmd_verify(args: argparse.Namespace) -> int:
    anchor = parse_anchor(args.anchor) if args.anchor else None
    with open_journal(args) as journal:
        report = journal.verify(anchor)
        held = _daemon_head(journal) if report.ok else None
    if report.ok and held is None:
        print(f"{heading(journal)}: {report}")
        return 0
    if report.ok:
        print(f"{heading(journal)}: NOT VERIFIED: {printable(held)}", file=sys.stderr)
        return 1
    print(f"{heading(journal)}: NOT VERIFIED: {printable(str(report))}\n"
          f"{way_out(report)}", file=sys.stderr)
    return 1


def _daemon_head(journal: Journal) -> str | None:
    """The daemon's own anchor beside the journal (controller/journal_head.py), held against
    a journal whose chain verified: None when there is none or it holds (said on stdout),
    else why not, with the way out. So a journal put back from an older copy, or rewritten
    with its chain recomputed while the daemon was stopped, does not verify on the table."""
    from controller.journal_head import HeadError, check, head_path, read_head

    where = head_path(journal.path)
    try:
        head = read_head(where)
    except HeadError as exc:
        return str(exc)
    if head is None:
        return None
    why = check(journal, where, head)
    if why:
        return why.replace("; nothing was written to it.", ".")
    print(f"{printable(str(where))}: the daemon's own anchor, record {head.seq}, holds")
    return None


def span(report: VerifyReport) -> str:
    """The records the chain vouches for (at least one), as words."""
    return "record 1" if report.head_seq == 1 else f"records 1-{report.head_seq}"


def way_out(report: VerifyReport) -> str:
    """What ``verify`` advises for a journal that does not verify: what the chain still
    vouches for, how to get it, and where the rest comes from."""
    if META_EDITED in report.reason:
        return ("The records themselves verify once the table id is put back "
                "(docs/journal.md).")
    if ANCHOR_BROKEN in report.reason:
        return (f"The anchor vouched for records 1-{report.bad_seq}; it no longer does. Compare "
                "the journal with a backup, or verify it against an anchor written down "
                "earlier: the last one that still holds tells from where it was rewritten "
                "(docs/journal.md).")
    if report.head_seq == 0:
        return ("The chain vouches for no record: restore the journal from a backup "
                "(docs/journal.md).")
    return (f"The chain vouches for {span(report)} (`tablectl journal export --verified-only` "
            "exports them); restore the journal from a backup for the rest "
            "(docs/journal.md).")


# --- show -----------------------------------------------------------------------------------

def cmd_show(args: argparse.Namespace) -> int:
    """One round, read from a snapshot whose chain was verified first: a journal that does
    not verify is not shown (exit 1) unless ``--verified-only``, which shows the round's
    records the chain vouches for and still exits 1."""
    with open_journal(args) as journal, journal.verified() as snap:
        report = snap.report
        if refuses(journal, report, args.verified_only, "shown",
                   "show the part of the round it vouches for"):
            return 1
        round_id = args.round
        if round_id == "last":
            last = journal.last(kind=Kind.ROUND_OPEN, until=report.head_seq)
            if last is not None and last.round_id is None:
                raise TablectlError(nameless(journal, last))
            if last is None:
                if not report.ok:
                    print(past_the_damage(journal, report, "the latest round"),
                          file=sys.stderr)
                    return 1
                raise TablectlError(f"{journal.path} holds no round yet")
            round_id = last.round_id
        records = list(snap.records(round_id=round_id))
        if not records:
            if not report.ok and journal.round(round_id) is not None:
                print(past_the_damage(journal, report, f"round {round_id!r}"), file=sys.stderr)
                return 1
            latest = journal.last(kind=Kind.ROUND_OPEN, until=report.head_seq)
            hint = f" (the latest round is {printable(str(latest.round_id))})" if latest else ""
            raise TablectlError(f"round {round_id!r} is not in {journal.path}{hint}; "
                                "list the rounds with `tablectl journal rounds`")
        closed = any(r.kind == Kind.ROUND_CLOSE for r in records)
        open_id = export_open_round(journal, args, report)
        records = [shown(rec, open_id) for rec in records if not held(rec, open_id)]
        if args.json:
            for rec in records:
                print(json_line(rec.to_json()))
        else:
            print("\n".join(render_round(printable(journal.table_id), printable(str(round_id)),
                                         closed, [printable_record(r) for r in records],
                                         None if report.ok else report.bad_seq)))
    return stopped(journal, report, "The account stops", "shown")


def render_round(table_id: str, round_id: str, closed: bool, records: list[Record],
                 bad_seq: int | None = None) -> list[str]:
    """A readable account of one round: a header, one line per record, and how it ended.
    ``bad_seq``: the first record the chain does not vouch for, where the account stops."""
    first = records[0]
    opened = next((r for r in records if r.kind == Kind.ROUND_OPEN), None)
    info = ""
    if opened is not None and isinstance(opened.payload, dict):
        bits = [str(opened.payload[k]) for k in ("game", "mode") if opened.payload.get(k)]
        info = f" ({', '.join(bits)})" if bits else ""
    lines = [f"Round {round_id} at table {table_id}{info}: {len(records)} records from "
             f"{_when(first)} UTC"]
    lines.append(f"  {'seq':>6}  {'time':<12}  {'source':<12}  {'kind':<12}  what")
    for rec in records:
        lines.append(f"  {rec.seq:>6}  {rec.wall.strftime('%H:%M:%S.%f')[:12]:<12}  "
                     f"{(rec.source or '-'):<12}  {rec.kind:<12}  {describe(rec)}")
    close = next((r for r in reversed(records) if r.kind == Kind.ROUND_CLOSE), None)
    if close is None and bad_seq is not None:
        lines.append(f"How the round went on is not shown: record {bad_seq} does not verify, "
                     "and the chain vouches for nothing after it.")
    elif close is None:
        lines.append("Not closed: the round was open where the journal ends (the next start's "
                     "recovery rules on it as its regulation says: void if cut off while "
                     "dealing, otherwise it goes on).")
    else:
        outcome = close.payload.get("outcome", "closed") if isinstance(close.payload, dict) \
            else "closed"
        reason = close.payload.get("reason") if isinstance(close.payload, dict) else None
        if outcome == NOT_PLAYED:
            lines.append(f"Outcome: {not_played_text(reason)}")
            return lines
        text = f"Outcome: {outcome}"
        if close.article:
            text += f", {close.article}"
        if reason:
            text += f": {reason}"
        lines.append(text)
    return lines


# A round_close's outcome for a round the table was taken out of service over before any bet
# (the table machine's round_not_played).
NOT_PLAYED = "not_played"


def not_played_text(reason: Any) -> str:
    """A round closed before play, in words: ``closed before play: table taken out of
    service`` (the record's reason, escaped; a record without one says only the first part)."""
    return "closed before play" + (f": {printable(reason)}" if isinstance(reason, str)
                                   and reason else "")


def _when(rec: Record) -> str:
    return rec.wall.strftime("%Y-%m-%d %H:%M:%S")


# Keys that say nothing a reader of one round needs on every line (the round and table are in
# the header, the device in the source column, the snapshot is for recovery).
_NOISE = {"table", "round", "round_id", "ts", "device", "snapshot"}


def describe(rec: Record) -> str:
    """One line saying what a record holds, in the words of its kind."""
    p = rec.payload
    text = ""
    clock = (clock_text(rec) or reload_text(rec) or refused_text(rec) or held_text(rec)
             or opening_text(rec))
    if clock:
        text = clock
    elif isinstance(p, dict):
        if isinstance(p.get("event"), dict):     # an input wrapped with where it came from
            p = p["event"]
        frm, to = p.get("from", p.get("source")), p.get("to", p.get("dest"))
        if (rec.kind == Kind.STATE or p.get("kind") == "state") and to is not None:
            text = f"{frm or '?'} -> {to}"
            if p.get("trigger"):
                text += f" ({p['trigger']})"
        elif rec.kind == Kind.DECISION and (p.get("remedy") or p.get("reason")):
            head = " ".join(str(p[k]) for k in ("irregularity", "remedy") if p.get(k))
            text = f"{head}: {p['reason']}" if p.get("reason") else head
        elif rec.kind == Kind.COMMAND and "name" in p:
            args = p.get("args") if isinstance(p.get("args"), dict) else {}
            text = f"{p['name']} {_pairs(args)}".rstrip()
        elif p.get("kind") == "malfunction_cleared" and isinstance(p.get("cleared"), dict):
            text = cleared_text(p)
        elif p.get("kind") == "device_replaced":
            # Both units by what tells them apart, which a cut identity would lose.
            rest = {k: v for k, v in p.items() if k not in _NOISE | {"kind", "was", "now"}}
            text = (f"device_replaced {p.get('device') or '?'}: was {_unit(p.get('was'))}, "
                    f"now {_unit(p.get('now'))} {_pairs(rest)}").rstrip()
        else:
            rest = {k: v for k, v in p.items()
                    if k not in _NOISE and k != "kind" and not (k == "article" and
                                                                v == rec.article)
                    and not (k == "source" and v in ("device", "command"))}
            changed = rest.pop("devices_changed", None) if isinstance(
                rest.get("devices_changed"), dict) else None
            text = f"{p.get('kind') or ''} {_pairs(rest)}".strip()
            if changed is not None:
                text += f"; {devices_changed_text(changed)}"
    elif p is not None:
        text = json.dumps(p, ensure_ascii=False)
    if rec.article:
        text = f"{text} [{rec.article}]" if text else f"[{rec.article}]"
    if len(text) > LINE_MOST:
        # A record rewritten with its chain may hold megabytes where a name belongs.
        text = (f"{text[:LINE_MOST]}… ({len(text)} characters; the whole record: journal "
                "show --json)")
    return text


# The most of a record's line `show` prints (a ruling's reason is a few hundred characters).
LINE_MOST = 2000


def clock_text(rec: Record) -> str:
    """What a ``clock_step`` or ``clock_behind`` record says, in words ('' for any other)."""
    p = rec.payload if isinstance(rec.payload, dict) else {}
    step, behind = p.get("step_ns"), p.get("behind_ns")
    if rec.kind == CLOCK_STEP and type(step) is int:
        way = "forward" if step > 0 else "back"
        # one made while the daemon was stopped is measured at start against its last record
        when = " while the service was stopped" if p.get("while_stopped") is True else ""
        return f"wall clock stepped {way} {seconds(step)}{when} (step_ns={step})"
    if rec.kind == CLOCK_BEHIND and type(behind) is int:
        return (f"wall clock {seconds(behind)} behind record {p.get('last_seq')} at start "
                f"(behind_ns={behind})")
    return ""


def reload_text(rec: Record) -> str:
    """What a ``config_reload`` record says, in words ('' for any other): the roles whose
    console token the reload replaced, added or removed and the settings left for a restart,
    or why the file was refused."""
    from controller.api.reload import KIND, problem_text

    p = rec.payload if isinstance(rec.payload, dict) else {}
    if rec.kind != KIND:
        return ""
    if p.get("outcome") == "refused":
        problems = [problem_text(q) for q in p.get("problems") or () if isinstance(q, dict)]
        return f"reload refused, nothing changed: {p.get('path')}: {'; '.join(problems)}"
    roles = p.get("roles") if isinstance(p.get("roles"), dict) else {}
    told = [f"{verb} {_names(roles[k])}" for k, verb in
            (("changed", "replaced"), ("added", "added"), ("removed", "removed"))
            if roles.get(k)]
    text = f"console tokens reloaded from {p.get('path')}: {'; '.join(told) or 'none changed'}"
    if p.get("restart"):
        text += f"; needs a restart: {_names(p['restart'])}"
    return text


def _names(value: Any) -> str:
    # A rewritten journal may hold anything where a list of names was written: said as is.
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def refused_text(rec: Record) -> str:
    """What a ``device_refused`` record says, in words: the device, why it was refused, what
    it gave of itself and what was approved ('' for any other record)."""
    p = rec.payload if isinstance(rec.payload, dict) else {}
    if rec.kind != Kind.DEVICE_REFUSED or not p:
        return ""
    given = p.get("given") if isinstance(p.get("given"), dict) else {}
    expected = p.get("expected") if isinstance(p.get("expected"), dict) else {}
    reason = p.get("reason") or "?"
    head = f"{p.get('device') or rec.source or '?'} refused ({reason}): "
    if reason == "duplicate_serial":
        return (f"{head}{given.get('units', '?')} USB units give serial "
                f"{given.get('serial') or '?'}, the one configured (usb_serial)")
    unit = _unit(given)
    if reason == "firmware_hash":
        return (f"{head}it gave {unit}, not the approved hash "
                f"{expected.get('firmware_hash') or '?'}")
    if reason == "device_class":
        return (f"{head}it said it is a {given.get('device_class') or '?'} ({unit}), "
                f"configured as a {expected.get('device_class') or p.get('device_class') or '?'}")
    if reason == "protocol_version":
        return (f"{head}it speaks protocol version {given.get('protocol', '?')} ({unit}), the "
                f"controller {expected.get('protocol', '?')}")
    return f"{head}gave {_pairs(given)}; expected {_pairs(expected)}".rstrip()


def opening_text(rec: Record) -> str:
    """What a ``device_not_opened`` or ``device_opened`` record says, in words ('' for any
    other): the device its port could not be opened for, how long, the class of cause and
    the way out; or that it opened at last."""
    p = rec.payload if isinstance(rec.payload, dict) else {}
    if rec.kind not in (Kind.DEVICE_NOT_OPENED, Kind.DEVICE_OPENED) or not p:
        return ""
    device = p.get("device") or "?"
    port = f" ({p['port']})" if p.get("port") else ""
    tried = f"{p.get('failing_s', '?')} s, {p.get('attempts', '?')} attempts"
    if rec.kind == Kind.DEVICE_OPENED:
        since = (f"; not opened since record {p['not_opened']}"
                 if p.get("not_opened") is not None else "")
        return f"{device}{port} opened at last, after {tried}{since}"
    return (f"{device}{port} could not be opened for {tried} ({p.get('cause') or '?'}): "
            f"{p.get('way_out') or '?'}")


def held_text(rec: Record) -> str:
    """What a ``commands_held`` or ``commands_released`` record says, in words ('' for any
    other): whose commands the console API held back after how many refusals, and how many it
    turned away until it took them again."""
    from controller.api.throttle import HELD, RELEASED, REPLACED, STOPPING, WINDOW

    p = rec.payload if isinstance(rec.payload, dict) else {}
    if rec.kind not in (HELD, RELEASED) or not p:
        return ""
    role = p.get("role") or "?"
    if rec.kind == HELD:
        return (f"{role}'s commands held back: {p.get('refused', '?')} refused by the table "
                f"within {p.get('window_s', '?')} s (the limit, api.refused_limit); answered "
                "429 until released")
    why = {WINDOW: "the window passed", REPLACED: "its token was replaced",
           STOPPING: "the service stopped"}.get(p.get("why"), str(p.get("why")))
    since = f" since record {p['held']}" if p.get("held") is not None else ""
    return (f"{role}'s commands taken again ({why}): {p.get('turned_away', '?')} turned away "
            f"while held{since}")


def changes_text(rec: Record) -> str:
    """What a ``round_open`` or a ``recovery`` record says of the devices a configuration
    taking effect changed, in words ('' for any other record, or one that says nothing)."""
    p = rec.payload if isinstance(rec.payload, dict) else {}
    if rec.kind == Kind.RECOVERY and isinstance(p.get("report"), dict):
        changed = p["report"].get("devices_changed")
        if isinstance(changed, dict):
            return devices_changed_text(changed, at_once=True)
    elif rec.kind == Kind.ROUND_OPEN and isinstance(p.get("devices_changed"), dict):
        return devices_changed_text(p["devices_changed"])
    return ""


def devices_changed_text(changed: dict[str, Any], at_once: bool = False) -> str:
    """A ``round_open``'s ``devices_changed`` in words: the devices that left the table with
    the conditions they left with (which stop nothing from then on), and those that joined."""
    def entries(key: str) -> list[dict[str, Any]]:
        value = changed.get(key)
        return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []

    said = []
    for e in entries("left"):
        text = f"{e.get('device') or '?'} ({e.get('class') or '?'}) left the table"
        conditions = e.get("conditions")
        if isinstance(conditions, list) and conditions:
            verb = "blocks" if len(conditions) == 1 else "block"
            text += f" with {_names(conditions)}, which no longer {verb} anything"
        elif conditions == []:
            text += " with no condition"
        elif conditions is not None:      # a rewritten journal: said as it is
            text += f" with {_names(conditions)}"
        said.append(text)
    said += [f"{e.get('device') or '?'} ({e.get('class') or '?'}) joined the table"
             for e in entries("joined")]
    head = ("the configuration of this start took effect at once (no round had opened)"
            if at_once else "the first round under a new configuration")
    return f"{head}: " + ("; ".join(said) or _pairs(changed))


def cleared_text(p: dict[str, Any]) -> str:
    """A ``malfunction_cleared``'s ``cleared`` and ``kept`` in words: the conditions the
    supervisor's clear took off each device, and those it left on devices not configured."""
    def by_device(value: Any) -> str:
        return ", ".join(f"{dev} ({_names(c)})" for dev, c in value.items())

    cleared, kept = p.get("cleared"), p.get("kept")
    text = (f"malfunction_cleared: cleared {by_device(cleared)}" if cleared
            else "malfunction_cleared: no device condition to clear")
    if isinstance(kept, dict) and kept:
        text += f"; kept on devices not configured: {by_device(kept)}"
    elif kept:
        text += f"; kept={_names(kept)}"
    rest = {k: v for k, v in p.items()
            if k not in _NOISE | {"kind", "cleared", "kept", "devices"}}
    return f"{text} {_pairs(rest)}".rstrip()


def _unit(ident: Any) -> str:
    """A device's identity as a regulator tells units apart: serial number and firmware."""
    if not isinstance(ident, dict):
        return "unknown"
    return (f"serial {ident.get('serial') or '?'} firmware {ident.get('firmware_version') or '?'}"
            f" (hash {ident.get('firmware_hash') or '?'})")


def _pairs(d: dict[str, Any]) -> str:
    out = []
    for k, v in d.items():
        if isinstance(v, (dict, list)):
            v = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
            if len(v) > 80:
                v = v[:79] + "…"   # the whole record: journal show --json
        out.append(f"{k}={v}")
    return " ".join(out)


# --- rounds ---------------------------------------------------------------------------------

def cmd_rounds(args: argparse.Namespace) -> int:
    since = None
    if args.since is not None:
        since = parse_seq(args.since)
    with open_journal(args) as journal, journal.verified() as snap:
        report = snap.report
        if refuses(journal, report, args.verified_only, "listed",
                   "list the rounds it vouches for"):
            return 1
        rounds = journal.rounds(since, until=report.head_seq)
        # The times in the list are as stamped: where the clock stepped or started behind,
        # the list says so (the whole journal was just read to verify it; so is this).
        # A device refused at link-up may fall between rounds: listed here, each once; so is
        # a device whose port could not be opened, and its opening at last (the links'
        # on_opening), a console held back for the table's refusals
        # (controller.api.throttle), and what a configuration taking effect changed of the
        # devices (at a round's open, or at a start before any round: its recovery record).
        # One pass over the journal for all of them.
        from controller.api.throttle import HELD, RELEASED
        kinds = {CLOCK_STEP: "clock", CLOCK_BEHIND: "clock",
                 Kind.DEVICE_REFUSED.value: "refused", HELD: "held", RELEASED: "held",
                 Kind.DEVICE_NOT_OPENED.value: "opening", Kind.DEVICE_OPENED.value: "opening",
                 Kind.ROUND_OPEN.value: "changes", Kind.RECOVERY.value: "changes",
                 Kind.ROUND_CLOSE.value: "closes"}
        found: dict[str, list[Record]] = {"clock": [], "refused": [], "held": [],
                                          "opening": [], "changes": [], "closes": []}
        for rec in snap.records(since=since, kinds=tuple(kinds)):
            found[kinds[rec.kind]].append(rec)
        clocks, refusals, holds = found["clock"], found["refused"], found["held"]
        changes = [rec for rec in found["changes"] if changes_text(rec)]
        paid_void = paid_then_void(found["closes"])
    print(f"{'round':>8}  {'began (UTC)':<19}  {'records':>7}  {'seq':<13}  outcome")
    for r in rounds:
        began = dt.datetime.fromtimestamp(r.opened_ns // 10**9, tz=dt.timezone.utc)
        outcome = (not_played_text(r.reason) if r.outcome == NOT_PLAYED
                   else _text(r.outcome or "closed")) if r.closed else "not closed"
        if r.article:
            outcome += f" ({printable(r.article)})"
        print(f"{printable(str(r.round_id)):>8}  {began:%Y-%m-%d %H:%M:%S}  {r.records:>7}  "
              f"{f'{r.first_seq}-{r.last_seq}':<13}  {outcome}")
    for rec in map(printable_record, clocks):
        where = f" (round {rec.round_id})" if rec.round_id is not None else ""
        what = ("the times stamped before it in the same boot are off by that much"
                if rec.kind == CLOCK_STEP else "the times stamped after it are at least that "
                "far behind, until a clock_step sets the clock")
        print(f"Clock: record {rec.seq}{where}: {clock_text(rec) or rec.kind}; {what} "
              "(docs/journal.md, The clock)")
    for rec in map(printable_record, refusals):
        where = f" (round {rec.round_id})" if rec.round_id is not None else ""
        print(f"Device refused: record {rec.seq}{where} at {_when(rec)} UTC: "
              f"{refused_text(rec) or rec.kind}; it was not linked")
    for rec in map(printable_record, found["opening"]):
        where = f" (round {rec.round_id})" if rec.round_id is not None else ""
        head = "Device opened" if rec.kind == Kind.DEVICE_OPENED else "Device not opened"
        print(f"{head}: record {rec.seq}{where} at {_when(rec)} UTC: "
              f"{opening_text(rec) or rec.kind}")
    for rec in map(printable_record, changes):
        where = f" (round {rec.round_id})" if rec.round_id is not None else ""
        print(f"Devices: record {rec.seq}{where} at {_when(rec)} UTC: {changes_text(rec)}")
    for rec in map(printable_record, holds):
        where = f" (round {rec.round_id})" if rec.round_id is not None else ""
        print(f"Console: record {rec.seq}{where} at {_when(rec)} UTC: "
              f"{held_text(rec) or rec.kind}")
    for settled, void in paid_void:
        print(f"Paid and void: round {printable(str(settled.round_id))} was settled and paid "
              f"(record {settled.seq}) and voided afterwards (record {void.seq}): the journal "
              "says both; what was paid is the settlement (docs/controller.md, A round settled "
              "and paid)")
    return stopped(journal, report, "The list stops", "listed")


def paid_then_void(closes: list[Record]) -> list[tuple[Record, Record]]:
    """Each round closed as settled (its settlement confirmed as paid) and closed again as
    void afterwards, as an earlier version allowed: the two ``round_close`` records. The list
    shows such a round as void, its last close; whoever audits the journal is told of both."""
    settled: dict[str, Record] = {}
    out = []
    for rec in closes:
        outcome = rec.payload.get("outcome") if isinstance(rec.payload, dict) else None
        key = str(rec.round_id)
        if outcome == "settled":
            settled.setdefault(key, rec)
        elif outcome == "void" and key in settled:
            out.append((settled.pop(key), rec))
    return out


def _text(value: Any) -> str:
    """A value a record holds where text belongs (a round's outcome), printable whatever its
    type: a record rewritten with its chain may hold anything."""
    return printable(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


# --- a journal that does not verify ---------------------------------------------------------

def refusal(journal: Journal, report: VerifyReport, done: str, instead: str) -> str:
    """Why a reader refuses a journal that does not verify: the first bad record, what the
    chain still vouches for, and ``--verified-only`` to ``instead``."""
    head = f"{heading(journal)}: NOT VERIFIED: {printable(str(report))}\nNothing was {done}."
    if report.head_seq == 0:
        return f"{head} {vouched(report)}"
    return (f"{head} The chain vouches for {span(report)}: run it again with --verified-only to "
            f"{instead} (it exits 1: not the whole journal), and restore the journal from a "
            "backup for the rest (docs/journal.md).")


def refuses(journal: Journal, report: VerifyReport, verified_only: bool, done: str,
             instead: str) -> bool:
    """A reader's check before it reads: True (the refusal said on stderr) when the journal
    does not verify and ``--verified-only`` was not given."""
    if report.ok or verified_only:
        return False
    print(refusal(journal, report, done, instead), file=sys.stderr)
    return True


def stopped(journal: Journal, report: VerifyReport, what: str, done: str) -> int:
    """The exit status of a reader; for a journal that does not verify (read with
    ``--verified-only``) stderr says where it stopped and why."""
    if report.ok:
        return 0
    sys.stdout.flush()
    where = (f"{what} before record 1: the chain vouches for no record"
             if report.head_seq == 0 else
             f"{what} after record {report.head_seq}, the last the chain vouches for")
    print(f"{heading(journal)}: NOT VERIFIED: {printable(str(report))}\n{where}: record "
          f"{report.bad_seq} and every record after it were not {done}.", file=sys.stderr)
    return 1


def past_the_damage(journal: Journal, report: VerifyReport, what: str) -> str:
    """``what`` (a round) lies wholly after the first bad record."""
    return (f"{heading(journal)}: NOT VERIFIED: {printable(str(report))}\n{what} lies "
            f"after record {report.bad_seq}, the first bad record: the chain vouches for none "
            "of it. Restore the journal from a backup (docs/journal.md).")


# --- export ---------------------------------------------------------------------------------

# The journal stores sequence numbers and wall times (nanoseconds since 1970, UTC) as SQLite's
# 64-bit integers: no record lies outside this range, so a bound beyond it is clamped to its
# edge, which selects exactly what the bound asks for (nothing after 2262-04-11, everything
# after 1677-09-21).
INT64_MAX = 2**63 - 1
INT64_MIN = -2**63


def parse_seq(text: str, option: str = "--since") -> int:
    """A sequence number as given on the command line (ASCII digits only); one beyond the
    largest the journal can hold is clamped to it (no record lies after it)."""
    text = str(text).strip()
    if not text.isascii() or not text.isdigit():
        raise TablectlError(f"{option} {_cut(text)} must be a sequence number, e.g. 120")
    if len(text.lstrip("0")) > 19:              # past 2^63 - 1 (int() stops at 4300 digits)
        return INT64_MAX
    return min(int(text), INT64_MAX)


def _cut(text: str) -> str:
    """An argument echoed in an error: quoted, escaped, at most 40 characters."""
    return repr(text[:40] + "…" if len(text) > 40 else text)


def basic_date(digits: str) -> str | None:
    """``2026-11-21`` for ``20261121``, eight digits that read as ISO 8601's basic date of a
    year a journal may hold; None for any other number."""
    if len(digits) != 8:
        return None
    try:
        day = dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError:
        return None
    return day.isoformat() if 1970 <= day.year <= 2261 else None


def parse_since(text: str) -> tuple[int | None, int | None]:
    """``--since``: a sequence number (records after it) or an ISO time (records at or after
    it, to the nanosecond; UTC when no zone is given, which stderr points out). Returns
    ``(since_seq, since_wall_ns)``. Both are clamped to the journal's 64-bit range: a time
    after 2262-04-11 (or a sequence number beyond 2^63 - 1) selects no record, a time before
    1677-09-21 every record."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        date = basic_date(text)
        if date:
            print(f"tablectl: note: --since {text} is read as a sequence number (the records "
                  f"after record {text}); for the date, write {date}", file=sys.stderr)
        return parse_seq(text), None
    when = parse_since_time(text)
    note = when.zone_note(printable(text))
    if note:
        print(note, file=sys.stderr)
    return None, max(INT64_MIN, min(when.ns, INT64_MAX))


def cmd_export(args: argparse.Namespace) -> int:
    """Export what the chain vouches for. The whole journal is verified first, in the same
    snapshot the records are read from: a journal that does not verify is refused (nothing
    written, exit 1) unless ``--verified-only``, which writes the records before the first
    bad one and still exits 1, so a script never takes a partial export for a whole one."""
    since, since_wall = parse_since(args.since)
    with open_journal(args) as journal, journal.verified() as snap:
        report = snap.report
        if not report.ok and not args.verified_only:
            print(f"{heading(journal)}: NOT VERIFIED: {printable(str(report))}\n"
                  f"Nothing was exported. {vouched(report)}", file=sys.stderr)
            return 1
        round_id = export_round(journal, args.round)
        open_id = export_open_round(journal, args, report)
        out = sys.stdout
        written = 0
        for rec in snap.records(since=since, since_wall_ns=since_wall, round_id=round_id):
            if not held(rec, open_id):
                out.write(json_line(shown(rec, open_id).to_json()) + "\n")
                written += 1
    if not written and since_wall is not None and since_wall > time.time_ns():
        # Nothing can have been written after now: a mistyped year, not an export in steps.
        print(f"tablectl: note: --since {printable(args.since.strip())} is later than now "
              f"({dt.datetime.now(dt.timezone.utc):%Y-%m-%dT%H:%M:%SZ}), so no record is at "
              "or after it and nothing was exported; check the date", file=sys.stderr)
    if report.ok:
        return 0
    out.flush()
    print(f"{heading(journal)}: NOT VERIFIED: {printable(str(report))}\n"
          f"{stop(report)}: record {report.bad_seq} and every record after it were not "
          "exported.",
          file=sys.stderr)
    return 1


def stop(report: VerifyReport) -> str:
    """Where a --verified-only export of a journal that does not verify stops, in words."""
    if report.head_seq == 0:
        return "Nothing was exported: the chain vouches for no record"
    return f"The export stops after record {report.head_seq}, the last the chain vouches for"


def vouched(report: VerifyReport) -> str:
    """Which records the chain still vouches for, and the way to export them."""
    if META_EDITED in report.reason:
        return way_out(report)
    if report.head_seq == 0:
        return ("The chain vouches for no record: record 1 is bad. Restore the journal from "
                "a backup (docs/journal.md).")
    return (f"The chain vouches for {span(report)}: run the export again with --verified-only to "
            "export them (it exits 1: not the whole journal), and restore the journal from a "
            "backup for the rest (docs/journal.md).")


def nameless(journal: Journal, opened: Record) -> str:
    """Why the latest round cannot be named: its round_open, ``opened``, has no round id."""
    return (f"{heading(journal)}: record {opened.seq}, the latest round_open, names no round "
            "(tablectl writes none so: the journal was rewritten, its chain with it, which "
            "only an anchor catches, docs/journal.md), so the latest round cannot be told; "
            f"read the records from it on with `tablectl journal export --since {opened.seq - 1}`"
            ", and verify the journal against an anchor written down earlier (journal verify "
            "--anchor SEQ:HASH)")


def export_round(journal: Journal, round_id: str | None) -> str | None:
    """``--round``: the round asked for ('last': the latest), which must be in the journal."""
    if round_id == "last":
        opened = journal.last(kind=Kind.ROUND_OPEN)
        if opened is not None and opened.round_id is None:
            raise TablectlError(nameless(journal, opened))
        latest = journal.last_round()
        if latest is None:
            raise TablectlError(f"{journal.path} holds no round yet")
        return latest.round_id
    if round_id is not None and journal.round(round_id) is None:
        latest = journal.last_round()
        hint = f" (the latest round is {printable(str(latest.round_id))})" if latest else ""
        raise TablectlError(f"round {round_id!r} is not in {journal.path}{hint}; "
                            "list the rounds with `tablectl journal rounds`")
    return round_id


def export_open_round(journal: Journal, args: argparse.Namespace,
                      report: VerifyReport) -> str | None:
    """The round whose private records the export holds back (:func:`open_round_id`). When
    damage keeps the journal's latest round from being read, the latest round the chain
    vouches for is held back instead, closed or not: shown whole only with --open-round."""
    try:
        return open_round_id(journal, args)
    except TablectlError:
        if report.ok:
            raise
    last = journal.last(kind=Kind.ROUND_OPEN, until=report.head_seq)
    return last.round_id if last is not None else None
