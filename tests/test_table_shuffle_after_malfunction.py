"""The round's shuffle when the table waited in ``malfunction`` before its deck was ready.

Nothing is sent to the shuffler for the round while the table waits for the supervisor: a
deck check's result that comes meanwhile is kept (journaled) and the shuffle it lets go is
asked at the clear. A shuffle the shuffler lost meanwhile (its link lost, a restart, a jam),
of a round held in ``shuffling`` by the controller's own fault, is asked again at the clear
rather than left for someone to void the round. Every request is journaled before it is sent.
"""
import pytest

from controller.table.machine import Table as Machine
from drivers import events as ev

from table_helpers import DEVICES, asked, deck_checked, shuffler_runner

IDENTITY = ev.DeviceIdentity("shuffler", "sim", "shuffler", "S1", "1.0", "ab" * 16, True)


def broken(self, e):
    raise RuntimeError("handler bug")


def controller_fault(monkeypatch, run):
    """A bug in the table's own code, met in the input in hand: the controller's fault."""
    with monkeypatch.context() as bug:
        bug.setattr(Machine, "_on_malfunction", broken)
        run.device(ev.Malfunction(device="shoe", ts=0.5, code=7, text="reader"))
    assert run.table.state == "malfunction"


def sent(run, since: int = 0) -> list[str]:
    """What reached the shuffler: each request journaled before it is sent, so the same
    (``since``: the journal's records after it, those of this runner's process)."""
    actions = [c.action for c in run.sent]
    assert actions == asked(run, since)
    return actions


def lose_the_shuffle(run, how: str) -> None:
    if how == "link":
        run.device(ev.LinkLost(device="shuffler", ts=1.0, reason="cable pulled"))
        run.device(ev.LinkRestored(device="shuffler", ts=2.0, identity=IDENTITY, resumed=True))
    elif how == "restart":
        run.device(ev.LinkLost(device="shuffler", ts=1.0, reason="rebooted", rebooted=True))
        run.device(ev.LinkRestored(device="shuffler", ts=2.0, identity=IDENTITY,
                                   resumed=False))
    else:
        run.device(ev.Jam(device="shuffler", ts=1.0, where="elevator"))


@pytest.mark.parametrize("how", ["link", "restart", "jam"])
def test_a_shuffle_lost_while_held_in_shuffling_is_asked_again_at_the_clear(monkeypatch,
                                                                            tmp_path, how):
    run = shuffler_runner(tmp_path, "q-poker")
    run.command("open_table", "supervisor")
    run.device(deck_checked(0.1))
    run.device(ev.ShuffleStarted(device="shuffler", ts=0.2))
    assert sent(run) == ["deck_check", "shuffle"]
    controller_fault(monkeypatch, run)
    lose_the_shuffle(run, how)
    assert sent(run) == ["deck_check", "shuffle"]            # nothing while in malfunction
    run.command("clear_malfunction", "supervisor")
    assert run.table.state == "shuffling" and run.table.round.round_id == 1
    # The deck it held is checked again, then shuffled: asked, not waited for in vain.
    assert sent(run)[2:] == ["deck_check"]
    run.device(deck_checked(3.0))
    assert sent(run)[2:] == ["deck_check", "shuffle"]
    run.device(ev.ShuffleDone(device="shuffler", ts=4.0, count=52))
    assert run.table.state == "bets_open" and run.table.round.round_id == 1


def test_a_shuffle_asked_before_the_controller_restarted_is_asked_again_at_the_clear(
        monkeypatch, tmp_path):
    """The controller restarted while the round waited in malfunction: the shuffle asked may
    never have left. The shuffler links to the new process and the clear asks again."""
    run = shuffler_runner(tmp_path, "q-poker")
    run.command("open_table", "supervisor")
    run.device(deck_checked(0.1))
    monkeypatch.setattr(Machine, "_on_malfunction", broken)    # the replay meets it again
    run.device(ev.Malfunction(device="shoe", ts=0.5, code=7, text="reader"))
    run.journal.close()
    run = shuffler_runner(tmp_path, "q-poker")
    assert run.recover()["state_now"] == "malfunction"
    since = run.journal.head()[0]
    for device, cls in DEVICES.items():
        run.device(ev.LinkUp(device=device, ts=1.0, identity=ev.DeviceIdentity(
            device, "sim", cls, "S1", "1.0", "ab" * 16, True)))
    assert sent(run, since) == []
    run.command("clear_malfunction", "supervisor")
    assert run.table.state == "shuffling" and sent(run, since) == ["shuffle"]
    run.device(ev.ShuffleDone(device="shuffler", ts=4.0, count=52))
    assert run.table.state == "bets_open" and run.table.round.round_id == 1


