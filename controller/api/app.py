"""The console API: an aiohttp application for the dealer console and the pit display.

``create_app(runner, config)`` builds it; the daemon mounts it beside the table (docs/api.md
has the exact call). Every request under ``/api/`` carries a role's token
(``Authorization: Bearer TOKEN``; the event stream also takes ``?token=TOKEN`` for browsers'
EventSource). Tokens are stored hashed in the configuration and compared in constant time
(:meth:`controller.config.ApiConfig.role_for`); a reload of the daemon puts new ones in force
at once (:func:`use_tokens`). No token or a wrong one is 401, a role without
the right is 403, both logged (never the token). A command the table refuses (the rules or the
current state) is 409 with the table's own message and changes nothing; a malformed request is
400. Every command goes through the runner, which journals it with its role before the machine
acts (and journals a refusal as ``refused``). A role the table refused too many commands in a
window is held back: its commands are 429, with ``Retry-After``, and reach nothing
(:mod:`controller.api.throttle`; the hold and its release are journaled first).

Only public data leaves: the table's public view and its :class:`PublicEvent` stream, device
health and the tower light. No card still face down at the table is in any of them.
"""
from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

from aiohttp import web

from controller.config import ApiConfig
from controller.rules.base import AMOUNT_LIMIT
from controller.shown import kind, shown
from controller.errors import TablectlError
from controller.logs import get_logger
from controller.strict_json import TooLarge, first_twice, nesting, pairs, plain, whole_number
from controller.table.machine import (COMMANDS, TEXT_EXAMPLES, TEXT_WORDS, card_text_refusal,
                                      card_word_refusal)
from controller.table.secrecy import PublicEvent, scrub
from controller.tower import light_json

from .health import device_health
from .hub import EventHub, Subscription
from .openapi import (MAX_PARAMS_CHARS, PARAMS, build_openapi, command_schema,
                      required_params)
from .throttle import Throttle

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
ROLES = ("display", "dealer", "supervisor")
MAX_BODY = 64 * 1024
# How long a command's body may take to arrive once its headers have: 64 KiB takes far less
# on any network the table is on. A body that stops half way would hold its connection (and
# one of the daemon's file descriptors) for ever.
BODY_S = 10.0
# How deep a body's lists and objects may nest: {"stacks": {"1": 500}} is 2. Much deeper and
# the journal could not write the command down.
MAX_NESTING = 2
# How long a command's parameters may be, as JSON (openapi.MAX_PARAMS_CHARS): every command
# the table refuses is journaled with them (its command and its refusal), so this, not the
# body's 64 KiB, is what each refusal the throttle lets through may cost the journal.
STATUS_INTERVAL_S = 2.0
# Event streams served at once: a page holds one, so this is many pit displays and consoles,
# and it leaves room among the server's connections (controller.api.serve.MAX_CONNECTIONS)
# for the commands, whatever a client holding a token opens.
MAX_STREAMS = 64
# How long an event stream waits for its client to take what is sent before it ends.
STREAM_WRITE_S = 15.0
# Table events after which the stream also sends a fresh ``status`` (light, devices): each
# one that may change the light or its buzzer, so a client other than the page sees it at
# once, not at the next STATUS_INTERVAL_S.
STATUS_AFTER = {"state", "device_link", "device_condition", "malfunction_cleared", "mode",
                "buzzer_silenced", "integrity_alarm", "integrity_stop", "integrity_cleared"}

Submit = Callable[[str, str, dict[str, Any]], Awaitable[Mapping[str, Any]]]


@dataclass
class ApiState:
    """What the handlers share: the table (through its runner), the configuration, the hub."""

    target: Any
    api: ApiConfig
    hub: EventHub
    submit: Submit | None
    drivers: Mapping[str, Any] | None
    status_interval: float

    @property
    def table(self) -> Any:
        # A runner whose commit failed holds a table ahead of its journal: nothing of it is
        # served (503) while the daemon stops.
        broken = getattr(self.target, "broken", None) if hasattr(self.target, "table") \
            else None
        if broken is not None:
            raise TableStopped(broken)
        return getattr(self.target, "table", self.target)


class TableStopped(Exception):
    """The journal could not be written: the table is stopping and is not shown."""

    def __str__(self) -> str:
        return f"the table is stopping: {self.args[0]}"


