"""[integrity] decks, deck_ids and alpha reach the table's monitor the way the service builds
it, and a card of a back not listed is a foreign card only when the table lists its backs."""
from config_helpers import BASE
from controller.config import parse_text
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import Card
from controller.service import integrity_monitor
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev


def runner_for(tmp_path, text):
    cfg = parse_text(text)
    table = Table(cfg.table_id, get_game(cfg.game), cfg.mode, layout_boxes=cfg.boxes,
                  interpretations=cfg.interpretations, devices={"shoe": "shoe"},
                  integrity=integrity_monitor(cfg), integrity_action=cfg.integrity_alarm)
    journal = Journal.open(tmp_path / "journal.db", cfg.table_id)
    published = []
    run = TableRunner(table, journal, publish=published.append)
    run.command("open_table", "supervisor")
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=2)
    return run, published


def alarms(run):
    return [r.payload for r in run.journal.records() if r.kind == "integrity"
            and r.payload.get("record") == "alarm"]


def deal(run, *cards):
    for text, deck_id in cards:
        run.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(text), deck_id=deck_id))


def test_a_card_of_an_unlisted_back_is_foreign_when_deck_ids_are_configured(tmp_path):
    run, published = runner_for(tmp_path, BASE + "\n[integrity]\ndeck_ids = [1, 2]\n")
    deal(run, ("As", 1), ("Kd", 2), ("7h", 9))
    found = alarms(run)
    assert [(a["kind"], a["cards"], a["deck_ids"]) for a in found] == [
        ("foreign_card", ["7h"], [9])]
    # Shown when the round ends: the card that raised it is face down until then.
    assert not [e for e in published if e.kind == "integrity_alarm"]
    deal(run, ("2c", 1), ("3c", 1), ("4c", 1))
    run.command("decide", box=1, decision="play")
    run.command("confirm_result")
    shown = [e.data for e in published if e.kind == "integrity_alarm"]
    assert [d["alarm"] for d in shown] == ["foreign_card"]
    assert "7h" not in shown[0]["display"]          # the card may still be face down
    run.journal.close()


def test_without_deck_ids_no_back_is_foreign(tmp_path):
    run, published = runner_for(tmp_path, BASE)
    deal(run, ("As", 1), ("Kd", 2), ("7h", 9))
    assert not [a for a in alarms(run) if a["kind"] == "foreign_card"]
    assert not [e for e in published if e.kind == "integrity_alarm"]
    run.journal.close()


def test_decks_and_alpha_reach_the_monitor():
    cfg = parse_text(BASE + '\n[interpretations]\ndecks = "several"\n'
                     "\n[integrity]\ndecks = 2\nalpha = 1e-4\ndeck_ids = [3]\n")
    mon = integrity_monitor(cfg)
    assert (mon.config.decks, mon.config.alpha, mon.config.deck_ids) == (2, 1e-4, {3})
    assert mon.config.deck_per_round is False
    # Two decks hold each face twice: the same card out twice is no duplicate.
    for _ in range(2):
        up = mon.observe(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse("As"), deck_id=3))
        assert not up.alarms
    up = mon.observe(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse("As"), deck_id=3))
    assert [a.kind for a in up.alarms] == ["duplicate_card"]
    default = integrity_monitor(parse_text(BASE))
    assert (default.config.decks, default.config.alpha, default.config.deck_ids) == (1, 1e-5,
                                                                                    None)


def test_super_pan_9_monitor_closes_a_deck_every_round():
    text = BASE.replace('"q-poker"', '"super-pan-9"').replace("boxes = 7", "boxes = 8")
    assert integrity_monitor(parse_text(text)).config.deck_per_round is True
