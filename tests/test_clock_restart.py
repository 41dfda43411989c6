"""The clock watch across a restart of the daemon in the same boot (docs/journal.md, *The
clock*):

* a start whose clock was behind the journal shows the pit a warning until the clock is set;
  restarted before that (same boot, clock not set yet), the daemon shows the same warning
  again: its clock is no longer behind the records the first start stamped, but it is still
  behind the record it was behind;
* a step of the wall clock while the daemon was stopped, in the same boot, is journaled at the
  start as a ``clock_step`` with ``while_stopped``, measured exactly from the journal's last
  record (``wall_ns - mono_ns`` then and now), before anything of the start is acted on.

In process with the journal's clock seam (tests/test_clock_service.py: the test shifts the
clock every record is stamped with, as NTP or a person would), and through the daemon's own
process, whose clock is not shifted: the journal it is given is stamped shifted instead."""
import asyncio
import json
import signal
import urllib.request

import aiohttp
import pytest

from controller.clock_watch import boot_id
from controller.config import parse_text
from controller.journal import Journal

from test_api_support import TOKENS, DaemonTable
from test_clock_service import API, CONFIG, HOUR_NS, ShiftedClock, clock_records, started

BOOT = boot_id()
needs_boot_id = pytest.mark.skipif(BOOT is None, reason="no kernel boot id to read here")
HEADERS = {"Authorization": f"Bearer {TOKENS['display']}"}


def clock_rows(health):
    return [d for d in health["devices"] if d["class"] == "clock"]


async def run_once(cfg, clock, act=None):
    """One run of the daemon: start, the pit's health, ``act(svc)``, stop. The health."""
    svc, task = await started(cfg, clock)
    try:
        await asyncio.wait_for(_api_up(svc), 20)
        async with aiohttp.ClientSession() as http:
            r = await http.get(f"{svc.api.url}/api/health", headers=HEADERS)
            health = await r.json()
        if act is not None:
            await act(svc)
    finally:
        svc.stop()
        await task
    return health


async def _api_up(svc):
    while svc.api is None:
        await asyncio.sleep(0.01)


def journal_an_hour_ahead(tmp_path):
    """A journal whose last record (a stop) was stamped an hour ahead of this machine's
    clock, and the daemon's configuration on it with the console API: its path, the
    configuration and that record."""
    path = tmp_path / "j.db"
    with Journal.open(path, "clock-1", clock=ShiftedClock(HOUR_NS)) as j:
        last = j.append("service", {"event": "stop"}, source="service")
    return path, parse_text(CONFIG.format(journal=path) + API), last


def starts(j):
    return [r for r in j.records(kinds=["service"]) if r.payload.get("event") == "start"]


# --- (a) the warning of a clock behind the journal outlives a restart in the same boot ----------

@needs_boot_id
def test_restarted_before_the_clock_is_set_the_pit_is_shown_the_same_warning(tmp_path):
    path, cfg, last = journal_an_hour_ahead(tmp_path)
    clock = ShiftedClock()                      # an hour behind the journal, in this boot

    first = asyncio.run(run_once(cfg, clock))
    second = asyncio.run(run_once(cfg, clock))  # restarted: the clock is still not set
    third = asyncio.run(run_once(cfg, clock))   # and again
    assert len(clock_rows(first)) == 1 and str(last.seq) in clock_rows(first)[0]["problem"]
    assert clock_rows(second) == clock_rows(first)
    assert clock_rows(third) == clock_rows(first)
    with Journal.open(path, readonly=True) as j:
        behind = clock_records(j, "clock_behind")
        runs = starts(j)
        assert j.verify().ok
    # The boot's one clock_behind stands; each later start of the boot names it.
    assert len(behind) == 1 and behind[0].payload["last_seq"] == last.seq
    assert [s.payload.get("clock_behind") for s in runs] == [None, behind[0].seq,
                                                             behind[0].seq]


