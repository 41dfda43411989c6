"""A device that comes back as another unit (docs/protocol.md 3.4, docs/controller.md *A device
replaced*): another serial number or firmware hash than the table last journaled for that
device id, at a link restored or at the first link-up after the controller's own restart, is
journaled as a replacement with both identities, published, treated as a device that
restarted (whatever it held is gone), and held for the supervisor to accept
(``clear_malfunction``); the health names the problem and the way out."""
import pytest

from controller.api.health import device_health
from drivers import events as ev

from table_helpers import asked, deck_checked, kinds, rulings, shuffler_runner, table


def ident(serial="S1", firmware_hash="aa11", device_class="shuffler"):
    return ev.DeviceIdentity(device_class=device_class, vendor="v", model="m", serial=serial,
                             firmware_version="1", firmware_hash=firmware_hash,
                             recognises_cards=True)


def replaced_events(t):
    return [e.data for e in t.outbox if e.kind == "device_replaced"]


def back(t, identity, resumed=False, device="shuffler"):
    t.handle_device(ev.LinkLost(device=device, ts=0.0, reason="port closed"))
    t.handle_device(ev.LinkRestored(device=device, ts=0.0, identity=identity, resumed=resumed))


@pytest.mark.parametrize("other", [ident(serial="S2"), ident(firmware_hash="bb22")],
                         ids=["serial", "firmware"])
def test_a_shuffler_back_as_another_unit_is_published_and_held_for_the_supervisor(other):
    t = table("q-poker", "shuffler")
    t.handle_device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident()))
    assert t.state == "bets_open"
    back(t, other)
    [rep] = replaced_events(t)
    assert rep["device"] == "shuffler"
    assert (rep["was"]["serial"], rep["was"]["firmware_hash"]) == ("S1", "aa11")
    assert (rep["now"]["serial"], rep["now"]["firmware_hash"]) == (other.serial,
                                                                   other.firmware_hash)
    assert "replaced" in t.conditions["shuffler"]
    assert t.identities["shuffler"]["serial"] == other.serial
    assert t.state == "malfunction"
    mark = len(t.commands)
    t.command("clear_malfunction", role="supervisor")
    assert "replaced" not in t.conditions["shuffler"]
    assert t.state == "bets_open"
    # The spare holds no order of the round's deck: it is shuffled again before any hand.
    assert [c.action for c in t.commands[mark:]][:1] in (["shuffle"], ["deck_check"])


def test_the_same_unit_back_is_no_replacement():
    t = table("q-poker", "shuffler")
    t.handle_device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident()))
    back(t, ident())
    assert not replaced_events(t)
    assert "replaced" not in t.conditions.get("shuffler", set())


def test_a_first_link_up_is_no_replacement():
    t = table("q-poker", "shuffler")
    t.handle_device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident()))
    assert not replaced_events(t) and not t.conditions.get("shuffler")


def test_another_unit_that_claims_the_session_is_still_a_restarted_one():
    """A spare that answers RESUMED (a firmware that resumes whatever it is asked) holds none
    of the board of the hand in play: Hold'em between streets, the hand is void (11/2008 art.
    9(2), H11), as for a shuffler back with a new session."""
    t = table("texas-holdem", "shuffler", holdem={"small_blind": 5, "big_blind": 10})
    t.handle_device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident()))
    t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    t.command("close_bets")
    from table_helpers import Card
    for c in ("As", "Kd", "Ah", "Kc"):
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=Card.parse(c)))
    assert t.state == "player_decisions"
    back(t, ident(serial="S2"), resumed=True)
    r = rulings(t)[-1]
    assert r["remedy"] == "round_void" and r["article"].startswith("11/2008 art. 9")
    assert t.state == "malfunction" and "replaced" in t.conditions["shuffler"]


