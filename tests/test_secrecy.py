"""No card still face down at the table leaves the controller before it is revealed."""
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.rules.base import CROUPIER, box
from controller.rules.cards import Card, full_deck
from controller.table.secrecy import (CardVault, PublicEvent, Revealed, SecrecyError,
                                      redact_device_event)
from drivers import events as ev

from table_helpers import draw, hand, table

CARD_RE = re.compile(r"(?<![A-Za-z0-9])(10|[2-9TJQKA])[shcd](?![A-Za-z0-9])")


def test_public_event_refuses_raw_cards_and_card_text_anywhere():
    for data in ({"card": Card.parse("As")}, {"hand": ["Kd"]}, {"x": {"y": [("10h",)]}},
                 {"Qs": 1}):
        with pytest.raises(SecrecyError):
            PublicEvent("card", "T1", 1, "dealing", data)
    PublicEvent("card", "T1", 1, "dealing", {"recipient": "box 3", "count": 2, "hand": [None]})


def test_revealed_is_made_only_by_the_vault_for_face_up_cards():
    with pytest.raises(SecrecyError):
        Revealed(Card.parse("As"))
    v = CardVault()
    s = v.deal(CROUPIER, Card.parse("As"))
    v.deal(box(1), Card.parse("Kd"))
    assert v.public_hand(CROUPIER) == [None]
    assert v.revealed_hand(CROUPIER) is None         # not for settlement before the reveal
    assert v.vouch({"cards": ["As", "Kd"]}) == {"cards": ["As", "Kd"]}   # still raw: refused
    with pytest.raises(SecrecyError):
        PublicEvent("x", "T1", 1, "s", v.vouch({"cards": ["As"]}))
    v.expose(s)
    assert PublicEvent("x", "T1", 1, "s", v.vouch({"cards": ["As"]})).to_json()["cards"] == ["As"]
    with pytest.raises(SecrecyError):                 # box 1's card is still face down
        PublicEvent("x", "T1", 1, "s", v.vouch({"cards": ["As", "Kd"]}))


def test_redacted_device_events_carry_no_card():
    for e in (ev.CardDrawn(device="shoe", ts=1.0, card=Card.parse("As")),
              ev.HandDispensed(device="shuffler", ts=1.0, cards=tuple(full_deck()[:3])),
              ev.DeckCheckResult(device="shuffler", ts=1.0, count=52, cards=tuple(full_deck()))):
        text = json.dumps(redact_device_event(e.to_json()))
        assert not CARD_RE.search(text), text


def _watch(t):
    """Every published event so far, and the public view, as JSON text, in order."""
    return [json.dumps(e.to_json()) for e in t.outbox] + [json.dumps(t.public_view())]


def _first_seen(texts, card):
    for i, text in enumerate(texts):
        if re.search(rf"(?<![A-Za-z0-9]){card}(?![A-Za-z0-9])", text):
            return i
    return None


def _revealed_at(t, recipient):
    for i, e in enumerate(t.outbox):
        if e.kind in ("hand_opened", "hand_revealed") and e.data["recipient"] == recipient:
            return i
    return None


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_q_poker_stream_shows_no_card_before_its_reveal(mode):
    t = table("q-poker", mode)
    t.command("place_bet", box=2, wager="versus_croupier", amount=10)
    t.command("place_bet", box=5, wager="versus_croupier", amount=10)
    deal = {"box 2": ["As", "Ks", "Qs"], "box 5": ["2d", "7c", "9h"],
            "croupier": ["Jd", "Jc", "4s"]}
    if mode == "shoe":
        for i in range(3):
            draw(t, deal["box 2"][i], deal["box 5"][i], deal["croupier"][i])
    else:
        for who in ("box 2", "box 5", "croupier"):
            hand(t, *deal[who])
    # After the deal: players' hands open (art. 9(1)); the croupier's stays hidden.
    texts = _watch(t)
    for c in deal["croupier"]:
        assert _first_seen(texts, c) is None, f"croupier's {c} leaked before the reveal"
    for who in ("box 2", "box 5"):
        for c in deal[who]:
            assert _first_seen(texts, c) >= _revealed_at(t, who)
    t.command("decide", box=2, decision="play")
    t.command("decide", box=5, decision="fold")
    texts = [json.dumps(e.to_json()) for e in t.outbox]
    for c in deal["croupier"]:
        assert _first_seen(texts, c) >= _revealed_at(t, "croupier")


