"""The CPU wake-up latency request ([service] cpu_wakeup_us): on the kernel's own
/dev/cpu_dma_latency, held while the service runs and gone when it ends, however it ends."""
import asyncio
import os
import signal
import subprocess
import sys

import pytest

from controller.config import parse_text
from controller.cpu_latency import (DEVICE, MAX_US, CpuLatency, CpuLatencyError, held_by,
                                    in_force)
from controller.sdnotify import Notifier
from controller.service import Service

writable = pytest.mark.skipif(not os.access(DEVICE, os.W_OK),
                              reason=f"{DEVICE} is not writable by this user")


def _free_bound() -> int:
    """A bound below the one in force, so that holding it shows in the kernel's value."""
    now = in_force()
    if now == 0:
        pytest.skip("another process holds a wake-up latency of 0 µs; no lower bound exists")
    return min(now - 1, 4321)


@writable
def test_a_held_request_bounds_the_kernel_and_its_release_withdraws_it():
    before = in_force()
    us = _free_bound()
    req = CpuLatency.hold(us)
    try:
        assert req.held and held_by(os.getpid())
        assert in_force() == us
    finally:
        req.release()
    assert not req.held and not held_by(os.getpid())
    assert in_force() == before
    req.release()                           # twice: nothing more to do


@writable
def test_the_request_ends_with_its_process_even_on_sigkill():
    before = in_force()
    us = _free_bound()
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from controller.cpu_latency import CpuLatency\n"
         f"CpuLatency.hold({us}); print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "held\n"
        assert in_force() == us
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert in_force() == before


@pytest.mark.parametrize("us", [-1, -5, MAX_US + 1])
def test_a_bound_out_of_range_is_refused_before_anything_is_opened(us):
    with pytest.raises(CpuLatencyError, match=f"0 to {MAX_US}"):
        CpuLatency.hold(us)
    assert not held_by(os.getpid())


def test_a_missing_device_names_the_way_out(tmp_path):
    with pytest.raises(CpuLatencyError) as err:
        CpuLatency.hold(0, str(tmp_path / "cpu_dma_latency"))
    assert "has no" in str(err.value) and "cpu_wakeup_us = -1" in str(err.value)


def test_a_user_the_device_refuses_is_told_of_the_udev_rule():
    """As a user without write access (root's descriptor check is skipped, so as root the
    check runs in a child that has dropped to nobody)."""
    code = ("import os, sys\n"
            "from controller.cpu_latency import CpuLatency, CpuLatencyError\n"
            "if os.getuid() == 0: os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
            "try: CpuLatency.hold(0)\n"
            "except CpuLatencyError as e: print(e)\n"
            "else: print('HELD')\n")
    if os.getuid() != 0 and os.access(DEVICE, os.W_OK):
        pytest.skip(f"this user may write {DEVICE}")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.getcwd(), env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert out.returncode == 0, out.stderr
    assert "permission denied" in out.stdout and "99-tablectl.rules" in out.stdout
    assert "cpu_wakeup_us = -1" in out.stdout


CONFIG = """
[table]
id = "qos-1"
game = "q-poker"
boxes = 7

[journal]
path = "{journal}"
{service}
"""


def _service(tmp_path, service: str = "") -> Service:
    return Service(parse_text(CONFIG.format(journal=tmp_path / "j.db", service=service)),
                   notifier=Notifier(None), open_panel=False)


async def _while_running(svc: Service, check) -> None:
    task = asyncio.create_task(svc.run())
    while svc.runner is None or svc.journal is None:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)           # past recovery, where the request is made
    try:
        check()
    finally:
        svc.stop()
        assert await task == 0


@writable
def test_the_service_holds_the_configured_bound_while_it_runs(tmp_path):
    before = in_force()
    us = _free_bound()
    svc = _service(tmp_path, f"[service]\ncpu_wakeup_us = {us}")

    def check():
        assert svc.cpu_latency is not None and svc.cpu_latency.held
        assert in_force() == us

    asyncio.run(_while_running(svc, check))
    assert not svc.cpu_latency.held and in_force() == before


def test_the_service_asks_nothing_when_told_not_to(tmp_path):
    svc = _service(tmp_path, "[service]\ncpu_wakeup_us = -1")
    asyncio.run(_while_running(svc, lambda: (svc.cpu_latency is None
                                             and not held_by(os.getpid())) or pytest.fail(
        "a request was held")))


def test_a_service_refused_the_device_runs_the_table_all_the_same(tmp_path, capsys):
    svc = _service(tmp_path)                       # the default: 0 µs
    svc.cpu_latency_device = str(tmp_path / "no-such-device")

    def check():
        assert svc.cpu_latency is None
        assert svc.runner.table.state == "out_of_service"

    asyncio.run(_while_running(svc, check))
    err = capsys.readouterr()
    assert "cpu wake-up latency not held" in err.out + err.err


@pytest.mark.parametrize("setting, held", [(None, True), (-1, False)])
def test_the_daemon_process_holds_the_request_by_default(tmp_path, setting, held):
    """``tablectl run`` itself, as systemd starts it: the default asks 0 µs."""
    from controller.rig import Rig

    if held and not os.access(DEVICE, os.W_OK):
        pytest.skip(f"{DEVICE} is not writable by this user")
    with Rig(tmp_path, "q-poker", "shoe", cpu_wakeup_us=setting) as rig:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        assert rig.holds_cpu_latency() is held
        if held:
            assert in_force() == 0
    assert ("cpu wake-up latency held" in rig.log_path.read_text()) is held