STATE: web.AppKey[ApiState] = web.AppKey("tablectl_api", ApiState)
THROTTLE: web.AppKey[Throttle] = web.AppKey("tablectl_throttle", Throttle)
# The caller's role, set by the token check (a typed key where aiohttp has them), and the
# stored hash its token matched: a request, or a stream, outlives its token only while that
# hash is still its role's (:func:`use_tokens`).
ROLE: Any = web.RequestKey("tablectl_role", str) if hasattr(web, "RequestKey") else "tablectl_role"
HELD: Any = web.RequestKey("tablectl_held", str) if hasattr(web, "RequestKey") else "tablectl_held"


def _log():
    """The API's logger, as configured now (the daemon configures logging after import)."""
    return get_logger("api")


# --- errors -----------------------------------------------------------------------------------

def error(status: int, code: str, message: str, **extra: Any) -> web.Response:
    """The one shape of every error: ``{"ok": false, "error": {"status", "code", "message"}}``."""
    body = {"ok": False, "error": {"status": status, "code": code, "message": message, **extra}}
    headers = {"WWW-Authenticate": 'Bearer realm="tablectl"'} if status == 401 else None
    return web.json_response(body, status=status, headers=headers)


def _refuse(request: web.Request, status: int, code: str, message: str, **fields: Any
            ) -> web.Response:
    _log().warning("api request refused", status=status, code=code, method=request.method,
                path=scrub(request.path), remote=request.remote, role=request.get(ROLE), **fields)
    return error(status, code, message)


def _token(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
        return None
    if request.path == "/api/events":       # EventSource cannot send headers
        return request.query.get("token") or None
    return None


def _is_text(token: str) -> bool:
    """Whether ``token`` is text (bytes that are not UTF-8 arrive as lone surrogates): any
    other value is no role's token, and is refused as such instead of failing the request."""
    try:
        token.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


PUBLIC_PATHS = {"/api/openapi.json"}


@web.middleware
async def _middleware(request: web.Request, handler: Callable) -> web.StreamResponse:
    if request.path.startswith("/api/") and request.path not in PUBLIC_PATHS:
        api = request.app[STATE].api
        token = _token(request)
        if token is None:
            return _refuse(request, 401, "no_token",
                           "no token: send the header 'Authorization: Bearer TOKEN' with the "
                           "token of the display, dealer or supervisor role")
        role = api.role_for(token) if _is_text(token) else None
        if role is None:
            return _refuse(request, 401, "wrong_token",
                           "the token is not one of this table's tokens; ask the supervisor "
                           "for the right one (tablectl config hash-token)")
        request[ROLE] = role
        request[HELD] = api.tokens[role]
    try:
        response = await handler(request)
    except TableStopped as exc:
        return error(503, "journal_failed", str(exc))
    except web.HTTPException as exc:
        if not request.path.startswith("/api/") or exc.status < 400:
            raise
        allowed = sorted(getattr(exc, "allowed_methods", ()) or ())
        response = error(exc.status, exc.reason.lower().replace(" ", "_"),
                         f"{request.method} {request.path}: {exc.reason}; "
                         + (f"use {' or '.join(allowed)}; " if allowed else "")
                         + (f"a body holds at most {MAX_BODY // 1024} KiB; "
                            if exc.status == 413 else "")
                         + "see /api/openapi.json")
        if allowed:
            response.headers["Allow"] = ", ".join(allowed)
        return response
    if request.path.startswith("/api/") and not response.prepared:
        response.headers.setdefault("Cache-Control", "no-store")
    return response


# The connections with a request in hand (their handler running: a command, a query, an event
# stream): controller.api.serve closes the others first when connections are at their limit.
BUSY: web.AppKey[set[Any]] = web.AppKey("tablectl_busy", set)


@web.middleware
async def _in_hand(request: web.Request, handler: Callable) -> web.StreamResponse:
    busy = request.app[BUSY]
    busy.add(request.protocol)
    try:
        return await handler(request)
    finally:
        busy.discard(request.protocol)


@web.middleware
async def _security_headers(request: web.Request, handler: Callable) -> web.StreamResponse:
    response = await handler(request)
    if response.prepared:        # a stream: its headers are already sent
        return response
    h = response.headers
    h.setdefault("X-Content-Type-Options", "nosniff")
    h.setdefault("Referrer-Policy", "no-referrer")
    h.setdefault("X-Frame-Options", "DENY")
    h.setdefault("Content-Security-Policy",
                 "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                 "script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
    return response


# --- queries ----------------------------------------------------------------------------------

def commands_for(role: str) -> list[dict[str, Any]]:
    """The commands ``role`` may give, with their parameters, help and body schema (the
    console's all-commands form reads each parameter's type from it)."""
    return [{"name": c.name, "params": list(c.params), "help": c.help, "roles": list(c.roles),
             "schema": command_schema(c.name)}
            for c in COMMANDS.values() if role in c.roles]


def table_doc(st: ApiState, role: str) -> dict[str, Any]:
    """Everything the page shows, as one document (public data only)."""
    table = st.table
    game = table.game
    view = table.public_view()
    return {
        "ok": True, "role": role, "table": table.table_id,
        "game": {"id": game.game_id, "title": game.title,
                 "regulation": getattr(game, "regulation", ""),
                 "boxes": table.layout_boxes, "wagers": list(table.wagers or ()),
                 # the readings in force: the page offers what they take (Q2's seated mark)
                 "interpretations": dict(table.interpretations)},
        "state": table.state, "mode": table.mode.value,
        "light": light_json(table),
        "devices": device_health(table, st.drivers),
        "view": view, "event_id": st.hub.last_id,
    }


def status_doc(st: ApiState) -> dict[str, Any]:
    table = st.table
    return {"state": table.state, "mode": table.mode.value,
            "light": light_json(table), "devices": device_health(table, st.drivers)}


async def get_table(request: web.Request) -> web.Response:
    return web.json_response(table_doc(request.app[STATE], request[ROLE]))


async def get_health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True, **status_doc(request.app[STATE])})


