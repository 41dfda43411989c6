"""A name chosen in table.toml must not be taken for a card.

The table refuses to publish any text that spells a card (controller.table.secrecy), since a
face-down card must never leave it. A device's id is published with every event about it
(``device_link``, ``device_condition``, the ``devices`` of the view, ``devices_changed``): a
device configured as ``[devices.Kd]`` passed the check, and then its first link faulted the
table (``controller_fault``, the table in ``malfunction``). The check refuses such an id, with
its line and the way out; the table id, published only as the events' ``table``, which the
secrecy check reads as a name, is taken as it is.
"""
import subprocess
import sys

import pytest

from config_helpers import BASE, line_of, only
from controller.config import parse_text
from controller.rules import get_game
from controller.table import Table
from drivers import events as ev


# A card in every notation Card.parse and the secrecy check read: either case, 10 or T.
CARD_NAMES = ["Kd", "kd", "KD", "kD", "10h", "10H", "Th", "th", "TH", "As", "2c", "9S", "Qh"]
# Close to a card, but none: taken, and published without trouble.
NEAR_NAMES = ["shoe-1", "kd-1", "Kd2", "shoe-kd", "1h", "11h", "Kx", "KDS", "10", "T", "shoeKd"]

IDENTITY = ev.DeviceIdentity("shoe", "sim", "R1", "0002", "1.0", "cd" * 16, True)


def with_device(dev_id):
    return BASE.replace("[devices.shoe]", f"[devices.{dev_id}]")


@pytest.mark.parametrize("dev_id", CARD_NAMES)
def test_a_device_id_that_spells_a_card_is_refused_at_its_line_with_the_way_out(dev_id):
    text = with_device(dev_id)
    p = only(text)
    assert p.key == f"devices.{dev_id}" and p.line == line_of(text, f"[devices.{dev_id}]")
    assert f"'{dev_id}'" in p.reason and "card" in p.reason, p.reason
    assert "rename" in p.fix and "[devices.shoe-1]" in p.fix, p.fix


@pytest.mark.parametrize("dev_id", CARD_NAMES + NEAR_NAMES)
def test_every_device_id_the_check_takes_links_and_is_lost_without_a_fault(dev_id):
    """What the check lets through, the table can publish: a device of that id links, shows
    in the view and loses its link, and the table never faults."""
    try:
        config = parse_text(with_device(dev_id))
    except Exception:
        assert dev_id in CARD_NAMES
        return
    t = Table(config.table_id, get_game(config.game), config.mode.value, layout_boxes=7,
              devices={d: s.device_class for d, s in config.devices.items()})
    t.handle_device(ev.LinkUp(device=dev_id, ts=0.0, identity=IDENTITY))
    assert t.public_view()["devices"][dev_id]["link"] == "up"
    t.handle_device(ev.LinkLost(device=dev_id, ts=1.0, reason="unplugged"))
    kinds = [e.kind for e in t.outbox]
    assert "controller_fault" not in kinds, kinds
    assert t.public_view()["conditions"] == {dev_id: ["link_lost"]}


@pytest.mark.parametrize("table_id", ["Kd", "kd", "10h", "Th"])
def test_a_table_id_that_spells_a_card_is_taken_and_plays_a_round(table_id):
    """The table id travels only as each event's ``table`` (and the logs' ``table``), which
    the secrecy check reads as the table's name: a table so called links its shoe, and takes
    bets. It is taken as it is; renaming a table would part it from its journal."""
    config = parse_text(BASE.replace('id = "t1"', f'id = "{table_id}"'))
    t = Table(config.table_id, get_game("q-poker"), "shoe", layout_boxes=7,
              devices={"shoe": "shoe"})
    t.handle_device(ev.LinkUp(device="shoe", ts=0.0, identity=IDENTITY))
    t.command("open_table", role="supervisor")
    t.command("deck_ready")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("close_bets")
    kinds = [e.kind for e in t.outbox]
    assert "controller_fault" not in kinds and t.state == "bets_closed", (t.state, kinds)
    assert {e.table for e in t.outbox} == {table_id}
    assert t.public_view()["state"] == "bets_closed"


