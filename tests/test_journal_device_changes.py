"""The journal says in words what changed at the table's devices.

A device taken out of table.toml leaves the table's view when the configuration without it
takes effect: at the next round after the restart. The ``round_open`` of that round is the
record that puts the configuration in force, and it names the devices that left (with the
conditions each left with, which no longer block anything) and those that joined, so a reader
does not have to diff two ``config`` records; before the journal holds any round, the start's
``recovery`` record says it. A ``clear_malfunction`` names, in its ``malfunction_cleared``
record, the conditions it cleared on each device and those it left on devices not configured.
``tablectl journal show`` (and ``rounds``, for the devices) says both in words. Journals
written before these keys (the old record shape) still verify, replay and show.
"""
import json
import subprocess
import sys
from pathlib import Path

from controller.journal import Journal
from drivers import events as ev
from test_journal_audit import rewrite
from test_view_devices_configured import SHOE, SPARE, as_the_service_builds_it

ROOT = Path(__file__).resolve().parents[1]


def started(tmp_path, *ids):
    """The runner on the test's journal with a table.toml of shoes ``ids``, journaled first
    and recovered as the daemon does at its start."""
    run = as_the_service_builds_it(tmp_path, *ids)
    run.recover()
    return run


def tablectl(*args):
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def round_opens(journal):
    return [r for r in journal.records() if r.kind == "round_open"]


def cleared_records(journal):
    return [r.payload for r in journal.records()
            if r.kind == "table" and r.payload.get("kind") == "malfunction_cleared"]


def played_with_shoe_2_jammed_and_lost(tmp_path):
    """Round 1 under shoe and shoe-2; shoe-2 jams and loses its link while bets are out."""
    run = started(tmp_path, "shoe", "shoe-2")
    for device, unit in (("shoe", SHOE), ("shoe-2", SPARE)):
        run.device(ev.LinkUp(device=device, ts=0.0, identity=unit))
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.device(ev.Jam(device="shoe-2", ts=0.0, where="exit"))
    run.device(ev.LinkLost(device="shoe-2", ts=0.0, reason="unplugged"))
    assert run.table.state == "malfunction"
    run.journal.close()


def restarted_without_shoe_2(tmp_path):
    """The restart under shoe and shoe-3 (shoe-2 taken out of the file, a spare put in): the
    round in play is voided and the next one opens under the new file."""
    again = started(tmp_path, "shoe", "shoe-3")
    again.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    again.command("void_round", role="supervisor", reason="shoe-2 taken out of service")
    again.command("next_round")
    return again


LEFT_AND_JOINED = {"left": [{"device": "shoe-2", "class": "shoe",
                             "conditions": ["jam", "link_lost"]}],
                   "joined": [{"device": "shoe-3", "class": "shoe"}]}


def test_the_round_that_puts_the_new_configuration_in_force_names_who_left_and_joined(
        tmp_path):
    played_with_shoe_2_jammed_and_lost(tmp_path)
    again = restarted_without_shoe_2(tmp_path)
    first, second = round_opens(again.journal)
    # The first round opened under the file it was started with: nothing changed there.
    assert "devices_changed" not in first.payload
    # The second is the first under the new file: shoe-2 left (with what it had), shoe-3
    # joined, and the view agrees.
    assert second.payload["devices_changed"] == LEFT_AND_JOINED
    assert set(again.table.public_view()["devices"]) == {"shoe", "shoe-3"}
    again.journal.close()

    shown = tablectl("journal", "show", second.round_id, "--journal", str(tmp_path / "j.db"))
    assert shown.returncode == 0, shown.stderr
    line = next(ln for ln in shown.stdout.splitlines() if "round_open" in ln)
    assert ("shoe-2 (shoe) left the table with jam, link_lost, which no longer block "
            "anything" in line), line
    assert "shoe-3 (shoe) joined the table" in line, line
    assert "devices_changed=" not in line       # in words, not as JSON


