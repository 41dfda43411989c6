"""The devices a table needs after a restart or a configuration change, as the pit, the
regulator and a crash see them.

A device of the configuration in force that has not linked to the controller running since its
start is ``connecting`` in the view and turns the light's green into amber, whether the journal
knew it from an earlier run or not: a spare configured under a new id, never linked, was
missing from the view and left the light green in bets_open while the only shoe of the table
was not there.
"""
import signal

import pytest

from controller.errors import TablectlError
from controller.journal import Journal
from controller.panel import Light
from controller.tower import tower_light
from drivers import events as ev
from test_api_support import free_port
from test_tower_after_restart import ApiRig, api, api_up, wait_for
from test_view_devices_configured import (TABLE, SHOE, SPARE, as_the_service_builds_it,
                                          runner, shown)


def test_a_spare_configured_under_a_new_id_is_connecting_until_it_links(tmp_path):
    run = runner(tmp_path, {"shoe": "shoe"})
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.device(ev.LinkLost(device="shoe", ts=0.0, reason="unplugged"))
    run.journal.close()

    again = runner(tmp_path, {"shoe-2": "shoe"})      # the spare, never heard from
    again.recover()
    t = again.table
    assert shown(t) == ({"shoe-2": "connecting"}, {})
    assert t.devices_connecting(next_round=True) == ["shoe-2"]
    # the table has no shoe: no round opens that could not be dealt
    with pytest.raises(TablectlError, match="shoe-2 has not linked since the controller"):
        again.command("open_table", role="supervisor")
    assert t.state == "out_of_service"
    again.device(ev.LinkUp(device="shoe-2", ts=0.0, identity=SPARE))
    assert shown(t) == ({"shoe-2": "up"}, {})
    assert t.public_view()["devices"]["shoe-2"]["serial"] == "0003"
    again.command("open_table", role="supervisor")
    again.command("deck_ready")
    assert t.state == "bets_open" and tower_light(t) is Light.READY
    again.journal.close()


def test_a_device_not_yet_linked_has_no_identity_in_the_view(tmp_path):
    again = runner(tmp_path, {"shoe": "shoe"})
    again.recover()                                   # the first start: nothing journaled
    assert again.table.public_view()["devices"] == {"shoe": {"link": "connecting"}}
    again.journal.close()


def test_the_next_round_under_a_new_file_waits_for_its_spare(tmp_path):
    """The round in play at the restart keeps the old shoe (connecting: the light is amber);
    the next one opens under the file naming only the spare, once the spare has linked."""
    run = as_the_service_builds_it(tmp_path, "shoe")
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.journal.close()

    again = as_the_service_builds_it(tmp_path, "shoe-2")
    report = again.recover()
    assert report["configuration"]["changed"] == ["devices"]
    t = again.table
    assert shown(t)[0] == {"shoe": "connecting"}      # the round in play's own
    assert tower_light(t) is Light.WAITING
    again.command("void_round", role="supervisor", reason="the shoe is taken out of service")
    assert t.devices_connecting(next_round=True) == ["shoe-2"]
    with pytest.raises(TablectlError, match="cannot start the next round: shoe-2 has not"):
        again.command("next_round")
    assert t.state == "round_void"
    again.device(ev.LinkUp(device="shoe-2", ts=0.0, identity=SPARE))
    again.command("next_round")
    again.command("deck_ready")
    assert t.state == "bets_open"
    assert shown(t) == ({"shoe-2": "up"}, {})
    assert tower_light(t) is Light.READY
    again.journal.close()


