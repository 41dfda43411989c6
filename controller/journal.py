"""The table's durable journal: every event, input, command and decision, hash-chained.

The journal, not the log, is the record of truth. The table machine appends a record *before* it
acts on what the record says; :meth:`Journal.append` returns only once the record is on disk
(SQLite in WAL mode with ``synchronous=FULL``: the commit has been fsync'd). A crash, a SIGKILL
or a power cut therefore loses nothing that was acknowledged, and a record is either wholly
there or not at all (one SQLite transaction per append or per :meth:`Journal.append_many`).

Each record is chained to the one before it::

    body = canonical JSON of {"v", "seq", "wall_ns", "mono_ns", "table_id", "round_id",
                              "kind", "source", "article", "payload"}
    hash = SHA-256( prev_hash (64 ASCII hex digits) || body (ASCII bytes) )

with ``prev_hash`` of the first record 64 zeros. Canonical JSON is ``json.dumps(...,
sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)``. The body is
stored as written, beside query columns that :meth:`Journal.verify` holds against it, so an
edited, deleted, reordered or inserted record is found and named. docs/journal.md shows how to
check a journal independently with ``sqlite3`` and ``sha256sum``.

Rounds: the table machine opens a round with a ``round_open`` record and ends it with a
``round_close`` record (same ``round_id``); :meth:`Journal.open_round_state` finds the round
that a crash interrupted so that recovery can end it as the regulation says.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import errno
import fcntl
import hashlib
import os
import json
import re
import sqlite3
import stat
import threading
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from json.encoder import encode_basestring_ascii as _encode_ascii
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple

from controller.access import exists, special, user
from controller.errors import TablectlError

FORMAT_VERSION = 1
GENESIS_HASH = "0" * 64
BODY_FIELDS = ("article", "kind", "mono_ns", "payload", "round_id", "seq", "source",
               "table_id", "v", "wall_ns")
_KIND_RE = re.compile(r"[a-z][a-z0-9_.-]{0,63}")   # fullmatch: $ would take a line break
_TABLE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class JournalError(TablectlError):
    """The journal cannot be opened or written as asked; the message says why and what to do."""


class Kind(StrEnum):
    """The record kinds the controller writes. Other kinds (``[a-z][a-z0-9_.-]*``) are allowed,
    so a new part of the controller can journal its own records without changing this module."""

    SERVICE = "service"          # the daemon started, stopped, was told to stop (payload: event)
    CONFIG = "config"            # the configuration in force (payload: its digest and summary)
    ROUND_OPEN = "round_open"    # a round begins (payload: game, mode, boxes, ...)
    ROUND_CLOSE = "round_close"  # a round ends (payload: outcome settled|void|not_played, …)
    DEVICE = "device"            # a drivers.events event (payload: event.to_json())
    INPUT = "input"              # a panel input: button, key switch (payload: event.to_json())
    COMMAND = "command"          # a console command (source: the role that sent it)
    STATE = "state"              # a state change of the table machine (payload: from, to, trigger)
    DECISION = "decision"        # a ruling on an irregularity (article set; payload: remedy...)
    RECOVERY = "recovery"        # what start-up did with a round a crash interrupted
    INTEGRITY = "integrity"      # deck checks and shuffle-sentinel alarms
    ALARM = "alarm"              # an error condition raised or cleared (door open, jam, ...)
    DEVICE_REFUSED = "device_refused"   # a device refused at link-up (firmware, class, serial)
    DEVICE_NOT_OPENED = "device_not_opened"   # a device whose port could not be opened (cause)
    DEVICE_OPENED = "device_opened"     # that device opened at last


def canonical_json(value: Any) -> str:
    """The one JSON spelling the hash is computed over (sorted keys, no spaces, ASCII only)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


def _scalar_json(value: str | None) -> str:
    # The body's other fields are text or null (Journal._entry makes them so): encoded by the
    # json module's own ASCII string encoder, which canonical_json uses for them too.
    return "null" if value is None else _encode_ascii(value)


def body_text(seq: int, wall_ns: int, mono_ns: int, table_id: str, round_id: str | None,
              kind: str, source: str | None, article: str | None, payload_json: str) -> str:
    """A record's body, spelled as :func:`canonical_json` spells the body's dict, around the
    payload's canonical JSON as it is (the keys in sorted order; the payload is not encoded
    a second time). ``tests/test_journal_body.py`` holds the two spellings equal."""
    return "".join((
        '{"article":', _scalar_json(article), ',"kind":', _scalar_json(kind),
        ',"mono_ns":', str(int(mono_ns)), ',"payload":', payload_json,
        ',"round_id":', _scalar_json(round_id), ',"seq":', str(int(seq)),
        ',"source":', _scalar_json(source), ',"table_id":', _scalar_json(table_id),
        f',"v":{FORMAT_VERSION},"wall_ns":', str(int(wall_ns)), '}'))


def chain_hash(prev_hash: str, body: str) -> str:
    """SHA-256 over the previous record's hash (hex) followed by this record's body."""
    return hashlib.sha256(prev_hash.encode("ascii") + body.encode("ascii")).hexdigest()