def test_pan9_stream_shows_no_card_until_the_reveal():
    t = table("super-pan-9")
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100)
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 1)))
    cards = ["9s", "Kd", "2c", "3c"]
    draw(t, *cards[:3])
    texts = _watch(t)
    assert all(_first_seen(texts, c) is None for c in cards[:3])
    draw(t, cards[3])
    texts = [json.dumps(e.to_json()) for e in t.outbox]
    first_reveal = min(i for i, e in enumerate(t.outbox) if e.kind == "hand_revealed")
    assert all(_first_seen(texts, c) >= first_reveal for c in cards)


def test_exposed_card_is_public_but_its_neighbours_are_not():
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As")
    draw(t, "Kd", face_up=False)
    t.command("exposed_card", recipient="box 1")      # 89/2004 art. 11(2): goes on
    texts = _watch(t)
    assert _first_seen(texts, "As") is not None
    assert _first_seen(texts, "Kd") is None            # the croupier's card stays hidden


def test_errors_that_leave_the_controller_name_no_card():
    from controller.table.secrecy import scrub
    assert scrub("box 2 has 4 cards (6d 8d Tc Ah); it needs exactly 3") == \
        "box 2 has 4 cards ([card] [card] [card] [card]); it needs exactly 3"
    assert scrub("box 10 of 10s") == "box 10 of [card]"


def test_a_round_the_rules_refuse_to_settle_names_no_card_and_waits_for_a_void(monkeypatch):
    from controller.errors import TablectlError
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "Kd", "Ah", "Ks", "Ad", "Kc")

    def refuse(doc):
        raise TablectlError("duplicate card Kd in the round")
    monkeypatch.setattr(t.game, "settle", refuse)
    t.command("decide", box=1, decision="play")
    assert t.state == "malfunction"
    refused = [e.to_json() for e in t.outbox if e.kind == "settlement_refused"]
    assert refused == [{**refused[0], "reason": "duplicate card [card] in the round"}]
    with pytest.raises(TablectlError, match="void"):
        t.command("clear_malfunction", role="supervisor")
    t.command("void_round", role="supervisor", reason="a card was read twice")
    assert t.state == "round_void" and t.round.void["article"] == "supervisor"


def test_a_refusal_names_where_the_card_is():
    with pytest.raises(SecrecyError, match=r"card\.x\.y\[0\]\[0\]"):
        PublicEvent("card", "T1", 1, "dealing", {"x": {"y": [("10h",)]}})
    with pytest.raises(SecrecyError, match=r"raw card at card\.hand\[1\]"):
        PublicEvent("card", "T1", 1, "dealing", {"hand": [None, Card.parse("As")]})
    with pytest.raises(SecrecyError, match=r"card text 'Qs' at card\.bets\.<key>"):
        PublicEvent("card", "T1", 1, "dealing", {"bets": {"pot": 5, "Qs": 1}})
    with pytest.raises(SecrecyError, match=r"object at card\.x\[1\] is not publishable"):
        PublicEvent("card", "T1", 1, "dealing", {"x": (1, object())})


def test_the_walk_copies_plain_data_of_every_json_type():
    class Shade(str):
        pass
    data = {"n": 1, "f": 0.5, "b": True, "none": None, "s": "box 3", "sub": Shade("ante"),
            "t": (1, [2, {"k": "v"}]), 3: "int key"}
    out = PublicEvent("bet", "T1", 1, "bets_open", data).data
    assert out == {"n": 1, "f": 0.5, "b": True, "none": None, "s": "box 3", "sub": "ante",
                   "t": [1, [2, {"k": "v"}]], 3: "int key"}
    assert type(out["t"]) is list and out is not data and out["t"][1][1] is not data["t"][1][1]
    with pytest.raises(SecrecyError, match=r"card text 'Ah' at bet\.sub"):
        PublicEvent("bet", "T1", 1, "bets_open", {"sub": Shade("Ah")})


_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4),
                  st.sampled_from(["As", "10h", " kd ", "box 3", "Ts"]),
                  st.sampled_from(full_deck()), st.builds(object))
_values = st.recursive(_leaf, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.tuples(kids, kids),
    st.dictionaries(st.one_of(st.text(max_size=3), st.sampled_from(["Qs", "pot"])), kids,
                    max_size=4)), max_leaves=12)