async def get_whoami(request: web.Request) -> web.Response:
    role = request[ROLE]
    return web.json_response({"ok": True, "role": role, "commands": commands_for(role)})


async def get_openapi(request: web.Request) -> web.Response:
    return web.json_response(build_openapi())


# --- commands ---------------------------------------------------------------------------------

async def post_command(request: web.Request) -> web.Response:
    st = request.app[STATE]
    role = request[ROLE]
    name = request.match_info["name"]
    if not any(role in c.roles for c in COMMANDS.values()):
        return _refuse(request, 403, "read_only",
                       f"the {role} role may only look; commands need the dealer's or the "
                       "supervisor's token", command=name)
    spec = COMMANDS.get(name)
    if spec is None:
        return _refuse(request, 404, "unknown_command",
                       f"there is no command {scrub(shown(name))}; {role} may give: "
                       f"{', '.join(c['name'] for c in commands_for(role))}")
    if role not in spec.roles:
        return _refuse(request, 403, "forbidden",
                       f"{name} needs the {' or '.join(spec.roles)} role; the {role} role "
                       "may not give it", command=name)
    held = _held_back(request, role, name)     # before the body is even read
    if held is not None:
        return held
    args = await _args(request, spec.params)
    if isinstance(args, web.Response):
        return args
    required = required_params(name)
    missing = [p for p in required if p not in args]
    if missing:
        optional = [p for p in spec.params if p not in required]
        return error(400, "bad_parameter",
                     f"{name} needs {', '.join(missing)}; it takes {', '.join(required)}"
                     + (f" and, if wanted, {', '.join(optional)}" if optional else ""),
                     command=name)
    # One command of the role at a time from here: each refusal is counted before the
    # role's next command is looked at, so commands sent together cannot all pass the look
    # at the hold before the table has refused any of them.
    async with request.app[THROTTLE].turn(role):
        held = _held_back(request, role, name)
        if held is not None:
            return held
        if not in_force(request):
            # Its body was still arriving (or it waited its turn) when the token was
            # replaced or removed (a reload).
            return _refuse(request, 401, "wrong_token", "the token this command came with "
                           "was replaced or removed while its body arrived; nothing was done: "
                           "send it again with the new token (ask the supervisor for it)",
                           command=name)
        try:
            await _run(st, name, role, args)
        except TablectlError as exc:
            message = scrub(str(exc))    # a rule's error may name cards still face down
            _log().info("command refused by the table", command=name, role=role,
                        error=message)
            if in_force(request):       # a token replaced meanwhile: the new one starts clean
                request.app[THROTTLE].refused(role)
            return error(409, "refused", message, command=name, state=st.table.state)
    try:
        table = st.table
    except TableStopped as exc:     # journaled, but an input after it was not
        return error(503, "journal_failed", f"{name} was recorded; then {exc}", command=name)
    return web.json_response({"ok": True, "command": name, "role": role,
                              "state": table.state, "view": table.public_view(),
                              "event_id": st.hub.last_id})


