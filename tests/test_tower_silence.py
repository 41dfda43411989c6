"""Silencing the buzzer: the croupier's silence button or the supervisor's silence_buzzer
stops the buzzer of the alarm sounding, the light staying red; the silence is journaled with
who gave it; an alarm not silenced yet sounds it again, and so does the same fault returning
after it ended."""
import pytest

from controller.errors import TablectlError
from controller.inputs import ButtonPressed, KeySwitched
from controller.panel import Light
from controller.tower import alarm_causes, buzzer_silenced, light_json, tower_light
from drivers import events as ev

from table_helpers import kinds, table
from test_api_support import make_runner


# A jam between rounds holds the table in malfunction: both sound the buzzer.
JAMMED = ["malfunction", "shoe: jam"]


def jam(t, device="shoe"):
    t.handle_device(ev.Jam(device=device, ts=1.0, where="exit"))


def silence_button(t):
    t.handle_device(ButtonPressed(device="panel", ts=2.0, button="silence"))


def published(t, kind):
    return [e.data for e in t.outbox if e.kind == kind]


def test_the_supervisor_silences_the_alarm_and_the_light_stays_red():
    t = table("q-poker")
    jam(t)
    assert tower_light(t) is Light.MALFUNCTION and alarm_causes(t) == set(JAMMED)
    assert not buzzer_silenced(t)
    assert light_json(t)["buzzer"] == "sounding"
    t.command("silence_buzzer", role="supervisor")
    assert buzzer_silenced(t) and tower_light(t) is Light.MALFUNCTION
    # the page and the API are told, so the page offers no silence the table would refuse
    assert light_json(t) == {"signal": "malfunction", "colour": "red", "buzzer": "silenced"}
    assert published(t, "buzzer_silenced") == [
        {"role": "supervisor", "by": "console", "alarms": JAMMED}]


def test_the_dealer_console_may_not_silence_it_but_the_croupiers_button_may():
    t = table("q-poker")
    jam(t)
    with pytest.raises(TablectlError, match="silence_buzzer needs the supervisor role"):
        t.command("silence_buzzer", role="dealer")
    assert not buzzer_silenced(t)
    silence_button(t)                                  # no key turned: the croupier's
    assert buzzer_silenced(t)
    assert published(t, "buzzer_silenced") == [
        {"role": "dealer", "by": "button", "alarms": JAMMED}]
    t.handle_device(KeySwitched(device="panel", ts=3.0, on=True))
    t.handle_device(ev.DoorOpened(device="shoe", ts=4.0))
    silence_button(t)                                  # with the supervisor's key on
    assert published(t, "buzzer_silenced")[-1]["role"] == "supervisor"


def test_a_new_alarm_sounds_again_and_the_same_fault_returning_is_new():
    t = table("q-poker")
    jam(t)
    t.command("silence_buzzer", role="supervisor")
    t.handle_device(ev.DoorOpened(device="shoe", ts=3.0))   # another alarm: it sounds
    assert alarm_causes(t) == {*JAMMED, "shoe: door_open"}
    assert not buzzer_silenced(t)
    t.command("silence_buzzer", role="supervisor")
    assert buzzer_silenced(t)
    t.handle_device(ev.DoorClosed(device="shoe", ts=4.0))   # one ends: still silenced
    assert buzzer_silenced(t) and alarm_causes(t) == set(JAMMED)
    t.handle_device(ev.DoorOpened(device="shoe", ts=5.0))   # and comes back: new again
    assert not buzzer_silenced(t)
    t.command("silence_buzzer", role="supervisor")
    t.handle_device(ev.DoorClosed(device="shoe", ts=6.0))
    t.command("clear_malfunction", role="supervisor")
    assert tower_light(t) is Light.READY and alarm_causes(t) == frozenset()
    assert t.silenced_alarms == frozenset()            # the alarm over, its silence too
    jam(t)                                             # the same jam later: it sounds
    assert tower_light(t) is Light.MALFUNCTION and not buzzer_silenced(t)


@pytest.mark.parametrize("setup, why", [
    (lambda t: None, "nothing to silence"),
    (lambda t: (jam(t), t.command("silence_buzzer", role="supervisor")), "already silenced")])
def test_a_silence_with_nothing_sounding_is_refused_and_changes_nothing(setup, why):
    t = table("q-poker")
    setup(t)
    before = (t.state, t.silenced_alarms, len(published(t, "buzzer_silenced")))
    with pytest.raises(TablectlError, match=why):
        t.command("silence_buzzer", role="supervisor")
    assert (t.state, t.silenced_alarms, len(published(t, "buzzer_silenced"))) == before
    silence_button(t)                                  # the button: an irregular event
    assert (t.state, t.silenced_alarms, len(published(t, "buzzer_silenced"))) == before
    assert kinds(t)[-1] == "irregular_event"
    assert why in published(t, "irregular_event")[-1]["reason"]


def test_the_one_beep_signals_are_no_alarm_to_silence():
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("close_bets")
    t.command("void_round", role="supervisor", reason="a test")
    assert tower_light(t) is Light.VOID and alarm_causes(t) == frozenset()
    with pytest.raises(TablectlError, match="nothing to silence"):
        t.command("silence_buzzer", role="supervisor")


