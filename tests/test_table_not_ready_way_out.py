"""A round refused for a device's condition names the way out that condition has.

``next_round`` refused for a device not ready said "a supervisor must clear them" whatever
the condition: for a link lost (the shoe unplugged between rounds) the supervisor's
clear_malfunction answers "nothing to clear", and the croupier was sent in a circle. Each
condition names its own way out: a lost link comes back when the device links again (its
cable and power), an open door or lid is closed, and a jam, a malfunction or another unit is
fixed and cleared by the supervisor (clear_malfunction).
"""
from __future__ import annotations

import pytest

from controller.errors import TablectlError
from drivers import events as ev

from test_table_opening_waits_for_links import SHOE, runner, up, voided


def refusal(run, name, role="dealer"):
    before = (run.table.state, run.table.round_no)
    with pytest.raises(TablectlError) as exc:
        run.command(name, role=role)
    assert (run.table.state, run.table.round_no) == before
    return str(exc.value)


def test_a_lost_link_between_rounds_names_the_link_not_the_supervisors_clear(tmp_path):
    run = runner(tmp_path)
    voided(run)
    run.device(ev.LinkLost(device="shoe", ts=0.0, reason="unplugged"))
    why = refusal(run, "next_round")
    assert "shoe" in why and "link" in why and "cable" in why, why
    assert "supervisor must clear" not in why, why
    # and the way it names is the way out: the shoe links again, the round opens
    assert "nothing to clear" in refusal(run, "clear_malfunction", role="supervisor")
    up(run)
    run.command("next_round")
    assert run.table.state == "shuffling"
    run.journal.close()


def test_a_jam_between_rounds_names_the_supervisors_clear(tmp_path):
    run = runner(tmp_path)
    voided(run)
    run.device(ev.Jam(device="shoe", ts=0.0, where="exit"))
    why = refusal(run, "next_round")
    assert "shoe" in why and "clear_malfunction" in why and "supervisor" in why, why
    assert "cable" not in why, why
    run.journal.close()


def test_an_open_table_refused_for_a_lost_link_names_the_link(tmp_path):
    run = runner(tmp_path)
    voided(run)
    run.command("close_table", role="supervisor")
    run.device(ev.LinkLost(device="shoe", ts=0.0, reason="unplugged"))
    why = refusal(run, "open_table", role="supervisor")
    assert "shoe" in why and "cable" in why, why
    up(run, "shoe", SHOE)
    run.command("open_table", role="supervisor")
    assert run.table.state == "shuffling"
    run.journal.close()
