"""A name or a reason with a card spelled inside it ("Mr Kd", "shoe Kd jammed"), given to the
table itself.

The console API refuses such text before the table sees it (tests/test_api_card_words.py).
The table took it from every other way in (the control socket that ``tablectl`` commands, the
demo and the bench's croupier use, the panel): shown as typed, but every refusal, log line and
journal record quoting it read ``Mr [card]``, naming nobody. The table refuses it for a command
given now, with the same way out (the card written apart), nothing changed but the refusal
journaled. A journal written when the table took it replays it as it was played, and still
verifies.
"""
import pytest

from controller.errors import TablectlError
from controller.journal import Journal
from controller.table import machine
from test_api_card_names import runner
from test_api_card_words import CASES
from test_table_opening_waits_for_links import up


def refused(run, role, name, body, param, apart):
    """``name`` with ``body`` given to the table of ``run``: refused naming ``param`` and the
    way out, the card masked in the refusal and its journal record; the table as it was."""
    view, before = run.table.public_view(), run.journal.last().seq
    with pytest.raises(TablectlError) as info:
        run.command(name, role, **body)
    message = str(info.value)
    assert message.startswith(f"{name}: {param} ") and "reads as a card" in message, message
    assert f"write it otherwise, such as \"{apart}\"" in message, message
    assert body[param] not in message
    after = list(run.journal.records(since=before))
    assert [r.kind for r in after] == ["command", "refused"], after
    assert body[param] not in after[-1].payload["error"]
    assert run.table.public_view() == view
    return message


@pytest.mark.parametrize("role, name, body, param, apart", CASES)
def test_the_table_refuses_a_card_inside_a_name_or_a_reason(tmp_path, role, name, body, param,
                                                           apart):
    run, journal = runner(tmp_path / "j.db")
    refused(run, role, name, body, param, apart)
    journal.close()


def test_a_refusal_replays_as_a_refusal(tmp_path):
    run, journal = runner(tmp_path / "j.db")
    refused(run, *CASES[0])
    journal.close()
    again, journal = restarted(tmp_path)
    assert not again.table.round.bets and not diverged(again)
    journal.close()


def restarted(tmp_path):
    """The table of ``runner`` rebuilt from its journal, as a start does."""
    from controller.rules import get_game
    from controller.table import Table
    from controller.table.runner import TableRunner
    from table_helpers import DEVICES
    from test_api_card_names import SEATED

    journal = Journal.open(tmp_path / "j.db", "T1")
    t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices=DEVICES,
              interpretations=SEATED)
    run = TableRunner(t, journal)
    run.recover()
    return run, journal


def diverged(run):
    return [r for r in run.journal.records(kinds=["alarm"])
            if r.payload.get("kind") == "replay_divergence"]


def test_a_journal_that_took_such_a_name_still_verifies_and_replays(tmp_path, monkeypatch):
    """Written when the table took "Mr Kd" (only the console API refused it): the seated
    player's bet, his decision and a void's reason replay as they were played, the chain
    verifies, and the table goes on; a new command with such text is refused."""
    run, journal = runner(tmp_path / "j.db")
    with monkeypatch.context() as old:
        old.setattr(machine, "card_word_refusal", lambda *a: None)
        run.command("place_bet", "dealer", box=2, wager="versus_croupier", amount=20,
                    player="Mr Kd", seated=True)
        run.command("void_round", "supervisor", reason="shoe Kd jammed")
    assert run.table.state == "round_void"
    journal.close()

    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
    again, journal = restarted(tmp_path)
    assert again.broken is None and not diverged(again)
    view = again.table.public_view()
    assert view["state"] == "round_void"
    assert view["round"]["seated"] == [{"box": 2, "player": "Mr Kd"}], view["round"]
    assert again.table.round.void["reason"] == "shoe Kd jammed"
    up(again)       # the shoe links to the controller started now
    again.command("next_round")
    again.command("deck_ready")
    refused(again, *CASES[0])
    again.command("place_bet", "dealer", box=2, wager="versus_croupier", amount=20,
                  player="Mr K.d.", seated=True)
    journal.close()


@pytest.mark.hil
def test_the_daemon_refuses_it_on_the_control_socket(tmp_path):
    """The real daemon (``tablectl run``, the simulated shoe on a pseudo-terminal): a bet for
    "Mr Kd" given on the control socket is refused with the way out, the card masked, and no
    bet is placed; the name written apart is taken and shown as typed."""
    from controller.rig import Rig

    with Rig(tmp_path, "q-poker", "shoe", seed=5) as rig:
        rig.open_with_deck(["As", "Kd", "Qh", "2c", "3c", "4c"])
        reply = rig.command("place_bet", box=2, wager="versus_croupier", amount=20,
                            player="Mr Kd")
        assert reply["ok"] is False, reply
        assert reply["error"].startswith("place_bet: player \"Mr [card]\" holds a word that "
                                         "reads as a card"), reply
        assert "such as \"Mr K.d.\"" in reply["error"] and "Mr Kd" not in reply["error"]
        reply = rig.command("void_round", "supervisor", reason="shoe Kd jammed")
        assert reply["ok"] is False and "such as \"shoe K.d. jammed\"" in reply["error"], reply
        assert rig.view()["round"]["bets"] == [] and rig.state() == "bets_open"
        rig.must("place_bet", box=2, wager="versus_croupier", amount=20, player="Mr K.d.")
        assert [b["player"] for b in rig.view()["round"]["bets"]] == ["Mr K.d."]