def test_a_table_held_in_malfunction_and_a_deck_integrity_stop_are_alarms():
    from controller.integrity.alarms import Alarm, AlarmKind

    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    jam(t)                                             # before the deal: the round is held
    assert t.state == "malfunction"
    assert alarm_causes(t) == {"malfunction", "shoe: jam"}
    t = table("q-poker", integrity_action="stop")
    t.gate.raise_alarms([Alarm(AlarmKind.MISSING_CARD, "deck 1: 7h missing")])
    assert alarm_causes(t) == {"deck integrity"}
    t.command("silence_buzzer", role="supervisor")
    assert buzzer_silenced(t)
    t.command("clear_integrity", role="supervisor", supervisor="S. Lam")
    assert alarm_causes(t) == frozenset() and t.silenced_alarms == frozenset()


def test_the_silence_is_journaled_with_its_input_and_replays_after_a_restart(tmp_path):
    run = make_runner(tmp_path / "j.db")
    run.command("open_table", role="supervisor")
    run.device(ev.Jam(device="shoe", ts=1.0, where="exit"))
    run.device(ButtonPressed(device="panel", ts=2.0, button="silence"))
    records = list(run.journal.records())
    press = next(r for r in records if r.kind == "device"
                 and r.payload["event"].get("button") == "silence")
    silenced = next(r for r in records if r.kind == "table"
                    and r.payload.get("kind") == "buzzer_silenced")
    assert press.seq < silenced.seq                    # the press, then what it did
    assert press.payload["event"]["ts"] == 2.0 and press.wall_ns <= silenced.wall_ns
    assert silenced.payload["role"] == "dealer" and silenced.payload["by"] == "button"
    assert silenced.payload["alarms"] == JAMMED
    assert buzzer_silenced(run.table)
    journal = run.journal
    journal.close()

    again = make_runner(tmp_path / "j.db")             # the controller restarts
    again.recover()
    assert again.table.silenced_alarms == set(JAMMED)
    assert buzzer_silenced(again.table)
    again.device(ev.DoorOpened(device="shoe", ts=3.0))
    assert not buzzer_silenced(again.table)
    again.journal.close()


def test_the_supervisor_silences_it_through_the_console_api(tmp_path):
    from controller.api import create_app
    from test_api_support import api_config, auth, client

    run = make_runner(tmp_path / "j.db")
    run.command("open_table", role="supervisor")

    async def post(c, role):
        r = await c.post("/api/commands/silence_buzzer", headers=auth(role), json={})
        return r.status, await r.json()

    async def scenario(c):
        nothing = await post(c, "supervisor")          # no alarm yet
        run.device(ev.Jam(device="shoe", ts=1.0, where="exit"))
        dealer = await post(c, "dealer")
        supervisor = await post(c, "supervisor")
        return nothing, dealer, supervisor

    nothing, dealer, supervisor = client(create_app(run, api_config()), scenario)
    assert nothing[0] == 409 and "nothing to silence" in nothing[1]["error"]["message"]
    assert dealer[0] == 403 and dealer[1]["error"]["code"] == "forbidden"
    assert supervisor[0] == 200 and supervisor[1]["ok"], supervisor
    assert buzzer_silenced(run.table) and tower_light(run.table) is Light.MALFUNCTION
    records = list(run.journal.records())
    command = [r for r in records if r.kind == "command"
               and r.payload["name"] == "silence_buzzer"]
    # the one refused (journaled with its refusal), then the one taken; the dealer's never
    # reached the table
    assert [r.payload["role"] for r in command] == ["supervisor", "supervisor"]
    silenced = next(r for r in records if r.kind == "table"
                    and r.payload.get("kind") == "buzzer_silenced")
    assert command[1].seq < silenced.seq
    assert silenced.payload["role"] == "supervisor" and silenced.payload["by"] == "console"
    run.journal.close()


def test_the_table_and_the_health_say_whether_the_buzzer_sounds_or_was_silenced(tmp_path):
    """``light.buzzer`` of GET /api/table and /api/health: a page opened after the silence,
    which missed the ``buzzer_silenced`` event, still knows of it; a new alarm sounds again,
    and with every alarm over it is off."""
    from controller.api import create_app
    from test_api_support import api_config, auth, client

    run = make_runner(tmp_path / "j.db")
    run.command("open_table", role="supervisor")

    async def lights(c):
        out = []
        for path in ("/api/table", "/api/health"):
            r = await c.get(path, headers=auth("display"))
            out.append((await r.json())["light"])
        assert out[0] == out[1], out
        return out[0]

    async def scenario(c):
        seen = [await lights(c)]
        run.device(ev.Jam(device="shoe", ts=1.0, where="exit"))
        seen.append(await lights(c))
        run.command("silence_buzzer", role="supervisor")
        seen.append(await lights(c))
        run.device(ev.DoorOpened(device="shoe", ts=2.0))    # another alarm: it sounds again
        seen.append(await lights(c))
        run.command("silence_buzzer", role="supervisor")
        run.device(ev.DoorClosed(device="shoe", ts=3.0))
        run.command("clear_malfunction", role="supervisor")
        seen.append(await lights(c))
        return seen

    seen = client(create_app(run, api_config()), scenario)
    red = {"signal": "malfunction", "colour": "red"}
    assert seen[1:4] == [{**red, "buzzer": "sounding"}, {**red, "buzzer": "silenced"},
                         {**red, "buzzer": "sounding"}]
    assert seen[0]["buzzer"] == seen[4]["buzzer"] == "off" and seen[4]["colour"] != "red"
    run.journal.close()
