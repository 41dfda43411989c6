"""``tablectl journal show`` and ``rounds`` say a console's hold and its release in words
(controller/journal_cli.py; the records: docs/journal.md ``commands_held``,
``commands_released``)."""
from controller.api import create_app
from controller.api.throttle import HELD, RELEASED
from controller.journal_cli import describe

from test_api_support import auth
from test_api_throttle import BET, Clock, client, limited, records, refused_one, runner  # noqa: F401


def test_journal_show_and_rounds_say_the_hold_and_its_release_in_words(runner, capsys):
    clock = Clock()
    app = create_app(runner, limited(2, 10), clock=clock)

    async def check(c):
        for _ in range(5):
            await refused_one(c)
        clock.now += 10
        await c.post("/api/commands/place_bet", headers=auth("dealer"), json=BET)
    client(app, check)
    held = next(r for r in records(runner) if r.kind == HELD)
    released = next(r for r in records(runner) if r.kind == RELEASED)
    assert describe(held) == ("dealer's commands held back: 2 refused by the table within "
                              "10 s (the limit, api.refused_limit); answered 429 until released")
    assert describe(released) == (f"dealer's commands taken again (the window passed): 3 turned "
                                  f"away while held since record {held.seq}")
    from controller.cli import main
    path = str(runner.journal.path)
    capsys.readouterr()
    assert main(["journal", "show", "last", "--journal", path]) == 0
    shown = [ln for ln in capsys.readouterr().out.splitlines() if "commands_" in ln]
    assert [ln.split()[0] for ln in shown] == [str(held.seq), str(released.seq)]
    assert describe(held) in shown[0] and describe(released)[:40] in shown[1]
    assert main(["journal", "rounds", "--journal", path]) == 0
    listed = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Console")]
    assert len(listed) == 2 and f"record {held.seq} (round 1)" in listed[0]
    assert describe(held) in listed[0] and describe(released) in listed[1]
