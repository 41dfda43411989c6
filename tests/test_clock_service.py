"""The daemon watches its wall clock against the monotonic clock: a step of the wall clock
(NTP setting a Pi's clock without a real-time clock, perhaps mid-round) is journaled as a
``clock_step`` record as soon as it is noticed, and a start whose wall clock is behind the
journal's last record is journaled as ``clock_behind`` and shown to the pit while the table
plays on. In process, with the journal's own clock seam (``Journal.open(clock=...)``, which
the service passes its ``clock`` to): the clock the test shifts is the one every record is
stamped with."""
import asyncio
import time

import aiohttp

from controller.config import hash_token, parse_text
from controller.journal import Journal
from controller.sdnotify import Notifier
from controller.service import Service

from service_helpers import until
from test_api_support import TOKENS

HOUR_NS = 3600 * 10**9

CONFIG = """
[table]
id = "clock-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[journal]
path = "{journal}"
"""

API = """
[api]
listen = "127.0.0.1"
port = 0

[api.tokens]
""" + "".join(f'{role} = "{hash_token(tok)}"\n' for role, tok in TOKENS.items())


class ShiftedClock:
    """A wall clock the test sets, as NTP (or a person) would: ``shift_ns`` moves it, the
    monotonic clock runs on untouched. The journal and the daemon read ``time_ns()`` then
    ``monotonic_ns()``; here the second gives the monotonic time the first was made from, so
    wall minus monotonic is exactly ``base + shift_ns`` and a step the daemon measures is
    exactly the shift the test made (real clocks differ by the nanoseconds between reads)."""

    def __init__(self, shift_ns: int = 0) -> None:
        self.base = time.time_ns() - time.monotonic_ns()
        self.shift_ns = shift_ns
        self._mono = None

    def time_ns(self) -> int:
        self._mono = time.monotonic_ns()
        return self._mono + self.base + self.shift_ns

    def monotonic_ns(self) -> int:
        mono, self._mono = self._mono, None
        return mono if mono is not None else time.monotonic_ns()


def clock_records(journal, kind="clock_step"):
    return [r for r in journal.records(kinds=[kind])]


async def started(cfg, clock):
    svc = Service(cfg, notifier=Notifier(None), open_panel=False, clock=clock)
    task = asyncio.create_task(svc.run())
    await until(lambda: svc.runner is not None and svc._ticker is not None or task.done())
    assert not task.done(), "the service did not start"
    return svc, task


def test_a_step_forward_and_a_step_back_each_give_one_record_with_its_signed_step(tmp_path):
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    clock = ShiftedClock()

    async def scenario():
        svc, task = await started(cfg, clock)
        # Forward an hour, the table idle: the main loop's periodic tick notices it.
        clock.shift_ns += HOUR_NS
        await until(lambda: len(clock_records(svc.journal)) == 1)
        # Back two hours, then a command: looked at before the input is journaled, so the
        # step's record comes before the command's.
        clock.shift_ns -= 2 * HOUR_NS
        assert (await svc.submit("open_table", "supervisor", {}))["ok"]
        svc.stop()
        await task

    asyncio.run(scenario())
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        steps = clock_records(j)
        opened = next(r for r in j.records(kinds=["command"]))
        assert j.verify().ok
    assert [s.payload["step_ns"] for s in steps] == [HOUR_NS, -2 * HOUR_NS]
    assert all(s.source == "service" for s in steps)
    assert steps[1].seq < opened.seq                 # journaled before the input it preceded
    for s in steps:
        before, after = s.payload["before"], s.payload["after"]
        # The clocks either side of the step, as read: the step is the change of their
        # difference, and the monotonic clock moved on between them.
        assert (after["wall_ns"] - after["mono_ns"]) - (before["wall_ns"] - before["mono_ns"]) \
            == s.payload["step_ns"]
        assert before["mono_ns"] < after["mono_ns"] <= s.mono_ns
        assert s.wall_ns - s.mono_ns == after["wall_ns"] - after["mono_ns"]


