"""Shared pieces of the API, browser and card-secrecy tests (this module holds no tests).

* :func:`make_runner`: a table with its journal, as the daemon builds it.
* :func:`api_config`: an [api] section with one token per role, stored hashed.
* :func:`client`: an aiohttp test client on the API for a coroutine to use.
* :class:`LiveTable`: the controller with simulated devices over pseudo-terminals, the real
  drivers, the runner and the API on a real TCP port, in a background thread; the browser
  tests point Chromium at it.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from pathlib import Path
from typing import Any, Awaitable, Callable

from aiohttp.test_utils import TestClient, TestServer

from controller.api import ApiServer, create_app, hub_of
from controller.config import ApiConfig, hash_token
from controller.journal import Journal
from controller.rules import get_game
from controller.table import Table
from controller.table.runner import TableRunner

TOKENS = {"display": "display-token-0123456789abcdef",
          "dealer": "dealer-token-0123456789abcdef",
          "supervisor": "supervisor-token-0123456789abcdef"}
LAYOUT = {"q-poker": 7, "fortune-3-card-poker": 7, "super-pan-9": 8, "texas-holdem": 10}
DEVICES = {"shoe": "shoe", "shuffler": "shuffler", "dice": "dice"}
# The devices' links in these tables: the test, the controller and the browser share two cores,
# and a pause of a loaded machine must not be a lost link, which stops the round in
# malfunction and leaves the test waiting for a state that never comes.
LINK = {"heartbeat_s": 0.25, "link_timeout_s": 5.0}


def api_config(listen: str = "127.0.0.1", port: int = 0) -> ApiConfig:
    return ApiConfig(listen, port, {r: hash_token(t) for r, t in TOKENS.items()})


def auth(role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[role]}"}


def make_runner(path: Path, game: str = "q-poker", mode: str = "shoe",
                devices: dict[str, str] | None = None) -> TableRunner:
    journal = Journal.open(path, "T1")
    table = Table("T1", get_game(game), mode, layout_boxes=LAYOUT[game],
                  devices=devices if devices is not None else DEVICES)
    return TableRunner(table, journal)


@contextlib.contextmanager
def captured_logs():
    """The service's log lines, as JSON, in a string stream for the block's length."""
    import io

    from controller.logs import configure_logging
    stream = io.StringIO()
    configure_logging("info", "json", stream)
    try:
        yield stream
    finally:
        reset_logging()


def reset_logging() -> None:
    """Put logging back as a test found it (structlog's defaults, no handler of ours)."""
    import logging
    import structlog
    structlog.reset_defaults()
    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, "_tablectl", False)]:
        root.removeHandler(h)


def client(app: Any, fn: Callable[[TestClient], Awaitable[Any]]) -> Any:
    """Run ``fn(client)`` against ``app`` in a fresh event loop; return what it returns."""
    async def main() -> Any:
        async with TestClient(TestServer(app)) as c:
            return await fn(c)
    return asyncio.run(main())


