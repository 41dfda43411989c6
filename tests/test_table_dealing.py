"""The dealing tracker against the real plans of the four games."""
from hypothesis import given, settings, strategies as st

from controller.rules import get_game
from controller.rules.base import Irregularity, Mode, PlanRequest
from controller.rules.cards import full_deck
from controller.table.dealing import DealingTracker


def plan(game, mode, boxes, **kw):
    return get_game(game).dealing_plan(PlanRequest(boxes=tuple(boxes), mode=Mode(mode), **kw))


REQUESTS = [
    ("q-poker", {}), ("fortune-3-card-poker", {}),
    ("texas-holdem", {"button": None}),
    ("super-pan-9", {"banker": 1, "dice": (3, 4, 5, 6)}),
]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(REQUESTS), st.sampled_from(["shoe", "shuffler"]),
       st.sets(st.integers(2, 7), min_size=2, max_size=5))
def test_following_the_plan_is_never_irregular(req, mode, boxes):
    game, kw = req
    p = plan(game, mode, sorted(boxes), **kw)
    t = DealingTracker(p, sorted(boxes) + ([1] if game == "super-pan-9" else []))
    deck = iter(full_deck())
    outs = []
    for deal in p:
        if mode == "shoe" or deal.cards == 1:
            for _ in range(deal.cards):
                outs.append(t.card(next(deck), deal.face_up))
        else:
            outs.append(t.hand([next(deck) for _ in range(deal.cards)]))
    assert all(o.ok for o in outs)
    assert t.done and outs[-1].done
    assert t.card(next(deck)).irregularity is Irregularity.WRONG_COUNT   # beyond the plan


def test_a_hand_of_the_wrong_size_is_wrong_count():
    t = DealingTracker(plan("q-poker", "shuffler", [1, 3]), [1, 3])
    assert t.hand(full_deck()[:2]).irregularity is Irregularity.WRONG_COUNT


def test_face_up_card_is_attributed_to_its_planned_recipient():
    t = DealingTracker(plan("q-poker", "shoe", [1]), [1])
    assert t.card(full_deck()[0], face_up=True).irregularity is \
        Irregularity.PLAYER_CARD_EXPOSED
    assert t.card(full_deck()[1], face_up=True).irregularity is \
        Irregularity.CROUPIER_CARD_EXPOSED


def test_box_sensors_find_wrong_box_and_unbet_box():
    t = DealingTracker(plan("q-poker", "shoe", [2, 4]), [2, 4])
    t.card(full_deck()[0])                   # for box 2
    out = t.placed(5)                        # lands on box 5: no bet there
    assert out.irregularity is Irregularity.CARD_TO_BOX_WITHOUT_BET
    assert out.recipient.box == 2
    t.astray()                               # ruled a void hand on box 5 (89/2004 art. 11(4))
    assert t.expected.deal.recipient.box == 2   # still owed
    t.card(full_deck()[1])                   # box 2 again
    assert t.placed(2).ok
    t.card(full_deck()[2])                   # for box 4
    assert t.placed(2).irregularity is Irregularity.WRONG_ORDER


def test_holdem_streets_end_where_betting_begins():
    t = DealingTracker(plan("texas-holdem", "shoe", [1, 2], button=1), [1, 2])
    deck = iter(full_deck())
    ends = []
    while not t.done:
        out = t.card(next(deck), t.expected.deal.face_up)
        if out.street_done:
            ends.append(out.step.deal.street)
    assert ends == ["hole", "flop", "turn", "river"]


def test_a_card_put_right_from_an_unbet_box_is_placed_and_owed_no_more():
    t = DealingTracker(plan("texas-holdem", "shoe", [2, 4]), [2, 4])
    first = t.expected.deal.recipient
    t.card(full_deck()[0])
    out = t.placed(5)                        # seat 5 has no player
    assert out.irregularity is Irregularity.CARD_TO_BOX_WITHOUT_BET and out.recipient == first
    t.put_right()                            # rectified (11/2008 art. 9(1))
    assert t.expected.index == 1               # the plan goes on: nothing owed again
    second = t.expected.deal.recipient
    t.card(full_deck()[1])
    assert t.placed(second.box).ok


def test_a_rectified_hand_goes_to_the_recipients_owed_next_within_the_street():
    # Hold'em, seats 2 and 5, button 2: hole cards 5, 2, 5, 2, then the flop's burn.
    from controller.rules.base import BURN, box
    deck = full_deck()
    t = DealingTracker(plan("texas-holdem", "shuffler", [2, 5], button=2), [2, 5])
    t.card(deck[0])
    assert t.hand(deck[1:3]).irregularity is Irregularity.WRONG_COUNT   # nothing consumed
    parts, spare = t.rectify_count(deck[1:3])
    assert [(p.recipient, p.cards) for p in parts] == [(box(2), (deck[1],)),
                                                       (box(5), (deck[2],))]
    assert spare == () and not parts[-1].street_done
    parts, spare = t.rectify_count(deck[3:5])        # the last hole card and one more
    assert [p.recipient for p in parts] == [box(2)] and parts[-1].street_done
    assert spare == (deck[4],)                        # beyond the street: no one's
    assert t.expected.deal.recipient == BURN          # the flop as planned
    assert all(t.placed(b).ok for b in (5, 2, 5, 2))    # each card awaited on its seat


def test_a_short_hand_leaves_the_rest_of_its_step_owed():
    deck = full_deck()
    p = plan("super-pan-9", "shuffler", [2, 3], banker=1, dice=(1, 1, 1, 2))
    t = DealingTracker(p, [1, 2, 3])
    first = t.expected.deal.recipient
    parts, spare = t.rectify_count(deck[:1])
    assert [p.recipient for p in parts] == [first] and spare == ()
    assert t.expected.deal.recipient == first and t.owed_in_step() == 1
    assert t.hand(deck[1:3]).irregularity is Irregularity.WRONG_COUNT  # one card is owed
    out = t.hand(deck[1:2])
    assert out.ok and t.expected.deal.recipient != first and t.owed_in_step() == 2