@needs_boot_id
def test_set_while_the_daemon_was_stopped_the_warning_goes_and_the_step_is_journaled(tmp_path):
    path, cfg, _ = journal_an_hour_ahead(tmp_path)
    clock = ShiftedClock()

    first = asyncio.run(run_once(cfg, clock))
    clock.shift_ns += HOUR_NS                   # NTP sets the clock while the daemon is down
    second = asyncio.run(run_once(cfg, clock))
    assert len(clock_rows(first)) == 1 and clock_rows(second) == []
    with Journal.open(path, readonly=True) as j:
        steps = clock_records(j)
        runs = starts(j)
    assert [s.payload["step_ns"] for s in steps] == [HOUR_NS]
    assert "clock_behind" not in runs[-1].payload


@needs_boot_id
def test_caught_up_before_the_restart_the_warning_is_not_shown_again(tmp_path):
    path, cfg, _ = journal_an_hour_ahead(tmp_path)
    clock = ShiftedClock()

    async def ntp_sets_it(svc):
        clock.shift_ns += HOUR_NS
        await until_records(svc, 1)

    first = asyncio.run(run_once(cfg, clock, ntp_sets_it))
    second = asyncio.run(run_once(cfg, clock))
    assert len(clock_rows(first)) == 1 and clock_rows(second) == []
    with Journal.open(path, readonly=True) as j:
        assert [s.payload.get("while_stopped", False) for s in clock_records(j)] == [False]


async def until_records(svc, n):
    while len(clock_records(svc.journal)) < n:
        await asyncio.sleep(0.01)


# --- (b) a step while the daemon was stopped ---------------------------------------------------

def start_and_stop(path, clock):
    """The daemon started on the journal at ``path`` with ``clock``, and stopped."""
    cfg = parse_text(CONFIG.format(journal=path))

    async def run():
        svc, task = await started(cfg, clock)
        svc.stop()
        await task

    asyncio.run(run())


@needs_boot_id
@pytest.mark.parametrize("step_ns", [30 * 60 * 10**9, -2 * HOUR_NS])
def test_a_step_while_stopped_in_the_same_boot_is_journaled_first_and_exactly(tmp_path,
                                                                              step_ns):
    path = tmp_path / "j.db"
    clock = ShiftedClock()
    start_and_stop(path, clock)
    with Journal.open(path, readonly=True) as j:
        before = j.last()
    clock.shift_ns += step_ns                   # set while the daemon is stopped
    start_and_stop(path, clock)
    with Journal.open(path, readonly=True) as j:
        start = starts(j)[-1]
        after = list(j.records(since=start.seq))
        assert j.verify().ok
    step = after[0]
    assert step.kind == "clock_step" and step.source == "service", [r.kind for r in after]
    p = step.payload
    assert p["step_ns"] == step_ns and p["while_stopped"] is True and p["boot_id"] == BOOT
    assert p["last_seq"] == before.seq
    assert p["before"] == {"wall_ns": before.wall_ns, "mono_ns": before.mono_ns}
    assert (p["after"]["wall_ns"] - p["after"]["mono_ns"]) == start.wall_ns - start.mono_ns
    # Journaled before anything of the start is acted on: the start's own record, then the
    # step, then (a clock gone back behind the journal) clock_behind, then the configuration.
    kinds = [r.kind for r in after]
    assert kinds[:kinds.index("config")] == (["clock_step", "clock_behind"] if step_ns < 0
                                             else ["clock_step"])
    # The auditor's rule (docs/journal.md): every record up to the stop, corrected by the
    # step, reads the clock as it is now.
    assert before.wall_ns + p["step_ns"] - before.mono_ns == start.wall_ns - start.mono_ns


@needs_boot_id
def test_drift_while_stopped_is_no_step(tmp_path):
    path = tmp_path / "j.db"
    clock = ShiftedClock()
    start_and_stop(path, clock)
    clock.shift_ns += 400_000_000               # 0.4 s: slewing, not a step
    start_and_stop(path, clock)
    with Journal.open(path, readonly=True) as j:
        assert clock_records(j) == []