def _holds_secret(value):
    """An oracle written apart from the walk: a raw card, card text, or anything that is not
    plain data, anywhere in ``value`` (keys included)."""
    if isinstance(value, str):
        return re.match(r"^\s*(10|[2-9TJQKAtjqka])[shcdSHCD♠♥♣♦]\s*$", value) is not None
    if value is None or isinstance(value, (bool, int, float)):
        return False
    if isinstance(value, dict):
        return any(_holds_secret(k) or _holds_secret(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_holds_secret(v) for v in value)
    return True                                   # a Card, or any other object


@given(_values)
def test_an_event_is_refused_exactly_when_it_holds_a_card_and_copied_as_json_otherwise(value):
    if _holds_secret(value):
        with pytest.raises(SecrecyError):
            PublicEvent("x", "T1", 1, "s", {"v": value})
    else:
        published = PublicEvent("x", "T1", 1, "s", {"v": value}).to_json()["v"]
        assert published == json.loads(json.dumps(value))


def _vouched_by_definition(v, value, face_up):
    """What vouching means, spelled out: every Card, and every text that spells a card
    (Card.parse accepts it and it reads as a card), face up at the table becomes its
    Revealed token; everything else is kept as it is."""
    if isinstance(value, str) or isinstance(value, Card):
        try:
            card = value if isinstance(value, Card) else Card.parse(value)
        except Exception:
            return value
        if isinstance(value, str) and not re.match(
                r"^\s*(10|[2-9TJQKAtjqka])[shcdSHCD♠♥♣♦]\s*$", value):
            return value
        return v._revealed(face_up[card]) if card in face_up else value
    if isinstance(value, dict):
        return {k: _vouched_by_definition(v, x, face_up) for k, x in value.items()}
    if isinstance(value, (list, tuple)):
        return [_vouched_by_definition(v, x, face_up) for x in value]
    return value


_TEXT = st.one_of(st.sampled_from(["As", "kd", " 10h ", "Q♠", "Td", "box 2", "pair", "A",
                                   "10", "Ass", "2c", "croupier", ""]), st.text(max_size=5))
_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), _TEXT,
              st.sampled_from([Card.parse("As"), Card.parse("2c"), Card.parse("Kd")])),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_TEXT, inner, max_size=4)), max_leaves=20)


@given(value=_JSON, up=st.sets(st.sampled_from(["As", "Kd", "Th", "Qs"])))
def test_vouch_turns_exactly_the_face_up_cards_into_tokens(value, up):
    v = CardVault()
    for text in ("As", "Kd", "Th", "Qs", "2c"):
        slot = v.deal(box(1), Card.parse(text))
        if text in up:
            v.expose(slot)
    face_up = {s.card: s for s in v._slots if s.face_up}
    # (Revealed compares by its card and never equals a Card or a text: a card face down
    # turned into a token, or a face-up one left raw, makes the two differ.)
    assert v.vouch(value) == _vouched_by_definition(v, value, face_up)


def test_a_deck_alarm_raised_by_a_face_down_card_waits_for_the_round_to_end():
    """The ledger raises a duplicate the moment the second copy comes out. Shown then, it
    would say that the card just dealt face down (here the croupier's) is one already seen
    in this deck: the display, the light and the view's stop flag wait for the round's end."""
    from controller.integrity.monitor import IntegrityMonitor
    from controller.table import Table
    from controller.rules import get_game
    from table_helpers import DEVICES

    t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices=DEVICES,
              integrity=IntegrityMonitor(), integrity_action="stop")
    t.command("open_table", role="supervisor")
    t.command("deck_ready")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "Kd", "7h", "2c", "5d", "9s")
    t.command("decide", box=1, decision="play")
    t.command("confirm_result")
    t.command("next_round")                          # the shoe goes on: same deck
    t.outbox.clear()
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "3h", "4h", "8c", "Jd", "As")            # the croupier's 2nd card: As again
    assert t.vault.public_hand(CROUPIER) == [None, None]
    assert "integrity_alarm" not in [e.kind for e in t.outbox]
    assert t.public_view()["integrity_stop"] is False
    draw(t, "Qc")
    t.command("decide", box=1, decision="play")      # the croupier's hand is revealed
    before = [e.kind for e in t.outbox]
    assert "integrity_alarm" not in before[:before.index("hand_revealed")]
    t.command("confirm_result")
    shown = [e.to_json() for e in t.outbox if e.kind == "integrity_alarm"]
    assert len(shown) == 1 and "twice" in shown[0]["display"]
    assert not CARD_RE.search(shown[0]["display"])
    assert t.public_view()["integrity_stop"] is True
    with pytest.raises(Exception, match="integrity"):
        t.command("next_round")


