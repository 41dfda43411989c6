"""Open a device from its configuration: the driver of its class over the transport and codec
it names."""
from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from .box_sensors import BoxSensorsDriver
from .dice import DiceDriver
from .driver import Driver
from .shoe import ShoeDriver
from .shuffler import ShufflerDriver
from .spec import DeviceSpec

DRIVERS: dict[str, type[Driver]] = {
    "shuffler": ShufflerDriver,
    "shoe": ShoeDriver,
    "dice": DiceDriver,
    "box-sensors": BoxSensorsDriver,
}


def make_driver(spec: DeviceSpec, queue: asyncio.Queue,
                clock: Callable[[], float] = time.monotonic, **link: Any) -> Driver:
    """The driver for ``spec``, not yet started. ``link`` options (``confirm``, ``memory``,
    ``on_session``, ``on_refused``, ``on_opening``) go to :class:`~drivers.driver.Driver`."""
    return DRIVERS[spec.device_class](spec, queue, clock, **link)


def open_driver(spec: DeviceSpec, queue: asyncio.Queue,
                clock: Callable[[], float] = time.monotonic, **link: Any) -> Driver:
    """The driver for ``spec``, started: call it from the running event loop. It connects in
    the background (reconnecting by itself with back-off) and puts LinkUp on ``queue`` when
    the device answered; ``await driver.wait_up()`` to wait for that."""
    driver = make_driver(spec, queue, clock, **link)
    driver.start()
    return driver