def _held_back(request: web.Request, role: str, name: str) -> web.Response | None:
    """429 when ``role`` is held back (too many of its commands refused): the command is
    not journaled, not given to the table (nor its body read, at the first look). None: it
    goes on."""
    throttle = request.app[THROTTLE]
    wait = throttle.wait(role)
    if wait is None:
        return None
    answer = error(429, "too_many_refusals",
                   f"the table refused {throttle.limit} of the {role} role's commands within "
                   f"{throttle.window_s} s, the most it takes (api.refused_limit); its "
                   f"commands are held back for {wait} s more, and nothing was done with this "
                   f"one: wait {wait} s (Retry-After), look at the table (GET /api/table) and "
                   "give a command its state takes; a console that repeats a command by "
                   "itself must be stopped", command=name, retry_after_s=wait)
    answer.headers["Retry-After"] = str(wait)
    return answer


def _note(st: ApiState, kind: str, payload: dict[str, Any]) -> int | None:
    """A hold or a release of the throttle: journaled (durable before it takes effect), then
    published. Returns the record's sequence number (None: a table without a journal)."""
    target = st.target
    table = st.table                # TableStopped: the journal failed already
    r = table.round
    journal = getattr(target, "journal", None)
    seq = None
    if journal is not None:
        try:
            seq = journal.append(kind, payload, str(r.round_id) if r is not None else None,
                                 source="service").seq
        except Exception as exc:
            # As for a commit that failed: the table must not go on with a journal it cannot
            # write (the daemon stops at its next input or idle wake-up), and nothing is held
            # or released.
            why = (f"the journal could not be written ({exc}); the console's {kind} was not "
                   "recorded, so it was not done. Restart the service")
            if getattr(target, "broken", "") is None:
                target.broken = why
            raise TableStopped(why) from exc
    event = PublicEvent(kind, table.table_id, r.round_id if r is not None else None,
                        table.state, payload)
    try:
        if hasattr(target, "publish"):
            target.publish(event)
            getattr(target, "published", lambda: None)()
        else:
            st.hub.publish(event)
    except Exception:   # noqa: BLE001 - journaled: the display must never hold the table up
        _log().exception("console hold not published", kind=kind)
    return seq


class _NotANumber(ValueError):
    """NaN, Infinity or -Infinity in a body: Python's parser takes them, JSON has none."""


def _no_constant(name: str) -> Any:
    raise _NotANumber(name)