@dataclass(frozen=True, slots=True)
class Record:
    """One journal record, as stored. ``wall_ns`` is UTC wall-clock time in nanoseconds since
    the epoch, ``mono_ns`` the monotonic clock (meaningful only within one boot)."""

    seq: int
    wall_ns: int
    mono_ns: int
    table_id: str
    round_id: str | None
    kind: str
    source: str | None
    article: str | None
    payload: Any
    prev_hash: str
    hash: str

    @property
    def wall(self) -> _dt.datetime:
        """Wall time as an aware UTC datetime (microsecond precision)."""
        secs, ns = divmod(self.wall_ns, 10**9)
        return (_dt.datetime.fromtimestamp(secs, tz=_dt.timezone.utc)
                + _dt.timedelta(microseconds=ns // 1000))

    def body(self) -> dict[str, Any]:
        """The hashed fields, as a dict (see the module docstring)."""
        return {"v": FORMAT_VERSION, "seq": self.seq, "wall_ns": self.wall_ns,
                "mono_ns": self.mono_ns, "table_id": self.table_id, "round_id": self.round_id,
                "kind": self.kind, "source": self.source, "article": self.article,
                "payload": self.payload}

    def to_json(self) -> dict[str, Any]:
        """The record for export: the body, an ISO wall time and both hashes."""
        doc = self.body()
        doc["wall"] = self.wall.isoformat(timespec="microseconds").replace("+00:00", "Z")
        doc["prev_hash"] = self.prev_hash
        doc["hash"] = self.hash
        return doc


class Entry(NamedTuple):
    """One record to append with :meth:`Journal.append_many`."""

    kind: str
    payload: Any = None
    round_id: str | None = None
    source: str | None = None
    article: str | None = None


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The result of :meth:`Journal.verify`. ``ok`` is true when every record checks out;
    otherwise ``bad_seq`` names the first bad record (or the place of a missing one) and
    ``reason`` says what is wrong with it. ``head_seq``/``head_hash`` are those of the last
    good record: write them down (or compare them with an anchor) to catch a cut-off tail."""

    ok: bool
    records: int
    head_seq: int
    head_hash: str
    bad_seq: int | None = None
    reason: str = ""

    def __str__(self) -> str:
        if self.ok:
            return (f"{self.records} records, chain verifies; head record {self.head_seq} "
                    f"hash {self.head_hash}")
        if self.head_seq == 0 and self.records:
            # An anchor broken: the records before it chain, and are vouched for by nothing.
            return (f"record {self.bad_seq}: {self.reason} (the {self.records} records before "
                    "it chain, as a rewritten chain does: none of them is vouched for)")
        if self.head_seq == 0:
            return f"record {self.bad_seq}: {self.reason} (no record before it verifies)"
        return (f"record {self.bad_seq}: {self.reason} (the {self.records} records before it "
                f"verify; last good record {self.head_seq} hash {self.head_hash})")


@dataclass(slots=True)
class RoundState:
    """A round as the journal holds it: its id, whether it was closed, and its records."""

    round_id: str
    closed: bool
    records: list[Record] = field(default_factory=list)

    @property
    def opened(self) -> Record | None:
        return next((r for r in self.records if r.kind == Kind.ROUND_OPEN), None)


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """One line of :meth:`Journal.rounds`."""

    round_id: str
    first_seq: int
    last_seq: int
    records: int
    opened_ns: int
    closed: bool
    outcome: str | None       # the round_close payload's "outcome" (settled, void, ...)
    article: str | None       # the round_close record's article (why it was void)
    reason: str | None = None  # the round_close payload's "reason", when it is text


# No index on hash: the chain, not a constraint, proves each record's place, and a unique
# index on random digests made every record touch a random page of it (write amplification
# that grew with the journal and made every checkpoint long). A journal made before keeps
# its index; nothing depends on it either way.
#
# The only indexes are partial ones, on the few records that mark a round or a device link
# (MARK_KINDS): an index on every record's round and kind added one page per index to every
# commit's WAL write (three pages where one holds the records), a quarter of a card's commit.
# A round's records are found between its round_open and the next (Journal._round_span); any
# other lookup walks the sequence numbers back from the end or forward from a bound. The
# writer drops the older journals' indexes on every record when it opens them.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    seq       INTEGER PRIMARY KEY,
    wall_ns   INTEGER NOT NULL,
    mono_ns   INTEGER NOT NULL,
    table_id  TEXT NOT NULL,
    round_id  TEXT,
    kind      TEXT NOT NULL,
    source    TEXT,
    article   TEXT,
    payload   TEXT NOT NULL,
    body      TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
DROP INDEX IF EXISTS records_round;
DROP INDEX IF EXISTS records_kind;
CREATE INDEX IF NOT EXISTS records_marks ON records(kind, seq)
    WHERE kind = 'round_open' OR kind = 'round_close' OR kind = 'link';
CREATE INDEX IF NOT EXISTS records_round_marks ON records(round_id, kind, seq)
    WHERE kind = 'round_open' OR kind = 'round_close';
"""
# The kinds the partial indexes hold. SQLite uses a partial index only for a query whose WHERE
# names the kind as a literal, so these are spelled into the SQL (_kind_term), never bound.
MARK_KINDS = ("round_open", "round_close", "link")
# The WAL's reserved size in pages (see _reserve_wal): SQLite's automatic checkpoint point
# (1,000 pages, when no quiet moment came first) and room for the commit that reaches it.
WAL_RESERVE_PAGES = 1100
_COLUMNS = "seq, wall_ns, mono_ns, table_id, round_id, kind, source, article, payload, body, " \
           "prev_hash, hash"


class Journal:
    """A table's journal file. Open with :meth:`Journal.open`; one writer process at a time
    (the daemon), any number of readers (``tablectl journal …``) alongside it.

    Methods are safe to call from several threads (one lock serialises them). ``clock`` is any
    object with ``time_ns()`` and ``monotonic_ns()`` (the ``time`` module by default), so tests
    and replays can inject time.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path, table_id: str, readonly: bool,
                 clock: Any, lock_fd: int | None = None) -> None:
        self._conn = conn
        self._lock_fd = lock_fd
        self.path = path
        self.table_id = table_id
        self.readonly = readonly
        self._clock = clock
        self._lock = threading.RLock()
        # (seq, hash) of the last record this writer committed: the next one chains to it
        # without reading it back. Forgotten on any failed write (read again on the next),
        # and one writer at a time holds the journal (the writer's lock), so it is the file's.
        self._head: tuple[int, str] | None = None

    # --- opening --------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, table_id: str | None = None, *, readonly: bool = False,
             clock: Any = time, untouched: bool = False) -> "Journal":
        """Open (and, unless ``readonly``, create) the journal at ``path`` for ``table_id``.

        A new journal needs ``table_id``; an existing one must belong to the same table (a
        journal never mixes tables). ``table_id=None`` opens an existing journal for whatever
        table it belongs to (readers). ``untouched`` (with ``readonly``) reads without
        writing any of the journal's files, not even the -shm index (see
        :func:`_untouched_uri`). Raises JournalError with the way out on any problem.
        """
        path = Path(path)
        _check_files(path)
        if readonly or table_id is None:
            if not exists(path, "journal", read=readonly, error=JournalError):
                raise JournalError(f"journal {path} does not exist; give the path of an "
                                   "existing journal (--journal PATH) or the table's config "
                                   "(--config FILE)")
        if table_id is not None and not _TABLE_RE.fullmatch(table_id):
            raise JournalError(f"table id {table_id!r} must be 1-64 letters, digits, '.', '_' "
                               "or '-', starting with a letter or digit")
        try:
            if readonly:
                conn = sqlite3.connect(_untouched_uri(path) if untouched else _read_uri(path),
                                       uri=True, isolation_level=None, check_same_thread=False)
            else:
                if path.is_dir():
                    raise JournalError(f"journal {path} is a directory; name the journal file "
                                       f"in it ([journal] path), such as {path / 'journal.db'}")
                if _empty(path):
                    # SQLite would start a new chain in it: a journal cut to nothing (a fault,
                    # a mistaken copy) would be replaced without a word.
                    raise JournalError(
                        f"journal {path} is an empty file (0 bytes), not a journal: a journal "
                        "cut to nothing, a copy that did not finish, or a file made by hand; "
                        "restore the journal from a backup (docs/journal.md), or, for a table "
                        "that has never run, remove the empty file and start again")
                path.parent.mkdir(parents=True, exist_ok=True)
                if _read_only_fs(path.parent):
                    raise JournalError(
                        f"journal {path} cannot be written: {path.parent} is on a read-only "
                        "file system; mount it read-write, or set [journal] path on a disk "
                        "that can be written (the unit's state directory /var/lib/tablectl)")
                if not os.access(path.parent, os.W_OK | os.X_OK):
                    # The writer makes -wal and -shm files beside the journal: SQLite would
                    # only say "unable to open" or "readonly database".
                    raise JournalError(
                        f"journal {path} cannot be written: this user ({user()}) may not "
                        f"write {path.parent}, where the journal and its -wal and -shm files "
                        "live; run as the service user, or set [journal] path in a directory "
                        "it owns (the unit's state directory /var/lib/tablectl)")
                if path.exists() and not os.access(path, os.W_OK):
                    raise JournalError(
                        f"journal {path} cannot be written: this user ({user()}) may not "
                        f"write it; run as the service user, who owns it (chown tablectl: "
                        f"{path})")
                links = _hard_links(path)
                if links > 1:
                    # SQLite keeps the -wal beside the name a journal is opened by: two names,
                    # two WALs for one file, and the writer's lock of one name does not stop a
                    # writer by the other.
                    raise JournalError(
                        f"journal {path} has {links} names (hard links): a writer by another "
                        "name would keep a -wal file of its own beside it, past the one-writer "
                        f"lock, and records would be lost; remove the other names (find / "
                        f"-xdev -samefile {path}) and keep this one")
                conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 10000")
            if not readonly:
                problem = _not_ours(conn, path)     # before WAL mode changes its header
                if problem:
                    conn.close()
                    raise JournalError(problem)
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise JournalError(f"journal {path}: the file system refused WAL mode "
                                       f"(got {mode}); put the journal on a local disk")
                conn.execute("PRAGMA synchronous = FULL")
                conn.executescript(_SCHEMA)
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            if "no such table" in str(exc) and readonly and _empty(path):
                raise JournalError(f"journal {path} is an empty file (0 bytes), not a journal: "
                                   "a copy that did not finish, or the wrong file; check the "
                                   "path, or restore the journal from a backup "
                                   "(docs/journal.md)") from None
            if "no such table" in str(exc):
                raise JournalError(f"{path} is an SQLite file but not a tablectl journal; "
                                   "check the path ([journal] path in table.toml)") from None
            if readonly and "readonly database" in str(exc) and _hot_journal(path):
                raise JournalError(
                    f"journal {path} has a rollback journal beside it ({path}-journal): a "
                    "transaction of another program (tablectl writes a -wal, never that) that "
                    "was cut off before it finished, perhaps an edit by hand, and the file is "
                    "not whole until it is rolled back, which a reader may not do; keep both "
                    "files as they are for the inquiry, copy them together to another "
                    "directory, open the copy once with `sqlite3 COPY 'PRAGMA "
                    "integrity_check'` (it rolls the transaction back), and read the copy"
                    ) from None
            if readonly and "readonly database" in str(exc):
                # Even a reader of a WAL journal needs the -shm file beside it, so it must be
                # able to write the journal's directory: a permission matter, not damage.
                raise JournalError(f"journal {path} cannot be read by this user: SQLite reads "
                                   "it through a -shm file beside it, and this user may not "
                                   f"write {path.parent}; run it as root or as the service "
                                   "user: sudo -u tablectl tablectl ...") from None
            disk = _disk_problem(path, exc)
            if disk:
                raise JournalError(f"journal {path} cannot be opened: {disk}") from None
            short = cut_short(path)
            if short:
                raise JournalError(f"journal {path} cannot be opened: {short}; restore it from "
                                   "a backup (docs/journal.md)") from None
            raise JournalError(f"journal {path} cannot be opened ({exc}): it is not a tablectl "
                               "journal, or it is damaged or unreadable; check the path and its "
                               "permissions, or restore it from a backup (docs/journal.md)"
                               ) from None
        except OSError as exc:
            if exc.errno == errno.EROFS:
                # Its directory not made yet, on a read-only file system: making it is no way out.
                raise JournalError(
                    f"journal {path} cannot be created: its directory {path.parent} cannot be "
                    "made on a read-only file system; mount it read-write, or set [journal] "
                    "path on a disk that can be written (the unit's state directory "
                    "/var/lib/tablectl)") from None
            raise JournalError(f"journal {path} cannot be created: {exc.strerror}; check the "
                               "directory exists and the service user may write it") from None
        problem = _format_problem(path, meta.get("format"))
        if problem:
            # Read as this format, a newer journal would be called damaged and its records
            # edited; written, it would get records of the wrong format in its chain.
            conn.close()
            raise JournalError(problem)
        stored = meta.get("table_id")
        if stored is None:
            if readonly or table_id is None:
                conn.close()
                raise JournalError(f"{path} is not a tablectl journal (no table id in it)")
            with conn:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                                 [("table_id", table_id), ("format", str(FORMAT_VERSION)),
                                  ("created_ns", str(clock.time_ns()))])
            stored = conn.execute("SELECT value FROM meta WHERE key='table_id'").fetchone()[0]
        if table_id is not None and stored != table_id:
            conn.close()
            raise JournalError(f"journal {path} belongs to table {stored!r}, not {table_id!r}; "
                               "give each table its own journal path ([journal] path)")
        lock_fd = None
        if not readonly:
            try:
                lock_fd = _writer_lock(path)
            except JournalError:
                conn.close()
                raise
            _reserve_wal(conn, path)
        return cls(conn, path, stored, readonly, clock, lock_fd)

    def checkpoint(self) -> int:
        """Copy what the WAL holds into the main file now (a passive checkpoint: it waits for
        nobody). Meant for a quiet moment, so the checkpoint SQLite would otherwise run inside
        some later commit does not delay that commit. The WAL frames it found; 0 when it could
        not run (a reader in the way: SQLite checkpoints later)."""
        with self._lock:
            self._writable()
            try:
                (_busy, frames, _done), = self._conn.execute(
                    "PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.DatabaseError:
                return 0
            return max(int(frames), 0)

    def close(self) -> None:
        """Checkpoint the WAL into the main file and close. Every append already was durable."""
        with self._lock:
            if self._conn is None:
                return
            try:
                if not self.readonly:
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.DatabaseError:
                pass  # a reader holding the WAL open: the checkpoint happens next time
            self._conn.close()
            self._conn = None  # type: ignore[assignment]
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # releases the writer's lock
                self._lock_fd = None

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- writing --------------------------------------------------------------------

    def append(self, kind: str, payload: Any = None, round_id: str | None = None,
               source: str | None = None, article: str | None = None) -> Record:
        """Append one record; it is on disk when this returns. ``payload`` is any JSON value
        (a dict as a rule; ``event.to_json()`` for a device event)."""
        return self.append_many([Entry(kind, payload, round_id, source, article)])[0]

    def append_many(self, entries: Iterable[Entry | tuple | Mapping[str, Any]]) -> list[Record]:
        """Append several records in one transaction (one fsync: group commit). All are on disk
        when this returns, or none is (a crash mid-way leaves none of them)."""
        return [Record(seq, wall, mono, table, rid, kind, source, article,
                       json.loads(payload_text), prev, digest)
                for seq, wall, mono, table, rid, kind, source, article, payload_text, _, prev,
                digest in self._write(entries)]

    def write_many(self, entries: Iterable[Entry | tuple | Mapping[str, Any]]) -> int:
        """As :meth:`append_many`, for a writer that needs only to know the records are on
        disk: returns the last one's sequence number (0 for no entries) and builds no
        :class:`Record` (the table's path from an input to its publication)."""
        rows = self._write(entries)
        return rows[-1][0] if rows else 0

    def _write(self, entries: Iterable[Entry | tuple | Mapping[str, Any]]) -> list[tuple]:
        """The one transaction of append_many and write_many: the rows written, in order."""
        items = [_entry(e) for e in entries]
        if not items:
            return []
        with self._lock:
            self._writable()
            # Encode everything before the transaction: a bad payload changes nothing.
            prepared = [(e, canonical_json_payload(e.payload)) for e in items]
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                head = self._head
                if head is None:
                    row = conn.execute("SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1"
                                       ).fetchone()
                    head = (row[0], row[1]) if row else (0, GENESIS_HASH)
                seq, prev = head
                rows = []
                for e, payload_text in prepared:
                    seq += 1
                    rec_wall, rec_mono = self._clock.time_ns(), self._clock.monotonic_ns()
                    body = body_text(seq, rec_wall, rec_mono, self.table_id, e.round_id,
                                     e.kind, e.source, e.article, payload_text)
                    digest = chain_hash(prev, body)
                    rows.append((seq, rec_wall, rec_mono, self.table_id, e.round_id, e.kind,
                                 e.source, e.article, payload_text, body, prev, digest))
                    prev = digest
                conn.executemany(f"INSERT INTO records({_COLUMNS}) VALUES "
                                 "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
                conn.execute("COMMIT")
            except BaseException as exc:
                self._head = None
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # the connection is gone: SQLite rolls back on the next open
                if isinstance(exc, sqlite3.Error):
                    raise JournalError(
                        f"journal {self.path}: the record could not be written ({exc}); it was "
                        "NOT recorded and must not be acted on; check the disk (space, "
                        "permissions) and restart the service") from None
                raise
            self._head = (seq, prev)
            return rows

    def _writable(self) -> None:
        if self._conn is None:
            raise JournalError(f"journal {self.path} is closed")
        if self.readonly:
            raise JournalError(f"journal {self.path} was opened read-only")

    # --- reading --------------------------------------------------------------------

    def records(self, since: int | None = None, round_id: str | None = None, *,
                since_wall_ns: int | None = None, kinds: Iterable[str] | None = None,
                until: int | None = None) -> Iterator[Record]:
        """Records in sequence order: those after sequence number ``since`` (exclusive),
        of ``round_id``, from the first stamped at or after ``since_wall_ns`` on, of the given
        ``kinds``, up to ``until`` (inclusive). Every filter is optional."""
        # Streamed from a snapshot of its own: a long export neither holds the writer's lock
        # nor loads the journal into memory, and appends made meanwhile do not disturb it.
        conn = self._reader()
        try:
            self._begin(conn)
            yield from self._select(conn, since, round_id, since_wall_ns, kinds, until)
        finally:
            conn.close()

    @contextlib.contextmanager
    def verified(self, anchor: tuple[int, str] | None = None) -> Iterator["Verified"]:
        """The journal as one snapshot whose chain has just been verified: ``.report`` is
        :meth:`verify`'s report on it and ``.records(...)`` reads that same snapshot (filters
        as :meth:`records`), never past the last record the chain vouches for. Appends
        made meanwhile are not seen, so no record is read that the verification did not
        check. For an export that must hold only what the chain vouches for."""
        conn = self._reader()
        try:
            self._begin(conn)
            report = self._why_bad(_verify_rows(conn, self.table_id, anchor))

            def records(since: int | None = None, round_id: str | None = None, *,
                        since_wall_ns: int | None = None, kinds: Iterable[str] | None = None,
                        until: int | None = None) -> Iterator[Record]:
                last = report.head_seq if until is None else min(until, report.head_seq)
                return self._select(conn, since, round_id, since_wall_ns, kinds, last)

            yield Verified(report, records)
        finally:
            conn.close()

    def _begin(self, conn: sqlite3.Connection) -> None:
        try:
            conn.execute("BEGIN")
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"journal {self.path} cannot be read: {exc}; run "
                               "`tablectl journal verify` on it") from None

    def _select(self, conn: sqlite3.Connection, since: int | None, round_id: str | None,
                since_wall_ns: int | None, kinds: Iterable[str] | None,
                until: int | None) -> Iterator[Record]:
        """The records that match, read from ``conn``'s open transaction. ``since_wall_ns``
        starts a whole tail: every record from the first one stamped at or after it, so that
        one written later under a clock set back (an earlier stamp) is not left out, and what
        is read chains with no hole."""
        try:
            if since_wall_ns is not None:
                first = conn.execute(
                    "SELECT seq FROM records WHERE wall_ns >= ? AND seq > ? ORDER BY seq "
                    "LIMIT 1", (int(since_wall_ns), int(since or 0))).fetchone()
                if first is None:
                    return
                since = first[0] - 1
            where, args = [], []
            if round_id is not None:
                # The round's span narrows the bounds given; it never drops one (the last
                # record a verified chain vouches for, a --since).
                lo, hi = _round_span(conn, str(round_id))
                since = lo if since is None else since if lo is None else max(since, lo)
                until = hi if until is None else until if hi is None else min(until, hi)
                where.append("round_id = ?")
                args.append(str(round_id))
            for term, bound in (("seq > ?", since), ("seq <= ?", until)):
                if bound is not None:
                    where.append(term)
                    args.append(int(bound))
            if kinds is not None:
                term, kind_args = _kinds_term([str(k) for k in kinds])
                where.append(term)
                args.extend(kind_args)
            sql = f"SELECT {_COLUMNS} FROM records"
            if where:
                sql += " WHERE " + " AND ".join(where)
            cursor = conn.execute(sql + " ORDER BY seq", tuple(args))
            while True:
                rows = cursor.fetchmany(512)
                if not rows:
                    break
                for row in rows:
                    yield _record(row, self.path)
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"journal {self.path} cannot be read: {exc}; run "
                               "`tablectl journal verify` on it") from None

    def _reader(self) -> sqlite3.Connection:
        """A read-only connection of its own, for long reads beside the writer (WAL)."""
        if self._conn is None:
            raise JournalError(f"journal {self.path} is closed")
        try:
            conn = sqlite3.connect(_read_uri(self.path), uri=True, isolation_level=None)
            conn.execute("PRAGMA busy_timeout = 10000")
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"journal {self.path} cannot be read: {exc}") from None
        return conn

    def _query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple]:
        if self._conn is None:
            raise JournalError(f"journal {self.path} is closed")
        try:
            return self._conn.execute(sql, tuple(args)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"journal {self.path} cannot be read: {exc}; run "
                               "`tablectl journal verify` on it") from None

    def head(self) -> tuple[int, str]:
        """Sequence number and hash of the last record (``(0, GENESIS_HASH)`` when empty)."""
        with self._lock:
            rows = self._query("SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1")
        return (rows[0][0], rows[0][1]) if rows else (0, GENESIS_HASH)

    def last(self, kind: str | None = None, source: str | None = None,
             round_id: str | None = None, since: int | None = None,
             until: int | None = None) -> Record | None:
        """The latest record of ``kind`` (from ``source``, in ``round_id``, after sequence
        number ``since``, at or before ``until``), or None. Recovery uses it for state that
        outlives a restart, e.g. the last ``alarm`` of a device. A kind outside MARK_KINDS has
        no index: the search walks back from the last record (or ``until``), as far as
        ``since`` when it is given."""
        where, args = [], []
        if kind is not None:
            term, kind_args = _kinds_term([str(kind)])
            where.append(term)
            args.extend(kind_args)
        for col, val in (("source", source), ("round_id", round_id)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(str(val))
        for term, bound in (("seq > ?", since), ("seq <= ?", until)):
            if bound is not None:
                where.append(term)
                args.append(int(bound))
        sql = f"SELECT {_COLUMNS} FROM records"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY seq DESC LIMIT 1"
        with self._lock:
            rows = self._query(sql, args)
        return _record(rows[0], self.path) if rows else None

    def round(self, round_id: str) -> RoundState | None:
        """Every record of one round, or None when the journal has none."""
        recs = list(self.records(round_id=round_id))
        if not recs:
            return None
        return RoundState(str(round_id), any(r.kind == Kind.ROUND_CLOSE for r in recs), recs)

    def last_round(self) -> RoundState | None:
        """The latest round opened (closed or not), with its records; None before any round."""
        opened = self.last(kind=Kind.ROUND_OPEN)
        return self.round(opened.round_id) if opened and opened.round_id is not None else None

    def open_round_state(self) -> RoundState | None:
        """The round a crash interrupted: the latest ``round_open`` without a ``round_close``,
        with all its records (for recovery to end it as the regulation says); None otherwise."""
        state = self.last_round()
        return state if state is not None and not state.closed else None

    def rounds(self, since: int | None = None,
               until: int | None = None) -> list["RoundSummary"]:
        """Every round in the journal (or those opened after sequence number ``since``), in
        the order they began, with how each ended; only records up to ``until`` (inclusive)
        are read, when it is given (the last a verified chain vouches for)."""
        bound = int(until) if until is not None else None
        upto = "AND c.seq <= ? " if bound is not None else ""
        sql = ("SELECT r.round_id, MIN(r.seq), MAX(r.seq), COUNT(*), MIN(r.wall_ns), "
               "(SELECT c.payload || char(31) || COALESCE(c.article, '') FROM records c "
               " WHERE c.round_id = r.round_id AND c.kind = 'round_close' " + upto +
               " ORDER BY c.seq DESC LIMIT 1) "
               "FROM records r WHERE r.round_id IS NOT NULL "
               + ("AND r.seq <= ? " if bound is not None else "") + "GROUP BY r.round_id "
               + ("HAVING MIN(r.seq) > ? " if since is not None else "") + "ORDER BY MIN(r.seq)")
        args: list[Any] = [bound, bound] if bound is not None else []
        args += [int(since)] if since is not None else []
        with self._lock:
            rows = self._query(sql, args)
        out = []
        for rid, first, last, count, wall, close in rows:
            outcome, article, reason = None, None, None
            if close is not None:
                payload, _, article = close.partition("\x1f")
                doc = json.loads(payload)
                outcome = doc.get("outcome", "closed") if isinstance(doc, dict) else "closed"
                reason = doc.get("reason") if isinstance(doc, dict) else None
            out.append(RoundSummary(rid, first, last, count, wall, close is not None, outcome,
                                    article or None,
                                    reason if isinstance(reason, str) else None))
        return out

    def next_round_id(self) -> str:
        """A fresh round id: one more than the latest numeric round id opened (``"1"`` first).
        The table machine may use its own scheme; ids only need to be unique per journal."""
        with self._lock:
            rows = self._query("SELECT round_id FROM records WHERE kind = 'round_open' AND "
                               "round_id IS NOT NULL ORDER BY seq DESC LIMIT 1")
            count = self._query("SELECT COUNT(*) FROM records WHERE kind = 'round_open'")[0][0]
        if rows and str(rows[0][0]).isdigit():
            return str(int(rows[0][0]) + 1)
        return str(count + 1)

    def __len__(self) -> int:
        with self._lock:
            return self._query("SELECT COUNT(*) FROM records")[0][0]

    # --- verification ---------------------------------------------------------------

    def verify(self, anchor: tuple[int, str] | None = None,
               since: int | None = None) -> VerifyReport:
        """Check every record against its body and the chain; name the first bad one.

        ``anchor`` is a ``(seq, hash)`` written down earlier (e.g. from a previous verify):
        the record ``seq`` must still be there with that hash, which catches a cut-off tail or
        a rewritten chain. ``since``: only the records after that sequence number, chained
        from its stored hash (what recovery rebuilds the round in play from; a whole
        journal's verify takes time that grows with the journal).
        """
        conn = self._reader()  # a snapshot: verifying never holds up the writer
        with contextlib.closing(conn):
            return self._why_bad(_verify_rows(conn, self.table_id, anchor, since or 0))

    def _why_bad(self, report: VerifyReport) -> VerifyReport:
        """``report``, named as a file cut short when the file is shorter than its header
        says: the records past the cut read as garbage, which is not an edit."""
        if report.ok:
            return report
        short = cut_short(self.path)
        if not short:
            return report
        return dataclasses.replace(report, reason=f"it cannot be read whole: {short}")


@dataclass(frozen=True, slots=True)
class Verified:
    """What :meth:`Journal.verified` yields: the report on one snapshot, and its records up
    to the last good one (``records(since=..., round_id=..., since_wall_ns=..., kinds=...,
    until=...)``)."""

    report: VerifyReport
    records: Callable[..., Iterator[Record]]


def _verify_rows(conn: sqlite3.Connection, table_id: str,
                 anchor: tuple[int, str] | None, since: int = 0) -> VerifyReport:
    """:meth:`Journal.verify` on ``conn``: begins its read transaction unless one is open,
    and leaves it open, so the caller may read the very snapshot that was verified. From
    record ``since`` on (0: the whole journal), chained from that record's stored hash."""
    prev_seq, prev_hash, count = since, GENESIS_HASH, 0
    anchor_seen = anchor is None

    def bad(seq: int, reason: str) -> VerifyReport:
        return VerifyReport(False, count, prev_seq, prev_hash, seq, reason)

    try:
        if not conn.in_transaction:
            conn.execute("BEGIN")
        if since:
            row = conn.execute("SELECT hash FROM records WHERE seq = ?", (since,)).fetchone()
            if row is None or not isinstance(row[0], str):
                return bad(since, f"record {since}, where the check begins, is gone or has "
                                  "no hash: the journal was edited")
            prev_hash = row[0]
        # The whole journal without a WHERE: a row whose sequence number was made NULL sorts
        # first and is named, where "seq > 0" would pass over it.
        cursor = (conn.execute(f"SELECT {_COLUMNS} FROM records WHERE seq > ? ORDER BY seq",
                               (since,)) if since else
                  conn.execute(f"SELECT {_COLUMNS} FROM records ORDER BY seq"))
        for row in cursor:
            seq = row[0]
            expected = prev_seq + 1
            if type(seq) is not int:
                # A table rebuilt without its types (NULL sorts first, a real among the
                # integers): what the row holds is named, never compared as a number.
                return bad(expected, f"a row's sequence number is {seq!r}, not a whole "
                                     "number: the record was edited")
            if seq != expected:
                if seq > expected:
                    odd = _odd_seq(conn)
                    if odd is not None:     # text sorts after every number: it left a gap
                        return bad(expected, f"a row's sequence number is {odd!r}, not a "
                                             "whole number: the record was edited")
                    gone = (f"record {expected} is" if seq == expected + 1 else
                            f"records {expected}-{seq - 1} are")
                    where = (f"the journal begins at record {seq}" if not prev_seq else
                             f"record {prev_seq} is followed by {seq}")
                    return bad(expected, f"missing: {gone} gone ({where}): deleted")
                return bad(seq, f"sequence number {seq} out of order after {prev_seq}")
            problem = _check_row(row, prev_hash, table_id)
            if problem:
                copied = _copy_of(conn, seq, row[9])
                if copied is not None:
                    problem = f"it is a copy of record {copied}: the record was duplicated"
                elif seq == 1 and row[3] != table_id:
                    problem = _other_table(conn, row[3], table_id) or problem
                return bad(seq, problem)
            if anchor is not None and seq == anchor[0]:
                if row[11] != anchor[1]:
                    # Any record up to this one may be the one rewritten, its chain recomputed
                    # after it: none of them is vouched for, however well they chain.
                    return VerifyReport(False, count, 0, GENESIS_HASH, seq,
                                        f"its hash {row[11]} differs from the anchor "
                                        f"{anchor[1]}: {ANCHOR_BROKEN}")
                anchor_seen = True
            prev_seq, prev_hash, count = seq, row[11], count + 1
    except sqlite3.DatabaseError as exc:
        return bad(prev_seq + 1, f"the database cannot be read past here: {exc}")
    if not anchor_seen:
        return VerifyReport(False, count, prev_seq, prev_hash, anchor[0],
                            f"anchored record is gone: the journal ends at record "
                            f"{prev_seq} (records were cut off the end)")
    return VerifyReport(True, count, prev_seq, prev_hash)


# What verify says of an anchored record whose hash changed (journal_cli words the way out).
ANCHOR_BROKEN = ("the chain was rewritten at or before it, and which record was changed the "
                 "journal cannot tell")

# What verify says when only the journal's own table id was changed (journal_cli words the
# way out for it).
META_EDITED = "that table id was edited, the records were not"


def _other_table(conn: sqlite3.Connection, table: Any, table_id: str) -> str:
    """When record 1 is another table's: '' unless every record is that one table's, which
    says the journal's own table id (its meta table) was changed, not the records."""
    try:
        tables = conn.execute("SELECT DISTINCT table_id FROM records LIMIT 2").fetchall()
    except sqlite3.Error:
        return ""
    if len(tables) != 1:
        return ""
    return (f"every record is table {table!r}'s, but the journal's own table id (in its "
            f"meta table) says {table_id!r}: {META_EDITED}; put it back to {table!r} "
            "(or restore the journal from a backup)")


def _copy_of(conn: sqlite3.Connection, seq: int, body: Any) -> int | None:
    """The earlier record whose body the bad row ``seq`` holds, or None. Asked only once a
    row is found bad (no index serves it)."""
    try:
        row = conn.execute("SELECT seq FROM records WHERE body = ? AND seq < ? ORDER BY seq "
                           "LIMIT 1", (body, seq)).fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def _odd_seq(conn: sqlite3.Connection) -> Any:
    """A sequence number that is not an integer (text, a blob), or None: a table rebuilt
    without its types can hold one, and it sorts after every number."""
    row = conn.execute("SELECT seq FROM records WHERE typeof(seq) != 'integer' LIMIT 1"
                       ).fetchone()
    return row[0] if row else None


def _kinds_term(kinds: list[str]) -> tuple[str, list[str]]:
    """The WHERE term for records of ``kinds``: one of MARK_KINDS spelled as a literal, so
    that SQLite takes its partial index; any other kind bound as a parameter."""
    if len(kinds) == 1 and kinds[0] in MARK_KINDS:
        return f"kind = '{kinds[0]}'", []
    return f"kind IN ({', '.join('?' * len(kinds))})", kinds


def _round_span(conn: sqlite3.Connection, round_id: str) -> tuple[int | None, int | None]:
    """``(lo, hi)`` such that every record of ``round_id`` has ``lo < seq <= hi`` (``hi``
    None: to the end), from the round marks' index.

    A round's records are written from the commit that opens it (its ``round_open``) until
    the next round opens: the input that opens the next round is the last record journaled
    under it. So they lie after the previous ``round_open`` and before the next one.
    ``(None, None)`` for a round without a ``round_open`` (every record is looked at)."""
    row = conn.execute("SELECT MIN(seq) FROM records WHERE kind = 'round_open' AND "
                       "round_id = ?", (round_id,)).fetchone()
    opened = row[0] if row else None
    if opened is None:
        return None, None
    before = conn.execute("SELECT seq FROM records WHERE kind = 'round_open' AND seq < ? "
                          "ORDER BY seq DESC LIMIT 1", (opened,)).fetchone()
    after = conn.execute("SELECT seq FROM records WHERE kind = 'round_open' AND seq > ? "
                         "ORDER BY seq LIMIT 1", (opened,)).fetchone()
    return (before[0] if before else 0), (after[0] - 1 if after else None)


def _writer_lock(path: Path) -> int:
    """Take the one-writer lock (``<journal>.lock`` beside the journal's file, a symbolic
    link followed; flock): a second daemon on the same journal is refused instead of
    interleaving its records. The kernel drops the lock when the process dies, so a restart
    after a crash is never blocked."""
    # Beside the journal's own file, whatever name (a symbolic link) it was opened by.
    real = path.resolve()
    lock_path = real.with_name(real.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "another process"
        os.close(fd)
        raise JournalError(f"journal {path} is being written by {holder}; one table runs "
                           "one controller: stop the other (systemctl stop tablectl) first"
                           ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
    return fd


def _reserve_wal(conn: sqlite3.Connection, path: Path) -> None:
    """Give the WAL file its working size before any record is written to it.

    A commit that makes the WAL file longer also flushes the file system's own journal (the
    file's new size), which costs it about twice as long at the median and up to 1.8 ms in
    the tail; a new or reopened journal's WAL grows that way for its first few hundred
    commits. The space is written by a transaction that is rolled back: SQLite spills its
    pages into the WAL, never marks them committed (so neither a reader nor the recovery
    after a crash ever takes them) and writes the next commits over them. The records are
    not touched. Best effort: a journal whose reserve fails works as before."""
    wal = Path(f"{path}-wal")
    try:
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
        want = WAL_RESERVE_PAGES * page
        if wal.exists() and wal.stat().st_size >= want:
            return
        cache = conn.execute("PRAGMA cache_size").fetchone()[0]
        conn.execute("PRAGMA cache_size = 16")   # small: the blob's pages must spill
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("INSERT INTO meta(key, value) VALUES ('wal-reserve', zeroblob(?))",
                             (want,))
            finally:
                conn.execute("ROLLBACK")
        finally:
            conn.execute(f"PRAGMA cache_size = {int(cache)}")
        # Flushed now, at start-up, not by the first card's commit.
        fd = os.open(wal, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except (sqlite3.Error, OSError):
        return


def _read_uri(path: Path) -> str:
    """The URI a reader opens ``path`` by. On a read-only file system with no -wal file
    beside the journal (one closed cleanly: an inspector's copy on write-protected media) it
    is read as immutable, since SQLite could not make the -shm file a WAL reader needs and
    nothing can change it there. With a -wal file, records may wait in it: read normally (a
    -shm left beside it serves), or refused with the way out (_disk_problem)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    wal = Path(f"{path}-wal")
    if _read_only_fs(path.resolve().parent) and not (wal.exists() and wal.stat().st_size):
        uri += "&immutable=1"
    return uri


def _untouched_uri(path: Path) -> str:
    """The URI to read ``path`` by without changing a byte of it, its -wal or its -shm: the
    daemon's check of its head before it opens the journal for writing, so a refused start
    leaves a journal kept as evidence as it found it. A reader usually writes its read mark
    into the -shm index; with ``readonly_shm`` SQLite reads the index (or, when it cannot trust
    it, the WAL itself) into memory instead. Without a -wal there is nothing to read but the
    main file (``immutable``: no -wal and -shm are made beside it). A -wal left without its
    -shm (a copy of the two files) needs an index made to be read: SQLite makes the -shm, and
    the journal and its WAL stay as they were. A -shm with no -wal, or an empty one, beside it
    holds nothing to read either: read as immutable too, for SQLite would make the -wal."""
    base = f"{path.resolve().as_uri()}?mode=ro"
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    if not (wal.exists() and wal.stat().st_size):
        return base + "&immutable=1"
    if shm.exists():
        return base + "&readonly_shm=1"
    return base


def _read_only_fs(directory: Path) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False


# What SQLite says when a file beside the journal cannot be made or grown: the -shm file it
# maps (SHMOPEN, SHMSIZE), or any write (FULL).
_NO_ROOM = ("SQLITE_FULL", "SQLITE_IOERR_SHMOPEN", "SQLITE_IOERR_SHMSIZE")


def _disk_problem(path: Path, exc: sqlite3.DatabaseError) -> str:
    """Why the journal could not be opened when the disk, not the journal, is at fault (a
    read-only file system, a full disk), with the way out; '' otherwise. Even a reader of a
    WAL journal writes a -shm file beside it, so either stops every command: said as "damaged,
    restore it from a backup", it would have a sound journal replaced."""
    where = path.parent
    try:
        st = os.statvfs(where)
    except OSError:
        return ""
    if st.f_flag & os.ST_RDONLY:
        return (f"{where} is on a read-only file system, and SQLite writes a -shm file (and a "
                "-wal file) beside a journal even to read it; mount it read-write, or copy the "
                "journal, with its -wal file if there is one, to a directory that can be "
                "written and read the copy")
    name = getattr(exc, "sqlite_errorname", "")
    free = st.f_bavail * st.f_frsize
    if name in _NO_ROOM or (name.startswith("SQLITE_IOERR") and free < 1 << 20):
        return (f"there is no room for the -shm and -wal files SQLite keeps beside a journal "
                f"({exc}; {free} bytes free on the disk that holds {where}, or the process's "
                "file size limit, ulimit -f, is reached); free space on that disk (or lift the "
                "limit) and try again: the journal itself is untouched")
    return ""


def cut_short(path: Path) -> str:
    """Why the file at ``path`` is shorter than SQLite's own header says it is, or ''.

    The header gives the page size (bytes 16-17, 1 meaning 65,536) and the pages in the file
    (bytes 28-31, to be trusted while bytes 24-27 equal bytes 92-95). A file shorter than
    that lost its end: a copy that did not finish, a disk that filled or failed. Asked only
    once the journal has failed to open or to verify (during a checkpoint the header may run
    ahead of the file for a moment, while readers take those pages from the WAL)."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return ""
    if len(head) < 100 or not head.startswith(b"SQLite format 3\0") \
            or head[24:28] != head[92:96]:
        return ""
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    want = page * int.from_bytes(head[28:32], "big")
    if size >= want:
        return ""
    return (f"the file is {size} bytes where its own header says {want}: it was cut short "
            "(a copy that did not finish, or a disk that filled or failed)")


def _not_ours(conn: sqlite3.Connection, path: Path) -> str:
    """Why the writer must not make its tables in the SQLite file at ``path`` and write a
    chain there, or '': another program's database (the journal would be written into it),
    a journal whose records table is gone (a new chain would begin, as in an empty file), or
    records whose journal lost its table id. A journal that a crash cut off while its tables
    were being made (no table id, no record yet) is made whole as a new one."""
    tables = {name for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    if not tables:
        return ""
    if not tables & {"meta", "records"}:
        names = ", ".join(map(repr, sorted(tables)[:5]))
        return (f"journal {path} is an SQLite file of another program (tables {names}), not a "
                "tablectl journal, and the journal would be written into it; check [journal] "
                "path, or move that file away")
    table_id = (conn.execute("SELECT value FROM meta WHERE key = 'table_id'").fetchone()
                if "meta" in tables else None)
    if "records" not in tables:
        if table_id is None:
            return ""
        return (f"journal {path} of table {table_id[0]!r} has lost its records table: a "
                "journal cut to nothing or edited, which the writer would begin a new chain "
                "in without a word; restore the journal from a backup (docs/journal.md)")
    if table_id is None and conn.execute("SELECT 1 FROM records LIMIT 1").fetchone():
        return (f"journal {path} holds records but no table id (its meta table was removed or "
                "edited); restore the journal from a backup (docs/journal.md), or put the "
                "table id its records give back into its meta table")
    return ""


def _hot_journal(path: Path) -> bool:
    """Whether a rollback journal (``<journal>-journal``, not empty) lies beside ``path``."""
    try:
        return Path(f"{path}-journal").stat().st_size > 0
    except OSError:
        return False


def _check_files(path: Path) -> None:
    """Refuse a journal, or a -wal or -shm file beside it, that is not a file: opening a named
    pipe waits for a writer that never comes (the command would hang), and SQLite cannot use
    a directory or a device beside the journal. A directory at the journal's own path is named
    where it is opened (its way out differs for the writer and the readers)."""
    what = special(path)
    if what:
        raise JournalError(f"journal {path} is {what}, not a file: name the journal file "
                           "(--journal PATH, or [journal] path in table.toml)")
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        # (a -shm directory is passed over: a reader then works without it)
        what = special(side, directory=suffix == "-wal")
        if what:
            raise JournalError(f"journal {path}: the {suffix} file beside it, {side}, is {what}, "
                               "not a file SQLite can use (it holds no records); remove it and "
                               "try again")


def _format_problem(path: Path, stored: Any) -> str:
    """Why a journal whose meta table gives format ``stored`` cannot be read or written as
    this version's (FORMAT_VERSION), with the way out; '' when it can (a journal made before
    the format was recorded has none)."""
    if stored is None or str(stored) == str(FORMAT_VERSION):
        return ""
    text = str(stored)
    if text.isascii() and text.isdigit() and int(text) > FORMAT_VERSION:
        return (f"journal {path} is of format {int(text)}, written by a newer tablectl; this "
                f"one reads and writes format {FORMAT_VERSION} and cannot tell a record of it "
                "from an edited one: read it with the tablectl that wrote it, and run that "
                "version at the table")
    return (f"journal {path} gives its format as {ascii(text[:40])}, which no tablectl writes "
            f"(this one writes {FORMAT_VERSION}): its meta table was edited; put the format "
            f"back to {FORMAT_VERSION}, or restore the journal from a backup (docs/journal.md)")


def _hard_links(path: Path) -> int:
    try:
        return path.stat().st_nlink
    except OSError:
        return 1


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


def canonical_json_payload(payload: Any) -> str:
    """The payload as canonical JSON, or JournalError naming what cannot be journaled."""
    try:
        return canonical_json(payload)
    except (TypeError, ValueError) as exc:
        raise JournalError(f"payload cannot be journaled as JSON ({exc}); pass plain dicts, "
                           "lists, strings, integers, booleans or None (event.to_json() for "
                           "an event)") from None


def _entry(e: Entry | tuple | Mapping[str, Any]) -> Entry:
    if isinstance(e, Entry):
        entry = e
    elif isinstance(e, Mapping):
        entry = Entry(**e)
    else:
        entry = Entry(*e)
    if not isinstance(entry.kind, str) or not _KIND_RE.fullmatch(entry.kind):
        raise JournalError(f"record kind {entry.kind!r} must be lower-case letters, digits, "
                           "'_', '.' or '-' (e.g. 'device', 'decision')")
    for name in ("round_id", "source", "article"):
        value = getattr(entry, name)
        if value is not None and not isinstance(value, str):
            entry = entry._replace(**{name: str(value)})
    return entry


def _record(row: tuple, path: Path | None = None) -> Record:
    seq, wall, mono, table, rnd, kind, source, article, payload, _body, prev, digest = row
    try:
        value = json.loads(payload)
    except (TypeError, ValueError):
        # Only an edit or damage makes one (the writer stores canonical JSON): named, for a
        # reader and for the daemon's recovery, which reads the last round back.
        where = f"journal {path}: " if path is not None else ""
        raise JournalError(f"{where}record {seq} cannot be read: its payload column is not "
                           "JSON, so the journal was damaged or edited; run `tablectl journal "
                           f"verify{f' --journal {path}' if path is not None else ''}` on it "
                           "and restore it from a backup (docs/journal.md)") from None
    return Record(seq, wall, mono, table, rnd, kind, source, article, value, prev, digest)


def _cut_repr(value: Any) -> str:
    """A value of an edited record, as a reason names it: its repr, at most 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _check_row(row: tuple, prev_hash: str, table_id: str) -> str:
    """Why this row breaks the journal, or '' when it is sound."""
    seq, wall, mono, table, rnd, kind, source, article, payload, body, prev, digest = row
    # The writer stores text, whole numbers and NULL, and a body of ASCII only: a value of
    # another type (a blob, a real) compares equal to nothing it should, and would not hash.
    if not isinstance(body, str) or not body.isascii():
        return "its body is not ASCII text (a canonical body is): the record was edited"
    try:
        doc = json.loads(body)
    except (TypeError, ValueError):
        return "its body is not JSON: the record was edited"
    if not isinstance(doc, dict) or sorted(doc) != sorted(BODY_FIELDS):
        return "its body does not have the journal's fields: the record was edited"
    for name in ("seq", "v"):
        if type(doc[name]) is not int:
            return (f"its body's {name} is {_cut_repr(doc[name])}, not a whole number: the "
                    "record was edited")
    if doc["seq"] != seq:
        return (f"it holds the content of record {doc['seq']!r}: records were reordered "
                "or moved")
    if prev != prev_hash:
        return (f"its previous hash {prev!r} is not the hash of the record before it "
                f"({prev_hash}): a record was changed, removed or inserted before it")
    if chain_hash(prev, body) != digest:
        return "its hash does not match its content: the record was edited"
    if doc["v"] != FORMAT_VERSION:
        # The journal's own format (its meta table) was found to be this one at open.
        return (f"its format version {doc['v']!r} is not the journal's {FORMAT_VERSION}: the "
                "record was edited")
    columns = {"wall_ns": wall, "mono_ns": mono, "table_id": table, "round_id": rnd,
               "kind": kind, "source": source, "article": article}
    for name, value in columns.items():
        if doc[name] != value or type(doc[name]) is not type(value):
            return (f"its {name} column ({value!r}) differs from the hashed record "
                    f"({doc[name]!r}): the record was edited")
    if not isinstance(payload, str):
        return "its payload column is not text: the record was edited"
    # Character for character: spelled otherwise (a key given twice, spaces) the column may
    # say something else to a query than the record (SQLite's JSON takes a repeated key's
    # first value, Python's its last).
    try:
        canonical = canonical_json(doc["payload"])
    except (TypeError, ValueError):
        return "its body's payload is not canonical JSON: the record was edited"
    if payload != canonical:
        return "its payload column differs from the hashed record: the record was edited"
    if table != table_id:
        return f"it belongs to table {table!r}, not this journal's {table_id!r}"
    return ""


class GroupWriter:
    """Group commit for the asyncio daemon.

    ``await writer.append(...)`` returns once the record is durable, like
    :meth:`Journal.append`, but appends made while a commit is in flight (by several driver
    tasks, say) are written together by the next one: one transaction, one fsync. Records keep
    the order in which the calls were made. Commits run in a worker thread, so the event loop
    goes on reading devices meanwhile. A failed commit raises JournalError in every call of
    that group, and none of its records is written.
    """

    def __init__(self, journal: Journal, max_batch: int = 1024) -> None:
        import asyncio
        self.journal = journal
        self.max_batch = max_batch
        self._pending: list[tuple[Entry, Any]] = []
        self._wake = asyncio.Event()
        self._task: Any = None
        self._closed = False

    async def append(self, kind: str, payload: Any = None, round_id: str | None = None,
                     source: str | None = None, article: str | None = None) -> Record:
        """Append one record; returns once it is durable."""
        return (await self.append_many([Entry(kind, payload, round_id, source, article)]))[0]

    async def append_many(self, entries: Iterable[Entry | tuple | Mapping[str, Any]]
                          ) -> list[Record]:
        """Append records that must stay together (they go in one transaction)."""
        import asyncio
        if self._closed:
            raise JournalError(f"journal {self.journal.path}: the group writer is closed")
        items = [_entry(e) for e in entries]
        for e in items:
            canonical_json_payload(e.payload)  # a bad payload fails here, alone
        loop = asyncio.get_running_loop()
        futures = []
        for e in items:
            fut = loop.create_future()
            self._pending.append((e, fut))
            futures.append(fut)
        if self._task is None:
            self._task = asyncio.create_task(self._run())
        self._wake.set()
        return list(await asyncio.gather(*futures))

    async def _run(self) -> None:
        import asyncio
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                batch = self._pending[:self.max_batch]
                del self._pending[:len(batch)]
                try:
                    records = await asyncio.to_thread(self.journal.append_many,
                                                      [e for e, _ in batch])
                except Exception as exc:  # JournalError: the whole group was not written
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc)
                    continue
                for (_, fut), rec in zip(batch, records):
                    if not fut.done():
                        fut.set_result(rec)
            if self._closed:
                return

    async def close(self) -> None:
        """Write what is pending, then stop (the journal itself stays open)."""
        self._closed = True
        self._wake.set()
        if self._task is not None:
            await self._task
            self._task = None