def test_a_start_in_another_boot_journals_no_step_and_shows_nothing_of_that_boot(tmp_path):
    """Monotonic times of two boots cannot be compared: the step across a reboot is not
    known (docs/journal.md); and a warning of another boot is not this boot's."""
    path = tmp_path / "j.db"
    clock = ShiftedClock()
    with Journal.open(path, "clock-1", clock=ShiftedClock(-HOUR_NS)) as j:
        j.append("service", {"event": "start", "pid": 1, "boot_id": "another-boot"},
                 source="service")
        ahead = clock.time_ns() + HOUR_NS
        j.append("clock_behind", {"behind_ns": HOUR_NS, "last_seq": 1, "last_wall_ns": ahead,
                                  "wall_ns": ahead - HOUR_NS, "mono_ns": 1,
                                  "boot_id": "another-boot"}, source="service")
        j.append("service", {"event": "stop"}, source="service")
    cfg = parse_text(CONFIG.format(journal=path) + API)
    health = asyncio.run(run_once(cfg, clock))
    assert clock_rows(health) == []
    with Journal.open(path, readonly=True) as j:
        assert clock_records(j) == []
        assert "clock_behind" not in starts(j)[-1].payload


# --- through the daemon's own process ---------------------------------------------------------

def get(table, path):
    req = urllib.request.Request(table.url + path, headers=HEADERS)
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def restart(table):
    table.rig.kill(signal.SIGTERM)
    table.rig.start_controller()
    table.rig.wait_links()
    table.wait(lambda: _answers(table))


def _answers(table):
    try:
        get(table, "/api/health")
        return True
    except OSError:
        return False


@pytest.mark.hil
@needs_boot_id
def test_the_daemon_restarted_before_its_clock_is_set_shows_the_pit_the_same_warning(tmp_path):
    with Journal.open(tmp_path / "journal.db", "T1", clock=ShiftedClock(2 * HOUR_NS)) as j:
        last = j.append("service", {"event": "stop"}, source="service")
    table = DaemonTable(tmp_path, "q-poker", "shoe")
    try:
        first = get(table, "/api/health")
        restart(table)
        second = get(table, "/api/health")
    finally:
        table.close()
    assert len(clock_rows(first)) == 1 and f"record {last.seq}" in clock_rows(first)[0]["problem"]
    assert clock_rows(second) == clock_rows(first)
    with Journal.open(tmp_path / "journal.db", readonly=True) as j:
        assert len(clock_records(j, "clock_behind")) == 1 and clock_records(j) == []


@pytest.mark.hil
@needs_boot_id
def test_the_daemon_journals_a_step_made_while_it_was_stopped(tmp_path):
    # The records before the stop were stamped by a clock an hour slow, in this boot: the
    # clock was set forward while the daemon was down.
    with Journal.open(tmp_path / "journal.db", "T1", clock=ShiftedClock(-HOUR_NS)) as j:
        j.append("service", {"event": "start", "pid": 1, "boot_id": BOOT}, source="service")
        last = j.append("service", {"event": "stop"}, source="service")
    table = DaemonTable(tmp_path, "q-poker", "shoe")
    table.close()
    with Journal.open(tmp_path / "journal.db", readonly=True) as j:
        start = starts(j)[-1]
        step = next(j.records(since=start.seq))
        assert j.verify().ok
    assert step.kind == "clock_step" and step.payload["while_stopped"] is True
    assert step.payload["last_seq"] == last.seq
    assert step.payload["before"] == {"wall_ns": last.wall_ns, "mono_ns": last.mono_ns}
    # Exactly the change of wall - mono between the last record and the start's look; the
    # process's own clocks are read nanoseconds apart, so it is the hour to within those.
    after = step.payload["after"]
    assert step.payload["step_ns"] == (after["wall_ns"] - after["mono_ns"]) - (
        last.wall_ns - last.mono_ns)
    assert abs(step.payload["step_ns"] - HOUR_NS) < 10**9
