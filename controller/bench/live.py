"""A table on the bench in one process: simulated devices, the real drivers, the real runner.

:class:`LiveTable` starts the firmware simulator's devices behind pseudo-terminals, opens each
through the real driver path (drivers.factory.open_driver: pyserial, the link layer, the
codec), and feeds their events and the croupier's commands, in order, through one asyncio
queue to a :class:`~controller.table.runner.TableRunner` with a real journal, as the daemon
does. It keeps what a benchmark or a reliability test needs to see: when each device event was
written by the simulator, dequeued, and its first decision published (after the journal
commit), every published event, and any exception that escaped the runner.

:class:`LiveCroupier` plays rounds on it the way a croupier and a supervisor would, whatever
state the table is in: it places bets, draws from the shoe or lets the shuffler deal, shakes the
dice, takes decisions, confirms results, and when the table calls for it, puts the devices
right (clears a jam, closes a door, plugs a device back in, reboots it) and clears the
malfunction. Like the daemon's croupier (controller.bench.rigplay) it waits for each act's
answer (a card, the dice) rather than a guess of the machine's pace, never draws or shakes
again while the first may still be on its way, and counts a table as stuck only when nothing
new happens at it; its times are multiplied by TABLECTL_BENCH_SLOWNESS.
"""
from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from controller.errors import TablectlError
from controller.inputs import TIMER, WaitOver
from controller.journal import Journal
from controller.table.machine import Command
from controller.table.runner import TableRunner
from controller.table.secrecy import PublicEvent

from .rigplay import LOOK_S, PATIENCE_S, RESULT_S, SLOWNESS
from .rounds import LAYOUT, make_table, pan9_banker

# Heartbeats every 50 ms, the link lost after 2 s of silence (an ack awaited 0.4 s): a loaded
# machine's pause in the process is no lost link, which would void the round under test.
FAST_LINK = {"heartbeat_s": 0.05, "link_timeout_s": 2.0}
ROUND_END = ("round_complete", "round_void")


# The message type whose frame carries each event kind a latency is measured for.
FRAME_OF = {"card_drawn": "CardDrawn", "dice_result": "DiceResult", "jam": "Jam"}

@dataclass
class Sample:
    """One device event's way through the controller (time.monotonic seconds)."""

    device: str
    kind: str
    emitted: float | None      # the simulator wrote the frame
    dequeued: float            # the controller took the event off its queue
    published: float | None    # its first decision was durable and published
    done: float                # the runner returned


@dataclass
class _Cmd:
    name: str
    role: str
    args: dict[str, Any]
    fut: asyncio.Future = field(repr=False, default=None)  # type: ignore[assignment]


