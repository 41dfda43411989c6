"""The device runtime's link rules (docs/protocol.md section 3) on a virtual clock: no port,
no thread, exact times."""
from __future__ import annotations

from drivers.protocol import Received, get_codec
from drivers.protocol import messages as m
from firmware_sim.models import BoxSensorsModel, DiceModel, ShufflerModel
from firmware_sim.faults import make_fault
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


def test_an_unacknowledged_event_is_sent_again_every_ack_timeout_and_never_given_up():
    w = Wire(BoxSensorsModel())
    w.send(m.Hello(1, 10_000), now=0.0)
    w.read()
    step = 1 / 64                                   # exact in binary: no rounding in the clock
    w.rt.act("place_card", 1.0, 1)
    w.rt.act("place_card", 1.0, 3)                  # queued behind the first (stop-and-wait)
    sent = []
    t = 1.0
    while t < 101.0:                                # 100 s without an ack: far past 3 retries
        sent += [(t, i) for i in w.at(t) if i.seq]
        assert w.rt.next_deadline(t) <= t + 0.2     # a retransmission is always due
        t += step
    # The first poll at or after each 200 ms ack timeout sends it again: every 13/64 s.
    times = [x for x, _ in sent]
    assert {b - a for a, b in zip(times, times[1:])} == {13 * step}
    assert len(sent) == 1 + int(100 // (13 * step))
    assert {(i.seq, i.message) for _, i in sent} == {(1, m.CardPlaced(0))}
    w.send(m.Ack(1, 0), now=t)
    (nxt,) = w.read()
    assert (nxt.seq, nxt.message) == (2, m.CardPlaced(2))
    w.send(m.Ack(2, 0), now=t)
    assert [i for i in w.at(t + 5) if i.seq] == []  # acknowledged: never sent again


def test_a_resumed_session_keeps_the_numbers_and_resends_the_event_under_its_own():
    w = Wire(BoxSensorsModel())
    w.read()
    w.send(m.Hello(1, 10_000), now=0.0)
    assert not w.read()[0].message.resumed          # the first hello: a new session
    for box in (1, 2):
        w.rt.act("place_card", 0.0, box)
        (ev,) = w.read()
        w.send(m.Ack(ev.seq, 0), now=0.0)
    w.rt.act("place_card", 0.0, 3)                  # event 3: its ack will be lost
    w.rt.act("place_card", 0.0, 4)                  # event 4: queued behind it
    (inflight,) = w.read()
    assert inflight.seq == 3
    w.at(0.5)                                       # the link drops; retransmissions go on
    w.send(m.Hello(1, 10_000, resume=True), now=2.0)
    got = w.read()
    assert names(got) == ["HelloInfo", "CardPlaced"]
    assert got[0].message.resumed and not got[0].message.boot
    # The same event under the same number, so a host that had it recognises it.
    assert (got[1].seq, got[1].message) == (3, inflight.message)
    w.send(m.Ack(3, 0), now=2.01)
    (nxt,) = w.read()
    assert (nxt.seq, nxt.message) == (4, m.CardPlaced(3))   # numbering goes on
    assert w.rt.stats["resumed_sessions"] == 1 and w.rt.stats["new_sessions"] == 1


def test_a_resumed_session_remembers_the_host_commands():
    model = ShufflerModel(speed=1e6)
    w = Wire(model)
    w.send(m.Hello(1, 10_000), now=0.0)
    w.send(m.StatusRequest(), seq=7, now=0.0)
    w.send(m.Hello(1, 10_000, resume=True), now=1.0)
    w.read()
    w.send(m.StatusRequest(), seq=7, now=1.0)       # sent again after the loss: a duplicate
    acks = [i.message for i in w.read() if isinstance(i.message, m.Ack)]
    assert acks == [m.Ack(7, 0)]
    assert w.rt.stats["commands"] == 1 and w.rt.stats["duplicate_commands"] == 1
    # A new session forgets the host's numbers: the same number is a new command.
    w.send(m.Hello(1, 10_000, resume=False), now=2.0)
    w.send(m.StatusRequest(), seq=7, now=2.0)
    assert w.rt.stats["commands"] == 2


def test_a_new_session_renumbers_the_event_in_flight_from_one():
    w = Wire(BoxSensorsModel())
    w.send(m.Hello(1, 10_000), now=0.0)
    w.read()
    for box in (1, 2, 3):
        w.rt.act("place_card", 0.0, box)
        (ev,) = w.read()
        if box < 3:
            w.send(m.Ack(ev.seq, 0), now=0.0)
    assert ev.seq == 3
    w.send(m.Hello(1, 10_000, resume=False), now=1.0)
    got = w.read()
    assert names(got) == ["HelloInfo", "CardPlaced"] and not got[0].message.resumed
    assert (got[1].seq, got[1].message) == (1, ev.message)


def test_the_first_hello_after_power_on_or_a_reboot_starts_a_new_session():
    w = Wire(BoxSensorsModel())
    assert w.read()[0].message.boot
    w.send(m.Hello(1, 10_000, resume=True), now=0.0)   # the host knew an earlier boot
    info = w.read()[0].message
    assert not info.resumed and not info.boot
    w.rt.act("place_card", 0.0, 1)
    w.rt.act("place_card", 0.0, 2)
    (ev,) = w.read()
    assert ev.seq == 1                                  # event 1 in flight, event 2 queued
    w.send(m.StatusRequest(), seq=4, now=0.0)
    w.read()
    w.rt.inject(make_fault("reboot"), 1.0)
    boot = w.read()
    assert names(boot) == ["HelloInfo"] and boot[0].message.boot
    w.send(m.Hello(1, 10_000, resume=True), now=1.5)
    got = w.read()
    assert names(got) == ["HelloInfo"]                  # what was queued died with the boot
    assert not got[0].message.resumed and not got[0].message.boot
    w.send(m.StatusRequest(), seq=4, now=1.5)          # not a duplicate: memory was lost
    assert w.rt.stats["duplicate_commands"] == 0
    (report,) = [i for i in w.read() if i.seq]
    assert isinstance(report.message, m.StatusReport) and report.seq == 1   # from 1 again
    assert w.rt.stats["resumed_sessions"] == 0 and w.rt.stats["new_sessions"] == 2


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


def test_a_command_before_the_hello_is_neither_answered_nor_acted_on():
    # A command the host retransmits after the device rebooted reaches a device without a
    # session: it sends only heartbeats until a Hello, and must not dispense late.
    model = ShufflerModel(speed=1e6)
    w = Wire(model)
    assert names(w.read()) == ["HelloInfo"]             # the BOOT notice
    w.send(m.Shuffle(), seq=17, now=0.0)
    assert [i for i in w.read() if not isinstance(i.message, m.Heartbeat)] == []
    assert w.rt.stats["commands"] == 0
    assert w.rt.stats["commands_before_hello"] == 1
    assert model.status()["state"] == "idle"
    w.send(m.Hello(1, 10_000), now=0.1)
    assert names(w.read()) == ["HelloInfo"]             # nothing was queued by the Shuffle
    w.send(m.Shuffle(), seq=1, now=0.1)
    assert names(w.read())[:2] == ["Ack", "ShuffleStarted"]


def test_a_shuffler_holds_no_more_cards_than_its_deck_check_can_report():
    import pytest
    from firmware_sim.models.base import SimulatorError

    model = ShufflerModel(speed=1e6)
    w = Wire(model)
    w.send(m.Hello(1, 10_000), now=0.0)
    w.read()
    w.rt.act("load_deck", 0.0, ["As"] * 339)         # the most one DeckCheckResult carries
    w.send(m.DeckCheck(), seq=1, now=0.0)
    got = [i for i in w.at(60.0) if i.seq]           # past the 12 s deck check
    assert [type(i.message) for i in got] == [m.DeckCheckResult]
    assert len(got[0].message.cards) == 339
    w.send(m.Ack(got[0].seq, 0), now=60.0)
    with pytest.raises(SimulatorError, match="at most 339 cards"):
        w.rt.act("load_deck", 61.0, ["As"] * 340)   # its report would not fit in a frame
    assert model.status()["cards"] == 339


def test_a_malformed_unsequenced_frame_is_not_answered_with_a_nak_naming_a_reliable_one():
    # A NAK(1, bad payload) would tell the host to give up its command 1 as not understood,
    # though the device accepted it; the malformed heartbeat itself is never sent again.
    from drivers.protocol.framing import encode_frame
    w = Wire(ShufflerModel())
    w.send(m.Hello(1, 10_000), now=0.0)
    w.read()
    w.send(m.StatusRequest(), seq=1, now=0.1)
    assert (1, m.Ack(1, 0)) in [(i.message.seq, i.message) for i in w.read()
                               if isinstance(i.message, m.Ack)]
    w.rt.receive(encode_frame(1, m.Heartbeat.TYPE, m.Heartbeat(5).pack()), 0.2)
    assert [i.message for i in w.read() if isinstance(i.message, m.Nak)] == []
    assert w.rt.stats["rejected_bad-payload"] == 1
