"""The live control channel: JSON lines over 127.0.0.1 TCP and a Unix socket."""
from __future__ import annotations

import json
import socket

import pytest
import serial

from controller.errors import TablectlError
from drivers.protocol import messages as m
from firmware_sim import SimulatedTable
from firmware_sim.control import ACTIONS, ControlClient
from firmware_sim.rawhost import RawHost


@pytest.fixture
def table():
    with SimulatedTable(seed=5, speed=500, control="tcp") as t:
        t.add("shoe")
        t.add("dice")
        yield t


def test_list_status_and_actions(table):
    with ControlClient(table.control_address) as c:
        listed = {d["name"]: d for d in c.request("list")}
        assert set(listed) == {"shoe", "dice"}
        assert listed["shoe"]["port"] == table["shoe"].port
        assert c.request("status", device="shoe")["firmware"]["cards"] == 52
        out = c.request("draw", device="shoe", face_up=True)
        assert out[0]["kind"] == "card_drawn" and out[0]["face_up"] is True
        assert c.request("set_next_dice", device="dice", values=[1, 1, 2, 2]) is None
        assert c.request("open_lid", device="dice") == [{"kind": "door_opened"}]
        ev = c.request("events", device="dice")
        assert ev == {"events": [{"kind": "door_opened"}], "next": 1}
        assert c.request("events", device="dice", since=1)["events"] == []
        assert "corrupt_crc" in c.request("faults")


def test_live_fault_reaches_the_host(table):
    shoe = table["shoe"]
    port = serial.Serial(shoe.port, timeout=0.05)
    try:
        host = RawHost.over_serial(port)
        host.hello()
        with ControlClient(table.control_address) as c:
            c.request("inject", device="shoe", fault="face_up", at_card=2)
            c.request("draw", device="shoe")
            c.request("draw", device="shoe")
            c.request("inject", device="shoe", fault="jam", where="gate")
        assert host.wait_for(m.CardDrawn).face_up is False
        assert host.wait_for(m.CardDrawn).face_up is True
        assert host.wait_for(m.Jam).where == "gate"
    finally:
        port.close()


@pytest.mark.parametrize("request_, words", [
    ({"action": "fly"}, ["unknown action 'fly'", "list"]),
    ({"action": "draw"}, ["needs device", "shoe"]),
    ({"action": "draw", "device": "shoo"}, ["no simulated device named 'shoo'", "dice"]),
    ({"action": "draw", "device": "dice"}, ["dice is a dice; draw is an action of a shoe"]),
    ({"action": "inject", "device": "shoe", "args": {"fault": "jamm"}}, ["unknown fault"]),
    ({"action": "inject", "device": "shoe", "args": {"fault": "jam", "at_card": 0}},
     ["at_card = 0 must be a count from 1"]),
    ({"action": "place_card", "device": "shoe", "args": {"box": 1}}, ["box-sensors"]),
    ({"action": "draw", "device": "shoe", "args": [1]}, ["args must be a JSON object"]),
    ({"action": "events", "device": "shoe", "args": {"since": -1}}, ["since must be"]),
])
def test_bad_requests_are_answered_and_change_nothing(table, request_, words):
    before = table["shoe"].status()["firmware"]
    answer = _raw(table.control_address, request_)
    assert answer["ok"] is False
    for w in words:
        assert w in answer["error"]
    with ControlClient(table.control_address) as c:
        with pytest.raises(TablectlError, match="unknown action"):
            c.request("fly")
        assert c.request("list")                   # the channel carries on
    assert table["shoe"].status()["firmware"] == before


def _raw(address, req):
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port))) as s:
        f = s.makefile("rwb")
        f.write((json.dumps(req) + "\n").encode())
        f.flush()
        return json.loads(f.readline())


def test_not_json_and_ids(table):
    host, _, port = table.control_address.rpartition(":")
    with socket.create_connection((host, int(port))) as s:
        f = s.makefile("rwb")
        f.write(b"draw the card please\n\n{\"id\": \"x7\", \"action\": \"list\"}\n")
        f.flush()
        first = json.loads(f.readline())
        second = json.loads(f.readline())
    assert first["ok"] is False and "not JSON" in first["error"]
    assert second["id"] == "x7" and second["ok"] is True


def test_unix_socket_control(tmp_path):
    path = tmp_path / "sim.sock"
    with SimulatedTable(speed=500, control=f"unix:{path}") as t:
        t.add("box-sensors")
        assert t.control_address == f"unix:{path}"
        with ControlClient(t.control_address) as c:
            assert c.request("place_card", box=3) == [{"kind": "card_placed", "box": 3}]
    assert not path.exists()


def test_every_action_is_documented():
    import pathlib
    readme = pathlib.Path(__file__).parents[1] / "firmware-sim" / "README.md"
    text = readme.read_text()
    for a in ACTIONS:
        assert f"`{a}`" in text, a


