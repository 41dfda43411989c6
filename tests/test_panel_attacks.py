"""The dealer's buttons and the tower light attacked as a dealer, a pit supervisor and a crash
would: a button held across a start, two buttons at once, a press the table refuses, a restart
that replays the presses, a reload under a lit signal (gpiozero's mock pin factory; everything
else the real service loop and its journal)."""
import asyncio

from gpiozero.pins.mock import MockFactory

from controller.config import load_config, parse_text
from controller.journal import Journal
from controller.panel import Light
from controller.rules import get_game
from controller.table import Table
from controller.table.runner import TableRunner
from controller.tower import tower_light
from drivers import events as ev

from gpio_helpers import closed_switch
from service_helpers import until
from table_helpers import DEVICES, LAYOUT
from test_service_panel import CONFIG, _press, _start, _to_bets_open

GREEN, AMBER, RED = 13, 26, 18
SHOE = ev.DeviceIdentity("shoe", "sim", "R1", "0002", "1.0", "cd" * 16, True)


def _journal(path):
    with Journal.open(path, readonly=True) as j:
        assert j.verify().ok
        return list(j.records())


def _presses(records):
    return [r.payload["event"]["button"] for r in records if r.kind == "device"
            and r.payload["event"]["kind"] == "button_pressed"]


def test_a_button_held_down_across_a_start_is_no_press(tmp_path):
    """confirm held down (a stuck button, a croupier leaning on it) while the service starts,
    the supervisor's key on: a level is not an edge, so the table is not opened by it, and
    letting it go is no press either. The next press is one press."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    factory = MockFactory(pin_class=closed_switch(23, 24))   # confirm held, key on

    async def scenario():
        svc, task, clock = await _start(cfg, factory)
        table = svc.runner.table
        await until(lambda: table._supervisor_key)        # the key's position was taken
        assert factory.pin(23).state is False             # held: the pin is low
        factory.pin(23).drive_high()                      # let go
        assert not (await svc.submit("close_bets", "dealer", {}))["ok"]   # queue drained
        assert table.state == "out_of_service"
        clock.advance()
        _press(factory, 23)                               # a press: the table opens
        await until(lambda: table.state == "shuffling")
        svc.stop()
        return await task

    assert asyncio.run(scenario()) == 0
    assert _presses(_journal(tmp_path / "j.db")) == ["confirm"]


def test_presses_are_replayed_once_across_a_restart(tmp_path):
    """A crash, or a stop, after confirm took the table from a void round to the next round's
    shuffle: the restarted table is rebuilt from the journal with each press taken once (a
    press taken twice would declare the new deck ready, bets open), and nothing of the panel is
    journaled again but the key's position at the start."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))

    async def first():
        factory = MockFactory()
        svc, task, clock = await _start(cfg, factory)
        await _to_bets_open(svc, factory, clock)
        clock.advance()
        _press(factory, 17)                               # close bets
        await until(lambda: svc.runner.table.state == "bets_closed")
        assert (await svc.submit("void_round", "supervisor", {"reason": "a test"}))["ok"]
        clock.advance()
        _press(factory, 23)                               # confirm: the next round
        await until(lambda: svc.runner.table.state == "shuffling")
        svc.stop()
        return await task

    async def again():
        factory = MockFactory()
        svc, task, _ = await _start(cfg, factory)
        state = svc.runner.table.state
        await until(lambda: factory.pin(AMBER).state)     # shuffling: amber
        svc.stop()
        return state, await task

    assert asyncio.run(first()) == 0
    before = _journal(tmp_path / "j.db")
    assert asyncio.run(again()) == ("shuffling", 0)
    after = _journal(tmp_path / "j.db")
    assert _presses(after) == _presses(before) == ["confirm", "confirm", "close_bets", "confirm"]
    panel_after = [r.payload["event"]["kind"] for r in after[len(before):]
                   if r.kind == "device" and r.payload["event"]["device"] == "panel"]
    assert panel_after == ["key_switched"]


