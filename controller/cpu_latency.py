"""The CPU wake-up latency the service asks the kernel to hold while it runs (PM QoS).

A frame from a device wakes the daemon, and the journal's flush completing wakes it again; a
CPU resting in an idle state must first come back out of it each time. Linux lets a process
bound that: a 32-bit number of microseconds written to ``/dev/cpu_dma_latency``, with the file
kept open, stops the cpuidle governor from choosing any idle state slower to leave than that;
closing the file, however the process ends, withdraws the request (Documentation/power/
pm_qos_interface.rst). At 0 only the shallowest state is left: WFI on ARM cores such as the
Raspberry Pi's, polling on x86, which on a virtual machine also spares a trip through the
hypervisor on every wake-up (docs/performance.md has the figures with and without it).

``[service] cpu_wakeup_us`` sets the bound (``-1``: ask nothing, the kernel decides).
"""
from __future__ import annotations

import errno
import os
import struct
from pathlib import Path

from controller.errors import TablectlError

DEVICE = "/dev/cpu_dma_latency"
OFF = -1                    # [service] cpu_wakeup_us: ask nothing
# The largest bound the kernel takes (PM_QOS_DEFAULT_VALUE, 2000 s): no bound at all.
MAX_US = 2_000_000_000
_VALUE = struct.Struct("=i")    # the kernel reads and writes a native 32-bit integer


class CpuLatencyError(TablectlError):
    """The request could not be made; the message says why and what to do."""


class CpuLatency:
    """A held request. Release it with :meth:`release` (or ``with``); the kernel also drops
    it when the process ends, even by SIGKILL, so it never outlives the service."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def hold(cls, us: int, device: str = DEVICE) -> "CpuLatency":
        """Ask the kernel to keep every CPU's wake-up within ``us`` microseconds."""
        if not 0 <= us <= MAX_US:
            raise CpuLatencyError(f"a CPU wake-up latency of {us} µs is out of range: give "
                                  f"0 to {MAX_US} µs, or -1 to ask nothing")
        try:
            fd = os.open(device, os.O_WRONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise CpuLatencyError(_why(device, exc)) from exc
        try:
            os.write(fd, _VALUE.pack(us))
        except OSError as exc:
            os.close(fd)
            raise CpuLatencyError(f"{device} refused a wake-up latency of {us} µs "
                                  f"({exc.strerror}): set [service] cpu_wakeup_us = -1 "
                                  "to go on without it") from exc
        return cls(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Withdraw the request (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> "CpuLatency":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def in_force(device: str = DEVICE) -> int:
    """The bound the kernel applies now: the smallest of every process's requests, or
    :data:`MAX_US` when none asks anything."""
    with open(device, "rb") as f:
        return _VALUE.unpack(f.read(_VALUE.size))[0]


def held_by(pid: int, device: str = DEVICE) -> bool:
    """Whether process ``pid`` holds a request open: its descriptors, as the kernel lists
    them (False once it is gone)."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(fd) == device:
                return True
        except OSError:     # closed meanwhile (the listing's own descriptor among them)
            continue
    return False


def _why(device: str, exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return (f"cannot open {device} to hold the CPUs' wake-up latency (permission "
                "denied): install systemd/99-tablectl.rules, which lets the tablectl group "
                "write it, and keep DeviceAllow=/dev/cpu_dma_latency in the unit "
                "(docs/install.md); or set [service] cpu_wakeup_us = -1 to go on without it")
    if exc.errno == errno.ENOENT:
        return (f"this system has no {device} (a kernel without PM QoS, or a container "
                "without the device): set [service] cpu_wakeup_us = -1 to go on without it")
    return (f"cannot open {device} ({exc.strerror}): set [service] cpu_wakeup_us = -1 to go "
            "on without it")