class LiveTable:
    """Simulated devices + real drivers + TableRunner + Journal, in the running event loop.

    ``runner_class`` replaces :class:`TableRunner` (same interface) to measure another way
    of journaling."""

    def __init__(self, workdir: str | Path, game: str, mode: str = "shoe", *, seed: int = 0,
                 speed: float = 1000.0, table_id: str = "bench-1",
                 link: dict[str, float] | None = None, runner_class: Any = None) -> None:
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.game, self.mode, self.seed, self.speed = game, mode, seed, speed
        self.table_id = table_id
        self.link = dict(FAST_LINK if link is None else link)
        self.journal_path = self.dir / "journal.db"
        self.runner_class = runner_class or TableRunner
        self.sim: Any = None
        self.drivers: dict[str, Any] = {}
        self.queue: asyncio.Queue = asyncio.Queue()
        self.journal: Journal | None = None
        self.runner: TableRunner | None = None
        self.published: list[tuple[float, PublicEvent]] = []
        self.samples: list[Sample] = []
        self.escaped: list[BaseException] = []
        self.processed: dict[tuple[str, str], int] = {}
        self.sent: list[Command] = []
        self._seen: dict[tuple[str, str], int] = {}
        self._consumer: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def classes(self) -> list[str]:
        return ["shoe", "shuffler"] + (["dice"] if self.game == "super-pan-9" else [])

    @property
    def table(self) -> Any:
        assert self.runner is not None
        return self.runner.table

    @property
    def state(self) -> str:
        return self.table.state

    # --- life cycle ---------------------------------------------------------------------
    async def start(self, timeout: float = 15.0 * SLOWNESS) -> None:
        from drivers.factory import open_driver
        from firmware_sim.table import SimulatedTable

        self.sim = SimulatedTable(seed=self.seed, speed=self.speed,
                                  link_dir=str(self.dir / "links"))
        for cls in self.classes:
            self.sim.add(cls)
        await self.open_controller()
        for cls in self.classes:
            self.drivers[cls] = open_driver(self.sim[cls].spec(**self.link), self.queue)
        await self.wait(lambda: all(d.is_up for d in self.drivers.values()), timeout,
                        "the devices' links did not come up")

    async def open_controller(self) -> dict[str, Any]:
        """Open the journal, recover the table from it, and start taking inputs."""
        self.journal = Journal.open(self.journal_path, self.table_id)
        self.runner = self.runner_class(make_table(self.game, self.mode, self.table_id),
                                        self.journal,
                                  publish=self._publish, send=self._send)
        report = self.runner.recover()
        self._consumer = asyncio.ensure_future(self._consume())
        return report

    async def close(self) -> None:
        if self._consumer is not None:
            self._consumer.cancel()
            try:
                await self._consumer
            except (asyncio.CancelledError, Exception):
                pass
        for t in list(self._tasks):
            t.cancel()
        for d in self.drivers.values():
            try:
                await asyncio.wait_for(d.close(), 3.0)
            except Exception:  # a device that will not close must not block the others
                pass
        self.drivers.clear()
        if self.journal is not None:
            self.journal.close()
            self.journal = None
        if self.sim is not None:
            self.sim.stop()
            self.sim = None

    async def __aenter__(self) -> "LiveTable":
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # --- the controller's side -------------------------------------------------------------
    def _publish(self, e: PublicEvent) -> None:
        self.published.append((time.monotonic(), e))

    def _send(self, c: Command) -> None:
        self.sent.append(c)
        if c.device_class == TIMER:
            self._wait(c)
            return
        driver = self.drivers.get(c.device_class)
        method = getattr(driver, c.action, None) if driver is not None else None
        if method is None:
            return

        async def call() -> None:
            try:
                await method(**c.args)
            except TablectlError:
                pass    # refused or link down: the device's events say what happened
        task = asyncio.ensure_future(call())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _wait(self, c: Command) -> None:
        """The table's ``wait``, timed as the service times it (Service._wait): its end comes
        back on the queue as a WaitOver input once ``after_s`` has passed."""
        args = {k: c.args[k] for k in ("what", "about", "ask", "after_s") if k in c.args}
        asyncio.get_running_loop().call_later(
            max(0.0, float(args.get("after_s", 0))),
            lambda: self.queue.put_nowait(WaitOver(device=TIMER, ts=time.monotonic(), **args)))

    def _emitted_at(self, device: str, kind: str) -> float | None:
        """When the simulator wrote the frame of this (device, kind) event on the pty: the
        n-th frame of its message type (SimulatedDevice.written_at)."""
        key = (device, kind)
        n = self._seen.get(key, 0)
        self._seen[key] = n + 1
        dev = self.sim.devices.get(device) if self.sim is not None else None
        name = FRAME_OF.get(kind)
        if dev is None or name is None:
            return None
        return dev.written_at(name, n)

    async def _consume(self) -> None:
        assert self.runner is not None
        while True:
            item = await self.queue.get()
            t_deq = time.monotonic()
            if isinstance(item, _Cmd):
                try:
                    self.runner.command(item.name, item.role, **item.args)
                    result: dict[str, Any] = {"ok": True}
                except TablectlError as exc:
                    result = {"ok": False, "error": str(exc)}
                except Exception as exc:   # noqa: BLE001 - counted: nothing may escape
                    self.escaped.append(exc)
                    result = {"ok": False, "error": f"escaped: {exc!r}"}
                if not item.fut.done():
                    item.fut.set_result(result)
                continue
            mark = len(self.published)
            try:
                self.runner.device(item)
            except Exception as exc:       # noqa: BLE001 - counted: nothing may escape
                self.escaped.append(exc)
            done = time.monotonic()
            key = (item.device, item.kind)
            self.processed[key] = self.processed.get(key, 0) + 1
            emitted = (self._emitted_at(item.device, item.kind)
                       if not item.kind.startswith("link") else None)
            pub = self.published[mark][0] if len(self.published) > mark else None
            self.samples.append(Sample(item.device, item.kind, emitted, t_deq, pub, done))

    async def command(self, name: str, role: str = "dealer", **args: Any) -> dict[str, Any]:
        """A console command, queued behind the device events already waiting (as the
        daemon does); the answer ``{"ok": ...}``."""
        fut = asyncio.get_running_loop().create_future()
        await self.queue.put(_Cmd(name, role, args, fut))
        return await fut

    async def must(self, name: str, role: str = "dealer", **args: Any) -> None:
        reply = await self.command(name, role, **args)
        if not reply["ok"]:
            raise TablectlError(f"{name} refused: {reply['error']}")

    async def act(self, device: str, action: str, *args: Any, **kw: Any) -> Any:
        """A physical action on a simulated device (draw, clear_jam, ...), off the loop."""
        return await asyncio.to_thread(getattr(self.sim[device], action), *args, **kw)

    async def wait(self, pred: Callable[[], bool], timeout: float = 5.0,
                   what: str = "condition") -> None:
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} within {timeout} s (table in {self.state})")
            await asyncio.sleep(0.002)

    async def wait_processed(self, device: str, kind: str, count: int,
                             timeout: float = 5.0 * SLOWNESS) -> None:
        await self.wait(lambda: self.processed.get((device, kind), 0) >= count, timeout,
                        f"no {kind} from {device}")

    def count(self, device: str, kind: str) -> int:
        return self.processed.get((device, kind), 0)

    def public(self, since: int = 0) -> list[PublicEvent]:
        return [e for _, e in self.published[since:]]


