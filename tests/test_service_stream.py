"""The control socket's event stream: every listener gets each event, in order, written in
the hop that made it durable; a listener that stops reading is cut off once
SUBSCRIBER_BACKLOG bytes wait for it, and neither the table nor the other listeners wait
for it."""
import asyncio
import json
import random
import socket

import controller.service as service
from controller.config import parse_text
from controller.journal import Journal
from controller.rules.cards import Card
from drivers import events as ev
from service_helpers import start_with_control

CONFIG = """
[table]
id = "st-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[journal]
path = "{journal}"
"""
DECK = [r + s for s in "shdc" for r in "23456789TJQKA"]


async def must(svc, name, role="dealer", **args):
    reply = await svc.submit(name, role, args)
    assert reply["ok"], reply
    return reply


async def drained(svc):
    for _ in range(500):
        if svc.queue.empty():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the daemon did not take its queue")


async def play_round(svc, rng):
    """One Q Poker round from the shoe: a bet on box 1, cards until the deal is done."""
    table = svc.runner.table
    if table.state == "shuffling":
        await must(svc, "deck_ready")
    await must(svc, "place_bet", box=1, wager="versus_croupier", amount=10)
    cards = iter(rng.sample(DECK, 52))
    while table.state in ("bets_open", "bets_closed", "dealing"):
        svc.queue.put_nowait(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(next(cards))))
        await drained(svc)
    if table.state == "player_decisions":
        await must(svc, "decide", box=1, decision="play")
    await must(svc, "confirm_result")
    await must(svc, "next_round")


def test_a_listener_that_stops_reading_is_cut_off_and_holds_nobody_up(tmp_path, monkeypatch):
    monkeypatch.setattr(service, "SUBSCRIBER_BACKLOG", 2000)
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    control = tmp_path / "control.sock"
    rng = random.Random(3)
    got: list[dict] = []

    async def subscribe():
        reader, writer = await asyncio.open_unix_connection(str(control))
        writer.write(b'{"subscribe": true}\n')
        assert json.loads(await reader.readline()) == {"ok": True, "subscribed": True}
        return reader, writer

    async def listen(reader):
        while line := await reader.readline():
            got.append(json.loads(line))

    async def scenario():
        svc, task = await start_with_control(cfg, control)
        await must(svc, "open_table", "supervisor")
        fast_reader, fast_writer = await subscribe()
        listening = asyncio.create_task(listen(fast_reader))
        before = set(svc.subscribers)
        slow_reader, slow_writer = await subscribe()
        for _ in range(100):                    # the daemon adds it after its reply
            if len(svc.subscribers) > len(before):
                break
            await asyncio.sleep(0.01)
        (slow,) = svc.subscribers - before
        # A small kernel buffer, so the bytes left unread wait in the daemon soon.
        slow.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        rounds = 0
        while slow in svc.subscribers:
            await play_round(svc, rng)
            rounds += 1
            assert rounds < 60, "the listener that stopped reading was never cut off"
        await play_round(svc, rng)              # and the table goes on without it
        await asyncio.sleep(0.05)
        # What the kernel took for it before the cut is still there to read; then the end.
        left = b""
        while chunk := await asyncio.wait_for(slow_reader.read(65536), 5):
            left += chunk
        slow_writer.close()
        svc.stop()
        await task
        await asyncio.wait_for(listening, 5)   # the daemon's stop ends the stream
        fast_writer.close()
        return rounds + 1, left

    rounds, left = asyncio.run(scenario())
    assert rounds >= 2
    # The listener that kept reading was told of every card drawn (face down: a count)
    # and of every round's end.
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        drawn = len(list(j.records(kinds=["device"])))
    assert sum(d["count"] for d in got if d["kind"] == "card") == drawn
    assert [d["kind"] for d in got].count("settlement") == rounds
    # The other one got whole lines only, and fewer of them.
    # What reached it before the cut, the last line perhaps in part: the same events, in
    # the same order, as the other listener's.
    whole = left[:left.rfind(b"\n") + 1]
    cut = [json.loads(x) for x in whole.splitlines()]
    assert 0 < len(cut) < len(got)
    assert cut == got[:len(cut)]


def test_a_request_whose_args_are_not_an_object_gets_an_answer_and_the_socket_goes_on(tmp_path):
    """"args": [1] failed in the connection's task: no answer, the connection dropped and an
    unretrieved task exception in the log."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    control = tmp_path / "control.sock"

    async def scenario():
        svc, task = await start_with_control(cfg, control)
        reader, writer = await asyncio.open_unix_connection(str(control))
        answers = []
        for args in ([1], "x", 5):
            writer.write(json.dumps({"command": "open_table", "role": "supervisor",
                                     "args": args}).encode() + b"\n")
            answers.append(json.loads(await asyncio.wait_for(reader.readline(), 5)))
        writer.write(b'{"command": "open_table", "role": "supervisor"}\n')
        answers.append(json.loads(await asyncio.wait_for(reader.readline(), 5)))
        writer.close()
        svc.stop()
        await task
        return answers

    answers = asyncio.run(scenario())
    for bad in answers[:3]:
        assert bad["ok"] is False and "args" in bad["error"] and "object" in bad["error"]
    assert answers[3] == {"ok": True, "state": "shuffling"}