def test_a_small_drift_gives_no_record_and_the_next_step_is_measured_from_it(tmp_path):
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    clock = ShiftedClock()

    async def scenario():
        svc, task = await started(cfg, clock)
        clock.shift_ns += 400_000_000                    # 0.4 s: a drift, not a step
        assert (await svc.submit("open_table", "supervisor", {}))["ok"]
        clock.shift_ns -= 900_000_000                    # 0.9 s back: still under 1 s
        assert (await svc.submit("close_table", "supervisor", {}))["ok"]
        none = len(clock_records(svc.journal))
        clock.shift_ns += 5 * 10**9
        assert (await svc.submit("open_table", "supervisor", {}))["ok"]
        svc.stop()
        await task
        return none

    assert asyncio.run(scenario()) == 0
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert [s.payload["step_ns"] for s in clock_records(j)] == [5 * 10**9]


def test_a_start_behind_the_journal_is_journaled_and_shown_and_the_table_plays_on(tmp_path):
    """A power cut, and the Pi comes back with the time fake-hwclock saved an hour before the
    journal's last record: the start journals how far behind the clock is, the pit sees it in
    the health, and the table opens all the same. NTP then sets the clock: the step is
    journaled and the warning goes."""
    path = tmp_path / "j.db"
    with Journal.open(path, "clock-1", clock=ShiftedClock(HOUR_NS)) as j:
        last = j.append("service", {"event": "stop"}, source="service")
    cfg = parse_text(CONFIG.format(journal=path) + API)
    clock = ShiftedClock()
    headers = {"Authorization": f"Bearer {TOKENS['display']}"}

    async def scenario():
        svc, task = await started(cfg, clock)
        await until(lambda: svc.api is not None)
        async with aiohttp.ClientSession() as http:
            async def health():
                r = await http.get(f"{svc.api.url}/api/health", headers=headers)
                return await r.json()
            behind = await health()
            table = await (await http.get(f"{svc.api.url}/api/table", headers=headers)).json()
            opened = await svc.submit("open_table", "supervisor", {})
            clock.shift_ns += HOUR_NS                    # NTP steps the clock forward
            await until(lambda: len(clock_records(svc.journal)) == 1)
            caught_up = await health()
        svc.stop()
        await task
        return behind, table, opened, caught_up

    behind, table, opened, caught_up = asyncio.run(scenario())
    with Journal.open(path, readonly=True) as j:
        start = next(r for r in j.records(kinds=["service"]) if r.seq > last.seq)
        records = clock_records(j, "clock_behind")
        steps = clock_records(j)
        assert j.verify().ok
    assert len(records) == 1
    rec = records[0]
    p = rec.payload
    assert rec.source == "service" and rec.seq == start.seq + 1    # at once, before the rest
    assert p["last_seq"] == last.seq and p["last_wall_ns"] == last.wall_ns
    assert p["behind_ns"] == last.wall_ns - p["wall_ns"]
    assert HOUR_NS - 600 * 10**9 < p["behind_ns"] <= HOUR_NS
    # The pit sees it, the table still opens.
    warning = [d for d in behind["devices"] if d["class"] == "clock"]
    assert len(warning) == 1 and warning[0]["conditions"] == ["clock_behind"]
    assert "behind the journal" in warning[0]["problem"] and str(last.seq) in warning[0]["problem"]
    assert [d for d in table["devices"] if d["class"] == "clock"] == warning
    assert opened["ok"] and opened["state"] == "shuffling"
    # NTP's step forward is journaled, and the warning is gone once the clock has caught up.
    assert [s.payload["step_ns"] for s in steps] == [HOUR_NS]
    assert [d for d in caught_up["devices"] if d["class"] == "clock"] == []


def test_a_start_with_the_clock_ahead_of_the_journal_says_nothing(tmp_path):
    path = tmp_path / "j.db"
    with Journal.open(path, "clock-1", clock=ShiftedClock(-HOUR_NS)) as j:
        j.append("service", {"event": "stop"}, source="service")
    cfg = parse_text(CONFIG.format(journal=path))

    async def scenario():
        svc, task = await started(cfg, ShiftedClock())
        svc.stop()
        await task

    asyncio.run(scenario())
    with Journal.open(path, readonly=True) as j:
        assert clock_records(j, "clock_behind") == [] and clock_records(j) == []