def test_between_rounds_the_next_round_waits_for_the_supervisor():
    t = table("q-poker", "shoe")
    t.handle_device(ev.LinkUp(device="shoe", ts=0.0, identity=ident(device_class="shoe")))
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    from table_helpers import draw
    draw(t, "As", "Kd", "Qh", "Jc", "9s", "8d")
    t.command("decide", box=1, decision="play")
    t.command("confirm_result")
    assert t.state == "round_complete"
    back(t, ident(serial="S9", device_class="shoe"), device="shoe")
    assert replaced_events(t) and "replaced" in t.conditions["shoe"]
    with pytest.raises(Exception, match="shoe"):
        t.command("next_round")
    t.command("clear_malfunction", role="supervisor")
    t.command("next_round")
    assert t.state in ("shuffling", "bets_open")


def test_the_health_names_the_replacement_and_the_way_out():
    t = table("q-poker", "shuffler")
    t.handle_device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident()))
    back(t, ident(serial="S2"))
    [row] = [d for d in device_health(t) if d["device"] == "shuffler"]
    assert row["link"] == "up" and "replaced" in row["conditions"]
    assert "S1" in row["problem"] and "S2" in row["problem"]
    assert "clear_malfunction" in row["problem"]


def test_a_serial_that_reads_as_a_card_is_published_as_the_devices_name():
    t = table("q-poker", "shuffler")
    t.handle_device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident()))
    back(t, ident(serial="5s"))
    [rep] = replaced_events(t)
    assert rep["now"]["serial"] == "5s (as the device names it)"
    assert t.state == "malfunction"


def test_after_a_restart_another_unit_is_compared_with_the_journaled_identity(tmp_path):
    run = shuffler_runner(tmp_path, "q-poker")
    run.command("open_table", role="supervisor")
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident()))
    run.device(deck_checked())
    run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    assert run.table.state == "bets_open"
    run.journal.close()
    run = shuffler_runner(tmp_path, "q-poker")
    run.recover()
    mark = run.journal.head()[0]
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident(serial="S2")))
    [rec] = [r for r in run.journal.records(since=mark, kinds=["alarm"])
             if r.payload.get("kind") == "device_replaced"]
    assert rec.payload["was"]["serial"] == "S1"
    assert rec.payload["now"]["serial"] == "S2"
    assert run.table.state == "malfunction"
    assert "replaced" in run.table.conditions["shuffler"]
    # The journal replays to the same: a second restart still holds it for the supervisor.
    run.journal.close()
    run = shuffler_runner(tmp_path, "q-poker")
    run.recover()
    assert "replaced" in run.table.conditions["shuffler"]
    run.command("clear_malfunction", role="supervisor")
    assert "shuffle" in asked(run, mark) or "deck_check" in asked(run, mark)


def test_after_a_restart_the_same_unit_is_no_replacement(tmp_path):
    run = shuffler_runner(tmp_path, "q-poker")
    run.command("open_table", role="supervisor")
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident()))
    run.journal.close()
    run = shuffler_runner(tmp_path, "q-poker")
    run.recover()
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident()))
    assert "replaced" not in run.table.conditions.get("shuffler", set())
    assert not [r for r in run.journal.records(kinds=["alarm"])
                if r.payload.get("kind") == "device_replaced"]


def test_a_shuffler_replaced_while_the_table_deals_by_shoe_keeps_the_shoe_s_deck():
    """The shoe's deck is not the shuffler's: another shuffler unit is held for the
    supervisor, but the croupier is not asked for a fresh deck for the shoe."""
    t = table("q-poker", "shoe")
    t.handle_device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident()))
    assert t.state == "bets_open"
    back(t, ident(serial="S2"))             # before any card of the round is out
    assert "replaced" in t.conditions["shuffler"] and t.state == "bets_open"
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    from table_helpers import draw
    draw(t, "As", "Kd", "Qh", "Jc", "9s", "8d")
    t.command("decide", box=1, decision="play")
    t.command("confirm_result")
    t.command("next_round")                 # the shuffler is not needed to deal by shoe
    assert t.state == "bets_open"