class LiveTable:
    """The controller of one table with simulated devices, serving the API on 127.0.0.1.

    Devices: the firmware simulator's shuffler, shoe and (for Super Pan 9) dice on
    pseudo-terminals, opened by the real drivers; their events go through one asyncio queue to
    the runner, and the runner's device commands go back to the drivers, as in the daemon.
    """

    def __init__(self, tmp: Path, game: str, mode: str, *, seed: int = 7) -> None:
        from firmware_sim import SimulatedTable

        self.game, self.mode = game, mode
        self.sim = SimulatedTable(seed=seed, speed=200.0)
        classes = ["shuffler", "shoe"] + (["dice"] if game == "super-pan-9" else [])
        self.devices = {c: self.sim.add(c) for c in classes}
        self.runner = make_runner(tmp / "journal.db", game, mode,
                                  devices={c: c for c in classes})
        self.journal = self.runner.journal
        self.table = self.runner.table
        self.config = api_config()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                        name="live-table")
        self._thread.start()
        self.server: ApiServer | None = None
        self.drivers: dict[str, Any] = {}
        self.call(self._start())

    def call(self, coro: Awaitable[Any], timeout: float = 20.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def do(self, fn: Callable[[], Any], timeout: float = 20.0) -> Any:
        """Run ``fn`` in the controller's loop (the table is not thread-safe)."""
        async def run() -> Any:
            return fn()
        return self.call(run(), timeout)

    async def _start(self) -> None:
        from drivers.factory import open_driver

        self.queue: asyncio.Queue = asyncio.Queue()
        for name, dev in self.devices.items():
            self.drivers[name] = open_driver(dev.spec(id=name, **LINK), self.queue)
        for d in self.drivers.values():
            await d.wait_up(10)
        self.runner.send = self._send
        self._pump = asyncio.ensure_future(self._pump_events())
        app = create_app(self.runner, self.config, submit=self._submit, drivers=self.drivers,
                         status_interval=1.0)
        self.hub = hub_of(app)
        self.server = await ApiServer.start(app, self.config)

    async def _pump_events(self) -> None:
        from controller.errors import TablectlError
        while True:
            item = await self.queue.get()
            if isinstance(item, tuple):
                name, role, args, fut = item
                try:
                    self.runner.command(name, role, **args)
                    fut.set_result({"ok": True})
                except TablectlError as exc:
                    fut.set_result({"ok": False, "error": str(exc)})
            else:
                self.runner.device(item)

    async def _submit(self, name: str, role: str, args: dict[str, Any]) -> dict[str, Any]:
        fut = asyncio.get_running_loop().create_future()
        await self.queue.put((name, role, args, fut))
        return await fut

    def _send(self, command: Any) -> None:
        driver = next((d for n, d in self.drivers.items()
                       if self.table.devices.get(n) == command.device_class), None)
        if driver is not None:
            asyncio.ensure_future(getattr(driver, command.action)(**command.args))

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def wait(self, predicate: Callable[[], bool], timeout: float = 15.0) -> None:
        """Wait until ``predicate()`` (run in the controller's loop) holds."""
        async def poll() -> None:
            while not predicate():
                await asyncio.sleep(0.02)
        self.call(asyncio.wait_for(poll(), timeout), timeout + 1)

    def close(self) -> None:
        async def stop() -> None:
            self._pump.cancel()
            if self.server is not None:
                await self.server.close()
            for d in self.drivers.values():
                await d.close()
        try:
            self.call(stop())
        except (concurrent.futures.TimeoutError, RuntimeError):
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.sim.stop()
        self.journal.close()


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaemonTable:
    """``tablectl run`` as its own process (controller.rig.Rig: simulated devices on
    pseudo-terminals, the real drivers), serving the console API on a free loopback port
    with the test tokens."""

    def __init__(self, tmp: Path, game: str, mode: str, *, seed: int = 7) -> None:
        import time
        import urllib.request
        from controller.rig import Rig

        port = free_port()

        class ApiRig(Rig):
            def write_config(self) -> None:
                super().write_config()
                text = self.config_path.read_text(encoding="utf-8")
                for cls in self.devices:
                    text = text.replace(f"[devices.{cls}]\n", f"[devices.{cls}]\n" + "".join(
                        f"{k} = {v}\n" for k, v in LINK.items()))
                self.config_path.write_text(text, encoding="utf-8")
                with open(self.config_path, "a", encoding="utf-8") as f:
                    f.write(f'\n[api]\nlisten = "127.0.0.1"\nport = {port}\n\n[api.tokens]\n')
                    for role, tok in TOKENS.items():
                        f.write(f'{role} = "{hash_token(tok)}"\n')

        self.rig = ApiRig(tmp, game, mode, seed=seed, speed=200.0, table_id="T1")
        self.url = f"http://127.0.0.1:{port}"
        try:
            self.rig.start_devices()
            self.rig.start_controller()
            self.rig.wait_links()
            deadline = time.monotonic() + 15
            while True:
                try:
                    req = urllib.request.Request(self.url + "/api/health", headers={
                        "Authorization": f"Bearer {TOKENS['display']}"})
                    with urllib.request.urlopen(req, timeout=2):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        except BaseException:
            self.rig.stop()
            raise
        self.devices = self.rig.devices

    def state(self) -> str:
        return self.rig.state()

    def view(self) -> dict[str, Any]:
        return self.rig.view()

    def journal(self) -> Journal:
        """The daemon's journal, read-only (use it in a ``with``)."""
        return Journal.open(self.rig.journal_path, readonly=True)

    def wait(self, predicate: Callable[[], bool], timeout: float = 15.0) -> None:
        import time
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"not reached in {timeout} s; table in {self.state()}")
            time.sleep(0.02)

    def close(self) -> None:
        self.rig.stop()