def test_the_unseen_cards_of_a_croupier_hand_set_aside_whole_stay_unseen():
    """78/2008 art. 11(2) with F4 ``next_hand``: the croupier takes the shuffler's next hand;
    the exposed card is set aside face up, the other two of its hand set aside unseen. Only
    the exposed card may leave; the other two never do."""
    t = table("fortune-3-card-poker", "shuffler",
              interpretations={"croupier_card_exposed_shuffler": "next_hand"})
    t.command("place_bet", box=2, wager="ante", amount=10, player="ana")
    t.command("close_bets")
    hand(t, "2h", "3h", "4h")                        # box 2
    hand(t, "Ks", "Qd", "Jc")                        # the croupier
    assert t.state == "player_decisions"
    t.outbox.clear()
    t.command("exposed_card", recipient="croupier")  # the dealer saw the K
    out = json.dumps([e.to_json() for e in t.outbox]) + json.dumps(t.public_view())
    assert "Qd" not in out and "Jc" not in out
    aside = [e.to_json() for e in t.outbox if e.kind == "card_set_aside"][-1]
    # Which of the three was seen, the shuffler cannot say: none is named.
    assert aside["cards"] == [None, None, None]
    hand(t, "5s", "6s", "7s")                        # the croupier's next hand
    t.command("decide", box=2, decision="play", player="ana")
    out = json.dumps([e.to_json() for e in t.outbox]) + json.dumps(t.public_view())
    assert "Qd" not in out and "Jc" not in out
    assert sorted(settlement_of(t)["hands"]["croupier"]["cards"]) == ["5s", "6s", "7s"]


def settlement_of(t):
    return [e.to_json() for e in t.outbox if e.kind == "settlement"][-1]


@pytest.mark.parametrize("game, mode", [("q-poker", "shoe"), ("fortune-3-card-poker", "shoe"),
                                        ("fortune-3-card-poker", "shuffler")])
def test_a_void_hand_on_a_box_without_a_bet_is_never_opened(game, mode):
    """89/2004 art. 11(4), 78/2008 art. 11(3): cards dealt by mistake to a box with no bet
    make a void hand there, and the round goes on. Art. 9(1) opens the players' hands and the
    reveal shows every hand still in: a void hand on a box nobody plays is neither, so its
    cards stay face down, and no event or view may name them, to the end of the round."""
    from table_helpers import placed
    t = table(game, mode)
    wager = "versus_croupier" if game == "q-poker" else "ante"
    t.command("place_bet", box=2, wager=wager, amount=10)
    if mode == "shoe":
        draw(t, "As")
        placed(t, 4)                        # box 2's first card lands on box 4: no bet there
        assert 4 in t.round.void_boxes
        for c in ("Kd", "Qh", "2c", "3c", "4d", "5d"):
            due = t.public_view()["expected"]["recipient"]
            draw(t, c)
            if due.startswith("box"):
                placed(t, int(due.split()[1]))
        stray = ["As"]
    else:
        t.command("close_bets")
        hand(t, "As", "Ah", "Ad")
        placed(t, 4)                        # box 2's hand lands on box 4
        assert 4 in t.round.void_boxes
        hand(t, "Kd", "Qh", "2c")
        placed(t, 2)
        hand(t, "3c", "4d", "5d")           # the croupier's
        stray = ["As", "Ah", "Ad"]
    assert t.state == "player_decisions"
    t.command("decide", box=2, decision="play")
    t.command("confirm_result")
    texts = _watch(t)
    assert t.public_view()["hands"]["box 4"] == [None] * len(stray)
    for c in stray:
        assert _first_seen(texts, c) is None, f"the void hand's {c} was shown"
    # the hands in play are shown as ever
    assert _first_seen(texts, "Kd") is not None and _first_seen(texts, "5d") is not None


@pytest.mark.parametrize("report", [
    ev.Jam(device="shoe", ts=1.0, where="reader, card Kd"),
    ev.Malfunction(device="shoe", ts=1.0, code=7, text="could not eject 5c"),
])
def test_a_device_text_naming_a_face_down_card_leaves_the_controller_without_it(report):
    """A device's own words (a jam's place, a malfunction's text) are its firmware's free
    text, published as the condition and the ruling's detail and logged: one that names a
    card (the one stuck in the reader, the next in the shoe) must not carry it out."""
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "Kd", "Th")                         # the croupier's Kd is face down
    t.handle_device(report)
    assert t.state == "malfunction"
    texts = _watch(t)
    for c in ("Kd", "5c"):
        assert _first_seen(texts, c) is None, f"{c} left in a device's text"
    shown = [e.to_json() for e in t.outbox if e.kind in ("device_condition", "ruling")]
    assert any("[card]" in json.dumps(d) for d in shown)      # the rest of the words stay
    logged = json.dumps(redact_device_event(report.to_json()))
    assert not CARD_RE.search(logged), logged


