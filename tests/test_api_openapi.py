"""The API's description stays true: /api/openapi.json and docs/api.md against the routes the
application really serves and the commands the table really takes."""
import re
from pathlib import Path

from controller.api import create_app
from controller.api.openapi import PARAMS, build_openapi
from controller.table.machine import COMMANDS

from test_api_support import client, make_runner, api_config

DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"


def served_routes(app):
    out = set()
    for r in app.router.routes():
        info = r.resource.get_info() if r.resource is not None else {}
        path = info.get("path") or info.get("formatter") or info.get("prefix")
        if r.method == "HEAD" or not path.startswith("/api/"):
            continue
        out.add((r.method.lower(), path))
    return out


def described_routes(doc):
    out = set()
    for path, ops in doc["paths"].items():
        for method in ops:
            out.add((method, re.sub(r"^/api/commands/\w+$", "/api/commands/{name}", path)))
    return out


def test_every_served_route_is_described_and_nothing_else(tmp_path):
    runner = make_runner(tmp_path / "j.db")
    app = create_app(runner, api_config())
    assert served_routes(app) == described_routes(build_openapi())


def test_every_command_is_described_with_its_roles_and_parameters():
    paths = build_openapi()["paths"]
    for name, spec in COMMANDS.items():
        op = paths[f"/api/commands/{name}"]["post"]
        assert op["x-roles"] == list(spec.roles)
        schema = op["requestBody"]["content"]["application/json"]["schema"]
        assert list(schema["properties"]) == list(spec.params)
        assert set(schema["required"]) <= set(spec.params)
        for p in spec.params:
            assert p in PARAMS, f"parameter {p!r} of {name} has no schema in openapi.PARAMS"
        for code in ("400", "401", "403", "404", "409"):
            assert code in op["responses"]
    place = paths["/api/commands/place_bet"]["post"]["requestBody"]["content"][
        "application/json"]["schema"]
    assert set(place["required"]) == {"box", "wager", "amount"}     # player is optional


def test_the_description_is_served_without_a_token_and_matches(tmp_path):
    runner = make_runner(tmp_path / "j.db")

    async def get(c):
        r = await c.get("/api/openapi.json")
        return r.status, await r.json()
    status, doc = client(create_app(runner, api_config()), get)
    assert status == 200 and doc == build_openapi() and doc["openapi"].startswith("3.1")


def test_docs_api_md_names_every_route_command_and_stream_event():
    text = DOC.read_text(encoding="utf-8")
    for method, path in described_routes(build_openapi()):
        assert f"{method.upper()} {path}" in text, f"docs/api.md does not describe {path}"
    for name in COMMANDS:
        assert f"`{name}`" in text, f"docs/api.md does not list the command {name}"
    for event in ("snapshot", "history", "table", "status", "resync"):
        assert f"`{event}`" in text
    for code in ("401", "403", "400", "404", "409"):
        assert code in text


def test_whoami_gives_each_command_the_parameter_schema_the_description_has(tmp_path):
    """The page reads the parameters' types from /api/whoami, the document it loads anyway:
    each command there carries the same body schema as /api/openapi.json, so the console keeps
    no list of its own of which parameters are text."""
    from test_api_support import auth
    runner = make_runner(tmp_path / "j.db")
    paths = build_openapi()["paths"]

    async def get(c):
        r = await c.get("/api/whoami", headers=auth("supervisor"))
        return await r.json()
    doc = client(create_app(runner, api_config()), get)
    assert {c["name"] for c in doc["commands"]} == set(COMMANDS)
    for c in doc["commands"]:
        served = paths[f"/api/commands/{c['name']}"]["post"]["requestBody"]["content"][
            "application/json"]["schema"]
        assert c["schema"] == served, c["name"]
        assert list(c["schema"]["properties"]) == c["params"]
    place = next(c for c in doc["commands"] if c["name"] == "place_bet")["schema"]
    assert place["properties"]["player"]["type"] == ["string", "null"]
    assert place["properties"]["box"]["type"] == "integer"


def test_the_description_states_the_parameters_length_the_api_holds_them_to(tmp_path):
    """Each command's body is described with the length its parameters may take together,
    and that is the length the API refuses past: a body of exactly it reaches the table, one
    character more is a 400."""
    import json

    from controller.api.openapi import MAX_PARAMS_CHARS
    from test_api_support import auth

    for name in COMMANDS:
        schema = build_openapi()["paths"][f"/api/commands/{name}"]["post"]["requestBody"][
            "content"]["application/json"]["schema"]
        assert f"at most {MAX_PARAMS_CHARS} characters" in schema["description"], name

    def body(chars):
        doc = {"box": 1, "wager": "versus_croupier", "amount": 10, "player": ""}
        pad = chars - len(json.dumps(doc, separators=(",", ":")))
        return {**doc, "player": "p" * pad}

    runner = make_runner(tmp_path / "j.db")

    async def post(c):
        out = []
        for chars in (MAX_PARAMS_CHARS, MAX_PARAMS_CHARS + 1):
            r = await c.post("/api/commands/place_bet", headers=auth("dealer"),
                             json=body(chars))
            out.append((r.status, (await r.json()).get("error", {}).get("message", "")))
        return out
    (at, _), (over, message) = client(create_app(runner, api_config()), post)
    assert at != 400                  # refused or taken by the table, not for its length
    assert over == 400 and f"at most {MAX_PARAMS_CHARS}" in message