def _finite(text: str) -> float:
    """A JSON number with a fraction or an exponent; one beyond a float (1e400) would be
    read as infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise _NotANumber(text)
    return value


async def _args(request: web.Request, params: tuple[str, ...]) -> dict[str, Any] | web.Response:
    try:
        raw = await asyncio.wait_for(request.read(), BODY_S)
    except asyncio.TimeoutError:
        late = _refuse(request, 408, "request_timeout",
                       f"the body did not arrive in full within {BODY_S:g} s (it says "
                       f"{request.content_length} bytes); nothing was done: send the command "
                       "again, its whole body at once")
        late.force_close()          # the rest of the body is not waited for
        return late
    except (ConnectionError, RuntimeError) as exc:
        # The client went away (or closed its side) half way: an ordinary thing on a network,
        # not an error of the controller's. Answered in case it still listens. (aiohttp says
        # "Connection closed." with a RuntimeError when it was gone before the read.)
        if isinstance(exc, RuntimeError) and request.transport is not None \
                and not request.transport.is_closing():
            raise
        gone = error(400, "bad_body", f"the body ended before the {request.content_length} "
                     "bytes it announced; nothing was done: send the command again, its "
                     "whole body")
        gone.force_close()
        return gone
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return error(400, "bad_json", f"the body is not UTF-8 text (byte {exc.start}); send "
                     "JSON in UTF-8, such as {\"box\": 1}")
    if not text.strip():
        return {}
    try:
        body = json.loads(text, parse_constant=_no_constant, parse_float=_finite,
                          parse_int=whole_number, object_pairs_hook=pairs)
    except TooLarge as exc:
        return error(400, "bad_json", f"the body holds {exc}, beyond {AMOUNT_LIMIT}; amounts "
                     "are whole chip units up to that")
    except _NotANumber as exc:
        return error(400, "bad_json", f"the body holds {exc}, which is no finite number (JSON has no NaN or infinity); "
                     "amounts are whole numbers, such as {\"amount\": 10}")
    except json.JSONDecodeError as exc:
        return error(400, "bad_json", f"the body is not JSON ({exc.msg} at character "
                     f"{exc.pos}); send an object such as {{\"box\": 1}}")
    except (ValueError, RecursionError):            # a number too long: strict_json.TooLong
        return error(400, "bad_json", "the body is not JSON the table can take (nested too "
                     "deep or a number too long); send an object such as {\"box\": 1}")
    depth = nesting(body)
    if depth > MAX_NESTING:
        return error(400, "bad_json", f"the body nests lists and objects {depth} deep; a "
                     f"command's parameters nest at most {MAX_NESTING} deep, such as "
                     "{\"seats\": [1, 4], \"stacks\": {\"1\": 500, \"4\": 500}}")
    twice = first_twice(body, shown=scrub)   # masked as a card would be anywhere the API answers
    if twice:
        return error(400, "bad_json", f"the body gives {twice}; JSON would keep only the last, "
                     "and which one was meant cannot be told: give each key once")
    body = plain(body)
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:    # a lone surrogate escape: the stream cannot send it
        return error(400, "bad_json", f"the body holds {exc.object[exc.start]!a}, half of a "
                     "UTF-16 pair, which is not text; send the character itself in UTF-8")
    if not isinstance(body, dict):
        return error(400, "bad_body", "the body must be a JSON object of the command's "
                     f"parameters ({', '.join(params) or 'none'}), got {kind(body)}")
    unknown = sorted(set(body) - set(params))
    if unknown:
        return error(400, "bad_parameter",
                     f"{request.match_info['name']} takes {', '.join(params) or 'no parameters'};"
                     f" unexpected {scrub(', '.join(k[:40] for k in unknown))}")
    for key, value in body.items():
        wrong = _not_text(key, value)
        if wrong:
            return error(400, "bad_parameter", f"{request.match_info['name']}: {wrong}")
        # A name or a reason that spells a card: the table would refuse it (journaled as a
        # refusal, counted against the role); it is a mistake in the request, told here.
        # One with a card inside ("Mr Kd"): shown as typed, but every refusal, log line and
        # journal record that quotes it masks the card ("Mr [card]"), naming nobody.
        wrong = (card_text_refusal(request.match_info["name"], key, value)
                 or card_word_refusal(request.match_info["name"], key, value)) \
            if key in TEXT_WORDS else None
        if wrong:
            return error(400, "bad_parameter", scrub(wrong))
    size = len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
    if size > MAX_PARAMS_CHARS:
        longest = max(body, key=lambda k: len(json.dumps(body[k], ensure_ascii=False)))
        return error(400, "bad_parameter",
                     f"{request.match_info['name']}: its parameters are {size} characters "
                     f"long as JSON, {longest} the longest; a command's parameters take at "
                     f"most {MAX_PARAMS_CHARS} (names, numbers, a reason in a sentence); "
                     "nothing was done: give it again, shorter")
    return body


def _not_text(param: str, value: Any) -> str | None:
    """What is wrong with ``value`` for a parameter the table takes as text (a wager, a player,
    a reason...), or None. The table checks numbers itself; a list or an object where it
    expects a name would fail inside it instead of being refused."""
    schema = PARAMS.get(param, {}).get("type")
    nullable = schema == ["string", "null"]
    if schema != "string" and not nullable:
        return None
    if isinstance(value, str) or (nullable and value is None):
        return None
    return (f"{param} must be text in quotes{' (or null)' if nullable else ''}, such as "
            f"{{\"{param}\": \"{TEXT_EXAMPLES.get(param, 'text')}\"}}; got {kind(value)}")




async def _run(st: ApiState, name: str, role: str, args: dict[str, Any]) -> None:
    """Give the command to the table: through the daemon's queue when it has one (so it takes
    its turn behind the device events already waiting), else straight to the runner. Either way
    the runner journals it with its role before the machine acts."""
    if st.submit is not None:
        result = await st.submit(name, role, args)
        if not result.get("ok"):
            raise TablectlError(str(result.get("error", "refused")))
        return
    st.target.command(name, role, **args)


# --- the event stream -------------------------------------------------------------------------

def _sse(event: str, data: Mapping[str, Any], event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


class _Stalled(Exception):
    """An event stream's client stopped reading."""


