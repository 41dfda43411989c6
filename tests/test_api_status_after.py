"""The event stream sends a fresh ``status`` right after a table event that changes the light
or its buzzer, so a client other than the page sees it at once, not at the next interval."""
import asyncio
import json

from controller.api import create_app
from controller.rules.cards import Card
from drivers import events as ev
from test_api_support import api_config, auth, client, make_runner


def test_the_buzzer_silenced_is_followed_by_the_status_that_shows_it(tmp_path):
    runner = make_runner(tmp_path / "j.db")
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse("9h")))
    runner.device(ev.Jam(device="shoe", ts=0.0, where="exit"))
    # The periodic status far off: only the one sent after the event can come.
    app = create_app(runner, api_config(), status_interval=30)

    async def check(c):
        stream = await c.get("/api/events", headers=auth("display"))

        async def event():
            block = (await stream.content.readuntil(b"\n\n")).decode()
            fields = dict(line.split(": ", 1) for line in block.strip().split("\n"))
            return fields["event"], json.loads(fields["data"])
        assert (await event())[0] == "snapshot"
        r = await c.post("/api/commands/silence_buzzer", headers=auth("supervisor"))
        assert r.status == 200, await r.text()
        kind, doc = await asyncio.wait_for(event(), 5)
        assert (kind, doc["kind"]) == ("table", "buzzer_silenced")
        after = await asyncio.wait_for(event(), 5)
        stream.close()
        return after
    try:
        kind, doc = client(app, check)
    finally:
        runner.journal.close()
    assert kind == "status"
    assert doc["light"] == {"signal": "malfunction", "colour": "red", "buzzer": "silenced"}