def test_a_card_entered_that_a_face_down_card_is_is_not_told_by_the_open_rounds_journal(
        tmp_path, capsys):
    """A card entered at the showdown that the shoe read for a folded hand is taken without a
    word (a refusal would name the folded card). The conflict goes to the journal; read out
    while the round is open (`journal show/export`, `integrity report`, as the pit may), the
    command with the card typed is shown, so a conflict record beside it would say that the
    folded hand holds that card: it is journaled when the round ends, as the display's alarms
    are shown then."""
    from controller.cli import main
    from controller.journal import Journal
    from controller.rules import get_game
    from controller.table import Table
    from controller.table.runner import TableRunner
    from table_helpers import DEVICES, LAYOUT

    path = tmp_path / "j.db"
    t = Table("T1", get_game("texas-holdem"), "shoe", layout_boxes=LAYOUT["texas-holdem"],
              devices=DEVICES, holdem={"small_blind": 5, "big_blind": 10, "rake": 0})
    runner = TableRunner(t, Journal.open(path, "T1"))
    runner.command("open_table", "supervisor")
    runner.command("deck_ready")
    runner.command("seat_players", seats=[1, 3, 6], stacks={"1": 500, "3": 500, "6": 500},
                   button=1)

    def shoe(*cards, face_up=False):
        for c in cards:
            runner.device(ev.CardDrawn(device="shoe", ts=0.0, face_up=face_up,
                                       card=None if c is None else Card.parse(c)))
    shoe("Kc", "Qd", "As", "Kd", "Qc", None)              # 3, 6, 1, 3, 6, 1 (unread)
    runner.command("holdem_action", seat=1, action="call")
    runner.command("holdem_action", seat=3, action="fold")     # Kc Kd: never shown
    runner.command("holdem_action", seat=6, action="check")
    for street in (("5h", "Ah", "Qs", "3d"), ("6h", "9c"), ("8h", "Jd")):
        shoe(street[0])
        shoe(*street[1:], face_up=True)
        runner.command("holdem_action", seat=6, action="check")
        runner.command("holdem_action", seat=1, action="check")
    assert t.state == "croupier_reveal"
    runner.command("enter_cards", "dealer", recipient="box 1", cards=["Kd"])
    assert t.state == "settlement"

    def read(*argv):
        assert main([*argv, "--journal", str(path)]) == 0
        return capsys.readouterr().out
    while_open = [read("journal", "show", "last"), read("journal", "show", "last", "--json"),
                  read("journal", "export"), read("integrity", "report", "--json")]
    for out in while_open:
        assert "Kc" not in out and "duplicate" not in out, out
    shown = [json.loads(line) for line in while_open[1].splitlines()]
    typed = next(r["seq"] for r in shown if r["payload"].get("name") == "enter_cards")
    assert not [r for r in shown if r["seq"] > typed and r["kind"] == "integrity"]
    assert '"Kd"' in while_open[2]                       # the card typed, as it was given
    runner.command("confirm_result")
    closed = read("journal", "export")
    assert "duplicate_card" in closed and "box 3" in closed  # the conflict, once it closes
    runner.journal.close()


def test_a_device_whose_name_reads_as_a_card_does_not_stop_the_table():
    """A device names itself (vendor, model, serial, firmware): a model "2D" reads as a card.
    Published as it is, the walk refuses it as a face-down card's text: the table faulted at
    every link-up and no view could be built. It is shown marked as the device's name."""
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.handle_device(ev.LinkUp(device="shoe", ts=0.0, identity=ev.DeviceIdentity(
        "shoe", "acme", "2D", "5s", "1.0", "ab" * 16, True)))
    assert t.state == "bets_open"
    assert "controller_fault" not in [e.kind for e in t.outbox]
    shoe = t.public_view()["devices"]["shoe"]
    assert shoe["vendor"] == "acme" and "2D" in shoe["model"] and "5s" in shoe["serial"]
    assert t.identities["shoe"]["model"] == "2D"           # kept as given, for the journal
