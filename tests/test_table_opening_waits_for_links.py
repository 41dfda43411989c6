"""A round does not open while a device it needs has not linked since the controller restarted.

After a restart the table is rebuilt from the journal and shows a device known from it (or
configured since) as ``connecting`` until it links to the running process. A round opened
then could not be dealt: ``open_table``, ``next_round`` and the ``clear_malfunction`` that
begins a round are refused, naming the device, that it has not linked since the restart, and
the way out, with nothing changed. The rules are those of the tower light's amber
(Table.devices_connecting): a spare of a class already linked waits on nothing, a device no
longer configured blocks nothing, and the devices are those the next round needs (its mode,
its configuration). A round in play at the restart goes on as its regulation says.

The refusal depends on the links of the running process, which the replay rebuilds from the
journal (each ``restart`` input, each link-up): restarted at a refusal, the table replays it
as refused, and one accepted once the device linked as accepted.
"""
from __future__ import annotations

import pytest

from controller.errors import TablectlError
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import Card
from controller.table import Table
from controller.table.runner import TableRunner
from controller.tower import tower_light
from controller.panel import Light
from drivers import events as ev

from table_helpers import DEVICES, LAYOUT, deck_checked

SHOE = ev.DeviceIdentity("shoe", "sim", "R1", "0002", "1.0", "cd" * 16, True)
SHOE_2 = ev.DeviceIdentity("shoe", "sim", "R2", "0003", "1.0", "cd" * 16, True)
SHUFFLER = ev.DeviceIdentity("shuffler", "sim", "S1", "0001", "1.0", "ab" * 16, True)


def runner(path, mode="shoe", devices=DEVICES):
    t = Table("T1", get_game("q-poker"), mode, layout_boxes=LAYOUT["q-poker"], devices=devices)
    return TableRunner(t, Journal.open(path / "journal.db", "T1"))


def up(run, device="shoe", identity=SHOE):
    run.device(ev.LinkUp(device=device, ts=0.0, identity=identity))


def voided(run):
    """A round opened by the shoe, voided: the table waits between rounds (round_void)."""
    up(run)
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("void_round", role="supervisor", reason="a test round")
    assert run.table.state == "round_void"


def restarted(path, **kw):
    run = runner(path, **kw)
    run.recover()
    return run


def refused(run, name, role="dealer"):
    before = (run.table.state, run.table.round_no)
    with pytest.raises(TablectlError) as exc:
        run.command(name, role=role)
    assert (run.table.state, run.table.round_no) == before        # nothing changed
    return str(exc.value)


def test_next_round_is_refused_while_the_shoe_has_not_linked_since_the_restart(tmp_path):
    run = runner(tmp_path)
    voided(run)
    run.journal.close()

    again = restarted(tmp_path)
    assert again.table.devices_connecting(next_round=True) == ["shoe"]
    why = refused(again, "next_round")
    assert "shoe" in why and "not linked since the controller restarted" in why
    assert "tower light turns green" in why and "cable" in why and "table.toml" in why
    # nothing else stands in the way: the shoe links, and the round opens
    up(again)
    again.command("next_round")
    assert again.table.state == "shuffling" and again.table.round_no == 2
    again.journal.close()


def test_open_table_is_refused_while_the_shoe_has_not_linked_since_the_restart(tmp_path):
    run = runner(tmp_path)
    voided(run)
    run.command("close_table", role="supervisor")
    assert run.table.state == "out_of_service"
    run.journal.close()

    again = restarted(tmp_path)
    why = refused(again, "open_table", role="supervisor")
    assert "shoe" in why and "not linked since the controller restarted" in why
    up(again)
    again.command("open_table", role="supervisor")
    assert again.table.state == "shuffling"
    again.journal.close()


def test_a_first_start_waits_for_the_configured_devices_to_link(tmp_path):
    """A journal with no round: each start is a restart, and the shoe configured has never
    linked to this process."""
    again = restarted(tmp_path)
    assert "shoe" in refused(again, "open_table", role="supervisor")
    up(again)
    again.command("open_table", role="supervisor")
    assert again.table.state == "shuffling"
    again.journal.close()