async def get_events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: ``snapshot`` (the whole table) first, then the round's earlier
    events as ``history``, then each table event as ``table``, and ``status`` (light and
    devices) after state and device changes and every few seconds."""
    st = request.app[STATE]
    # Headers go out at prepare(), before the middlewares see the response: set them here.
    headers = {"Content-Type": "text/event-stream; charset=utf-8",
               "Cache-Control": "no-store", "X-Accel-Buffering": "no",
               "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
    if request.method == "HEAD":      # the headers alone: a stream started would never end
        return web.Response(headers=headers)
    if len(request.app[_STREAMS]) >= MAX_STREAMS:
        return _refuse(request, 503, "too_many_streams",
                       f"{MAX_STREAMS} event streams are open already, the most this table "
                       "serves; close the displays or tabs not in use (each page holds one "
                       "stream), then reload this one")
    resp = web.StreamResponse(headers=headers)
    await resp.prepare(request)

    async def send(data: bytes) -> None:
        # What the client does not take within STREAM_WRITE_S (it stopped reading) ends the
        # stream: it would otherwise hold its connection, and its place among the streams,
        # for ever.
        try:
            await asyncio.wait_for(resp.write(data), STREAM_WRITE_S)
        except asyncio.TimeoutError:
            raise _Stalled from None

    sub = st.hub.subscribe()
    request.app[_STREAMS][sub] = (request[ROLE], request[HELD])
    if not in_force(request):       # replaced while the headers went out
        sub.end(REVOKED)
    try:
        if sub.ended:
            raise _Revoked
        snap = table_doc(st, request[ROLE])
        await send(_sse("snapshot", snap, snap["event_id"]))
        round_no = st.table.round.round_id if st.table.round is not None else None
        for event_id, doc in st.hub.replay(round_no, snap["event_id"]):
            await send(_sse("history", doc, event_id))
        while True:
            try:
                item = await asyncio.wait_for(sub.get(), st.status_interval)
            except asyncio.TimeoutError:
                await send(_sse("status", status_doc(st)))
                continue
            if item is None and sub.ended:
                raise _Revoked
            if item is None:             # the application is stopping
                break
            if sub.overflowed:
                await send(_sse("resync", {"reason": "client too slow; reload the "
                                                     "table with GET /api/table"}))
                break
            event_id, doc = item
            await send(_sse("table", doc, event_id))
            if doc.get("kind") in STATUS_AFTER and sub.queue.empty():
                await send(_sse("status", status_doc(st)))
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    except TableStopped:            # headers are out: the stream just ends
        pass
    except _Revoked:
        # Told why, then the connection closed: the page asks again and hears 401.
        _log().warning("event stream ended: its token is no longer in force",
                       remote=request.remote, role=request.get(ROLE))
        resp.force_close()
        try:
            await send(_sse("revoked", {"reason": sub.ended}))
        except (ConnectionResetError, _Stalled):
            pass
    except _Stalled:
        _log().warning("event stream ended: its client stopped reading", remote=request.remote,
                       role=request.get(ROLE), after_s=STREAM_WRITE_S)
        if request.transport is not None:
            request.transport.abort()     # what waits to be written is dropped
    finally:
        sub.close()
        request.app[_STREAMS].pop(sub, None)
    return resp


class _Revoked(Exception):
    """An event stream's token was replaced or removed."""


REVOKED = ("the token this stream was opened with was replaced or removed (the table's "
           "tokens were reloaded); sign in again with the new one")

# The open event streams: each with the role and the stored hash its token matched.
_STREAMS: web.AppKey[dict[Subscription, tuple[str, str]]] = web.AppKey("tablectl_streams", dict)


def in_force(request: web.Request) -> bool:
    """Whether the token ``request`` came with is still its role's (no reload replaced it)."""
    return request.app[STATE].api.tokens.get(request[ROLE]) == request[HELD]


def use_tokens(app: web.Application, api: ApiConfig) -> int:
    """Put ``api``'s tokens in force at once (``systemctl reload``): every request from now
    on is checked against them, a command whose body is still arriving with a token no longer
    in force is refused, and the event streams opened with one are ended. Returns how many
    streams were ended."""
    before = app[STATE].api.tokens
    app[STATE].api = api
    for role in before:
        if api.tokens.get(role) != before[role]:
            app[THROTTLE].forget(role)      # its hold ends, recorded; the new token starts clean
    ended = 0
    for sub, (role, held) in list(app[_STREAMS].items()):
        if api.tokens.get(role) != held and not sub.ended:
            sub.end(REVOKED)
            ended += 1
    return ended