@pytest.mark.hil
def test_the_daemon_restarted_with_a_spare_not_yet_plugged_in_shows_amber(tmp_path):
    """The real daemon, killed in bets_open; its table.toml then names the shoe ``shoe-2`` (a
    spare, unplugged while the daemon is down). The round in play goes on without its shoe
    (the pit page's light amber) and is voided; the next one, under the new file, waits for
    the spare: listed, connecting, next_round refused naming it until it links."""
    rig = ApiRig(tmp_path, "q-poker", "shoe", seed=3)
    rig.port = free_port()
    try:
        rig.open_with_deck(["As", "Kd", "Qh", "2c", "3c", "4c"])
        wait_for(lambda: api_up(rig), "the API is up")
        rig.kill(signal.SIGKILL)
        spare = rig.devices["shoe-2"] = rig.devices.pop("shoe")
        spare.disconnect()
        rig.write_config()                      # [devices.shoe-2] in place of [devices.shoe]
        rig.config_path.write_text(rig.config_path.read_text().replace(
            'class = "shoe-2"', 'class = "shoe"'))
        rig.start_controller()
        wait_for(lambda: api_up(rig), "the API is up again")
        table = api(rig, "/api/table")
        assert table["state"] == "bets_open"
        assert table["light"] == {"signal": "waiting", "colour": "amber", "buzzer": "off"}
        assert api(rig, "/api/health")["light"]["colour"] == "amber"
        rig.must("void_round", "supervisor", reason="the shoe is replaced by a spare")
        reply = rig.command("next_round")
        assert not reply["ok"] and "shoe-2 has not linked since the controller" in reply["error"]
        assert api(rig, "/api/table")["state"] == "round_void"
        spare.reconnect()
        # the view is the round in play's (the old shoe) until the next round opens: the
        # spare's link is read from the journal
        wait_for(lambda: "shoe-2" in rig._linked_since_start(), "the spare links")
        rig.must("next_round")
        rig.must("deck_ready")
        rig.wait_state("bets_open")
        wait_for(lambda: api(rig, "/api/table")["light"]["colour"] == "green",
                 "green once the spare is linked")
        devices = api(rig, "/api/table")["view"]["devices"]
        assert "shoe" not in devices and devices["shoe-2"]["link"] == "up"
        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
    finally:
        rig.stop()


# --- inputs taken before any round, replayed under the configuration they were taken under ---

def service_runner(tmp_path, **devices):
    """The runner as the service builds it, on a table.toml of ``devices`` (id=class), its
    settings journaled first (as each start of the daemon journals them)."""
    from controller.config import parse_text
    from controller.journal import Journal
    from controller.service import build_table, table_settings
    from controller.table.runner import TableRunner

    text = "".join(f'[devices.{d}]\nclass = "{c}"\ntransport = "serial"\n'
                   f'port = "/dev/tty-{d}"\n\n' for d, c in devices.items())
    cfg = parse_text(TABLE.format(devices=text, journal=tmp_path / "j.db"))
    journal = Journal.open(tmp_path / "j.db", cfg.table_id)
    settings = table_settings(cfg)
    config = journal.append("config", {"table": settings}, source="service")
    return TableRunner(build_table(cfg.table_id, settings), journal, settings=settings,
                       config_seq=config.seq, build=lambda s: build_table(cfg.table_id, s))


def test_an_open_table_refused_before_the_spare_replays_as_refused(tmp_path):
    """The shoe lost its link before any round; the supervisor's open_table was refused
    (devices not ready). The shoe is replaced by a spare under another id: the daemon
    restarted on the new file replayed that refusal under the new devices, found it accepted,
    and would not start (the replay diverged). Each input replays under the configuration it
    was taken under; the new one takes effect at the restart (no round in play)."""
    run = service_runner(tmp_path, shoe="shoe")
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.device(ev.LinkLost(device="shoe", ts=0.0, reason="unplugged"))
    with pytest.raises(Exception, match="devices not ready"):
        run.command("open_table", role="supervisor")
    run.journal.close()

    for _ in range(2):                          # and again, once the new file is in force
        again = service_runner(tmp_path, **{"shoe-2": "shoe"})
        again.recover()
        t = again.table
        assert t.devices == {"shoe-2": "shoe"}
        assert shown(t) == ({"shoe-2": "connecting"}, {})
        again.journal.close()
    again = service_runner(tmp_path, **{"shoe-2": "shoe"})
    again.recover()
    again.device(ev.LinkUp(device="shoe-2", ts=0.0, identity=SPARE))
    again.command("open_table", role="supervisor")
    again.command("deck_ready")
    assert again.table.state == "bets_open" and tower_light(again.table) is Light.READY
    again.journal.close()


# --- the conditions of a device taken out of table.toml ------------------------------------

