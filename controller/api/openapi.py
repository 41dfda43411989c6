"""The OpenAPI 3.1 description of the console API, served at ``/api/openapi.json``.

Built from the table's own command list (controller.table.machine.COMMANDS), so a new command
appears here by itself; tests/test_api_openapi.py checks that every route the application
serves is described and every command parameter has a schema.
"""
from __future__ import annotations

import inspect
from typing import Any

from controller.rules.base import MAX_AMOUNT
from controller.table.machine import COMMANDS

_CHIPS = {"type": "integer", "minimum": 1, "maximum": MAX_AMOUNT}
# How long a command's parameters may be together, as compact JSON: a few names and numbers,
# a reason in a sentence (a longer body is answered 400 before it reaches the table).
MAX_PARAMS_CHARS = 1024

# JSON schema of each command parameter (the machine validates the values themselves).
PARAMS: dict[str, dict[str, Any]] = {
    "box": {"type": "integer", "minimum": 1, "description": "box number, from 1"},
    "wager": {"type": "string", "description": "the game's wager name (see game.wagers)"},
    "amount": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_AMOUNT,
               "description": "chip units (integer, at most 2^53 - 1)"},
    "player": {"type": ["string", "null"],
               "description": "player on a shared box (Q Poker); the player who bets or "
                              "co-banks (Super Pan 9)"},
    "seat": {"type": "integer", "minimum": 1,
             "description": "seat number, from 1; for co_bank the co-banking player's seat, "
                            "optional unless co_banker_order=counter_clockwise"},
    "capital": {"type": "integer", "minimum": 1, "maximum": MAX_AMOUNT,
                "description": "Super Pan 9: the banker's or a co-banker's capital, chip units; "
                               "for the house's co-bank it may be left out when the "
                               "configuration predetermines it ([pan9] "
                               "house_co_bank_capital)"},
    "seated": {"type": "boolean", "default": False,
               "description": "Q Poker under shared_box_decision=seated_player: the bet's "
                              "player is the one seated at the box, who decides play or fold "
                              "for it (89/2004 art. 6(3), 9(2)); one per box and round"},
    "house": {"type": "boolean", "default": False,
              "description": "Super Pan 9: the house's co-bank, not a player's "
                             "(261/96/M art. 5(5))"},
    "all_agree": {"type": "boolean", "default": False,
                  "description": "Super Pan 9: every player agrees that the seat banks beyond "
                                 "two rounds in a row (261/96/M art. 5(1))"},
    "points": {"type": "integer", "description": "Super Pan 9 points declared before the shake"},
    "seats": {"type": "array", "items": {"type": "integer", "minimum": 1}},
    "button": {"type": "integer", "minimum": 1},
    "decision": {"type": "string", "enum": ["play", "fold"]},
    "action": {"type": "string", "enum": ["fold", "check", "call", "bet", "raise", "allin"],
               "description": "Texas Hold'em; amount: the round total for bet, raise, allin"},
    "stacks": {"oneOf": [{"type": "object", "additionalProperties": _CHIPS},
                         {"type": "array", "items": _CHIPS}],
               "description": "each seat's chips: {\"seat\": chips} or a list in seat order; "
                              "together at most 2^53 - 1"},
    "cards": {"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}],
              # no card spelled here: every role reads this in /api/whoami, where a card's
              # name is told from a face-down card's by nothing (tests/test_card_secrecy_api)
              "description": "cards as read out at the reveal, each its rank (A K Q J T 9-2) "
                             "then its suit (s h d c): a list, or one text with a space "
                             "between the cards"},
    "supervisor": {"type": "string", "minLength": 1,
                   "description": "who checked the deck (for the journal)"},
    "recipient": {"type": "string", "description": "'croupier', 'board' or 'box N'"},
    # exposed_card: a position, never a face (a face could be probed by the refusals)
    "card": {"type": ["integer", "null"], "minimum": 1,
             "description": "exposed_card: which of the recipient's cards was exposed, by its "
                            "place in the order they were dealt to it, 1 = its first (those "
                            "set aside counted); left out or null: the last one dealt"},
    "reason": {"type": "string", "minLength": 1},
    "mode": {"type": "string", "enum": ["shoe", "shuffler"]},
}

_ERROR = {"$ref": "#/components/schemas/Error"}


def required_params(name: str) -> list[str]:
    """Parameters without a default in the machine's handler."""
    from controller.table.machine import Table
    fn = getattr(Table, f"_cmd_{name}", None)
    if fn is None:
        return list(COMMANDS[name].params)
    return [p.name for p in list(inspect.signature(fn).parameters.values())[1:]
            if p.default is inspect.Parameter.empty]