async def _on_startup(app: web.Application) -> None:
    app[STATE].hub.bind_loop(asyncio.get_running_loop())


async def _on_shutdown(app: web.Application) -> None:
    app[THROTTLE].close()           # a hold ends with the API, its count recorded
    for sub in list(app[_STREAMS]):
        sub.queue.put_nowait(None)  # type: ignore[arg-type]


# --- the page ---------------------------------------------------------------------------------

async def get_page(request: web.Request) -> web.FileResponse:
    return web.FileResponse(WEB_DIR / "index.html", headers={"Cache-Control": "no-cache"})


# --- the factory ------------------------------------------------------------------------------

def create_app(runner_or_table: Any, config: Any, *, submit: Submit | None = None,
               drivers: Mapping[str, Any] | None = None, hub: EventHub | None = None,
               status_interval: float = STATUS_INTERVAL_S,
               clock: Callable[[], float] = time.monotonic) -> web.Application:
    """The console API and the pit display page for one table.

    ``runner_or_table``: the :class:`~controller.table.runner.TableRunner` (commands are
    journaled with their role before the machine acts). A bare :class:`Table` is accepted for
    a display with no journal; its commands are not journaled, so the daemon always passes
    the runner. ``config``: the :class:`~controller.config.TableConfig` (or its ``api``).
    ``submit``: the daemon's ``async submit(name, role, args) -> {"ok", "error"}``, which puts
    the command on its one input queue; without it the command goes straight to the runner.
    ``drivers``: device id -> driver, for the link state and the last time each device was
    heard. ``hub``: where the table's public events come in; by default a new one, fed by
    wrapping the runner's ``publish`` (the daemon need not do anything else). ``clock``: the
    monotonic clock, in seconds, the refusals of ``[api] refused_limit`` are counted by.
    """
    api = config.api if hasattr(config, "api") else config
    if not isinstance(api, ApiConfig):
        raise TablectlError("create_app needs the table's configuration (TableConfig or its "
                            f"ApiConfig), got {type(config).__name__}")
    if not any(r in api.tokens for r in ROLES):
        _log().warning("no api token configured: every request will be refused",
                       fix="add [api.tokens] with `tablectl config hash-token --new`")
    hub = hub or EventHub()
    if hasattr(runner_or_table, "publish") \
            and getattr(runner_or_table.publish, "_tablectl_hub", None) is not hub:
        _chain_publish(runner_or_table, hub)
    app = web.Application(middlewares=[_in_hand, _security_headers, _middleware],
                          client_max_size=MAX_BODY)
    app[STATE] = ApiState(runner_or_table, api, hub, submit, drivers, status_interval)
    app[BUSY] = set()
    app[_STREAMS] = {}
    state = app[STATE]
    app[THROTTLE] = Throttle(api.refused_limit, api.refused_window_s,
                             lambda kind, payload: _note(state, kind, payload), clock=clock)
    app.router.add_get("/", get_page)
    app.router.add_static("/static/", WEB_DIR, show_index=False, follow_symlinks=False)
    app.router.add_get("/api/table", get_table)
    app.router.add_get("/api/health", get_health)
    app.router.add_get("/api/whoami", get_whoami)
    app.router.add_get("/api/events", get_events)
    app.router.add_get("/api/openapi.json", get_openapi)
    app.router.add_post("/api/commands/{name}", post_command)
    app.on_startup.append(_on_startup)
    app.on_shutdown.append(_on_shutdown)
    return app


def _chain_publish(runner: Any, hub: EventHub) -> None:
    """Let the runner's publish also feed the hub, after whatever it did before."""
    before = runner.publish

    def publish(event: Any) -> None:
        before(event)
        try:
            hub.publish(event)
        except Exception as exc:   # the display must never hold the table up
            _log().error("event not streamed", kind=getattr(event, "kind", None),
                         error=type(exc).__name__)
    publish._tablectl_hub = hub  # type: ignore[attr-defined]
    runner.publish = publish


def hub_of(app: web.Application) -> EventHub:
    """The application's event hub (to feed it by hand when the runner is not wrapped)."""
    return app[STATE].hub
