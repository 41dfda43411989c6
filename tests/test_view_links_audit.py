"""The view's links after a restart, attacked: a recovery from the snapshot of a round in play,
several restarts within one round, a unit that came back as another, a resumed session and
the box sensors. Each rebuild of the table from the journal shows what was played, every link
``connecting`` until the device links to the process running; what a link changes is the view,
never the round.
"""
from controller.journal import Journal
from drivers import events as ev
from table_helpers import deck_checked, shuffler_runner

SHUFFLER = ev.DeviceIdentity("shuffler", "sim", "S1", "0001", "1.0", "ab" * 16, True)
SPARE = ev.DeviceIdentity("shuffler", "sim", "S1", "0009", "1.0", "ef" * 16, True)
SENSORS = ev.DeviceIdentity("box-sensors", "sim", "B1", "0003", "1.0", "cd" * 16, False)


# configured (table_helpers.DEVICES), never linked: connecting from the controller's start
NEVER = {"shoe": "connecting", "dice": "connecting"}


def links(table):
    return {d: v["link"] for d, v in table.public_view()["devices"].items()}


def play(table):
    """The view without the devices' links: what was played."""
    view = table.public_view()
    view["devices"] = {d: {k: v for k, v in doc.items() if k != "link"}
                       for d, doc in view["devices"].items()}
    return view, table.state, sorted(table.conditions.items())


def rebuilt(path):
    run = shuffler_runner(path, "q-poker")
    run.recover()
    return run


def test_restarts_within_a_round_replay_the_view_as_played(tmp_path):
    run = shuffler_runner(tmp_path, "q-poker")
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    run.device(ev.LinkUp(device="sensors", ts=0.0, identity=SENSORS))
    run.command("open_table", "supervisor")
    if run.table._deck_check == "asked":
        run.device(deck_checked())
    run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    assert run.table.state == "bets_open"
    run.command("place_bet", box=1, wager="versus_croupier", amount=50)
    run.journal.close()

    # Restarted in the round (rebuilt from its snapshot): connecting, the bets stand.
    second = rebuilt(tmp_path)
    assert links(second.table) == {"shuffler": "connecting", "sensors": "connecting", **NEVER}
    second.device(ev.LinkRestored(device="shuffler", ts=0.0, identity=SHUFFLER, resumed=True))
    assert links(second.table) == {"shuffler": "up", "sensors": "connecting", **NEVER}
    second.command("place_bet", box=2, wager="versus_croupier", amount=20)
    played = play(second.table)
    second.journal.close()

    # Again, and again: each rebuild is what was played, every link connecting.
    for _ in range(2):
        again = rebuilt(tmp_path)
        assert links(again.table) == {"shuffler": "connecting", "sensors": "connecting",
                                      **NEVER}
        view, state, conditions = play(again.table)
        assert (view["round"]["bets"], state, conditions) == (
            played[0]["round"]["bets"], played[1], played[2])
        assert view["devices"] == played[0]["devices"]
        again.journal.close()


def test_a_unit_come_back_as_another_after_a_restart_is_up_and_held_then_connecting(tmp_path):
    run = shuffler_runner(tmp_path, "q-poker")
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    run.journal.close()

    second = rebuilt(tmp_path)
    second.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SPARE))
    view = second.table.public_view()
    assert view["devices"]["shuffler"]["link"] == "up"
    assert view["devices"]["shuffler"]["serial"] == "0009"
    assert "replaced" in view["conditions"]["shuffler"]
    second.journal.close()

    third = rebuilt(tmp_path)
    view = third.table.public_view()
    assert view["devices"]["shuffler"] == {**view["devices"]["shuffler"], "link": "connecting",
                                           "serial": "0009"}
    assert "replaced" in view["conditions"]["shuffler"]
    third.device(ev.LinkLost(device="shuffler", ts=0.0, reason="unplugged"))
    assert links(third.table)["shuffler"] == "lost"
    third.journal.close()
    with Journal.open(tmp_path / "journal.db", readonly=True) as j:
        assert j.verify().ok


def test_a_deal_asked_of_a_shuffler_not_yet_linked_waits_for_its_link(tmp_path):
    # Between rounds, deck shuffled, the controller restarts; the shuffler has not linked to
    # the new process when betting closes. The hand asked of it is not sent (the driver says
    # not-connected): nothing is dealt, the bets stand, and it is asked again at the link.
    run = shuffler_runner(tmp_path, "q-poker")
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    run.command("open_table", "supervisor")
    if run.table._deck_check == "asked":
        run.device(deck_checked())
    run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    assert run.table.state == "bets_open"
    run.journal.close()

    again = rebuilt(tmp_path)
    assert links(again.table) == {"shuffler": "connecting", "sensors": "connecting", **NEVER}
    again.command("place_bet", box=1, wager="versus_croupier", amount=50)
    again.command("close_bets")
    asked = [c.action for c in again.sent if c.device_class == "shuffler"]
    assert asked, again.table.state
    again.device(ev.CommandRefused(device="shuffler", ts=0.0, action=asked[-1],
                                   reason="not-connected", text="not connected"))
    assert again.table.round.bets and not again.table.vault.slots()
    before = len(again.sent)
    again.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    assert links(again.table) == {"shuffler": "up", "sensors": "connecting", **NEVER}
    assert asked[-1] in [c.action for c in again.sent[before:]]
    again.journal.close()
