"""The live control channel: JSON lines over 127.0.0.1 TCP or a Unix socket.

Another process (the demo, a test, a person with ``nc``) drives the simulated devices of a
running ``tablectl sim`` through it: inject faults, play the croupier's hands, read status and
the events the firmware emitted. One request per line, one answer per line, in order::

    → {"id": 1, "device": "shoe", "action": "draw", "args": {"face_up": true}}
    ← {"id": 1, "ok": true, "result": [{"kind": "card_drawn", "card": "As", "face_up": true,
                                        "deck_id": 1}]}
    → {"id": 2, "device": "shoe", "action": "inject", "args": {"fault": "jam", "at_card": 3}}
    ← {"id": 2, "ok": true, "result": null}
    → {"id": 3, "action": "nonsense"}
    ← {"id": 3, "ok": false, "error": "unknown action 'nonsense'; use list, status, …"}

``id`` is optional and echoed back. The actions are listed in :data:`ACTIONS` and in
firmware-sim/README.md. A bad request gets ``ok: false`` and an error naming the problem; the
connection and the devices carry on.
"""
from __future__ import annotations

import asyncio
import inspect
import json
import os
import socket
import stat
import threading
from typing import Any

from controller.errors import TablectlError

from .faults import FAULTS

# action -> (needs a device, SimulatedDevice method or None for a table-level action)
DEVICE_ACTIONS = ("status", "inject", "disconnect", "reconnect", "reboot", "draw", "load_deck",
                  "set_next_deck", "place_card", "remove_card", "clear_boxes", "open_door",
                  "close_door", "open_lid", "close_lid", "clear_jam", "return_die",
                  "set_next_dice", "events")
TABLE_ACTIONS = ("list", "faults", "shutdown")
ACTIONS = TABLE_ACTIONS + DEVICE_ACTIONS