def test_a_clear_leaves_a_removed_devices_condition_and_it_comes_back_with_the_device(tmp_path):
    """The shuffler jammed at a table dealt by the shoe, then was taken out of table.toml: its
    jam is in the journal but in no view. The supervisor's clear cleared it unseen (one
    outside malfunction was even taken for it, the table having nothing else to clear), so
    the shuffler configured again came back without the jam nobody had looked at. A clear
    clears the conditions the view shows; a device configured again brings back what the
    journal left on it, shown, until it links (a lost link) or the supervisor clears it."""
    from test_view_devices_configured import SHUFFLER

    run = service_runner(tmp_path, shoe="shoe", shuffler="shuffler")
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    run.device(ev.Jam(device="shuffler", ts=0.0, where="feed"))
    assert shown(run.table)[1] == {"shuffler": ["jam"]}
    run.journal.close()

    without = service_runner(tmp_path, shoe="shoe")
    without.recover()
    without.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    assert shown(without.table) == ({"shoe": "up"}, {})
    with pytest.raises(Exception, match="nothing to clear"):
        without.command("clear_malfunction", role="supervisor")
    without.journal.close()

    back = service_runner(tmp_path, shoe="shoe", shuffler="shuffler")
    back.recover()
    assert shown(back.table) == ({"shoe": "connecting", "shuffler": "connecting"},
                                 {"shuffler": ["jam"]})
    back.command("clear_malfunction", role="supervisor")   # now in view: cleared, journaled
    assert shown(back.table)[1] == {}
    back.journal.close()


# --- a restart at every point of a round played under the old file ------------------------

def _round_steps():
    from controller.rules.cards import Card

    steps = [("device", ev.LinkUp(device="shoe", ts=0.0, identity=SHOE)),
             ("open_table", "supervisor", {}), ("deck_ready", "dealer", {}),
             ("place_bet", "dealer", {"box": 1, "wager": "versus_croupier", "amount": 10}),
             ("close_bets", "dealer", {})]
    steps += [("device", ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c),
                                      face_up=False))
              for c in ("As", "Kd", "Qh", "2c", "3c", "4c")]
    return steps + [("decide", "dealer", {"box": 1, "decision": "play"}),
                    ("confirm_result", "dealer", {})]


def _view(table):
    view = table.public_view()
    view.pop("event_id", None)
    return table.state, view, sorted(table.conditions.items())


def test_a_restart_at_every_point_of_a_round_under_the_old_file_ends_it_and_opens_once(
        tmp_path):
    """The shoe is renamed ``shoe-2`` (a spare) while the controller is down, at every point of
    a round played under the old file. Each rebuild is the same table; the round ends under
    its own file (voided by the supervisor, or by the restart while dealing); the next round
    is the first under the new file, and a later start finds nothing left to change."""
    steps = _round_steps()
    for k in range(len(steps) + 1):
        path = tmp_path / str(k)
        path.mkdir()
        run = service_runner(path, shoe="shoe")
        for name, role, *args in ((s[0], None, s[1]) if s[0] == "device" else s
                                  for s in steps[:k]):
            if name == "device":
                run.device(args[0])
            else:
                run.command(name, role=role, **args[0])
        run.journal.close()

        rebuilt = []
        for _ in range(2):
            again = service_runner(path, **{"shoe-2": "shoe"})
            report = again.recover()
            rebuilt.append(_view(again.table))
            again.journal.close()
        assert rebuilt[0] == rebuilt[1], k
        in_play = report.get("configuration") is not None
        assert in_play == (k > 1), k                  # a round had opened: it keeps its file

        again = service_runner(path, **{"shoe-2": "shoe"})
        again.recover()
        t = again.table
        if not in_play:
            assert shown(t)[0] == {"shoe-2": "connecting"}, k
        again.device(ev.LinkUp(device="shoe-2", ts=0.0, identity=SPARE))
        if t.round is not None and t.round.void is None and t.state != "round_complete":
            again.command("void_round", role="supervisor", reason="the shoe is replaced")
        if t.state == "malfunction":
            again.command("clear_malfunction", role="supervisor")
        else:
            again.command("open_table" if t.state == "out_of_service" else "next_round",
                          role="supervisor")
        assert t.devices == {"shoe-2": "shoe"} and shown(t)[0] == {"shoe-2": "up"}, k
        opened = again.journal.last(kind="round_open")
        assert opened.payload["snapshot"]["config"] == again.config_seq, k
        again.journal.close()

        third = service_runner(path, **{"shoe-2": "shoe"})
        assert "configuration" not in third.recover(), k
        third.journal.close()