def held_by(monkeypatch, run, hold: str) -> None:
    if hold == "controller":
        controller_fault(monkeypatch, run)      # held in shuffling
    else:
        run.device(ev.DoorOpened(device="shuffler", ts=0.5))   # the round held with its bets
        run.device(ev.DoorClosed(device="shuffler", ts=0.6))
        assert run.table.state == "malfunction"


@pytest.mark.parametrize("hold", ["controller", "door"])
def test_a_deck_check_answered_in_malfunction_is_kept_and_shuffled_at_the_clear(
        monkeypatch, tmp_path, hold):
    run = shuffler_runner(tmp_path, "q-poker")
    run.command("open_table", "supervisor")
    assert sent(run) == ["deck_check"]
    held_by(monkeypatch, run, hold)
    run.device(deck_checked(1.0))
    # Journaled, and nothing asked of the shuffler while the table waits.
    assert [r.payload["event"]["kind"] for r in run.journal.records(kinds=["device"])
            ].count("deck_check_result") == 1
    assert sent(run) == ["deck_check"]
    run.command("clear_malfunction", "supervisor")
    assert sent(run) == ["deck_check", "shuffle"]            # the result acted on now
    run.device(ev.ShuffleDone(device="shuffler", ts=4.0, count=52))
    assert run.table.state == "bets_open" and run.table.round.round_id == 1


class SimShuffler:
    """The firmware simulator's shuffler behind the runner: what the table sends it is carried
    out by the model, and what the model reports comes back as the driver translates it.
    Time is driven by hand (the model has no clock); each step lets its timers run."""

    def __init__(self, run):
        import asyncio

        from drivers.shuffler import ShufflerDriver
        from drivers.spec import DeviceSpec
        from firmware_sim.models import ShufflerModel

        self.run, self.now, self.waiting = run, 0.0, []
        self.model = ShufflerModel(seed=3)        # its own times: a check 12 s, a shuffle 30 s
        self.driver = ShufflerDriver(DeviceSpec("shuffler", "shuffler", port="/dev/null"),
                                     asyncio.Queue(), clock=lambda: self.now)
        run.send = self.waiting.append

    def step(self, seconds: float = 100.0) -> None:
        """Carry out what was sent, then let ``seconds`` pass; feed back every report."""
        from firmware_sim.wire import to_message

        while True:
            emits = []
            for command in self.waiting:
                if command.device_class == "shuffler":
                    emits += self.model.command(command.action, self.now, **command.args)
            self.waiting.clear()
            self.now += seconds
            emits += self.model.advance(self.now)
            for emit in emits:
                event = self.driver._translate(to_message(emit))
                if event is not None:
                    self.run.device(event)
            if not self.waiting:
                return


def test_a_simulated_shuffler_rebooted_while_held_shuffles_the_round_after_the_clear(
        monkeypatch, tmp_path):
    """The simulator's shuffler loses the order it made when it is power-cycled: its reboot
    while the round waits in malfunction (the controller's fault in shuffling) is seen as its
    link lost and back with a new session. At the clear the table asks it again, and the round
    opens betting on a deck it shuffled after the reboot."""
    run = shuffler_runner(tmp_path, "q-poker")
    sim = SimShuffler(run)
    run.command("open_table", "supervisor")
    sim.step(13.0)          # the deck checked, its shuffle asked and begun, not yet done
    assert sim.model.state == "shuffling" and run.table.state == "shuffling"
    controller_fault(monkeypatch, run)
    sim.model.reboot(sim.now)
    lose_the_shuffle(run, "restart")
    run.command("clear_malfunction", "supervisor")
    sim.step()
    assert run.table.state == "bets_open" and run.table.round.round_id == 1
    assert sim.model.shuffles == 2 and sim.model.state == "ready"