def test_a_control_path_that_is_a_file_is_refused_and_the_file_kept(tmp_path):
    precious = tmp_path / "notes.txt"
    precious.write_text("keep me")
    with pytest.raises(TablectlError, match="is not a socket; name another path"):
        SimulatedTable(control=f"unix:{precious}")
    assert precious.read_text() == "keep me"


@pytest.mark.parametrize("address,why", [("tcp:abc", "must be a number"),
                                         ("tcp:70000", "must be a number"),
                                         ("unix:/nonexistent-dir/sim.sock", "cannot be bound")])
def test_a_bad_control_address_is_named_and_leaves_no_thread_behind(address, why):
    import threading
    before = {t.ident for t in threading.enumerate()}
    with pytest.raises(TablectlError, match=why):
        SimulatedTable(control=address)
    left = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert not left, left


def test_a_control_port_in_use_is_named():
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    try:
        port = holder.getsockname()[1]
        with pytest.raises(TablectlError, match=f"tcp:{port}' cannot be bound"):
            SimulatedTable(control=f"tcp:{port}")
    finally:
        holder.close()


def test_a_trigger_whose_count_has_passed_is_refused_not_armed_for_ever(table):
    shoe = table["shoe"]
    shoe.draw()
    shoe.draw()
    with pytest.raises(TablectlError) as err:
        shoe.inject("jam", at_card=2)
    assert "at_card = 2" in str(err.value) and "already" in str(err.value)
    assert "at_card = 3" in str(err.value)                # the way out: a count still to come
    assert shoe.runtime.schedule.pending() == []          # nothing armed that cannot fire
    with ControlClient(table.control_address) as c:
        with pytest.raises(TablectlError, match="already"):
            c.request("inject", device="shoe", fault="jam", at_card=1)
        c.request("inject", device="shoe", fault="jam", where="gate", at_card=3)
    assert [e["kind"] for e in shoe.draw()] == ["jam"]


def test_a_device_tells_how_far_each_trigger_count_has_gone(table):
    shoe = table["shoe"]
    assert shoe.reached("at_card") == 0
    shoe.draw()
    shoe.draw()
    assert shoe.reached("at_card") == 2 and shoe.reached("at_shake") == 0
    shoe.inject("jam", at_card=shoe.reached("at_card") + 1)   # the next card: still to come
    assert [e["kind"] for e in shoe.draw()] == ["jam"]
    with pytest.raises(TablectlError, match="no count for 'after_s'.*at_card"):
        shoe.reached("after_s")


def test_a_die_the_agitator_does_not_hold_is_refused_when_the_fault_is_armed(table):
    dice = table["dice"]                                  # four dice: 0 to 3
    with pytest.raises(TablectlError, match="die 5 does not exist.*dice 0 to 3"):
        dice.inject("die_not_flat", die=5, at_shake=1)
    with pytest.raises(TablectlError, match="die 4 does not exist"):
        dice.inject("die_out_of_cup", die=4, at_shake=1)
    assert dice.runtime.schedule.pending() == []


@pytest.mark.parametrize("fault, args, words", [
    ("deck_missing", {"card": "Zz"}, 'unknown card "Zz"'),
    ("deck_extra", {"card": "Xx"}, 'unknown card "Xx"'),
    ("deck_duplicate", {"card": "11s"}, 'unknown card "11s"'),
    ("deck_order", {"cards": ["As", "Qq"]}, 'unknown card "Qq"'),
])
def test_a_card_named_wrongly_is_refused_when_a_deck_fault_is_armed(fault, args, words):
    with SimulatedTable(seed=5, speed=500) as t:
        shuffler = t.add("shuffler")
        with pytest.raises(TablectlError, match=words):
            shuffler.inject(fault, at_deck=1, **args)
        assert shuffler.runtime.schedule.pending() == []


def test_a_deck_fault_naming_a_card_the_deck_will_not_hold_is_refused_and_leaves_it_working():
    import time
    from drivers.protocol import get_codec

    with SimulatedTable(seed=5, speed=500) as t:
        shuffler = t.add("shuffler")
        shuffler.inject("deck_missing", card="As")
        with pytest.raises(TablectlError, match="card As is not in the shuffler's deck"):
            shuffler.inject("deck_missing", card="As")     # the first takes it away
        with pytest.raises(TablectlError, match="card As is not in the shuffler's deck"):
            shuffler.inject("deck_duplicate", card="As")
        # The fault armed happens at the next deck, and the shuffler is not wedged by the others.
        rt, host = shuffler.runtime, get_codec("tablectl")
        t._call(rt.receive, host.encode(m.Hello(), 0), time.monotonic())
        t._call(rt.receive, host.encode(m.Shuffle(), 1), time.monotonic())
        assert t._call(lambda: rt.model.state) == "shuffling"
        held = t._call(lambda: [str(d) for d in rt.model.held])
        assert len(held) == 51 and "As" not in held
