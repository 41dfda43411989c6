"""docs/protocol.md is enough to build a device from.

The device of tests/doc_device_helpers.py is written from the document alone (standard library
only); here it speaks to the real daemon (`tablectl run`, over a real pseudo-terminal through
pyserial) and hands it a round's cards, then attacks it with every kind of frame the document
calls invalid. Each attack must get what the document says it gets, and the link must carry
a good card after it.
"""
import json
import re
import struct
from pathlib import Path

import pytest

from controller.journal import Journal
from controller.rig import Rig
from doc_device_helpers import (CARD_DRAWN, HEARTBEAT, HELLO, NAK, SHOE, DocDevice, crc8,
                                crc16, frame)

pytestmark = pytest.mark.hil

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
RANKS, SUITS = "23456789TJQKA", "shcd"


def card_name(code: int) -> str:
    """Section 4: code = suit x 13 + (rank - 2), spades, hearts, clubs, diamonds."""
    return RANKS[code % 13] + SUITS[code // 13]


class DocRig(Rig):
    """A Q Poker table dealt from a shoe that is the device written from the document."""

    def start_devices(self) -> None:
        self.devices["shoe"] = DocDevice(SHOE)
        self.write_config()

    def stop(self) -> None:
        super().stop()
        for dev in self.devices.values():
            dev.close()


@pytest.fixture
def rig(tmp_path):
    r = DocRig(tmp_path, "q-poker", "shoe")
    r.start_devices()
    r.start_controller()
    r.wait_links()
    yield r
    r.stop()
    log = r.log_path.read_text(encoding="utf-8")
    assert "Traceback" not in log and '"level": "critical"' not in log, log[-3000:]


def open_for_bets(rig) -> None:
    rig.must("open_table", "supervisor")
    if rig.state() == "shuffling":
        rig.must("deck_ready")
    assert rig.wait_state("bets_open") == "bets_open"
    rig.must("place_bet", box=2, wager="versus_croupier", amount=10)


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


# --- the document's own numbers --------------------------------------------------------------

def test_the_crcs_built_from_the_parameters_give_the_documented_check_values():
    text = DOC.read_text(encoding="utf-8")
    want8 = int(re.search(r'CRC8\("123456789"\) = 0x([0-9A-F]{2})', text)[1], 16)
    want16 = int(re.search(r'CRC16\("123456789"\) = 0x([0-9A-F]{4})', text)[1], 16)
    assert (crc8(b"123456789"), crc16(b"123456789")) == (want8, want16)


# --- a round's cards from the shoe ------------------------------------------------------------

def test_the_daemon_takes_a_rounds_cards_from_a_shoe_built_from_the_document(rig):
    shoe = rig.devices["shoe"]
    hello = shoe.answers_to(HELLO)[0]
    assert hello[0] == 0 and hello[2][0] == 1      # unsequenced, protocol version 1
    open_for_bets(rig)
    codes = [12, 13, 37, 51, 0, 25]                # A♠ 2♥ K♣ A♦ 2♠ A♥
    seqs = [shoe.draw(code) for code in codes]
    rig.wait_state("player_decisions")
    assert seqs == [1, 2, 3, 4, 5, 6]
    assert dealt(rig) == [(card_name(c), seq) for c, seq in zip(codes, seqs)]
    assert all(code == 0 for code in shoe.acked.values())