def test_config_check_names_the_device_its_line_and_the_way_out(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(with_device("Kd"))
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode != 0
    line = line_of(with_device("Kd"), "[devices.Kd]")
    assert f"{path}:{line}: devices.Kd: " in out.stderr + out.stdout, out.stderr
    assert "[devices.shoe-1]" in out.stderr + out.stdout


def test_the_daemon_does_not_start_on_it_and_names_the_key(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(with_device("10h") + f'\n[journal]\npath = "{tmp_path / "j.db"}"\n')
    out = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config", str(path)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    assert "devices.10h" in out.stderr and "[devices.shoe-1]" in out.stderr, out.stderr
    assert not (tmp_path / "j.db").exists()       # nothing was begun


def test_a_reload_refuses_it_and_keeps_the_configuration_in_force(tmp_path):
    """``tablectl reload`` (SIGHUP) checks the file as ``config check`` does: a device added as
    ``[devices.Kd]`` is refused with its line, the dealer's new token is not put in force, and
    the same device renamed is taken (for the next start)."""
    import asyncio

    import aiohttp
    from controller.config import hash_token
    from test_token_reload import A, B, bearer, reloads, running, write

    path = write(tmp_path, {"dealer": A})
    device = '\n[devices.{}]\nclass = "shoe"\nport = "/dev/tablectl/shoe"\n'

    async def status(http, url, token):
        async with http.get(f"{url}/api/whoami", headers=bearer(token)) as resp:
            return resp.status

    async def scenario():
        svc, task = await running(path)
        url = svc.api.url
        write(tmp_path, {"dealer": B}, extra=device.format("Kd"))
        refused = svc.reload()
        async with aiohttp.ClientSession() as http:
            assert await status(http, url, A) == 200 and await status(http, url, B) == 401
        assert svc.config.devices == {} and hash_token(A) in svc.config.api.tokens.values()
        write(tmp_path, {"dealer": B}, extra=device.format("shoe-1"))
        taken = svc.reload()
        async with aiohttp.ClientSession() as http:
            assert await status(http, url, B) == 200
        svc.stop()
        await task
        return refused, taken

    refused, taken = asyncio.run(scenario())
    line = line_of(path.read_text().replace("shoe-1", "Kd"), "[devices.Kd]")
    assert refused["outcome"] == "refused"
    assert [(q["key"], q["line"]) for q in refused["problems"]] == [("devices.Kd", line)]
    assert "[devices.shoe-1]" in refused["problems"][0]["fix"]
    assert taken["outcome"] == "applied" and "devices.shoe-1.class" in taken["restart"]
    assert [r.payload["outcome"] for r in reloads(tmp_path / "j.db")] == ["refused", "applied"]


def runner(tmp_path, cfg):
    """The table's runner on the test's journal, its settings journaled first as the daemon
    journals them (a round names them; recovery rebuilds it under them)."""
    from controller.journal import Journal
    from controller.service import build_table, table_settings
    from controller.table.runner import TableRunner

    journal = Journal.open(tmp_path / "j.db", cfg.table_id)
    settings = table_settings(cfg)
    config = journal.append("config", {"table": settings}, source="service")
    return TableRunner(build_table(cfg.table_id, settings), journal, settings=settings,
                       config_seq=config.seq, build=lambda s: build_table(cfg.table_id, s))


def taken_before(renamed):
    """The file with its shoe ``shoe-1`` called ``Kd``, as the check took it before."""
    import dataclasses

    return dataclasses.replace(renamed, devices={
        "Kd": dataclasses.replace(renamed.devices["shoe-1"], id="Kd")})


def test_a_journal_written_under_such_an_id_replays_once_the_device_is_renamed(tmp_path):
    """A journal written before the check refused it: the device linked as ``Kd`` and the
    table faulted. The start now refuses the file, naming ``devices.Kd``; with the device
    renamed ``shoe-1`` every record replays to the state it left (the fault included: the
    journal is what happened), ``Kd`` is gone from the view, and the table goes on."""
    from controller.config import ConfigError
    from controller.journal import Journal

    renamed = parse_text(with_device("shoe-1"))
    run = runner(tmp_path, taken_before(renamed))
    run.device(ev.LinkUp(device="Kd", ts=0.0, identity=IDENTITY))
    run.device(ev.LinkLost(device="Kd", ts=1.0, reason="unplugged"))
    assert run.table.state == "malfunction"
    run.journal.close()

    with pytest.raises(ConfigError, match=r"devices\.Kd: device id 'Kd' spells a card"):
        parse_text(with_device("Kd"))
    again = runner(tmp_path, renamed)
    report = again.recover()
    assert report["state_at_crash"] == report["state_now"] == "malfunction"
    t = again.table
    again.device(ev.LinkUp(device="shoe-1", ts=2.0, identity=IDENTITY))
    view = t.public_view()
    assert list(view["devices"]) == ["shoe-1"] and view["conditions"] == {}
    again.command("clear_malfunction", role="supervisor")
    assert t.state == "out_of_service"      # it faulted before it was opened: still closed
    again.command("open_table", role="supervisor")
    again.command("deck_ready")
    again.command("place_bet", box=1, wager="versus_croupier", amount=10)
    assert t.state == "bets_open"
    with Journal.open(tmp_path / "j.db", readonly=True) as j:      # nothing of it lost
        assert sum(1 for r in j.records() if r.source == "Kd") == 2
    again.journal.close()


def bets_in_play_under_kd(run) -> None:
    """Open a round with ``run`` (a table that took the shoe ``Kd`` before the check refused
    such an id), the shoe linked, and a bet on box 1: the round the restart keeps ``Kd`` for."""
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.device(ev.LinkUp(device="Kd", ts=0.0, identity=IDENTITY))     # faulted the table
    run.command("clear_malfunction", role="supervisor")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)


def test_a_round_left_in_play_under_such_an_id_shows_in_the_view_until_it_ends(tmp_path):
    """The old table's round in play keeps the devices it opened with after the restart, the
    shoe called ``Kd`` among them, until the next round: the view listed it by that id and
    could not be built (the console had no table to show, and a command's answer failed). The
    device is shown marked as the earlier file's; the round is voided and the next one is
    dealt by ``shoe-1`` alone."""
    renamed = parse_text(with_device("shoe-1"))
    run = runner(tmp_path, taken_before(renamed))
    bets_in_play_under_kd(run)
    assert run.table.state == "bets_open" and run.table.round is not None
    run.journal.close()

    again = runner(tmp_path, renamed)
    again.recover()
    t = again.table
    again.device(ev.LinkUp(device="shoe-1", ts=1.0, identity=IDENTITY))
    view = t.public_view()
    assert list(view["devices"]) == ["Kd (device id of an earlier table.toml)"], view["devices"]
    again.command("void_round", role="supervisor", reason="shoe renamed in table.toml")
    again.command("next_round")
    view = t.public_view()
    assert list(view["devices"]) == ["shoe-1"] and view["devices"]["shoe-1"]["link"] == "up"
    # the round that takes the renamed file says so, the old id marked as the view marks it
    # (unmarked, its publication was refused as a card's and the table faulted)
    opened = [r.payload for r in again.journal.records() if r.kind == "round_open"][-1]
    assert opened["devices_changed"] == {
        "left": [{"device": "Kd (device id of an earlier table.toml)", "class": "shoe",
                  "conditions": []}],
        "joined": [{"device": "shoe-1", "class": "shoe"}]}
    again.command("deck_ready")
    assert t.state == "bets_open"
    again.journal.close()


@pytest.mark.hil
def test_the_running_daemon_refuses_a_reload_to_it_and_a_start_on_it(tmp_path):
    """The real daemon (``tablectl run``, simulated devices on pseudo-terminals): table.toml
    rewritten with the shoe renamed ``Kd``. ``tablectl reload`` exits 1 naming the key, its line
    and the way out; the daemon goes on with its shoe as it was. Stopped, it does not start
    on that file, and says why."""
    import signal

    from controller.errors import TablectlError
    from controller.rig import Rig

    with Rig(tmp_path, "q-poker", "shoe", seed=3) as rig:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        text = rig.config_path.read_text().replace("[devices.shoe]", "[devices.Kd]")
        rig.config_path.write_text(text)
        out = subprocess.run([sys.executable, "-m", "controller.cli", "reload", "--control",
                              str(rig.control_path)], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 1, (out.stdout, out.stderr)
        assert f"{line_of(text, '[devices.Kd]')}: devices.Kd: device id 'Kd' spells a card" \
            in out.stderr and "[devices.shoe-1]" in out.stderr, out.stderr
        view = rig.view()
        assert view["devices"]["shoe"]["link"] == "up" and "Kd" not in view["devices"]
        rig.must("open_table", role="supervisor")
        assert rig.state() == "shuffling"

        rig.kill(signal.SIGTERM)
        rig._close_sockets()
        with pytest.raises(TablectlError, match="exited with"):
            rig.start_controller()
        log = rig.log_path.read_text()
        assert "devices.Kd: device id 'Kd' spells a card" in log and "[devices.shoe-1]" in log


def test_a_jam_kept_on_such_an_id_is_cleared_without_faulting_the_table(tmp_path):
    """A jam the old table's ``Kd`` reported stays on it after the rename; the round in play
    keeps the device until it ends, so the supervisor's clear clears it and names it, marked as
    the view marks it: unmarked, the ``malfunction_cleared`` event was refused as a card's and
    the clear never came to be."""
    renamed = parse_text(with_device("shoe-1"))
    run = runner(tmp_path, taken_before(renamed))
    run.command("open_table", role="supervisor")
    run.device(ev.LinkUp(device="Kd", ts=0.0, identity=IDENTITY))
    run.device(ev.Jam(device="Kd", ts=0.0, where="exit"))
    assert "jam" in run.table.conditions["Kd"]
    run.journal.close()

    again = runner(tmp_path, renamed)
    again.recover()
    again.device(ev.LinkUp(device="shoe-1", ts=1.0, identity=IDENTITY))
    again.command("clear_malfunction", role="supervisor")
    cleared = [r.payload for r in again.journal.records()
               if r.kind == "table" and r.payload.get("kind") == "malfunction_cleared"][-1]
    assert cleared["cleared"] == {"Kd (device id of an earlier table.toml)": ["jam"]}, cleared
    assert "jam" not in again.table.conditions["Kd"]
    assert "controller_fault" not in str(again.table.conditions), again.table.conditions
    assert again.table.state != "malfunction", again.table.state
    again.journal.close()


def test_the_pit_displays_health_marks_such_an_id_as_the_view_does(tmp_path):
    """The pit page lists the devices from their health (``/api/health``, and the table
    document's ``devices``) beside the view. The round left in play under ``Kd`` listed it
    there by its bare id, a card's spelling on the pit display, while the view marked it:
    health marks it as the view does, and names it so in the way out of its jam."""
    from controller.api.health import device_health

    renamed = parse_text(with_device("shoe-1"))
    run = runner(tmp_path, taken_before(renamed))
    run.command("open_table", role="supervisor")
    run.device(ev.LinkUp(device="Kd", ts=0.0, identity=IDENTITY))
    run.device(ev.Jam(device="Kd", ts=0.0, where="exit"))
    run.journal.close()

    again = runner(tmp_path, renamed)
    again.recover()
    again.device(ev.LinkUp(device="shoe-1", ts=1.0, identity=IDENTITY))
    t = again.table
    health = device_health(t, {})
    marked = "Kd (device id of an earlier table.toml)"
    assert [e["device"] for e in health] == list(t.public_view()["devices"]) == [marked]
    assert health[0]["conditions"] == ["jam"] and marked in health[0]["problem"]
    assert health[0]["link"] == "connecting"
    again.journal.close()


# A card standing apart inside an id (letters or digits on neither side of it): the messages
# the table gives outside (the console's and the control socket's refusals, the log) mask
# every card so spelled, the id's too.
CARD_INSIDE = ["shoe-Kd", "Kd-shoe", "shoe_Kd", "shoe-10h", "Th-1", "shoe-KD"]


@pytest.mark.parametrize("dev_id", CARD_INSIDE)
def test_a_device_id_with_a_card_standing_apart_in_it_is_refused_with_the_way_out(dev_id):
    text = with_device(dev_id)
    p = only(text)
    assert p.key == f"devices.{dev_id}" and p.line == line_of(text, f"[devices.{dev_id}]")
    assert f"'{dev_id}'" in p.reason and "[card]" in p.reason, p.reason
    assert "rename" in p.fix and "[devices.shoe-1]" in p.fix, p.fix


@pytest.mark.parametrize("dev_id", CARD_INSIDE + NEAR_NAMES)
def test_every_device_id_the_check_takes_is_named_legibly_when_a_round_waits_for_it(
        dev_id, tmp_path):
    """A refusal that names the device reaches the console and the control socket with every
    card in it masked (secrecy.scrub): the shoe called ``shoe-Kd`` was named
    ``shoe-[card]``, and the croupier could not tell which device the round waited for."""
    from controller.journal import Journal
    from controller.errors import TablectlError
    from controller.table.runner import TableRunner
    from controller.table.secrecy import scrub

    try:
        config = parse_text(with_device(dev_id))
    except Exception:
        assert dev_id in CARD_INSIDE
        return
    t = Table(config.table_id, get_game(config.game), config.mode.value, layout_boxes=7,
              devices={d: s.device_class for d, s in config.devices.items()})
    run = TableRunner(t, Journal.open(tmp_path / "j.db", config.table_id))
    run.recover()                                   # a start: the shoe has not linked yet
    with pytest.raises(TablectlError) as exc:
        run.command("open_table", role="supervisor")
    assert f"{dev_id} has not linked" in scrub(str(exc.value)), scrub(str(exc.value))
    run.journal.close()