def command_schema(name: str) -> dict[str, Any]:
    """The JSON schema of a command's body: each parameter's type, the ones it needs. The
    description and /api/whoami both serve it, so the console reads the types from here."""
    spec = COMMANDS[name]
    return {"type": "object", "properties": {p: PARAMS.get(p, {}) for p in spec.params},
            "additionalProperties": False, "required": required_params(name),
            "description": f"the parameters together at most {MAX_PARAMS_CHARS} characters "
                           "as compact JSON; a longer body is answered 400 (bad_parameter)"}


def _response(desc: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"description": desc,
            "content": {"application/json": {"schema": schema or {"type": "object"}}}}


def _errors(*codes: int) -> dict[str, Any]:
    text = {400: "malformed request (not JSON, a key given twice, not an object, unknown "
                 "parameter, not text where text is needed)",
            401: "no token, or a token of no role", 403: "the role lacks the right",
            404: "no such command",
            408: "the body did not arrive in full in time; nothing was done",
            409: "the table refused it (rules or current state); "
                                         "nothing changed",
            429: "the table refused too many of this role's commands within [api] "
                 "refused_window_s; held back until Retry-After, nothing was done",
            503: "the journal could not be written: the table is stopping and is not shown"}
    return {str(c): _response(text[c], _ERROR) for c in codes}


def build_openapi() -> dict[str, Any]:
    """The whole description as a JSON-ready dict."""
    paths: dict[str, Any] = {
        "/api/table": {"get": {
            "summary": "The table as the display shows it: game, state, light, devices and "
                       "the public view of the round (no face-down card)",
            "responses": {"200": _response("the table", {"$ref": "#/components/schemas/Table"}),
                          **_errors(401, 503)}}},
        "/api/health": {"get": {
            "summary": "Tower light and device health (link, last heard, firmware identity)",
            "responses": {"200": _response("health"), **_errors(401, 503)}}},
        "/api/whoami": {"get": {
            "summary": "The caller's role and the commands it may give",
            "responses": {"200": _response("role"), **_errors(401)}}},
        "/api/events": {"get": {
            "summary": "Server-sent events: snapshot, the round's history, then table, status "
                       "and resync events",
            "parameters": [{"name": "token", "in": "query", "required": False,
                            "schema": {"type": "string"},
                            "description": "the token, for clients that cannot send headers"}],
            "responses": {"200": {"description": "text/event-stream",
                                  "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                          **_errors(401),
                          "503": _response("too many event streams open already (or the "
                                           "journal could not be written)", _ERROR)}}},
        "/api/openapi.json": {"get": {"summary": "This description", "security": [],
                                      "responses": {"200": _response("OpenAPI 3.1")}}},
    }
    for spec in COMMANDS.values():
        body = command_schema(spec.name)
        paths[f"/api/commands/{spec.name}"] = {"post": {
            "summary": spec.help, "operationId": spec.name,
            "description": f"Roles: {', '.join(spec.roles)}. Journaled with the caller's role "
                           "before the table acts.",
            "x-roles": list(spec.roles),
            "requestBody": {"required": bool(body["required"]),
                            "content": {"application/json": {"schema": body}}},
            "responses": {"200": _response("done", {"$ref": "#/components/schemas/Done"}),
                          **_errors(400, 401, 403, 404, 408, 409, 429, 503)}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "tablectl console API", "version": "1",
                 "description": "Dealer console and pit display of one table. See docs/api.md."},
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {"type": "object", "required": ["ok", "error"], "properties": {
                    "ok": {"const": False},
                    "error": {"type": "object", "required": ["status", "code", "message"],
                              "properties": {"status": {"type": "integer"},
                                             "code": {"type": "string"},
                                             "message": {"type": "string"}}}}},
                "Done": {"type": "object", "properties": {
                    "ok": {"const": True}, "command": {"type": "string"},
                    "role": {"type": "string"}, "state": {"type": "string"},
                    "view": {"type": "object"}, "event_id": {"type": "integer"}}},
                "Table": {"type": "object", "properties": {
                    "role": {"type": "string"}, "table": {"type": "string"},
                    "game": {"type": "object"}, "state": {"type": "string"},
                    "mode": {"type": "string"}, "light": {"type": "object", "properties": {
                        "signal": {"type": "string"},
                        "colour": {"enum": ["green", "amber", "red", "off"]},
                        "buzzer": {"enum": ["sounding", "silenced", "off"]}}},
                    "devices": {"type": "array"}, "view": {"type": "object"},
                    "event_id": {"type": "integer"}}},
            },
        },
    }