def test_a_clear_that_would_begin_a_round_is_refused_while_the_shoe_is_connecting(tmp_path):
    """A jam while dealing voids the round and holds the table for the supervisor: his clear
    begins the next round, so it waits on its devices like next_round; nothing is cleared."""
    run = runner(tmp_path)
    up(run)
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.command("close_bets")
    run.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse("As")))
    run.device(ev.Jam(device="shoe", ts=0.0, where="feed"))
    assert run.table.state == "malfunction" and run.table.round.void is not None
    run.journal.close()

    again = restarted(tmp_path)
    why = refused(again, "clear_malfunction", role="supervisor")
    assert "shoe" in why and "not linked since the controller restarted" in why
    assert "jam" in again.table.conditions["shoe"]                  # not cleared
    up(again)
    again.command("clear_malfunction", role="supervisor")
    assert again.table.state == "shuffling" and again.table.round_no == 2
    again.journal.close()


def test_only_the_devices_the_next_round_needs_are_waited_on(tmp_path):
    """Dealt by the shoe, the shuffler, dice and box sensors not linked stop nothing."""
    run = runner(tmp_path)
    voided(run)
    run.journal.close()

    again = restarted(tmp_path)
    up(again)
    assert set(again.table.public_view()["devices"]) >= {"shoe", "shuffler"}
    assert again.table.public_view()["devices"]["shuffler"]["link"] == "connecting"
    again.command("next_round")
    assert again.table.state == "shuffling"
    again.journal.close()


def test_a_spare_shoe_waits_on_nothing_once_one_shoe_is_linked(tmp_path):
    devices = {**DEVICES, "shoe-2": "shoe"}
    run = runner(tmp_path, devices=devices)
    voided(run)
    run.journal.close()

    again = restarted(tmp_path, devices=devices)
    why = refused(again, "next_round")
    assert "shoe" in why and "shoe-2" in why                    # no shoe linked: both named
    up(again, "shoe-2", SHOE_2)                                 # the spare is the one plugged
    assert again.table.public_view()["devices"]["shoe"]["link"] == "connecting"
    again.command("next_round")
    assert again.table.state == "shuffling"
    again.journal.close()


def test_a_device_taken_out_of_table_toml_blocks_nothing(tmp_path):
    devices = {**DEVICES, "shoe-2": "shoe"}
    run = runner(tmp_path, devices=devices)
    up(run, "shoe-2", SHOE_2)
    voided(run)
    run.journal.close()

    # restarted without shoe-2: the journal knows it, the configuration does not
    again = restarted(tmp_path)
    assert "shoe-2" in again.table.identities
    why = refused(again, "next_round")
    assert "shoe-2" not in why
    up(again)
    again.command("next_round")
    assert again.table.state == "shuffling"
    again.journal.close()


def test_a_round_in_play_at_the_restart_goes_on_while_the_shoe_is_connecting(tmp_path):
    run = runner(tmp_path)
    up(run)
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.journal.close()

    again = restarted(tmp_path)
    t = again.table
    assert t.state == "bets_open" and t.devices_connecting() == ["shoe"]
    again.command("place_bet", box=2, wager="versus_croupier", amount=20)
    again.command("remove_bet", box=1, wager="versus_croupier")
    assert t.state == "bets_open" and set(t.round.bet_boxes()) == {2}
    assert tower_light(t) is Light.WAITING
    again.journal.close()


def test_the_shuffler_mode_waits_for_the_shuffler(tmp_path):
    """At a table dealt by the shuffler the next round needs it, not the shoe."""
    run = runner(tmp_path, mode="shuffler")
    up(run, "shuffler", SHUFFLER)
    run.command("open_table", role="supervisor")
    run.device(deck_checked())
    run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    run.command("void_round", role="supervisor", reason="a test round")
    run.journal.close()

    again = restarted(tmp_path, mode="shuffler")
    up(again)                                                   # the shoe changes nothing
    why = refused(again, "next_round")
    assert "shuffler" in why and "shoe" not in why.split(":")[0]
    up(again, "shuffler", SHUFFLER)
    again.command("next_round")
    assert again.table.state == "shuffling"
    again.journal.close()


# --- the replay: a restart at a refusal replays it as it was --------------------------------