def test_journal_rounds_lists_the_rounds_that_changed_the_devices(tmp_path):
    played_with_shoe_2_jammed_and_lost(tmp_path)
    again = restarted_without_shoe_2(tmp_path)
    second = round_opens(again.journal)[1]
    again.journal.close()
    listed = tablectl("journal", "rounds", "--journal", str(tmp_path / "j.db"))
    assert listed.returncode == 0, listed.stderr
    line = next(ln for ln in listed.stdout.splitlines() if ln.startswith("Devices:"))
    assert line.startswith(f"Devices: record {second.seq} (round {second.round_id}) at "), line
    assert line.endswith("UTC: the first round under a new configuration: shoe-2 (shoe) left "
                         "the table with jam, link_lost, which no longer block anything; "
                         "shoe-3 (shoe) joined the table"), line
    assert len([ln for ln in listed.stdout.splitlines() if ln.startswith("Devices:")]) == 1


def test_a_configuration_taken_at_once_says_so_in_the_start_s_recovery_record(tmp_path):
    """No round has opened: the configuration of a start takes effect at once, and the
    start's ``recovery`` record, written once the table is rebuilt under it, says what left."""
    run = started(tmp_path, "shoe", "shoe-2")
    for device, unit in (("shoe", SHOE), ("shoe-2", SPARE)):
        run.device(ev.LinkUp(device=device, ts=0.0, identity=unit))
    run.device(ev.LinkLost(device="shoe-2", ts=0.0, reason="unplugged"))
    run.journal.close()

    again = started(tmp_path, "shoe")
    assert set(again.table.public_view()["devices"]) == {"shoe"}
    recovery = again.journal.last(kind="recovery")
    assert recovery.payload["report"]["devices_changed"] == {
        "left": [{"device": "shoe-2", "class": "shoe", "conditions": ["link_lost"]}],
        "joined": []}
    again.journal.close()
    # A start on the same file again changes nothing, and says nothing of it.
    third = started(tmp_path, "shoe")
    assert "devices_changed" not in third.journal.last(kind="recovery").payload["report"]
    third.journal.close()

    listed = tablectl("journal", "rounds", "--journal", str(tmp_path / "j.db"))
    assert listed.returncode == 0, listed.stderr
    assert (f"Devices: record {recovery.seq} at " in listed.stdout
            and "UTC: the configuration of this start took effect at once (no round had "
            "opened): shoe-2 (shoe) left the table with link_lost, which no longer blocks "
            "anything" in listed.stdout), listed.stdout


def test_a_round_under_an_unchanged_configuration_names_no_change(tmp_path):
    played_with_shoe_2_jammed_and_lost(tmp_path)
    again = started(tmp_path, "shoe", "shoe-2")         # the same file again
    again.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    again.device(ev.LinkUp(device="shoe-2", ts=0.0, identity=SPARE))
    again.command("void_round", role="supervisor", reason="shoe-2 unplugged")
    again.command("clear_malfunction", role="supervisor")
    again.command("next_round")
    assert all("devices_changed" not in r.payload for r in round_opens(again.journal))
    again.journal.close()


def test_a_clear_malfunction_names_what_it_cleared_and_what_it_left(tmp_path):
    played_with_shoe_2_jammed_and_lost(tmp_path)
    again = restarted_without_shoe_2(tmp_path)
    # In malfunction: the shoe jams while the round waits for its deck.
    again.device(ev.Jam(device="shoe", ts=0.0, where="exit"))
    assert again.table.state == "malfunction"
    again.command("clear_malfunction", role="supervisor")
    # Outside malfunction: the shoe jams again after the round is voided.
    again.command("void_round", role="supervisor", reason="the shoe jammed")
    again.device(ev.Jam(device="shoe", ts=0.0, where="exit"))
    again.command("clear_malfunction", role="supervisor")
    in_malfunction, outside = cleared_records(again.journal)
    # shoe-2 is configured neither now nor for the next round: its jam is kept for when it
    # is configured again, and the record says so.
    assert in_malfunction["cleared"] == {"shoe": ["jam"]}
    assert in_malfunction["kept"] == {"shoe-2": ["jam"]}
    assert outside["cleared"] == {"shoe": ["jam"]}
    assert outside["kept"] == {"shoe-2": ["jam"]}
    assert outside["devices"] == ["shoe"]       # the key it always had stays
    again.journal.close()

    shown = tablectl("journal", "show", "2", "--journal", str(tmp_path / "j.db"))
    assert shown.returncode == 0, shown.stderr
    lines = [ln for ln in shown.stdout.splitlines() if "malfunction_cleared" in ln]
    assert len(lines) == 2, shown.stdout
    for line in lines:
        assert ("malfunction_cleared: cleared shoe (jam); kept on devices not configured: "
                "shoe-2 (jam)" in line), line


