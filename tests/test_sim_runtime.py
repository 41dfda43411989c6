"""The device runtime's link rules (docs/protocol.md section 3) on a virtual clock: no port,
no thread, exact times."""
from __future__ import annotations

from drivers.protocol import Received, get_codec
from drivers.protocol import messages as m
from firmware_sim.models import BoxSensorsModel, DiceModel, ShufflerModel
from firmware_sim.runtime import NullPort, DeviceRuntime, SimIdentity


class Wire:
    """The host end of a runtime driven by hand."""

    def __init__(self, model, codec="tablectl"):
        self.port = NullPort()
        self.rt = DeviceRuntime(model, SimIdentity(model.device_class, "S-1", units=1),
                                codec=codec, port=self.port, now=0.0)
        self.host = get_codec(codec, receive_from="device")

    def read(self):
        items = self.host.feed(bytes(self.port.sent))
        self.port.sent.clear()
        return [i for i in items if isinstance(i, Received)]

    def send(self, msg, seq=0, now=0.0):
        self.rt.receive(self.host.encode(msg, seq), now)

    def at(self, now):
        self.rt.poll(now)
        return self.read()


def names(items):
    return [type(i.message).__name__ for i in items]


def test_boot_notice_then_heartbeats_and_no_event_before_hello():
    w = Wire(BoxSensorsModel())
    boot = w.read()
    assert names(boot) == ["HelloInfo"] and boot[0].message.boot
    w.rt.act("place_card", 0.1, 2)
    assert names(w.at(0.1)) == []                     # queued: no hello yet
    assert names(w.at(0.25)) == ["Heartbeat"]
    w.send(m.Hello(1, 100), now=0.3)
    got = w.read()
    assert names(got) == ["HelloInfo", "CardPlaced"] and not got[0].message.boot
    assert got[1].seq == 1 and got[1].message.box == 1
    w.send(m.Ack(1, 0), now=0.31)
    # The heartbeat interval the host asked for (100 ms) is adopted.
    beats = [t for t in (0.36, 0.41, 0.46, 0.51) if names(w.at(t)) == ["Heartbeat"]]
    assert beats == [0.36, 0.46]


def test_retransmission_every_ack_timeout_three_times_then_silence_until_hello():
    w = Wire(BoxSensorsModel())
    w.send(m.Hello(1, 10_000), now=0.0)
    w.read()
    w.rt.act("place_card", 1.0, 1)
    times = (1.0, 1.1, 1.19, 1.21, 1.3, 1.42, 1.5, 1.63, 1.7, 1.9, 2.5, 5.0)
    sent = [(t, names(w.at(t))) for t in times]
    # Sent, then again after each 200 ms ack timeout, 3 times: 4 transmissions in all.
    assert [t for t, n in sent if n == ["CardPlaced"]] == [1.0, 1.21, 1.42, 1.63]
    assert w.rt.stalled
    w.rt.act("place_card", 5.0, 3)                  # queued behind the stalled frame
    assert w.at(6.0) == []
    w.send(m.Hello(1, 10_000), now=6.0)
    got = w.read()
    assert names(got) == ["HelloInfo", "CardPlaced"] and (got[1].seq, got[1].message.box) == (1, 0)
    w.send(m.Ack(1, 0), now=6.01)
    nxt = w.read()
    assert (nxt[0].seq, nxt[0].message.box) == (2, 2)


def test_sequence_numbers_wrap_from_255_to_1():
    w = Wire(BoxSensorsModel(boxes=1))
    w.send(m.Hello(1, 10_000), now=0.0)
    w.read()
    seqs = []
    for i in range(257):
        w.rt.act("place_card", 0.0, 1)
        (item,) = w.read()
        seqs.append(item.seq)
        w.send(m.Ack(item.seq, 0))
    assert seqs[253:257] == [254, 255, 1, 2]


def test_duplicate_memory_holds_the_last_32_commands():
    w = Wire(ShufflerModel(speed=1e6))
    w.send(m.Hello(1, 10_000))
    for seq in range(1, 40):
        w.send(m.StatusRequest(), seq=seq)
    w.read()
    statuses = w.rt.stats["commands"]
    w.send(m.StatusRequest(), seq=39)               # recent: a duplicate
    w.send(m.StatusRequest(), seq=2)                # forgotten: done again
    assert w.rt.stats["commands"] == statuses + 1
    assert w.rt.stats["duplicate_commands"] == 1


def test_dice_binary_has_no_sequence_numbers_and_no_retransmission():
    model = DiceModel(speed=1e6)
    w = Wire(model, codec="dice-binary")
    w.read()
    w.send(m.Hello(1, 250))
    model.set_next_dice([3, 3, 3, 3])
    w.send(m.Shake())
    got = w.read()
    assert names(got) == ["HelloInfo", "Ack", "ShakeStarted"]
    assert all(i.seq == 0 for i in got)
    result = w.at(1.0)
    assert names(result) == ["DiceResult", "Heartbeat"]
    assert result[0].message.dice == (3, 3, 3, 3) and result[0].seq == 0
    assert w.rt.stats["retransmissions"] == 0
