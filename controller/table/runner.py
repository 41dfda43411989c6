"""The table machine bound to its journal: write first, then act; replay to recover.

Every input (device event, console or panel command, restart) is written to the journal in
one transaction with what the machine decides on it (state changes, rulings with their
article, round open and close, alarms, every published event, device commands), and nothing
of it leaves the controller (no publish, no device command, no acknowledgement to the device)
before that transaction is on disk. The machine is pure and deterministic, so deciding before
the commit acts on nothing: if the commit fails, nothing was acted on, the runner stops
taking inputs (:attr:`TableRunner.broken`) and the restarted service rebuilds the table from
the journal. Inputs taken inside :meth:`TableRunner.batch` share one commit (group commit of
a burst). Recovery replays the journaled inputs from the last round's snapshot through a
fresh machine built with the settings the round was played under, so the table is rebuilt
exactly as it was; then a ``restart`` input lets the machine end the round in progress as the
regulation says, and settings changed meanwhile take effect from the next round.

Journal record kinds written here (see controller.journal.Kind): ``device``, ``command``,
``restart`` (inputs, payload the input record); ``recovery`` (what start-up did); ``state``, ``decision`` (article set),
``round_open`` (with the table's snapshot, which names the ``config`` record whose settings the
round is played under), ``round_close``, ``alarm`` (also the published events of ALARM_EVENTS),
``table`` (every other published event),
``device_command``, ``refused`` (a command that was not allowed).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

from controller.errors import TablectlError
from controller.journal import Entry, Journal, JournalError, Kind, Record, canonical_json
from controller.shown import shown
from drivers import events as ev

from .machine import Command, Table
from .secrecy import PublicEvent, scrub

RESTART = "restart"
INPUT_KINDS = (Kind.DEVICE.value, Kind.COMMAND.value, RESTART)
# What an input's handling writes after it, in the same transaction (``refused`` when refused).
OUTPUT_KINDS = (Kind.STATE.value, Kind.DECISION.value, Kind.ROUND_OPEN.value,
                Kind.ROUND_CLOSE.value, Kind.ALARM.value, "table", "integrity",
                "device_command", "refused")

# Published events journaled as ``alarm``: what a device's state says to whoever audits the
# table (a condition, its link, another unit in its place).
ALARM_EVENTS = ("device_condition", "device_link", "device_replaced")

# Published events that end a round, journaled as its ``round_close`` with this outcome
# (``not_played``: the table was taken out of service over it before any bet).
CLOSES = {"round_complete": "settled", "round_void": "void", "round_not_played": "not_played"}

Publisher = Callable[[PublicEvent], None]
Sender = Callable[[Command], None]
Settings = Mapping[str, Any]


class ReplayDiverged(TablectlError):
    """The journal's inputs do not replay to what was played: an input accepted when played
    is refused on replay, or the reverse. Journaled as an ``alarm``; nothing was acted on."""


class JournalDamaged(ReplayDiverged):
    """A record the table would be rebuilt from does not verify against the hash chain.
    Journaled as an ``alarm``; nothing was replayed or acted on."""


@dataclass
class _Commit:
    """What one commit carries: the records in journal order, then what is done once they
    are durable."""

    entries: list[Entry] = field(default_factory=list)
    durable: list[Callable[[], None]] = field(default_factory=list)
    out: list[PublicEvent] = field(default_factory=list)
    cmds: list[Command] = field(default_factory=list)
    inputs: int = 0


class TableRunner:
    """Feeds one :class:`Table` and journals everything before it takes effect.

    ``publish`` receives every public event (display, event stream, logs) and ``send`` every
    device command, both only after the journal holds them. ``published`` (optional) is called
    once a commit's events have all gone to ``publish``, before anything is acknowledged or
    sent, so a publisher may write them out together. ``monitor`` (optional) is the deck
    integrity monitor: it sees every device event and its records are journaled as
    ``integrity``.

    ``settings`` (optional) are what ``table`` was built with, held by the ``table`` of the
    journal's ``config`` record ``config_seq``; ``build`` builds a table from such settings.
    Given them, each round's snapshot names its configuration (``config``), and
    :meth:`recover` rebuilds a round with the settings it was played under: when they are not
    this start's, the round plays on under its own and the new ones take effect when the
    next round opens (``reconfigured`` is then told what changed, once it is journaled).
    """

    def __init__(self, table: Table, journal: Journal, *, publish: Publisher | None = None,
                 send: Sender | None = None,
                 published: Callable[[], None] | None = None,
                 settings: Settings | None = None, config_seq: int | None = None,
                 build: Callable[[Settings], Table] | None = None,
                 reconfigured: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.table = table
        self.journal = journal
        self.publish = publish or (lambda e: None)
        self.published = published or (lambda: None)
        self.send = send or (lambda c: None)
        # The configuration the table plays under, and the one it takes at the next round.
        self.settings = dict(settings) if settings is not None else None
        self.config_seq = config_seq
        self.build = build
        self.reconfigured = reconfigured or (lambda change: None)
        self._next: tuple[dict[str, Any], int | None, dict[str, Any]] | None = None
        self._rewarm = False        # a new integrity monitor to give the deck in play
        # What this start's configuration, taken at once (no round opened yet), changed of
        # the devices: said in the recovery record, the one record of its taking effect.
        self._devices_changed: dict[str, Any] | None = None
        self._open: _Commit | None = None
        # Why inputs are no longer taken (a commit failed after the machine had decided):
        # the table in memory is ahead of the journal, so only a restart, which rebuilds it
        # from the journal, may go on.
        self.broken: str | None = None
        self.commits = 0            # transactions written by inputs (group commit shows here)

    # --- inputs -------------------------------------------------------------------------
    def device(self, event: ev.DeviceEvent, link: dict[str, Any] | None = None,
               durable: Callable[[], None] | None = None) -> None:
        """One device event: decided on, then journaled with its decisions, then acted on.
        ``link`` (the frame's receipt: serial, session, seq) is journaled with it, so a
        restart knows the frame was taken; ``durable()`` is called as soon as the event is on
        disk (the device may be told)."""
        record: dict[str, Any] = {"source": "device", "event": event.to_json()}
        if link is not None:
            record["link"] = link
        self._input(Kind.DEVICE, record, event.device, durable)

    def command(self, name: str, role: str = "dealer", **args: Any) -> None:
        """A dealer or supervisor command, journaled with its role. A command the machine
        refuses raises TablectlError (journaled as ``refused``); nothing changed."""
        record = {"source": "command", "name": name, "role": role, "args": args}
        # Checked before the table sees it: a command the journal cannot hold would otherwise
        # be decided on, fail its commit and leave the runner taking no more inputs.
        try:
            canonical_json(record)
        except (TypeError, ValueError, RecursionError) as exc:
            reason = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise TablectlError(
                f"command {shown(name)} not taken: its arguments cannot be journaled ({reason}); give "
                "whole numbers, text, true/false, and lists or objects of them") from None
        self._input(Kind.COMMAND, record, role)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group commit: the inputs taken inside the block are journaled, each followed by
        its decisions, in one transaction when the block ends, and only then acted on (in
        order). For a burst of device events already waiting: one ``fsync`` for all."""
        if self._open is not None:
            yield                       # inside another batch: that one commits
            return
        self._open = _Commit()
        try:
            yield
        finally:
            pending, self._open = self._open, None
            self._commit(pending)

    def _input(self, kind: str, record: dict[str, Any], source: str | None,
               durable: Callable[[], None] | None = None) -> None:
        if self.broken is not None:
            raise JournalError(f"input not taken: {self.broken}")
        pending = self._open if self._open is not None else _Commit()
        pending.entries.append(Entry(str(kind), record, self._round_id(), source))
        pending.inputs += 1
        refused: TablectlError | None = None
        try:
            self.table.apply(record)
        except TablectlError as exc:
            refused = exc
            pending.entries.append(Entry("refused", {"input": record, "error": str(exc)},
                                         self._round_id(), source))
        finally:
            # Taken now, input by input: a round's snapshot is the table right after the
            # input that opened it, not after the rest of a batch.
            self._decided(pending)
            if durable is not None:
                pending.durable.append(durable)
            if self._open is None:
                self._commit(pending)
            elif self._rewarm:
                # The round just opened has a new integrity monitor, which must know the deck
                # in play before the next input: the batch is committed up to here.
                self._open = _Commit()
                self._commit(pending)
        if self._rewarm:
            self._rewarm = False
            self._warm_integrity(self.journal.head()[0])
        if refused is not None:
            raise refused

    def _decided(self, pending: _Commit) -> None:
        if self._next is not None and any(e.kind == "round_started" for e in self.table.outbox):
            self._took_configuration(pending)
        out, cmds = self.table.outbox, self.table.commands
        private = self.table.private_records
        self.table.outbox, self.table.commands, self.table.private_records = [], [], []
        pending.entries += [Entry("integrity", r, self._round_id(), "integrity")
                            for r in private]
        pending.entries += [self._entry(e) for e in out]
        pending.entries += [Entry("device_command", c.to_json(), self._round_id(),
                                  c.device_class) for c in cmds]
        pending.out += out
        pending.cmds += cmds

    def _commit(self, pending: _Commit) -> None:
        """Write, then act: publish, acknowledge, send."""
        if not pending.entries:
            return
        try:
            self.journal.write_many(pending.entries)
        except Exception as exc:
            self.broken = (f"the journal could not be written ({exc}); nothing of the last "
                           f"{pending.inputs} input(s) was acted on. Restart the service: it "
                           "rebuilds the table from the journal")
            raise JournalError(self.broken) from exc
        self.commits += 1
        try:
            # Published first: the decision reaches the croupier's console and the event stream
            # without waiting behind the acknowledgement, which only frees the device's resend
            # buffer. Acknowledged whatever publishing does: the event is on disk.
            try:
                for e in pending.out:
                    self.publish(e)
            finally:
                self.published()
        finally:
            for done in pending.durable:
                done()
        for c in pending.cmds:
            self.send(c)

    # --- outputs ------------------------------------------------------------------------
    def _round_id(self) -> str | None:
        r = self.table.round
        return str(r.round_id) if r is not None else None

    def _entry(self, e: PublicEvent) -> Entry:
        doc = e.to_json()
        rid = str(e.round) if e.round is not None else None
        if e.kind == "state":
            return Entry(Kind.STATE.value, doc, rid, "table")
        if e.kind == "ruling":
            return Entry(Kind.DECISION.value, doc, rid, "table", e.data.get("article"))
        if e.kind == "round_started":
            # The snapshot names the configuration the round is played under: a restart
            # rebuilds the round with it.
            snapshot = self.table.snapshot()
            if snapshot is not None and self.config_seq is not None:
                snapshot = {**snapshot, "config": self.config_seq}
            return Entry(Kind.ROUND_OPEN.value, {**doc, "snapshot": snapshot}, rid, "table")
        if e.kind in CLOSES:
            return Entry(Kind.ROUND_CLOSE.value, {**doc, "outcome": CLOSES[e.kind]},
                         rid, "table", e.data.get("article"))
        if e.kind in ALARM_EVENTS:
            return Entry(Kind.ALARM.value, doc, rid, e.data.get("device"))
        return Entry("table", doc, rid, "table")

    # --- recovery -----------------------------------------------------------------------
    def _warm_integrity(self, until: int) -> None:
        """Give the deck-integrity monitor the deck in play from its start (which may lie
        before the snapshot), so a card out before the restart is still known after it. Its
        records were journaled the first time and are not written again."""
        monitor = self.table.integrity
        if monitor is None:
            return
        inputs: list[Any] = []
        for rec in self.journal.records(until=until, kinds=(*INPUT_KINDS, "refused")):
            if rec.kind == "refused":
                # Its input (journaled just before it) changed nothing: a deck_ready refused
                # began no deck then and begins none now.
                if inputs:
                    inputs.pop()
                continue
            inputs.append(rec)
        # The replay starts at the last input a fresh monitor takes as the live one took it,
        # whatever came before; from there the monitor's own rules decide (a report no shuffle
        # was owed for, a check with no card out). A ``shuffle_done`` is such an input only if
        # it ends a shuffle seen to start, a check or ``deck_ready`` only if no shuffle is under
        # way: the monitor keeps the deck in play across a ``shuffle_done`` that ends none
        # (docs/integrity.md), and a replay begun there would forget the cards dealt before it.
        begin = found = 0
        shuffling = False
        for i, rec in enumerate(inputs):
            kind = _deck_event(rec)
            if kind == "shuffle_started":
                shuffling, begin, found = True, i, 1
            elif kind == "shuffle_done":
                if shuffling:
                    begin, found = i, 1
                shuffling = False
            elif kind is not None and not shuffling:
                begin, found = i, 1
        # The decks ended before the warm-up (their orders, the trend, the numbering): without
        # them a repeat of a deck dealt before the restart goes unseen and numbers are reused.
        # Records of the inputs replayed below are not taken: the replay ends those decks.
        bound = (inputs[begin + found].seq if begin + found < len(inputs) else until + 1)
        monitor.restore(r.payload for r in self.journal.records(until=bound - 1,
                                                                kinds=("integrity",)))
        for rec in inputs[begin:]:
            p = rec.payload if isinstance(rec.payload, dict) else {}
            if rec.kind == Kind.DEVICE.value:
                try:
                    monitor.observe(ev.event_from_json(dict(p["event"])))
                except Exception:   # a panel event or an old record: not a deck matter
                    continue
            elif rec.kind == Kind.COMMAND.value and p.get("name") == "deck_ready":
                monitor.new_deck()

    def recover(self) -> dict[str, Any]:
        """Rebuild the table from the journal and end an interrupted round by the regulation.

        The round is rebuilt with the settings it was played under (its snapshot names the
        ``config`` record), and every input is replayed to what it was when played: one
        accepted then and refused now, or the reverse, raises :class:`ReplayDiverged` once
        its ``alarm`` is journaled, and nothing else is written or acted on. Returns what was
        done (also journaled as ``recovery``); ``configuration`` in it when the settings of
        this start take effect only from the next round."""
        start, snapshot, change = 0, None, None
        last_open = self.journal.last(kind=Kind.ROUND_OPEN.value)
        if last_open is not None and isinstance(last_open.payload, dict) \
                and last_open.payload.get("snapshot"):
            start = last_open.seq
        self._check_chain(max(start - 1, 0))
        if start:
            snapshot = last_open.payload["snapshot"]
            change = self._as_played(last_open)
            self.table.restore(snapshot)
            self._warm_integrity(start)
        replayed, last_input_seq, undecided = self._replay(start)
        pending = list(self.table.outbox)
        self.table.outbox, self.table.commands, self.table.private_records = [], [], []
        if undecided is not None:
            # The last input of a journal written when an input and its decisions were two
            # commits, the crash between them: it is refused now, and that is its decision.
            rec, exc = undecided
            self.journal.append("refused", {"input": rec.payload, "error": str(exc)},
                                self._round_id(), rec.source)
        elif last_input_seq is not None and pending and self._undecided(last_input_seq):
            # A journal written when an input and its decisions were two commits, and the
            # crash fell between them: write the decisions now. (An input is now committed
            # with its decisions.) Records the restarted service wrote meanwhile (start,
            # configuration) are no decisions, so what is looked for is the input's own
            # output, not the journal's last record.
            self.journal.append_many([self._entry(e) for e in pending])
        state_before = self.table.state
        self._input(RESTART, {"source": "restart", "state": state_before}, "service")
        if change is not None:
            self._configure_next_round()
        report = {"replayed_inputs": replayed, "from_seq": start, "state_at_crash": state_before,
                  "state_now": self.table.state,
                  "round": self._round_id(),
                  "void": bool(self.table.round and self.table.round.void)}
        if change is not None:
            report["configuration"] = change
        if self._devices_changed is not None:
            report["devices_changed"] = self._devices_changed
            self._devices_changed = None
        self.journal.append(Kind.RECOVERY.value, {"report": report}, self._round_id(), "service")
        return report

    def _check_chain(self, since: int) -> None:
        """The records the table is rebuilt from (the round in play's snapshot on) must be
        the ones the hash chain vouches for: an edited one would replay what was not played.
        Otherwise the ``alarm`` is journaled and :class:`JournalDamaged` raised; nothing was
        replayed or acted on."""
        checked = self.journal.verify(since=since)
        if checked.ok:
            return
        message = (f"the journal's record {checked.bad_seq}, which the table would be rebuilt "
                   f"from, does not verify: {checked.reason}. Nothing was acted on. Keep the "
                   "journal file as it is for the inspectors, see `tablectl journal verify`, "
                   "and start the table on a journal restored from a backup or a new one")
        self.broken = message
        self.journal.append(Kind.ALARM.value,
                            {"kind": "journal_damaged", "bad_seq": checked.bad_seq,
                             "reason": checked.reason, "checked_after": since,
                             "message": message}, None, "service")
        raise JournalDamaged(message)

    # --- the configuration a round was played under ---------------------------------------
    def _as_played(self, last_open: Record) -> dict[str, Any] | None:
        """Build the table with the settings the round of ``last_open`` was played under when
        they are not this start's, and keep this start's for the next round. What changed,
        or None."""
        seq = last_open.payload["snapshot"].get("config")
        if self.build is None or self.settings is None or not isinstance(seq, int) \
                or seq == self.config_seq:
            return None
        rec = next(self.journal.records(since=seq - 1, until=seq), None)
        played = rec.payload.get("table") if rec is not None and rec.kind == Kind.CONFIG.value \
            and isinstance(rec.payload, dict) else None
        if not isinstance(played, dict):
            raise TablectlError(f"round {last_open.round_id} names the configuration of record "
                                f"{seq}, which the journal does not hold as a configuration: "
                                "check the journal (tablectl journal verify)")
        if played == self.settings:
            return None             # another part of the file changed, not the table's
        now, now_seq = self.settings, self.config_seq
        self.table = self.build(played)
        self.settings, self.config_seq = played, seq
        changed = sorted(k for k in set(played) | set(now) if played.get(k) != now.get(k))
        self._next = (now, now_seq, {"changed": changed})
        return {"round": last_open.round_id, "round_played_under": played, "config_seq": seq,
                "now": now, "now_seq": now_seq, "changed": changed,
                "takes_effect": "next_round"}

    def _configure_next_round(self) -> None:
        """The table takes this start's settings when its next round opens."""
        assert self._next is not None and self.build is not None and self.settings is not None
        now = self._next[0]
        other = self.build(now)
        if now["integrity"] == self.settings["integrity"]:
            other.integrity = self.table.integrity      # the deck in play goes on as it is
        self.table.configure_next_round(other, switch_mode=now["mode"] != self.settings["mode"])

    def _took_configuration(self, pending: _Commit) -> None:
        """The round opening now is the first under the settings of this start."""
        assert self._next is not None and self.settings is not None
        now, now_seq, change = self._next
        self._next = None
        # A monitor of other settings learns the deck in play as a restart would teach it.
        self._rewarm = now["integrity"] != self.settings["integrity"]
        self.settings, self.config_seq = now, now_seq
        told = {**change, "round": self._round_id(), "config_seq": now_seq}
        pending.durable.append(lambda: self.reconfigured(told))

    # --- replay -----------------------------------------------------------------------------
    def _replay(self, start: int) -> tuple[int, int | None, tuple[Record, TablectlError] | None]:
        """Replay the inputs after ``start`` through the table, each checked against what it
        was when played (accepted, or refused: a ``refused`` record follows it). Returns the
        inputs replayed, the last one's sequence number, and the last input refused now that
        no decision of its own follows (written by an earlier version, see recover)."""
        inputs: list[tuple[Record, bool]] = []
        # The states each input took the table to when played (its ``state`` records): where
        # an earlier version decided otherwise than this one, the table may follow the journal.
        reached: dict[int, list[str]] = {}
        # No round opened yet: each start's configuration took effect at once, and the inputs
        # after it were taken under it (a round's inputs keep the one it opened under).
        configs = (Kind.CONFIG.value,) if not start and self.build is not None \
            and self.settings is not None else ()
        in_force: dict[str, Any] | None = None
        for rec in self.journal.records(since=start, kinds=(*INPUT_KINDS, "refused", *configs,
                                                            Kind.STATE.value)):
            if rec.kind == Kind.STATE.value:
                if inputs and isinstance(rec.payload, dict):
                    reached.setdefault(inputs[-1][0].seq, []).append(str(rec.payload.get("dest")))
            elif rec.kind == Kind.CONFIG.value:
                inputs.append((rec, False))
            elif rec.kind != "refused":
                inputs.append((rec, False))
            elif inputs and isinstance(rec.payload, dict) \
                    and rec.payload.get("input") == inputs[-1][0].payload:
                inputs[-1] = (inputs[-1][0], True)
        undecided = None
        for i, (rec, refused_then) in enumerate(inputs):
            if rec.kind == Kind.CONFIG.value:
                in_force = self._taken_at_once(rec, in_force)
                continue
            self.table.outbox, self.table.commands = [], []
            self.table.private_records = []
            refused: TablectlError | None = None
            self.table.replay_accepted = not refused_then
            self.table.replay_reached = tuple(reached.get(rec.seq, ()))
            try:
                self.table.apply(rec.payload)
            except TablectlError as exc:
                refused = exc
            finally:
                self.table.replay_accepted = self.table.replay_reached = None
            if (refused is not None) != refused_then:
                if refused is not None and i == len(inputs) - 1 and self._undecided(rec.seq):
                    undecided = (rec, refused)
                else:
                    self._diverged(rec, refused_then, refused, start)
        if configs and in_force is not None and in_force != self.settings:
            self._taken_at_once(None, in_force)    # this start's (journaled, or not yet)
        inputs = [i for i in inputs if i[0].kind != Kind.CONFIG.value]
        last = inputs[-1][0].seq if inputs else None
        return len(inputs), last, undecided

    def _taken_at_once(self, rec: Record | None,
                       in_force: dict[str, Any] | None) -> dict[str, Any] | None:
        """The table, no round opened yet, takes the settings of the ``config`` record ``rec``
        (None: this start's) at once, as the start that journaled them did; the inputs
        replayed after it were taken under them. The settings now in force."""
        played = rec.payload.get("table") if rec is not None and isinstance(
            rec.payload, dict) else self.settings
        if not isinstance(played, dict) or played == in_force:
            return in_force
        assert self.build is not None and self.settings is not None
        if in_force is None:
            if played != self.settings:
                self.table = self.build(played)     # nothing replayed into it yet
            return played
        other = self.build(played)
        if played["integrity"] == in_force["integrity"]:
            other.integrity = self.table.integrity
        changed = self.table.configure_now(other,
                                           switch_mode=played["mode"] != in_force["mode"])
        # what that publishes is no input's decision (the start built its table with them)
        self.table.outbox, self.table.commands, self.table.private_records = [], [], []
        if rec is None or rec.seq == self.config_seq:
            # This start's: an earlier start's change was told in that start's recovery.
            self._devices_changed = changed
        return played

    def _undecided(self, seq: int) -> bool:
        """No decision of the input ``seq`` is in the journal (nothing it writes follows it)."""
        return not any(True for _ in self.journal.records(since=seq, kinds=OUTPUT_KINDS))

    def _diverged(self, rec: Record, refused_then: bool, refused: TablectlError | None,
                  start: int) -> None:
        """Journal the alarm and stop: the table rebuilt is not the one that played."""
        p = rec.payload if isinstance(rec.payload, dict) else {}
        what: dict[str, Any] = {"source": p.get("source")}
        if p.get("source") == "command":
            what["name"] = p.get("name")
        elif isinstance(p.get("event"), dict):
            what["event"] = p["event"].get("kind")
        played = "refused" if refused_then else "accepted"
        replayed = "accepted" if refused is None else "refused"
        error = scrub(str(refused)) if refused is not None else None
        config = self.journal.last(kind=Kind.CONFIG.value, until=start) if start else None
        c = config.payload if config is not None and isinstance(config.payload, dict) else {}
        under = (f" (record {config.seq}: {c.get('path') or 'table.toml'}, SHA-256 "
                 f"{c.get('digest') or 'unknown'}, tablectl {c.get('version') or 'unknown'})"
                 if config is not None else "")
        label = " ".join(str(v) for v in what.values() if v)
        message = (f"the journal cannot be replayed: record {rec.seq} ({label}) was {played} "
                   f"when played and is {replayed} on replay"
                   + (f" ({error})" if error else "")
                   + "; the table rebuilt from the journal is not the one that played the "
                   "round (a configuration the journal does not hold, or another version of "
                   "the controller). Nothing was acted on. Start the service with the "
                   f"configuration and the version the round was played under{under}, let "
                   "the round end, then change them; if those are the ones, the controller "
                   "has a defect: keep the journal as it is and report it")
        self.broken = message
        self.journal.append(Kind.ALARM.value,
                            {"kind": "replay_divergence", "input_seq": rec.seq, "input": what,
                             "played": played, "replayed": replayed, "error": error,
                             "message": message}, self._round_id(), "service")
        raise ReplayDiverged(message)


DECK_STARTS = ("shuffle_started", "deck_check_result", "shuffle_done")


def _deck_event(rec: Any) -> str | None:
    """The input's kind if a deck may begin at it (a device event of DECK_STARTS, or the
    command ``deck_ready``), else None."""
    p = rec.payload if isinstance(rec.payload, dict) else {}
    if rec.kind == Kind.DEVICE.value:
        kind = (p.get("event") or {}).get("kind")
        return kind if kind in DECK_STARTS else None
    if rec.kind == Kind.COMMAND.value and p.get("name") == "deck_ready":
        return "deck_ready"
    return None


def journal_inputs(journal: Journal) -> Iterable[dict[str, Any]]:
    """Every journaled input record, in order (for tests and inspection)."""
    for rec in journal.records(kinds=INPUT_KINDS):
        yield rec.payload