def test_a_clear_with_nothing_on_a_device_says_so(tmp_path):
    run = started(tmp_path, "shoe")
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.device(ev.LinkLost(device="shoe", ts=0.0, reason="unplugged"))
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    assert run.table.state == "malfunction"
    run.command("clear_malfunction", role="supervisor")
    (cleared,) = cleared_records(run.journal)
    assert cleared["cleared"] == {} and cleared["kept"] == {}
    round_id = run.journal.last(kind="round_open").round_id
    run.journal.close()
    shown = tablectl("journal", "show", round_id, "--journal", str(tmp_path / "j.db"))
    line = next(ln for ln in shown.stdout.splitlines() if "malfunction_cleared" in ln)
    assert "malfunction_cleared: no device condition to clear" in line, line


def test_what_a_clear_names_is_the_conditions_never_a_device_s_words(tmp_path):
    """A jam's place is the firmware's free text and may spell a card (the one stuck in the
    reader): the clear names the condition, not the words."""
    run = started(tmp_path, "shoe")
    published = []
    run.publish = published.append
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.device(ev.Jam(device="shoe", ts=0.0, where="Kd at the reader"))
    run.command("clear_malfunction", role="supervisor")
    (cleared,) = cleared_records(run.journal)
    assert cleared["cleared"] == {"shoe": ["jam"]}
    (event,) = [e.to_json() for e in published if e.kind == "malfunction_cleared"]
    assert event["cleared"] == {"shoe": ["jam"]} and event["kept"] == {}
    assert "Kd" not in json.dumps(cleared) and "Kd" not in json.dumps(event)
    run.journal.close()


# --- journals written before these keys ------------------------------------------------------

def without_new_keys(path):
    """The journal as the code before these keys wrote it: the same records, without
    ``devices_changed`` on a ``round_open`` or in a ``recovery`` report and without
    ``cleared``/``kept`` on a ``malfunction_cleared``, its chain computed over them as that
    code computed it."""
    def strip(conn):
        for seq, payload in conn.execute("SELECT seq, payload FROM records").fetchall():
            doc = json.loads(payload)
            if isinstance(doc, dict):
                doc.pop("devices_changed", None)
                if isinstance(doc.get("report"), dict):
                    doc["report"].pop("devices_changed", None)
                if doc.get("kind") == "malfunction_cleared":
                    doc.pop("cleared", None)
                    doc.pop("kept", None)
            conn.execute("UPDATE records SET payload = ? WHERE seq = ?",
                         (json.dumps(doc), seq))
    rewrite(path, strip)


def test_a_journal_of_the_old_shape_verifies_replays_and_shows(tmp_path):
    """Written as before: the round open under the new file, with a malfunction cleared in
    it, is rebuilt from the journal to the same table, and the readers take it."""
    played_with_shoe_2_jammed_and_lost(tmp_path)
    again = restarted_without_shoe_2(tmp_path)
    again.device(ev.Jam(device="shoe", ts=0.0, where="exit"))
    again.command("clear_malfunction", role="supervisor")
    again.command("deck_ready")
    again.command("place_bet", box=2, wager="versus_croupier", amount=20)
    as_played = (again.table.state, again.table.public_view()["round"]["bets"])
    again.journal.close()
    without_new_keys(tmp_path / "j.db")
    journal = Journal.open(tmp_path / "j.db", "T1")
    assert all("devices_changed" not in r.payload for r in round_opens(journal))
    assert all("cleared" not in p for p in cleared_records(journal))
    journal.close()

    verified = tablectl("journal", "verify", "--journal", str(tmp_path / "j.db"))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    shown = tablectl("journal", "show", "2", "--journal", str(tmp_path / "j.db"))
    assert shown.returncode == 0, shown.stderr
    assert "malfunction_cleared" in shown.stdout and "Traceback" not in shown.stderr

    rebuilt = started(tmp_path, "shoe", "shoe-3")
    assert (rebuilt.table.state, rebuilt.table.public_view()["round"]["bets"]) == as_played
    assert set(rebuilt.table.public_view()["devices"]) == {"shoe", "shoe-3"}
    rebuilt.journal.close()
    assert tablectl("journal", "verify", "--journal",
                    str(tmp_path / "j.db")).returncode == 0