def test_two_buttons_pressed_together_are_two_presses_in_order(tmp_path):
    """close_bets and misdeal at the same moment: neither is lost or merged; each is journaled
    in the order gpiozero reported it, followed by what the table decided on it, and the light
    shows where both left the table."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    factory = MockFactory()

    async def scenario():
        svc, task, clock = await _start(cfg, factory)
        await _to_bets_open(svc, factory, clock)
        factory.pin(17).drive_low()                       # close_bets and misdeal down ...
        factory.pin(27).drive_low()
        factory.pin(17).drive_high()                      # ... and up together
        factory.pin(27).drive_high()
        assert not (await svc.submit("confirm_result", "dealer", {}))["ok"]  # both handled
        state = svc.runner.table.state
        lamps = tuple(factory.pin(p).state for p in (GREEN, AMBER, RED))
        svc.stop()
        return state, lamps, await task

    state, lamps, code = asyncio.run(scenario())
    assert code == 0
    records = _journal(tmp_path / "j.db")
    assert _presses(records)[-2:] == ["close_bets", "misdeal"]
    seqs = {r.payload["event"]["button"]: r.seq for r in records if r.kind == "device"
            and r.payload["event"]["kind"] == "button_pressed"}
    closed = next(r.seq for r in records if r.kind == "state"
                  and r.payload.get("dest") == "bets_closed")
    assert seqs["close_bets"] < closed < seqs["misdeal"]
    assert state != "bets_open"
    expected = {"bets_closed": (False, True, False), "round_void": (False, False, True)}
    assert lamps == expected[state]


def test_a_refused_press_is_journaled_with_its_reason_and_leaves_the_light(tmp_path):
    """confirm while betting is open means nothing: the press is journaled, then an
    irregular_event whose reason tells the croupier's console why; the table and the tower
    light (green) are as they were, and no lamp flickers."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    factory = MockFactory()

    async def scenario():
        svc, task, clock = await _start(cfg, factory)
        await _to_bets_open(svc, factory, clock)
        await until(lambda: factory.pin(GREEN).state)
        marks = {p: len(factory.pin(p).states) for p in (GREEN, AMBER, RED)}
        clock.advance()
        _press(factory, 23)                               # confirm during betting
        assert not (await svc.submit("confirm_result", "dealer", {}))["ok"]
        assert svc.runner.table.state == "bets_open"
        assert {p: len(factory.pin(p).states) for p in marks} == marks
        svc.stop()
        return await task

    assert asyncio.run(scenario()) == 0
    records = _journal(tmp_path / "j.db")
    press = [r for r in records if r.kind == "device"
             and r.payload["event"]["kind"] == "button_pressed"][-1]
    after = [r for r in records if r.seq > press.seq and r.kind == "table"]
    assert after and after[0].payload["kind"] == "irregular_event"
    assert after[0].payload["event"] == "button_pressed"
    assert "bets_open" in after[0].payload["reason"], after[0].payload["reason"]


def test_a_reload_leaves_the_panel_and_its_signal_alone(tmp_path):
    """A reload puts the console tokens in force only: the panel keeps its pins and its
    signal (no lamp redrawn, no second beep of the void), and a [gpio] changed in the file is
    named as waiting for the next start, not half applied."""
    text = CONFIG.format(journal=tmp_path / "j.db") + "\n[api]\nport = 0\n"
    text = text.replace("[gpio]\n", "[gpio]\nbuzzer = 19\n", 1)
    path = tmp_path / "table.toml"
    path.write_text(text)
    factory = MockFactory()

    async def scenario():
        svc, task, clock = await _start(load_config(path), factory)
        await _to_bets_open(svc, factory, clock)
        assert (await svc.submit("void_round", "supervisor", {"reason": "a test"}))["ok"]
        await until(lambda: factory.pin(RED).state and factory.pin(19).state is False
                    and len(factory.pin(19).states) >= 3)        # red, and its one beep
        marks = {p: len(factory.pin(p).states) for p in (GREEN, AMBER, RED, 19)}
        path.write_text(text.replace("red = 18", "red = 16"))    # the red lamp moved
        record = svc.reload()
        await asyncio.sleep(0.5)          # a beep is 0.3 s on: any second one has begun
        assert {p: len(factory.pin(p).states) for p in marks} == marks
        assert svc.panel.light is Light.VOID and factory.pin(RED).state
        assert factory.pin(16).state is False
        svc.stop()
        return record, await task

    record, code = asyncio.run(scenario())
    assert code == 0
    assert record["outcome"] == "applied" and record["restart"] == ["gpio.light.red"]


def test_out_of_service_and_a_void_round_stay_red_while_a_needed_device_is_connecting(tmp_path):
    """The amber of a device not linked since the restart is ready turned into waiting; red
    states keep their red (a void, a table out of service), so from them the light does not
    say when the next round may open: the refusal does, naming the device."""
    def runner():
        t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=LAYOUT["q-poker"],
                  devices=DEVICES)
        return TableRunner(t, Journal.open(tmp_path / "journal.db", "T1"))

    run = runner()
    run.recover()                                       # the first start: nothing linked
    t = run.table
    assert t.state == "out_of_service"
    assert t.public_view()["devices"]["shoe"]["link"] == "connecting"
    assert tower_light(t) is Light.OUT_OF_SERVICE
    try:
        run.command("open_table", role="supervisor")
    except Exception as exc:                            # refused, naming the shoe
        assert "shoe" in str(exc) and "connecting" in str(exc)
    else:
        raise AssertionError("open_table taken while the shoe is connecting")
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    assert tower_light(t) is Light.OUT_OF_SERVICE       # linked: the light did not move
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.command("void_round", role="supervisor", reason="a test")
    assert t.state == "round_void"
    run.journal.close()

    again = runner()
    again.recover()
    t = again.table
    assert t.state == "round_void" and tower_light(t) is Light.VOID
    try:
        again.command("next_round")
    except Exception as exc:
        assert "shoe" in str(exc) and "connecting" in str(exc)
    else:
        raise AssertionError("next_round taken while the shoe is connecting")
    assert tower_light(t) is Light.VOID
    again.journal.close()
