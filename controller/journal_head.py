"""The daemon's own anchor: the last record it knows durable, kept beside the journal.

A hash chain cannot see its last records cut off, nor the journal replaced by an older copy,
nor a history rewritten with every hash recomputed (docs/journal.md, *Anchors*). The daemon
therefore writes down, in ``<journal>.head``, the sequence number and hash of the journal's
last record at the moments a record is certainly on disk: after each checkpoint of the WAL
(at least once a round) and at a clean stop. At start, before anything is written, the
journal must still hold that record with that hash, and chain from it to its end; if not,
the daemon does not start, since appending would build on a journal that lost records it
had acknowledged.

The file sits beside the journal, so it guards against loss and against a journal put back
from an older copy, not against a person who rewrites both: that is what an anchor written
down off the table is for. It is written whole or not at all (a new file, fsync'd, renamed
over the old one).
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.access import reason, special
from controller.errors import TablectlError

SUFFIX = ".head"
FORMAT = "tablectl-journal-head"
VERSION = 1
_HASH = re.compile(r"[0-9a-f]{64}")
GENESIS = "0" * 64          # the hash "before" record 1: the head of an empty journal
MAX_BYTES = 4096            # a head file is one short line; anything longer is not one


class HeadError(TablectlError):
    """The head file cannot be read or does not match the journal: the daemon must not
    write to this journal until a person has looked."""


@dataclass(frozen=True, slots=True)
class Head:
    """The journal's last record the daemon knew durable: ``seq`` and its ``hash``."""

    table_id: str
    seq: int
    hash: str

    def anchor(self) -> str:
        """As ``journal verify --anchor`` takes it."""
        return f"{self.seq}:{self.hash}"


def head_path(journal_path: str | Path) -> Path:
    """Where the daemon keeps the head of the journal at ``journal_path``."""
    p = Path(journal_path)
    return p.with_name(p.name + SUFFIX)


def read_head(path: Path) -> Head | None:
    """The head written at ``path``, or None when there is none. Raises HeadError, with the
    way out, when there is a file that is not a head this daemon wrote."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            # The daemon renames a file of its own into place: a link was put there by
            # someone else, and read through it the check would be another file's.
            raise HeadError(f"head file {path} is a symbolic link (to {os.readlink(path)}), "
                            f"not a file the daemon wrote; {_aside(path)}")
        # Not following a link swapped in meanwhile, nor waiting on a named pipe.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HeadError(f"head file {path} cannot be read: {reason(exc)}; check its "
                        "permissions (the service user writes it)") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            odd = "a directory" if stat.S_ISDIR(mode) else special(path) or "not a file"
            raise HeadError(f"head file {path} is {odd}, not a file the daemon wrote; "
                            f"{_aside(path)}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise HeadError(f"head file {path} cannot be read: {reason(exc)}; check its "
                        "permissions (the service user writes it)") from None
    finally:
        os.close(fd)
    try:
        doc = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_BYTES else None
    except (UnicodeDecodeError, ValueError):
        doc = None
    head = _parsed(doc)
    if head is None:
        raise HeadError(f"head file {path} is not a head the daemon wrote (it was edited or "
                        f"damaged); {_aside(path)}")
    return head


def _parsed(doc: Any) -> Head | None:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        return None
    seq, digest, table = doc.get("seq"), doc.get("hash"), doc.get("table_id")
    if type(seq) is not int or seq < 0 or not isinstance(digest, str) \
            or not _HASH.fullmatch(digest) or not isinstance(table, str) or not table:
        return None
    if seq == 0 and digest != GENESIS:
        return None         # record 0 is the empty journal, whose hash is 64 zeros: no other
    return Head(table, seq, digest)


def write_head(path: Path, head: Head) -> None:
    """Write ``head`` at ``path`` whole or not at all. Raises OSError."""
    tmp = path.with_name(path.name + ".new")
    text = json.dumps({"format": FORMAT, "version": VERSION, "table_id": head.table_id,
                       "seq": head.seq, "hash": head.hash}, sort_keys=True) + "\n"
    # Made anew: a file left there (a write cut off, or put there) lends the head neither
    # its mode nor, as a link, a target to be written through.
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o640)
    try:
        # A write the disk cuts short (it filled) is no head: never renamed into place, where
        # the next start would read it as a head the daemon did not write.
        data = text.encode("ascii")
        while data:
            done = os.write(fd, data)
            if done == 0:
                raise OSError(errno.ENOSPC, "the disk took no more of the head")
            data = data[done:]
        os.fsync(fd)
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    # The rename is durable only once the directory is: else a power cut may bring back
    # the older head, which is harmless (it is behind), or no file, which the start names.
    dfd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _aside(path: Path) -> str:
    return "compare the journal with its backup, then " + _move_aside(path)


def _move_aside(path: Path) -> str:
    return (f"move the head file aside (`mv {path} {path}.checked`) to start without this "
            "check: the start's record then says that no head was found")


def check(journal: Any, path: Path, head: Head) -> str:
    """Why ``journal`` (a :class:`controller.journal.Journal`) does not hold ``head``, written
    down at ``path``, in words with the way out; '' when it does. Reads only the records from
    the head's on: what was written since (a round at most, and what a crash left)."""
    found = journal.head()
    problem = ""
    if head.seq and found[0] >= head.seq and head.table_id == journal.table_id:
        report = journal.verify(anchor=(head.seq, head.hash), since=head.seq - 1)
        if not report.ok:
            problem = f"at record {report.bad_seq}, {report.reason}"
    return mismatch(path, head, journal.table_id, journal.path, found, problem)


