"""A device's refusal of a command, end to end: the real daemon (``tablectl run``) asks the
simulated shuffler, over a pseudo-terminal, for a hand it cannot give, and the refusal comes
back through the driver, is journaled as the shuffler's input and is ruled by the game.

The croupier loaded the shuffler with five cards. Three boxes bet, so the table asks for three
hands of three: the first is dealt, the second is refused (``empty``). Q Poker 89/2004
art. 11(5): a failure of the shuffler while dealing voids the round and every bet is returned.
"""
import pytest

from controller.journal import Journal
from controller.rig import Rig

pytestmark = pytest.mark.hil

SHORT_DECK = ["As", "Kd", "Qc", "Jh", "Ts"]


def test_a_hand_the_shuffler_refuses_voids_the_round_through_the_real_daemon(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shuffler", seed=3)
    try:
        rig.start_devices()
        rig.devices["shuffler"].load_deck(cards=SHORT_DECK)
        rig.start_controller()
        rig.wait_links()
        rig.must("open_table", "supervisor")
        assert rig.wait_state("bets_open", timeout=20) == "bets_open"
        for box in (1, 2, 3):
            rig.must("place_bet", box=box, wager="versus_croupier", amount=10)
        rig.must("close_bets")
        assert rig.wait_state("malfunction", "round_void", "player_decisions",
                              timeout=20) == "malfunction"
        view = rig.view()
        assert view["round"]["void"]["article"] == "89/2004 art. 11(5)"

        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
            records = list(j.records())
        asked = [r.seq for r in records if r.kind == "device_command"
                 and r.payload["action"] == "dispense_hand"]
        assert len(asked) == 2, "a second hand was asked after the first was dealt"
        refusals = [r for r in records if r.kind == "device"
                    and r.payload["event"]["kind"] == "command_refused"]
        assert len(refusals) == 1
        refusal = refusals[0]
        event = refusal.payload["event"]
        # The driver's own event (no frame of the device carries it, so no link receipt),
        # journaled after the command it answers, naming the way out.
        assert (event["action"], event["reason"]) == ("dispense_hand", "empty")
        assert "link" not in refusal.payload and refusal.source == "shuffler"
        assert refusal.seq > asked[1] and "load cards" in event["text"]
        after = [r for r in records if r.seq > refusal.seq]
        condition = next(r for r in after if r.kind == "alarm")
        assert condition.payload["kind"] == "device_condition"
        assert condition.payload["what"] == event["text"]
        ruling = next(r for r in after if r.kind == "decision")
        assert ruling.payload["irregularity"] == "shuffler_malfunction"
        assert ruling.article == "89/2004 art. 11(5)"
        close = next(r for r in after if r.kind == "round_close")
        assert close.payload["outcome"] == "void" and close.article == "89/2004 art. 11(5)"
        # Nothing asked of the shuffler after the refusal: the round is over.
        assert not [r for r in after if r.kind == "device_command"
                    and r.payload["action"].startswith("dispense")]
    finally:
        rig.stop()


def test_a_refused_shake_is_given_again_and_the_round_goes_on_through_the_real_daemon(tmp_path):
    """The agitator refuses the banker's shake (the simulator's ``refuse`` fault: a refusal its
    own state would not give). The shake did nothing, so the table shows the condition, stays
    in ``dice_shaking`` with no ruling, and takes the banker's shake again (261/96/M art. 2(2):
    only the banker shakes); the dice are read and the deal begins."""
    rig = Rig(tmp_path, "super-pan-9", "shoe", seed=5)
    try:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        rig.devices["dice"].inject("refuse", code="door-open")
        rig.must("open_table", "supervisor")
        if rig.state() == "shuffling":
            rig.must("deck_ready")
        assert rig.wait_state("bets_open") == "bets_open"
        rig.must("set_banker", seat=1, capital=1000)
        rig.must("place_bet", box=3, wager="seat", amount=10, player="p3")
        mark = rig.mark()
        rig.must("shake")
        told = rig.wait_event(lambda e: e["kind"] == "device_condition"
                              and e.get("refused") == "shake", since=mark)
        # An acknowledgement carries the code alone; the driver names the way out.
        assert told["reason"] == "door-open" and "close the door" in told["what"]
        assert rig.state() == "dice_shaking"
        assert rig.devices["dice"].emitted("dice_result") == []      # nothing was shaken
        rig.must("shake")                                             # the banker again
        assert rig.wait_state("dealing", timeout=20) == "dealing"

        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
            records = list(j.records())
        shakes = [r.seq for r in records if r.kind == "device_command"
                  and r.payload["action"] == "shake"]
        refusal = next(r for r in records if r.kind == "device"
                       and r.payload["event"]["kind"] == "command_refused")
        result = next(r for r in records if r.kind == "device"
                      and r.payload["event"]["kind"] == "dice_result")
        assert len(shakes) == 2 and shakes[0] < refusal.seq < shakes[1] < result.seq
        assert not [r for r in records if r.kind in ("decision", "round_close")]
    finally:
        rig.stop()


def test_a_shuffler_busy_with_work_of_its_own_is_asked_again_through_the_real_daemon(tmp_path):
    """The shuffler refuses the hand as ``busy`` with nothing under way that will report
    itself done (the simulator's ``refuse`` fault). The table asks its status, which says
    ``ready``, and asks for the hand again: the round is dealt, not held for the supervisor."""
    rig = Rig(tmp_path, "q-poker", "shuffler", seed=4)
    try:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        rig.devices["shuffler"].inject("refuse", code="busy", action="dispense_hand")
        rig.must("open_table", "supervisor")
        assert rig.wait_state("bets_open", timeout=20) == "bets_open"
        rig.must("place_bet", box=2, wager="versus_croupier", amount=10)
        rig.must("close_bets")
        assert rig.wait_state("player_decisions", timeout=20) == "player_decisions"

        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
            records = list(j.records())
        steps = [(r.kind, r.payload.get("action") or r.payload["event"]["kind"])
                 for r in records if r.kind == "device_command"
                 or (r.kind == "device" and r.payload["event"]["kind"] in (
                     "command_refused", "status_answer", "hand_dispensed"))]
        first = steps.index(("device", "command_refused"))
        assert steps[first - 1] == ("device_command", "dispense_hand")
        assert steps[first + 1:first + 4] == [("device_command", "status"),
                                              ("device", "status_answer"),
                                              ("device_command", "dispense_hand")]
        assert ("device", "hand_dispensed") in steps[first + 4:]
        assert not [r for r in records if r.kind in ("decision", "round_close")]
    finally:
        rig.stop()


def test_a_status_refused_as_busy_is_asked_again_after_a_wait_then_the_supervisor_is_called(
        tmp_path):
    """Hold'em under H11 ``rectify``: the shuffler jams at the second hole card, so the card
    asked may still come and the clear asks its status first. The shuffler then refuses that
    status as ``busy`` again and again and says nothing more (the simulator's ``refuse``
    fault, four times). The daemon's timer brings each wait's end back as a journaled
    ``wait_over`` and the status is asked again; after the third wait the fourth ``busy`` holds
    the round for the supervisor with an alarm naming the shuffler and the way out. At the
    next clear the status is answered and the card is asked again."""
    from controller.table.machine import STATUS_BUSY_WAITS

    rig = Rig(tmp_path, "texas-holdem", "shuffler", seed=6,
              interpretations={"machine_failure": "rectify"})
    try:
        rig.start_devices()
        shuffler = rig.devices["shuffler"]
        shuffler.inject("jam", at_card=2, where="exit")
        rig.start_controller()
        rig.wait_links()
        rig.must("open_table", "supervisor")
        assert rig.wait_state("bets_open", timeout=20) == "bets_open"
        rig.must("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
        rig.must("close_bets")
        assert rig.wait_state("malfunction", timeout=20) == "malfunction"
        shuffler.clear_jam()
        shuffler.inject("refuse", code="busy", action="status", count=STATUS_BUSY_WAITS + 1)
        mark = rig.mark()
        rig.must("clear_malfunction", "supervisor")
        alarm = rig.wait_event(lambda e: e["kind"] == "device_condition"
                               and "refused its status" in e.get("what", ""), since=mark,
                               timeout=20 + 10 * STATUS_BUSY_WAITS)
        assert alarm["device"] == "shuffler" and "void_round" in alarm["what"]
        assert rig.wait_state("malfunction") == "malfunction"
        assert rig.view()["round"]["void"] is None

        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
            records = list(j.records())
        after = [r for r in records if r.seq > max(r.seq for r in records
                                                   if r.kind == "command"
                                                   and r.payload["name"] == "clear_malfunction")]
        # The report the firmware sends on its own once the jam is cleared is no answer (it
        # comes when it comes, and the table takes nothing from it while it waits).
        steps = [(r.kind, r.payload.get("action") or r.payload["event"]["kind"])
                 for r in after if r.kind == "device_command"
                 or (r.kind == "device" and r.source in ("shuffler", "timer")
                     and r.payload["event"]["kind"] != "status")]
        asked = [("device_command", "status"), ("device", "command_refused")]
        waited = [("device_command", "wait"), ("device", "wait_over")]
        assert steps == asked + (waited + asked) * STATUS_BUSY_WAITS
        overs = [r for r in after if r.kind == "device" and r.source == "timer"]
        assert all(r.payload["event"]["about"] == "shuffler" for r in overs)
        assert not [r for r in after if r.kind in ("decision", "round_close")]

        mark = rig.mark()
        rig.must("clear_malfunction", "supervisor")
        # Answered now (no card is coming): the hole card is asked again, once. (What the
        # simulated shuffler does with it after its jam is its own affair.)
        rig.wait_event(lambda e: e["kind"] == "state" and e.get("source") == "dealing",
                       since=mark, timeout=20)
        with Journal.open(rig.journal_path, readonly=True) as j:
            records = list(j.records())
        last_clear = max(r.seq for r in records if r.kind == "command"
                         and r.payload["name"] == "clear_malfunction")
        then = [r for r in records if r.seq > last_clear and (
            r.kind == "device_command" or (r.kind == "device" and r.source == "shuffler"
                                           and r.payload["event"]["kind"] != "status"))]
        status, answer, card = then[:3]
        assert (status.payload["action"], answer.payload["event"]["kind"],
                card.payload["action"]) == ("status", "status_answer", "dispense_card")
        assert answer.payload["event"]["ask"] == status.payload["ask"]
        assert [r.payload.get("action") for r in then].count("dispense_card") == 1
    finally:
        rig.stop()
