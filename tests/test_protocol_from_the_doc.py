"""docs/protocol.md is enough to build a device from.

The device of tests/doc_device_helpers.py is written from the document alone (standard library
only); here it speaks to the real daemon (`tablectl run`, over a real pseudo-terminal through
pyserial) and hands it a round's cards, then attacks it with every kind of frame the document
calls invalid. Each attack must get what the document says it gets, and the link must carry
a good card after it.
"""
import ast
import contextlib
import json
import random
import re
import signal
import struct
import sys
import time
from pathlib import Path

import pytest

import doc_device_helpers
from controller.journal import Journal
from controller.rig import Rig
from doc_device_helpers import (ACK, CARD_DRAWN, DICE, DICE_RESULT, HEARTBEAT, HELLO,
                                MAX_PAYLOAD, NAK, SHAKE, SHOE, Deframer, DocDevice, crc8,
                                crc16, frame)

pytestmark = pytest.mark.hil

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
RANKS, SUITS = "23456789TJQKA", "shcd"


def card_name(code: int) -> str:
    """Section 4: code = suit x 13 + (rank - 2), spades, hearts, clubs, diamonds."""
    return RANKS[code % 13] + SUITS[code // 13]


class DocRig(Rig):
    """A table dealt from a shoe that is the device written from the document, and for
    Super Pan 9 its dice agitator too (four dice: 261/96/M art. 1(2))."""

    def start_devices(self) -> None:
        self.devices["shoe"] = DocDevice(SHOE)
        if self.game == "super-pan-9":
            self.devices["dice"] = DocDevice(DICE, serial="DOC-0002", units=4)
        self.write_config()

    def stop(self) -> None:
        super().stop()
        for dev in self.devices.values():
            dev.close()


@contextlib.contextmanager
def linked(tmp_path, game="q-poker"):
    """The document's devices and the daemon, linked; once stopped, no exception escaped
    into the daemon's log."""
    r = DocRig(tmp_path, game, "shoe")
    try:
        r.start_devices()
        r.start_controller()
        r.wait_links()
        yield r
    finally:
        r.stop()
    log = r.log_path.read_text(encoding="utf-8")
    assert "Traceback" not in log and '"level": "critical"' not in log, log[-3000:]


@pytest.fixture
def rig(tmp_path):
    with linked(tmp_path) as r:
        yield r


def open_table(rig) -> None:
    """The table open, its deck declared ready: bets are open."""
    rig.must("open_table", "supervisor")
    if rig.state() == "shuffling":
        rig.must("deck_ready")
    assert rig.wait_state("bets_open") == "bets_open"


def open_for_bets(rig) -> None:
    """Q Poker: the table open and a bet on box 2: the first card drawn closes the bets."""
    open_table(rig)
    rig.must("place_bet", box=2, wager="versus_croupier", amount=10)


def banker_and_bet(rig) -> None:
    """Super Pan 9: the table open, a banker (261/96/M art. 5) and a bet: the banker shakes
    next."""
    open_table(rig)
    rig.must("set_banker", seat=1, capital=1000)
    rig.must("place_bet", box=2, wager="seat", amount=10, player="p2")


def dealt(rig) -> list[tuple[str, int]]:
    """The cards the daemon journaled from the shoe, each with its frame's number."""
    with Journal.open(rig.journal_path, readonly=True) as j:
        return [(r.payload["event"]["card"], r.payload["link"]["seq"])
                for r in j.records(kinds=["device"])
                if r.payload["event"].get("kind") == "card_drawn"]


def device_records(rig, kind: str) -> list[dict]:
    """The device events of ``kind`` the daemon journaled."""
    with Journal.open(rig.journal_path, readonly=True) as j:
        return [r.payload["event"] for r in j.records(kinds=["device"])
                if isinstance(r.payload.get("event"), dict)
                and r.payload["event"].get("kind") == kind]


def test_the_device_imports_the_standard_library_only():
    """What it knows it took from the document: nothing of drivers/, firmware_sim/ or
    controller/, nor any other package."""
    source = Path(doc_device_helpers.__file__).read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add("." if node.level else node.module.split(".")[0])
    assert imported and imported <= sys.stdlib_module_names, imported - sys.stdlib_module_names


# --- the document's own numbers --------------------------------------------------------------

def test_the_crcs_built_from_the_parameters_give_the_documented_check_values():
    text = DOC.read_text(encoding="utf-8")
    want8 = int(re.search(r'CRC8\("123456789"\) = 0x([0-9A-F]{2})', text)[1], 16)
    want16 = int(re.search(r'CRC16\("123456789"\) = 0x([0-9A-F]{4})', text)[1], 16)
    assert (crc8(b"123456789"), crc16(b"123456789")) == (want8, want16)


def doc_vectors() -> dict[str, tuple[int, bytes]]:
    """Section 10's rows: message as written -> (SEQ, frame)."""
    text = DOC.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(.+\))` \| (\d+) \| `([0-9A-F ]+)` \|$",
                      text[text.index("## 10. Test vectors"):], re.M)
    return {msg: (int(seq), bytes.fromhex(hexes)) for msg, seq, hexes in rows}


def test_the_framing_built_from_the_document_reads_and_writes_every_test_vector():
    vectors = doc_vectors()
    assert len(vectors) >= 30
    for written, (seq, data) in vectors.items():
        (got,) = Deframer().feed(data)
        assert got[:2] == ("good", seq), written
        assert frame(seq, got[2], got[3]) == data, written


def test_the_shoe_and_dice_reports_built_from_the_document_are_the_vectors():
    vectors = doc_vectors()
    seq, data = vectors["CardDrawn(card=12, face_up=False, deck=7)"]
    assert frame(seq, CARD_DRAWN, card(12)) == data
    seq, data = vectors["CardDrawn(card=255, face_up=True, deck=65535)"]
    assert frame(seq, CARD_DRAWN, struct.pack(">BBH", 0xFF, 1, 0xFFFF)) == data
    seq, data = vectors["DiceResult(dice=(3, 5, 6))"]
    assert frame(seq, DICE_RESULT, bytes([3, 3, 5, 6])) == data


# --- a round's cards from the shoe ------------------------------------------------------------

def test_the_daemon_takes_a_rounds_cards_from_a_shoe_built_from_the_document(rig):
    shoe = rig.devices["shoe"]
    hello = shoe.answers_to(HELLO)[0]
    assert hello[0] == 0 and hello[2][0] == 1      # unsequenced, protocol version 1
    # Its HelloInfo read field by field as the document lays it out (5.1).
    identity = device_records(rig, "link_up")[0]["identity"]
    assert {k: identity[k] for k in ("device_class", "vendor", "model", "serial",
                                     "firmware_version", "firmware_hash",
                                     "recognises_cards")} == {
        "device_class": "shoe", "vendor": "DocMaker", "model": "From-the-doc",
        "serial": "DOC-0001", "firmware_version": "0.1",
        "firmware_hash": bytes(range(32)).hex(), "recognises_cards": True}
    open_for_bets(rig)
    codes = [12, 13, 37, 51, 0, 25]                # A♠ 2♥ K♣ A♦ 2♠ A♥
    seqs = [shoe.draw(code) for code in codes]
    rig.wait_state("player_decisions")
    assert seqs == [1, 2, 3, 4, 5, 6]
    assert dealt(rig) == [(card_name(c), seq) for c, seq in zip(codes, seqs)]
    assert all(code == 0 for code in shoe.acked.values())


# --- attacks: what the document calls invalid gets what it says ---------------------------------

def card(code: int, deck: int = 7) -> bytes:
    """A CardDrawn payload (5.5): card, face_up, deck."""
    return struct.pack(">BBH", code, 0, deck)


def still_deals(rig, code: int = 30) -> None:
    """The link is not wedged: a good card after the attack is acknowledged and journaled."""
    seq = rig.devices["shoe"].draw(code)
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert any(r.payload["link"]["seq"] == seq and r.payload["event"]["card"]
                   == card_name(code) for r in j.records(kinds=["device"])
                   if r.payload["event"].get("kind") == "card_drawn")


def eventually(pred, timeout: float = 10.0):
    """``pred()`` once it holds (a ceiling for a loaded machine, not a speed)."""
    deadline = time.monotonic() + timeout
    while not (got := pred()):
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)
    return got


def malfunctions(rig) -> list[dict]:
    """The device malfunctions (code 0: found by the host) the daemon journaled."""
    with Journal.open(rig.journal_path, readonly=True) as j:
        return [r.payload for r in j.records(kinds=["device"])
                if r.payload["event"].get("kind") == "malfunction"]


def test_a_damaged_card_frame_is_asked_for_again_and_taken_once(rig):
    shoe = rig.devices["shoe"]
    seq = shoe.take_seq()
    good = frame(seq, CARD_DRAWN, card(40))
    shoe.raw(good[:-1] + bytes([good[-1] ^ 0xFF]))           # CRC broken
    assert shoe.wait_answer(seq) == [("nak", 1)]              # 3.1: resend at once
    shoe.raw(good)
    assert shoe.wait_answer(seq, 2)[1] == ("ack", 0)
    assert dealt(rig) == [(card_name(40), seq)]
    still_deals(rig)


@pytest.mark.parametrize("payload, nak", [
    (card(40)[:3], 3),              # LEN one short of the layout: the deck cut in half
    (card(40) + b"\x00", 3),        # one byte more than the layout
    (struct.pack(">BBH", 60, 0, 7), 3),     # card code 60: no card
    (struct.pack(">BBH", 4, 2, 7), 3),      # face_up 2: no bool
], ids=["short", "trailing-byte", "card-60", "bool-2"])
def test_a_card_frame_of_the_wrong_layout_is_refused_after_its_malfunction_is_journaled(
        rig, payload, nak):
    shoe = rig.devices["shoe"]
    seq = shoe.take_seq()
    shoe.raw(frame(seq, CARD_DRAWN, payload))
    assert shoe.wait_answer(seq) == [("nak", nak)]            # 3.1: do not send again
    lost = malfunctions(rig)
    assert [(m["event"]["code"], m["link"]["seq"]) for m in lost] == [(0, seq)]
    assert "CardDrawn" in lost[0]["event"]["text"]
    assert dealt(rig) == []
    still_deals(rig)


def test_an_unknown_kind_is_refused_with_nak_2_after_its_malfunction_is_journaled(rig):
    shoe = rig.devices["shoe"]
    seq = shoe.take_seq()
    shoe.raw(frame(seq, 0x7E, b"\x01\x02"))
    assert shoe.wait_answer(seq) == [("nak", 2)]
    lost = malfunctions(rig)
    assert [(m["event"]["code"], m["link"]["seq"]) for m in lost] == [(0, seq)]
    assert "0x7e" in lost[0]["event"]["text"].lower()
    still_deals(rig)


def test_a_header_past_the_largest_frame_is_noise_once_and_the_devices_frame_the_fourth_time(
        rig):
    shoe = rig.devices["shoe"]
    seq = shoe.take_seq()
    too_long = frame(seq, CARD_DRAWN, b"", length=MAX_PAYLOAD + 1)[:6]
    for _ in range(3):            # as a stuck device would: nothing else reliable between
        shoe.raw(too_long)
        shoe.raw(frame(0, HEARTBEAT, struct.pack(">I", shoe.uptime_ms())))
    shoe.raw(too_long)
    assert shoe.wait_answer(seq) == [("nak", 3)]
    assert [m["link"]["seq"] for m in malfunctions(rig)] == [seq]
    still_deals(rig)


def test_a_duplicate_is_answered_again_and_not_journaled_again(rig):
    shoe = rig.devices["shoe"]
    seq = shoe.take_seq()
    again = frame(seq, CARD_DRAWN, card(9))
    shoe.raw(again)
    assert shoe.wait_answer(seq) == [("ack", 0)]
    shoe.raw(again)                                            # its ack was lost
    assert shoe.wait_answer(seq, 2) == [("ack", 0), ("ack", 0)]
    still_deals(rig)
    assert [c for c, s in dealt(rig) if s == seq] == [card_name(9)]


def test_the_copies_of_a_duplicate_are_logged_once_then_summed(rig):
    """A device that missed the answers sends each copy again: like a burst of frames that
    cannot be read, one line at once and one sum, not a line a copy; the sums count every
    one, and each copy is still answered."""
    shoe = rig.devices["shoe"]
    seq = shoe.take_seq()
    again = frame(seq, CARD_DRAWN, card(9))
    shoe.raw(again)
    assert shoe.wait_answer(seq) == [("ack", 0)]
    shoe.raw(again * 100)
    assert shoe.wait_answer(seq, 101) == [("ack", 0)] * 101
    still_deals(rig)
    rig.kill(signal.SIGTERM)                # what is summed is written as the link closes
    lines = log_lines(rig, "duplicate suppressed")
    assert 1 <= len(lines) <= 2, len(lines)
    assert (lines[0]["seq"], lines[0]["message"]) == (seq, "CardDrawn")
    assert sum(line["copies"] for line in lines) == 100


def test_numbers_out_of_order_are_taken_as_new_frames(rig):
    """3.1: a number not among the last 32 taken is a new frame, gap or not."""
    shoe = rig.devices["shoe"]
    for _ in range(5):
        shoe.take_seq()
    first = shoe.take_seq()                     # 6: the device never sent 1 to 5
    shoe.raw(frame(first, CARD_DRAWN, card(1)))
    assert shoe.wait_answer(first) == [("ack", 0)]
    shoe.raw(frame(3, CARD_DRAWN, card(2)))      # backwards, never used
    assert shoe.wait_answer(3) == [("ack", 0)]
    assert dealt(rig) == [(card_name(1), first), (card_name(2), 3)]


def test_a_card_before_the_hello_is_neither_answered_nor_taken(rig):
    """3.2: until the hello exchange is done nothing is acknowledged; the device sends its
    events after its HelloInfo, numbered in the new session."""
    shoe = rig.devices["shoe"]
    shoe.answer_hello = False
    hellos = shoe.hellos()
    shoe.reboot()                               # the host reconnects and says Hello
    with shoe.lock:
        assert shoe.lock.wait_for(lambda: shoe.hellos() > hellos, 10)
    shoe.raw(frame(1, CARD_DRAWN, card(44)))    # too early
    shoe.raw(frame(0, HEARTBEAT, struct.pack(">I", shoe.uptime_ms())))
    asked = shoe.hellos()
    with shoe.lock:                             # the host's next attempt: the card was read
        assert shoe.lock.wait_for(lambda: shoe.hellos() > asked, 10)
    assert shoe.answers(1) == []
    shoe.answer_hello = True
    shoe.wait_session()
    assert shoe.draw(45) == 1
    assert [c for c, _ in dealt(rig)] == [card_name(45)]


def test_a_frame_split_byte_by_byte_across_reads_is_taken(rig):
    shoe = rig.devices["shoe"]
    seq = shoe.take_seq()
    with shoe.lock:                 # no heartbeat of the device's between its bytes
        for byte in frame(seq, CARD_DRAWN, card(17)):
            shoe.write(bytes([byte]))
            time.sleep(0.01)        # each in a read of its own
    assert shoe.wait_answer(seq) == [("ack", 0)]
    assert dealt(rig) == [(card_name(17), seq)]


def garbage(n: int, seed: int) -> bytes:
    """``n`` bytes of noise, the start byte among them, and no false header that checks."""
    rng = random.Random(seed)
    out = bytearray(rng.randrange(256) for _ in range(n))
    for i in range(0, n - 6, 37):
        out[i] = 0xA5
    for i in range(n - 5):
        if out[i] == 0xA5 and crc8(bytes(out[i + 1:i + 5])) == out[i + 5]:
            out[i + 5] ^= 0xFF
    return bytes(out)


def test_garbage_between_frames_is_dropped_counted_and_logged_once(rig):
    shoe = rig.devices["shoe"]
    first, second = shoe.take_seq(), shoe.take_seq()
    noise = garbage(500, 1)
    shoe.raw(noise + frame(first, CARD_DRAWN, card(20)) + noise
             + frame(second, CARD_DRAWN, card(21)) + noise)
    assert shoe.wait_answer(first) == [("ack", 0)]
    assert shoe.wait_answer(second) == [("ack", 0)]
    assert dealt(rig) == [(card_name(20), first), (card_name(21), second)]
    still_deals(rig)
    rig.kill(signal.SIGTERM)
    lines = [json.loads(line) for line in rig.log_path.read_text().splitlines()
             if line.startswith("{")]
    dropped = [line for line in lines if line.get("event") == "garbage dropped"]
    assert 1 <= len(dropped) <= 2


def test_a_flood_of_noise_and_of_frames_leaves_the_link_up(rig):
    shoe = rig.devices["shoe"]
    beat = frame(0, HEARTBEAT, struct.pack(">I", shoe.uptime_ms()))
    shoe.raw(garbage(64 * 1024, 2) + beat * 2000)
    seqs = [shoe.take_seq() for _ in range(3)]
    shoe.raw(b"".join(frame(s, CARD_DRAWN, card(c)) for s, c in zip(seqs, (3, 4, 5))) * 50)
    for seq in seqs:
        assert shoe.wait_answer(seq)[0] == ("ack", 0)
    still_deals(rig)
    assert [c for c, _ in dealt(rig)] == [card_name(c) for c in (3, 4, 5, 30)]
    assert rig.view()["devices"]["shoe"]["link"] == "up"
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert not [r for r in j.records(kinds=["device"])
                    if r.payload["event"].get("kind") == "link_lost"]


def test_a_card_frame_without_a_number_is_not_answered_and_its_loss_is_journaled(rig):
    """3.1: a reliable type with SEQ 0 is malformed and answered with nothing (a NAK of 0
    names no frame). What it carried is lost all the same: the device is out of order."""
    shoe = rig.devices["shoe"]
    for _ in range(3):          # sent again and again, as it is never acknowledged
        shoe.raw(frame(0, CARD_DRAWN, card(33)))
    eventually(lambda: malfunctions(rig))
    still_deals(rig)            # every copy read by now: the loss is told once
    lost = malfunctions(rig)
    assert [m["event"]["code"] for m in lost] == [0] and "CardDrawn" in lost[0]["event"]["text"]
    assert shoe.answers(0) == [] and [c for c, _ in dealt(rig)] == [card_name(30)]


@pytest.mark.parametrize("typ, payload, answer", [
    (SHAKE, b"", ("nak", 2)),                  # a host's command, sent by a device
    (DICE_RESULT, b"\x02\x03\x04", ("ack", 0)),  # a dice agitator's report, from a shoe
], ids=["host-command", "other-class"])
def test_a_frame_a_shoe_may_not_send_is_journaled_as_its_malfunction(rig, typ, payload, answer):
    shoe = rig.devices["shoe"]
    seq = shoe.take_seq()
    shoe.raw(frame(seq, typ, payload))
    assert shoe.wait_answer(seq) == [answer]
    eventually(lambda: malfunctions(rig))
    assert [m["event"]["code"] for m in malfunctions(rig)] == [0]
    still_deals(rig)


def test_a_false_header_that_checks_holds_the_line_until_the_link_is_lost_and_reopened(rig):
    """2: no inter-byte timeout. A stray start byte whose header happens to check makes the
    receiver wait for the bytes it names; the link-loss timeout reopens the port, and the
    card the device kept sending is taken once."""
    shoe = rig.devices["shoe"]
    false = frame(0, HEARTBEAT, b"", length=1000)[:6]
    mark = rig.mark()
    with shoe.lock:
        shoe.write(false)
        shoe.event(CARD_DRAWN, card(50))
        assert shoe.in_flight is not None
        seq = shoe.in_flight[0]
    shoe.wait_answered(seq, timeout=20)
    rig.wait_event(lambda e: e["kind"] == "device_link" and e.get("link") == "up", mark)
    assert dealt(rig) == [(card_name(50), seq)]
    still_deals(rig)


def test_acks_and_naks_that_name_no_frame_in_flight_are_ignored(rig):
    shoe = rig.devices["shoe"]
    sent = len(shoe.received)
    for seq in (200, 201):
        shoe.raw(frame(0, ACK, struct.pack(">BH", seq, 0)) + frame(0, NAK, bytes([seq, 1])))
    still_deals(rig)
    with shoe.lock:      # nothing sent again on the NAKs: only heartbeats and the card's ack
        assert {typ for _, typ, _ in shoe.received[sent:]} <= {HEARTBEAT, ACK}
    assert rig.view()["devices"]["shoe"]["link"] == "up"


def test_a_helloinfo_without_boot_on_a_live_link_is_ignored(rig):
    """3.2: only a BOOT notice ends a live link; a late answer to a hello changes nothing."""
    shoe = rig.devices["shoe"]
    shoe.raw(shoe.hello_info(0))
    still_deals(rig)
    assert device_records(rig, "link_lost") == []
    assert rig.view()["devices"]["shoe"]["link"] == "up"


def test_a_card_whose_ack_was_lost_before_the_link_dropped_is_journaled_once_on_resume(rig):
    """3.2: the device resumes the session and sends its unacknowledged card again under the
    same number; the host recognises the number, acknowledges, and does not take it twice."""
    shoe = rig.devices["shoe"]
    shoe.deaf_to_acks = True
    with shoe.lock:
        shoe.event(CARD_DRAWN, card(22))
        seq = shoe.in_flight[0]
    eventually(lambda: dealt(rig))              # taken and acknowledged; the ack is lost
    shoe.cut = True                             # then the cable: the host hears nothing
    eventually(lambda: device_records(rig, "link_lost"))
    shoe.cut = shoe.deaf_to_acks = False
    restored = eventually(lambda: device_records(rig, "link_restored"))[0]
    shoe.wait_answered(seq)
    assert restored["resumed"] is True
    assert dealt(rig) == [(card_name(22), seq)]
    still_deals(rig)
    assert len(dealt(rig)) == 2


# --- a firmware's mistakes are named as such ---------------------------------------------------

def log_lines(rig, event: str) -> list[dict]:
    return [doc for doc in (json.loads(line) for line in
                            rig.log_path.read_text(encoding="utf-8").splitlines()
                            if line.startswith("{"))
            if doc.get("event") == event]


def test_a_hello_answered_with_an_unreadable_helloinfo_is_named_so_not_as_silence(tmp_path):
    rig = DocRig(tmp_path, "q-poker", "shoe")
    try:
        rig.start_devices()
        shoe = rig.devices["shoe"]
        shoe.unsequenced_seq = 1            # its HelloInfo numbered like a reliable frame
        rig.start_controller()
        told = eventually(lambda: log_lines(rig, "no answer to hello"))[0]
    finally:
        rig.stop()
    assert "HelloInfo" in told["problem"] and "cannot read" in told["problem"], told
    assert "powered" not in told["problem"]


def test_heartbeats_that_cannot_be_read_lose_the_link_with_a_reason_that_says_so(rig):
    shoe = rig.devices["shoe"]
    shoe.unsequenced_seq = 9                # its heartbeats numbered: each one is dropped
    lost = eventually(lambda: device_records(rig, "link_lost"))[0]
    shoe.unsequenced_seq = 0
    assert "Heartbeat" in lost["reason"] and "cannot read" in lost["reason"], lost


def test_a_burst_of_frames_that_cannot_be_read_is_logged_once_then_summed(rig):
    """2: bad frames are counted, logged and dropped, and like garbage a burst of them
    writes one line at once and one sum, not a line a frame; the sums count every one."""
    shoe = rig.devices["shoe"]
    shoe.raw(frame(7, HEARTBEAT, struct.pack(">I", shoe.uptime_ms())) * 200)
    still_deals(rig)
    rig.kill(signal.SIGTERM)                # what is summed is written as the link closes
    lines = log_lines(rig, "frame dropped")
    assert 1 <= len(lines) <= 2, len(lines)
    assert "Heartbeat" in lines[0]["detail"]
    assert sum(line["bad_payload"] for line in lines) == 200


def test_a_command_answered_by_acks_that_cannot_be_read_loses_the_link_saying_so(tmp_path):
    """The agitator numbers its Acks (3.1: an Ack is unsequenced, SEQ 0): each is dropped,
    the Shake is never acknowledged, and the link lost names the frames, not the silence."""
    with linked(tmp_path, "super-pan-9") as rig:
        banker_and_bet(rig)
        dice = rig.devices["dice"]
        dice.answer = lambda seq, typ: frame(seq, ACK, struct.pack(">BH", seq, 0))
        rig.command("shake")
        lost = eventually(lambda: [r for r in device_records(rig, "link_lost")
                                   if r["device"] == "dice"])[0]
        dice.answer = None
    assert "no acknowledgement of Shake" in lost["reason"]
    assert "an Ack frame (bad-payload)" in lost["reason"] and "cannot read" in lost["reason"]


# --- the dice agitator -------------------------------------------------------------------------

def test_the_daemon_takes_a_throw_from_a_dice_agitator_built_from_the_document(tmp_path):
    with linked(tmp_path, "super-pan-9") as rig:
        banker_and_bet(rig)
        dice = rig.devices["dice"]
        dice.dice = (6, 1, 4, 4)
        rig.must("shake")
        assert rig.wait_state("dealing") == "dealing"
        dice.wait_idle()
        shake = dice.answers_to(SHAKE)
        with Journal.open(rig.journal_path, readonly=True) as j:
            thrown = [(r.payload["event"]["dice"], r.payload["link"]["seq"])
                      for r in j.records(kinds=["device"])
                      if r.payload["event"].get("kind") == "dice_result"]
        assert len(shake) == 1 and shake[0][0] != 0        # a reliable command, numbered
        assert thrown == [([6, 1, 4, 4], 2)]               # after ShakeStarted, number 1


@pytest.mark.parametrize("answer, copies", [
    (lambda seq: b"", 4),                                    # 3.1: 1 and 3 retries
    (lambda seq: frame(0, NAK, bytes([seq, 1])), 7),         # and 3 more at once on NAKs
], ids=["silence", "nak-every-copy"])
def test_a_shake_never_acknowledged_is_sent_as_often_as_documented_then_the_link_is_lost(
        tmp_path, answer, copies):
    with linked(tmp_path, "super-pan-9") as rig:
        banker_and_bet(rig)
        dice = rig.devices["dice"]
        dice.answer = lambda seq, typ: answer(seq)
        rig.command("shake")
        eventually(lambda: [r for r in device_records(rig, "link_lost") if r["device"] == "dice"])
        dice.answer = None
        sent = dice.answers_to(SHAKE)
        assert len(sent) == copies and len({seq for seq, _, _ in sent}) == 1, sent


def test_a_die_face_of_7_is_refused_after_its_malfunction_is_journaled(tmp_path):
    with linked(tmp_path, "super-pan-9") as rig:
        dice = rig.devices["dice"]
        seq = dice.take_seq()
        dice.raw(frame(seq, DICE_RESULT, bytes([4, 3, 7, 1, 2])))
        assert dice.wait_answer(seq) == [("nak", 3)]
        lost = malfunctions(rig)
        assert [(m["event"]["device"], m["event"]["code"], m["link"]["seq"])
                for m in lost] == [("dice", 0, seq)]