def mismatch(path: Path, head: Head, table_id: str, journal_path: Path,
             found: tuple[int, str] | None, problem: str) -> str:
    """Why the journal does not hold ``head``, in words, with the way out; '' when it does.
    ``found`` is the journal's last record (None: the journal file is gone); ``problem`` is
    what the verify from the head's record said ('' when it chained)."""
    if head.table_id != table_id:
        return (f"head file {path} belongs to table {json.dumps(head.table_id)}, not to "
                f"{json.dumps(table_id)}: the journal or the head was put here from another "
                f"table; {_aside(path)}")
    if head.seq == 0:
        return ""
    what = (f"the daemon last wrote down record {head.seq} (hash {head.hash[:16]}…, "
            f"anchor {head.anchor()}) in {path}, ")
    if found is None:
        why = f"and the journal {journal_path} is gone"
    elif found[0] < head.seq:
        why = (f"and the journal {journal_path} ends at record {found[0]}: records "
               f"{found[0] + 1}-{head.seq} it had written are not in it (the journal was cut "
               "short, or put back from an older copy)")
    elif problem:
        why = f"and the journal {journal_path} does not hold it: {problem}"
    else:
        return ""
    return (f"{what}{why}; nothing was written to it. Restore the journal from a backup "
            f"that holds record {head.seq} (`tablectl journal verify --journal COPY --anchor "
            f"{head.anchor()}` checks a copy), or, to start on this journal as it is, "
            + _move_aside(path))


class HeadWriter:
    """Writes the head down in a thread of its own, so the two fsyncs it takes never hold up
    the event loop (a card may arrive meanwhile). Only the latest head noted is written; a
    head noted while one is being written is written after it."""

    def __init__(self, path: Path, on_error: Any = None) -> None:
        self.path = path
        self._on_error = on_error          # called with the OSError, from the thread
        self._cond = threading.Condition()
        self._next: Head | None = None
        self._busy = False
        self._closed = False
        self.written: Head | None = None   # the last head on disk
        self._thread = threading.Thread(target=self._run, name="journal-head", daemon=True)
        self._thread.start()

    def note(self, head: Head) -> None:
        """Have ``head`` written down (every record up to it must already be on disk)."""
        with self._cond:
            if not self._closed:
                self._next = head
                self._cond.notify()

    def close(self, last: Head | None = None) -> None:
        """Write what is pending and then ``last`` (if given), and stop the thread."""
        with self._cond:
            if last is not None:
                self._next = last
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._next is None and not self._closed:
                    self._cond.wait()
                head, self._next = self._next, None
                if head is None:
                    return          # closed, nothing left to write
            if head != self.written:
                try:
                    write_head(self.path, head)
                    self.written = head
                except OSError as exc:
                    if self._on_error is not None:
                        self._on_error(exc)