class ControlServer:
    """Serves the control channel of one SimulatedTable in the table's loop."""

    def __init__(self, table: Any, address: str) -> None:
        self.table = table
        self.address = address
        self._server: asyncio.AbstractServer | None = None
        self._path: str | None = None
        #: set by the ``shutdown`` action; ``tablectl sim`` exits when it is set
        self.shutdown = threading.Event()
        self._clients: set[asyncio.StreamWriter] = set()

    def _bind(self, sock: socket.socket, where: Any) -> None:
        try:
            sock.bind(where)
        except OSError as exc:
            sock.close()
            raise TablectlError(f"control address {self.address!r} cannot be bound "
                                f"({exc.strerror or exc}); name another port or path") from None

    def start_sync(self) -> str:
        """Bind now (in the loop thread) and serve in the background; the bound address."""
        loop = asyncio.get_running_loop()
        if self.address.startswith("unix:"):
            path = self.address[5:]
            if os.path.lexists(path):
                if not stat.S_ISSOCK(os.lstat(path).st_mode):
                    # Only a socket left by an earlier run is replaced, never a file.
                    raise TablectlError(f"control address {self.address!r}: {path} exists and "
                                        "is not a socket; name another path")
                os.unlink(path)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._bind(sock, path)
            self._path = path
            bound = f"unix:{path}"
        elif self.address == "tcp" or self.address.startswith("tcp:"):
            text = self.address[4:] if self.address.startswith("tcp:") else ""
            if not (text == "" or (text.isdigit() and int(text) <= 65535)):
                raise TablectlError(f"control address {self.address!r}: the port must be a "
                                    "number 0-65535 (0 or plain 'tcp' for a free one)")
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._bind(sock, ("127.0.0.1", int(text or 0)))
            bound = "127.0.0.1:%d" % sock.getsockname()[1]
        else:
            raise TablectlError(f"control address {self.address!r} is unknown; use tcp, "
                                "tcp:PORT or unix:PATH")
        sock.listen(8)
        sock.setblocking(False)
        if sock.family == socket.AF_UNIX:
            coro = asyncio.start_unix_server(self._client, sock=sock)
        else:
            coro = asyncio.start_server(self._client, sock=sock)
        self._starting = loop.create_task(coro)
        self._starting.add_done_callback(self._started)
        return bound

    def _started(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is None:
            self._server = task.result()

    def stop_sync(self) -> None:
        if self._server is not None:
            self._server.close()
        else:
            self._starting.cancel()
        for w in list(self._clients):
            w.close()
        if self._path and os.path.exists(self._path):
            os.unlink(self._path)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._clients.add(writer)
        try:
            while True:
                try:
                    line = await reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    writer.write(b'{"ok": false, "error": "line too long (64 KiB at most)"}\n')
                    break
                if not line:
                    break
                if not line.strip():
                    continue
                answer = self.handle(line)
                writer.write((json.dumps(answer) + "\n").encode())
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._clients.discard(writer)
            writer.close()

    def handle(self, line: bytes | str) -> dict[str, Any]:
        """Answer one request line (runs in the loop thread)."""
        try:
            req = json.loads(line)
        except (ValueError, UnicodeDecodeError) as exc:
            return {"ok": False, "error": f"the line is not JSON ({exc}); send one object per "
                    "line, e.g. {\"device\": \"shoe\", \"action\": \"draw\"}"}
        if not isinstance(req, dict):
            return {"ok": False, "error": "a request is a JSON object with action (and device, "
                    "args)"}
        out: dict[str, Any] = {"id": req["id"]} if "id" in req else {}
        try:
            result = self._dispatch(req)
            out.update(ok=True, result=result)
        except TablectlError as exc:
            out.update(ok=False, error=str(exc))
        except Exception as exc:          # never let one request take the channel down
            out.update(ok=False, error=f"{type(exc).__name__}: {exc}")
        return out

    def _dispatch(self, req: dict[str, Any]) -> Any:
        action = req.get("action")
        args = req.get("args", {})
        if not isinstance(args, dict):
            raise TablectlError("args must be a JSON object of named arguments")
        if action not in ACTIONS:
            raise TablectlError(f"unknown action {action!r}; use {', '.join(ACTIONS)}")
        if action == "list":
            return [{"name": d.name, "device_class": d.device_class, "transport": d.transport,
                     "port": d.port, "tty": d.tty, "serial": d.serial}
                    for d in self.table.devices.values()]
        if action == "faults":
            return {n: {"level": s.level, "devices": list(s.devices), "args": {
                k: (None if v[1] is ... else v[1]) for k, v in s.args.items()}, "doc": s.doc}
                for n, s in FAULTS.items()}
        if action == "shutdown":
            self.shutdown.set()
            return None
        name = req.get("device")
        if name is None:
            if len(self.table.devices) != 1:
                raise TablectlError(f"action {action!r} needs device (one of "
                                    f"{', '.join(self.table.devices) or 'none'})")
            name = next(iter(self.table.devices))
        dev = self.table[name]
        if action == "events":
            since = args.get("since", 0)
            if isinstance(since, bool) or not isinstance(since, int) or since < 0:
                raise TablectlError("events: since must be a whole number, 0 or more")
            events = dev.emitted()
            return {"events": events[since:], "next": len(events)}
        method = getattr(dev, action)
        try:
            inspect.signature(method).bind(**args)
        except TypeError as exc:
            params = [p for p in inspect.signature(method).parameters]
            raise TablectlError(f"{action}: {exc}; its arguments are "
                                f"{', '.join(params) or 'none'}") from None
        return method(**args)


class ControlClient:
    """A small blocking client: ``ControlClient("127.0.0.1:4711").request("draw",
    device="shoe", face_up=True)`` returns the result or raises TablectlError."""

    def __init__(self, address: str, timeout: float = 10.0) -> None:
        if address.startswith("unix:"):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(address[5:])
        else:
            host, _, port = address.rpartition(":")
            self.sock = socket.create_connection((host or "127.0.0.1", int(port)), timeout)
        self._file = self.sock.makefile("rwb")
        self._id = 0

    def request(self, action: str, device: str | None = None, **args: Any) -> Any:
        self._id += 1
        req: dict[str, Any] = {"id": self._id, "action": action, "args": args}
        if device is not None:
            req["device"] = device
        self._file.write((json.dumps(req) + "\n").encode())
        self._file.flush()
        line = self._file.readline()
        if not line:
            raise TablectlError("the simulator closed the control channel")
        answer = json.loads(line)
        if not answer.get("ok"):
            raise TablectlError(answer.get("error", "request failed"))
        return answer.get("result")

    def close(self) -> None:
        self._file.close()
        self.sock.close()

    def __enter__(self) -> "ControlClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
