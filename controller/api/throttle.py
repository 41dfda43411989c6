"""Hold back a console token whose commands the table keeps refusing.

Every command the table refuses is journaled (``refused``), by design. A token that sends them
as fast as HTTP goes (a console looping, a leaked token) would grow the journal without bound,
and a full disk stops the table. :class:`Throttle` counts, per role (one token each), the
commands the table refused within a sliding window (``[api] refused_limit`` per
``refused_window_s``). At the limit, the role's commands are turned away (the API answers 429,
nothing reaches the table) for one window; then its count starts again from nothing. Accepted
commands never count, and the reads are never held back (the API asks only for commands).
A role's commands go to the table one at a time (:meth:`Throttle.turn`), as the table takes
them anyway: each refusal is counted before the role's next command is looked at, so a burst
sent at once is held back at the limit like one sent one by one.

The hold and its release are each told once, through ``note(kind, payload)``, before they take
effect: the API journals them (:data:`HELD`, :data:`RELEASED`) and publishes them. A ``note``
that raises leaves the throttle as it was. Never a token or its hash: the role names it.
"""
from __future__ import annotations

import asyncio
import collections
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from controller.errors import error_text
from controller.logs import get_logger

HELD = "commands_held"          # payload: role, refused, limit, window_s
RELEASED = "commands_released"  # payload: role, turned_away, held (the HELD record), why
# Why a hold ends: its window passed, the role's token was replaced (a reload), the API stopped.
WINDOW, REPLACED, STOPPING = "window", "token_replaced", "stopping"
# A hold looks at its clock at least this often to end itself when no command comes: the
# clock is the throttle's (a test drives it), the loop's timer only wakes it.
LOOK_S = 1.0
# A release not recorded is the journal failing: the table stops on it by itself.
JOURNAL_CHECK = "the journal's disk (space, errors in the kernel's log); the table stops itself"

Note = Callable[[str, dict[str, Any]], "int | None"]     # kind, payload -> the record's seq


def _log():
    return get_logger("api")


@dataclass
class _Role:
    refused: collections.deque[float] = field(default_factory=collections.deque)
    since: float | None = None      # when the hold began; None: not held
    until: float = 0.0
    held_seq: int | None = None     # the HELD record
    turned_away: int = 0
    timer: asyncio.TimerHandle | None = None


class Throttle:
    """Counts each role's refused commands and holds a role back past ``limit`` refusals in
    ``window_s`` seconds (``limit`` 0: never). ``clock`` is monotonic, in seconds."""

    def __init__(self, limit: int, window_s: int, note: Note, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window_s, self.note, self.clock = limit, window_s, note, clock
        self._roles: dict[str, _Role] = {}
        self._turns: dict[str, asyncio.Lock] = {}
        self._closed = False        # the daemon is stopping: nothing more is noted

    def turn(self, role: str) -> asyncio.Lock:
        """Held by a command of ``role`` from the look at the hold (:meth:`wait`) until its
        refusal, if any, is counted (:meth:`refused`): commands of one role sent together
        are looked at one after the other, each knowing the refusals before it."""
        lock = self._turns.get(role)
        if lock is None:
            lock = self._turns[role] = asyncio.Lock()
        return lock

    def wait(self, role: str) -> int | None:
        """Whether ``role``'s command in hand may go to the table: None, or the whole seconds
        until its hold ends (the command is then turned away and counted). The first command
        turned away begins the hold, noted (HELD) before this returns; the first one after
        the hold's end ends it, noted (RELEASED) first."""
        r = self._roles.get(role)
        if not self.limit or r is None or self._closed:
            return None
        now = self.clock()
        if r.since is not None and now >= r.until:
            self._release(role, WINDOW)
            return None
        if r.since is None:
            self._prune(r, now)
            if len(r.refused) < self.limit:
                return None
            seq = self.note(HELD, {"role": role, "refused": len(r.refused), "limit": self.limit,
                                   "window_s": self.window_s})
            r.since, r.until, r.held_seq, r.turned_away = now, now + self.window_s, seq, 0
            r.refused.clear()
            _log().warning("console commands held back: the table refused too many of them",
                           role=role, refused=self.limit, window_s=self.window_s, record=seq,
                           fix="find the console or client repeating a refused command; its "
                               "commands are taken again once the window has passed")
            self._arm(role)
        r.turned_away += 1
        return max(1, math.ceil(r.until - now))

    def refused(self, role: str) -> None:
        """The table refused one of ``role``'s commands (journaled as ``refused``)."""
        if not self.limit or self._closed:
            return
        r = self._roles.setdefault(role, _Role())
        if r.since is None:         # one already in hand when the hold began: not counted
            r.refused.append(self.clock())

    def forget(self, role: str) -> None:
        """``role``'s token was replaced or removed: its hold (if any) ends, noted, and the
        new token starts with a clean count."""
        r = self._roles.get(role)
        if r is not None and r.since is not None:
            try:
                self._release(role, REPLACED)
            except Exception as exc:   # noqa: BLE001 - the journal: it stops the table itself
                _log().error("release of a held console not recorded", role=role,
                             error=error_text(exc, JOURNAL_CHECK))
        self._drop(role)

    def close(self) -> None:
        """The API stops: every hold ends, noted with the commands it turned away, and no
        hold begins after it (the daemon writes its stop record next, the last of its run)."""
        self._closed = True
        for role in list(self._roles):
            r = self._roles[role]
            if r.since is not None:
                try:
                    self._release(role, STOPPING)
                except Exception as exc:   # noqa: BLE001 - stopping all the same
                    _log().error("release of a held console not recorded", role=role,
                                 error=error_text(exc, JOURNAL_CHECK))
            self._drop(role)

    def held(self, role: str) -> bool:
        """Whether ``role``'s commands are being turned away."""
        r = self._roles.get(role)
        return r is not None and r.since is not None

    # --- inside ---------------------------------------------------------------------------
    def _prune(self, r: _Role, now: float) -> None:
        while r.refused and r.refused[0] <= now - self.window_s:
            r.refused.popleft()

    def _release(self, role: str, why: str) -> None:
        r = self._roles[role]
        seq = self.note(RELEASED, {"role": role, "turned_away": r.turned_away,
                                   "held": r.held_seq, "why": why})
        _log().info("console commands taken again", role=role, why=why,
                    turned_away=r.turned_away, record=seq)
        self._drop(role)

    def _drop(self, role: str) -> None:
        r = self._roles.pop(role, None)
        if r is not None and r.timer is not None:
            r.timer.cancel()

    def _arm(self, role: str) -> None:
        r = self._roles[role]
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:        # no loop: the next command ends the hold
            return
        r.timer = loop.call_later(min(LOOK_S, max(r.until - self.clock(), 0.0)),
                                  self._look, role)

    def _look(self, role: str) -> None:
        r = self._roles.get(role)
        if r is None or r.since is None:
            return
        r.timer = None
        if self.clock() < r.until:
            self._arm(role)
            return
        try:
            self._release(role, WINDOW)
        except Exception as exc:   # noqa: BLE001 - the next command tries again
            _log().error("release of a held console not recorded", role=role,
                         error=error_text(exc, JOURNAL_CHECK))
            self._arm(role)
