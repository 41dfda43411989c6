"""The tower light: one rule for the lamp on the table and the light on the pit display.

A device condition that stops the next round turns the light red even while the round in hand
goes on, and it goes back to what the state shows once the supervisor clears it.
"""
from controller.panel import Light
from controller.tower import light_json, tower_light
from drivers import events as ev

from table_helpers import draw, table


def test_state_alone_sets_the_light_when_no_device_is_in_trouble():
    t = table("q-poker")
    assert t.state == "bets_open"
    assert tower_light(t) is Light.READY
    assert light_json(t) == {"signal": "ready", "colour": "green", "buzzer": "off"}
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "2c", "Ah", "3c", "Ad", "5d")
    assert t.state == "player_decisions"
    assert tower_light(t) is Light.ACTION


def test_a_jam_outside_dealing_turns_the_light_red_until_it_is_cleared():
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "2c", "Ah", "3c", "Ad", "5d")
    t.handle_device(ev.Jam(device="shoe", ts=1.0, where="exit"))
    assert t.state == "player_decisions"               # the round in hand goes on ...
    assert tower_light(t) is Light.MALFUNCTION        # ... but the pit must come
    assert light_json(t)["colour"] == "red"
    t.command("decide", box=1, decision="play")
    t.command("confirm_result")
    assert t.state == "round_complete" and tower_light(t) is Light.MALFUNCTION
    t.command("clear_malfunction", role="supervisor")
    assert tower_light(t) is Light.READY


def test_a_void_round_stays_a_void_light_whatever_the_devices_say():
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As")
    t.handle_device(ev.Jam(device="shoe", ts=1.0, where="exit"))
    assert tower_light(t) in (Light.VOID, Light.MALFUNCTION)
    assert light_json(t)["colour"] == "red"


def test_a_deck_integrity_stop_turns_the_light_red_until_it_is_cleared():
    from controller.integrity.alarms import Alarm, AlarmKind

    t = table("q-poker", integrity_action="stop")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "2c", "Ah", "3c", "Ad", "5d")
    t.gate.raise_alarms([Alarm(AlarmKind.MISSING_CARD, "deck 1: 7h missing")])
    t.command("decide", box=1, decision="play")
    t.command("confirm_result")
    assert t.state == "round_complete"                # the table stops here ...
    assert tower_light(t) is Light.MALFUNCTION        # ... and the pit must come
    assert light_json(t)["colour"] == "red"
    t.command("clear_integrity", role="supervisor", supervisor="S. Lam")
    assert tower_light(t) is Light.READY