def state_of(t):
    return (t.state, t.round_no, t.mode.value, {d: sorted(c) for d, c in t.conditions.items()},
            t.public_view()["devices"])


def test_restarted_at_a_refusal_the_replay_refuses_it_again(tmp_path):
    run = runner(tmp_path)
    voided(run)
    run.journal.close()

    again = restarted(tmp_path)
    refused(again, "next_round")
    before = state_of(again.table)
    again.journal.close()

    # restarted at the refusal: the journal replays to the same table (no divergence)
    third = runner(tmp_path)
    report = third.recover()
    assert report["state_now"] == "round_void"
    # the rebuilt table is the one before, with this restart's links (none yet)
    assert state_of(third.table)[:4] == before[:4]
    with Journal.open(tmp_path / "journal.db", "T1", readonly=True) as j:
        errors = [r.payload["error"] for r in j.records(kinds=["refused"])]
        assert len(errors) == 1 and "shoe has not linked since" in errors[0]
        assert j.verify().ok
    up(third)
    third.command("next_round")
    assert third.table.state == "shuffling"
    third.journal.close()

    # and once more, after the round opened with the shoe linked: replayed as accepted
    fourth = runner(tmp_path)
    fourth.recover()
    assert fourth.table.state == "shuffling" and fourth.table.round_no == 2
    fourth.journal.close()


def test_a_refusal_after_the_rounds_snapshot_replays_with_that_processs_links(tmp_path):
    """The replay starts at the last round's snapshot: the links of the process that opened
    it go with it, so a refusal after it (the mode switched to the shuffler, which has not
    linked to that process) is replayed as refused, not taken as a table with every device up."""
    run = runner(tmp_path)
    voided(run)
    run.journal.close()

    again = restarted(tmp_path)
    up(again)
    again.command("next_round")                                 # opened with the shoe linked
    again.command("void_round", role="supervisor", reason="a test round")
    again.command("switch_mode", role="supervisor", mode="shuffler")
    why = refused(again, "next_round")
    assert "shuffler" in why
    again.journal.close()

    third = runner(tmp_path)
    third.recover()                                             # no ReplayDiverged
    assert (third.table.state, third.table.mode.value) == ("round_void", "shuffler")
    up(third, "shuffler", SHUFFLER)
    third.command("next_round")
    assert third.table.state == "shuffling"
    third.journal.close()


# --- the real daemon and the firmware simulator -----------------------------------------------

@pytest.mark.hil
def test_the_daemon_restarted_with_the_shoe_unplugged_refuses_the_next_round_until_it_links(
        tmp_path):
    """Killed between rounds, started again with the shoe's port gone: next_round through the
    control socket is refused naming the shoe; a restart at that refusal replays it as
    refused (the daemon starts); the shoe plugged in and linked, the round opens."""
    import signal

    from controller.rig import Rig

    rig = Rig(tmp_path, "q-poker", "shoe", seed=3)
    try:
        rig.open_with_deck(["As", "Kd", "Qh", "2c", "3c", "4c"])
        rig.must("void_round", "supervisor", reason="a test round")
        rig.kill(signal.SIGKILL)
        shoe = rig.devices["shoe"]
        shoe.disconnect()                       # its port is gone while the daemon is down
        rig.start_controller()
        assert rig.view()["devices"]["shoe"]["link"] == "connecting"
        reply = rig.command("next_round")
        assert not reply["ok"]
        assert "shoe has not linked since the controller restarted" in reply["error"]
        assert "tower light turns green" in reply["error"]
        assert rig.state() == "round_void"

        rig.kill(signal.SIGKILL)                # restarted at the refusal
        rig.start_controller()                  # the replay refuses it again: no divergence
        assert rig.state() == "round_void"
        assert not rig.command("next_round")["ok"]

        shoe.reconnect()
        rig.wait_links()
        rig.must("next_round")
        shoe.load_deck(fresh=True)
        rig.must("deck_ready")
        rig.wait_state("bets_open")
        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
            errors = [r.payload["error"] for r in j.records(kinds=["refused"])]
            assert sum("shoe has not linked since" in e for e in errors) == 2
    finally:
        rig.stop()