class LiveCroupier:
    """A croupier and a supervisor for a :class:`LiveTable` (see the module docstring).

    ``hook(phase)`` (optional, awaited) is called as the round reaches each phase: ``betting``
    (bets placed, or in Hold'em the players seated), ``shaking`` (Super Pan 9, before the
    shake), ``dealing`` (after two cards), ``decisions`` (in Hold'em the first betting round),
    ``settlement``; a fault matrix injects its fault there.
    """

    def __init__(self, live: LiveTable, seed: int = 0,
                 hook: Callable[[str], Awaitable[None]] | None = None) -> None:
        self.live, self.rng, self.hook = live, random.Random(seed), hook
        self.game = live.game
        self.fixes = 0
        self.trace: list[str] = []
        self.stuck: list[str] = []      # states the supervisor had to void a round in

    async def _at(self, phase: str, done: set[str]) -> None:
        if phase not in done:
            done.add(phase)
            if self.hook is not None:
                await self.hook(phase)

    async def play_round(self, max_steps: int = 400, stuck_s: float = 6.0,
                         deadline_s: float = 40.0) -> str:
        """Play until the round ends and the next one is called; returns how it ended
        (``round_complete`` or ``round_void``). A table that stays in one state for
        ``stuck_s`` although the devices were put right is voided by the supervisor (recorded
        in :attr:`stuck`); raises TimeoutError when even that does not end the round."""
        live = self.live
        stuck_s, deadline_s = stuck_s * SLOWNESS, deadline_s * SLOWNESS
        t_end = time.monotonic() + deadline_s
        since, last_state = time.monotonic(), None
        phases: set[str] = set()
        betted = False
        drawn = 0
        refused = 0
        ends0 = len(self.ends())
        for _ in range(max_steps):
            st = live.state
            self.trace.append(st)
            now = time.monotonic()
            if now > t_end:
                break
            # Stuck is nothing new at the table: a slow one dealing card after card stays in
            # one state for long, and is not stuck.
            progress = (st, len(live.published))
            if progress != last_state:
                since, last_state = now, progress
            elif now - since > stuck_s and st not in ROUND_END + ("malfunction",
                                                                  "out_of_service"):
                self.stuck.append(st)
                await self.fix_devices()
                await live.command("void_round", "supervisor",
                                   reason=f"the table stayed in {st} with its devices working")
                since = time.monotonic()
            ends = self.ends()
            if len(ends) > ends0 and st not in ROUND_END:
                return ends[ends0]      # the round ended and the table has moved on
            if st == "out_of_service":
                await live.command("open_table", "supervisor")
            elif st == "shuffling":
                await self._shuffling()
            elif st in ("bets_open", "bets_closed") and not betted and st == "bets_open":
                await self._bets()
                betted = True
                await self._at("betting", phases)
            elif st in ("bets_open", "bets_closed"):
                if self.game == "super-pan-9":
                    await self._at("shaking", phases)
                    if live.state == st:
                        await self._shake()
                elif live.table.mode.value == "shuffler":
                    if st == "bets_open":
                        await live.command("close_bets")
                    else:
                        await self._wait_change(st, LOOK_S)
                        if live.state == st:
                            await self.fix_devices()
                else:
                    drawn += await self._draw()
            elif st == "dice_shaking":
                await self._await_dice()
                if live.state == "dice_shaking" and not await self._agitator_busy():
                    # The shake was lost (a rebooted or faulted agitator): it is idle and no
                    # result has come; only now shake again.
                    await self.fix_devices()
                    await live.command("shake")
            elif st == "dealing":
                if drawn >= 2 or live.table.mode.value == "shuffler":
                    await self._at("dealing", phases)
                if live.state != "dealing":
                    continue
                if live.table.mode.value == "shoe":
                    drawn += await self._draw()
                else:
                    await self._wait_change(st, LOOK_S)
                    if live.state == "dealing":
                        await self.fix_devices()
            elif st == "player_decisions":
                await self._at("decisions", phases)
                if live.state == st:
                    await self._decide()
            elif st == "croupier_reveal":
                await self._wait_change(st, LOOK_S)
                if live.state == st and live.table.mode.value == "shoe":
                    drawn += await self._draw()
                elif live.state == st:
                    await self.fix_devices()
            elif st == "settlement":
                await self._at("settlement", phases)
                if live.state == st:
                    await live.command("confirm_result")
            elif st in ROUND_END:
                reply = await live.command("next_round")
                if live.state != st:
                    continue
                refused += 1
                if refused > 5:
                    raise TimeoutError(f"the next round is refused after the supervisor's "
                                       f"fixes: {reply.get('error')}")
                await self.fix_devices()
                await live.command("clear_malfunction", "supervisor")
            elif st == "malfunction":
                await self.fix_devices()
                reply = await live.command("clear_malfunction", "supervisor")
                if live.state == "malfunction":
                    if "void_round" in str(reply.get("error")):
                        # The table asks for it: the round cannot be settled from the record.
                        await live.command("void_round", "supervisor", reason="the round "
                                           "cannot be settled from what was recorded")
                    await asyncio.sleep(0.05)
            else:
                await self._wait_change(st)
        raise TimeoutError(f"the round did not end in {max_steps} steps or {deadline_s:g} s; "
                           f"table in "
                           f"{live.state}; last states {self.trace[-12:]}")

    def ends(self) -> list[str]:
        """How each round so far ended, in order (from the published events)."""
        return [e.kind for _, e in self.live.published
                if e.kind in ("round_complete", "round_void")]

    async def _wait_change(self, st: str, timeout: float = 0.3) -> None:
        try:
            await self.live.wait(lambda: self.live.state != st, timeout)
        except TimeoutError:
            pass

    async def _shuffling(self) -> None:
        live = self.live
        if live.table.mode.value == "shoe":
            await self.fix_devices(only=("shoe",))
            await live.act("shoe", "load_deck", fresh=True)
            await live.command("deck_ready")
        else:
            await self._wait_change("shuffling", LOOK_S)
            if live.state == "shuffling":
                await self.fix_devices()
                await live.command("clear_malfunction", "supervisor")

    async def _bets(self) -> None:
        live, rng = self.live, self.rng
        layout = LAYOUT[self.game]
        if self.game == "texas-holdem":
            # Two to four players; the table posts the blinds (11/2008 art. 5).
            seats = sorted(rng.sample(range(1, layout + 1), rng.randint(2, 4)))
            await live.command("seat_players", seats=seats, stacks=[200] * len(seats))
            return
        if self.game == "super-pan-9":
            banker, bettors, capital = pan9_banker(live.table.public_view(),
                                                   rng.sample(range(1, layout + 1), 3))
            await live.command("set_banker", seat=banker, capital=capital)
            for s in bettors:
                await live.command("place_bet", box=s, wager="seat", amount=10, player=f"p{s}")
            return
        for b in sorted(rng.sample(range(1, layout + 1), rng.randint(1, 3))):
            if self.game == "q-poker":
                await live.command("place_bet", box=b, wager="versus_croupier",
                                   amount=2 * rng.randint(1, 9))
                if rng.random() < 0.4:
                    await live.command("place_bet", box=b, wager="pair_bonus", amount=5)
            else:
                await live.command("place_bet", box=b, wager="ante", amount=rng.randint(1, 9),
                                   player=f"p{b}")
                if rng.random() < 0.4:
                    await live.command("place_bet", box=b, wager="pair_plus", amount=5,
                                       player=f"p{b}")

    async def _shake(self) -> None:
        live = self.live
        reply = await live.command("shake")
        if reply["ok"]:
            await self._await_dice()
        else:
            await self.fix_devices()

    async def _agitator_busy(self) -> bool:
        return (await self.live.act("dice", "status"))["firmware"].get("state") == "shaking"

    async def _await_dice(self) -> None:
        """Wait for the table to leave ``dice_shaking``: as long as the agitator shakes (up
        to PATIENCE_S), then RESULT_S for its result to reach the table."""
        live = self.live
        deadline = time.monotonic() + PATIENCE_S
        # The state is looked at every few ms on the loop, the agitator (off it) only every
        # half second: the phases after the dice (a hook at dealing) must not be missed.
        while time.monotonic() < deadline:
            await self._wait_change("dice_shaking", 0.5)
            if live.state != "dice_shaking" or not await self._agitator_busy():
                break
        await self._wait_change("dice_shaking", RESULT_S)

    async def _draw(self) -> int:
        """Draw one card from the shoe; 1 if the table took a card event."""
        live = self.live
        status = await live.act("shoe", "status")
        st = status["firmware"]
        if st["state"] != "ready" or not status["connected"]:
            if st["state"] == "empty":
                await live.act("shoe", "load_deck", fresh=True)
            else:
                await self.fix_devices()
                await asyncio.sleep(0.05)
            return 0
        n = live.count("shoe", "card_drawn") + live.count("shoe", "misread")
        answers = self._shoe_answers()
        await live.act("shoe", "draw")
        # Wait for the table's word on this card (or on what the shoe did instead: a jam, a
        # lost link) before anything else: drawing again while it is on its way deals one
        # card too many.
        try:
            await live.wait(lambda: self._shoe_answers() > answers
                            or not live.drivers["shoe"].is_up, PATIENCE_S,
                            "the table took no card after a draw")
        except TimeoutError:
            return 0
        return 1 if live.count("shoe", "card_drawn") + live.count("shoe", "misread") > n \
            else 0

    def _shoe_answers(self) -> int:
        """Every event of the shoe the table has processed so far."""
        return sum(v for (device, _), v in self.live.processed.items() if device == "shoe")

    async def _decide(self) -> None:
        live = self.live
        if self.game == "texas-holdem":
            await self._holdem_action()
            return
        view = live.table.public_view()
        rnd = view.get("round") or {}
        decided = {(d["box"], d["player"]) for d in rnd.get("decisions", [])}
        pending = []
        for bet in rnd.get("bets", []):
            key = (bet["box"], bet["player"])
            if bet["wager"] in ("versus_croupier", "ante") and key not in decided \
                    and bet["box"] not in rnd.get("void_boxes", []):
                pending.append(key)
                decided.add(key)
        for box, player in pending:
            await live.command("decide", box=box, player=player,
                               decision="play" if self.rng.random() < 0.7 else "fold")
        if not pending:
            await self._wait_change("player_decisions")

    async def _holdem_action(self) -> None:
        """Hold'em: the player to act checks or calls, now and then bets, raises or folds;
        the table deals the next street when the betting round closes (11/2008 art. 11)."""
        live = self.live
        h = live.table.public_view().get("holdem") or {}
        if h.get("to_act") is None:
            await self._wait_change("player_decisions")
            return
        legal = {a["action"]: a for a in h.get("legal", [])}
        roll = self.rng.random()
        if "check" in legal:
            choice, amount = (("bet", legal["bet"]["min_to"]) if roll < 0.2 and "bet" in legal
                              else ("check", None))
        elif roll < 0.1 and "fold" in legal:
            choice, amount = "fold", None
        elif roll < 0.25 and "raise" in legal:
            choice, amount = "raise", legal["raise"]["min_to"]
        else:
            choice, amount = ("call", None) if "call" in legal else ("allin", None)
        await live.command("holdem_action", seat=h["to_act"], action=choice, amount=amount)

    async def fix_devices(self, only: tuple[str, ...] | None = None) -> None:
        """What a supervisor does: put every device back in working order."""
        live = self.live
        self.fixes += 1
        for name in only or live.classes:
            dev = live.sim[name]
            if not dev.connected:
                await live.act(name, "reconnect")
            await live.act(name, "inject", "resume")
            await live.act(name, "inject", "heartbeat_resume")
            state = (await live.act(name, "status"))["firmware"]
            s = str(state.get("state", ""))
            if s == "jammed":
                await live.act(name, "clear_jam")
            if state.get("door_open") or s in ("door-open", "lid-open"):
                await live.act(name, "close_door")
            if s == "die-out":
                await live.act(name, "return_die")
            if s == "fault":
                await live.act(name, "reboot")
        try:
            await live.wait(lambda: all(d.is_up for n, d in live.drivers.items()
                                        if only is None or n in only), 3.0 * SLOWNESS)
        except TimeoutError:
            pass
        await asyncio.sleep(0.02)
