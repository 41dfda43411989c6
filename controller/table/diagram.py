"""Draw the table machine as a mermaid state diagram, straight from its definition.

``python -m controller.table.diagram > docs/state-machine.md`` regenerates the document; a test
checks that the committed document matches the machine.
"""
from __future__ import annotations

from .flow import FLOWS
from .machine import COMMANDS, STATES, TRANSITIONS

INTRO = """# The table machine

Generated from `controller/table/machine.py` by `python -m controller.table.diagram`; do not
edit by hand (a test checks it matches the machine).

One `transitions` machine per table, `auto_transitions=False` (no `to_<state>` shortcuts),
queued events, and an unexpected error lands in `malfunction`: a round past `bets_open` is void,
ruled as a machine failure while cards are still to come; a round in `bets_open` keeps its bets
and betting reopens on it once the malfunction is cleared, and one in `shuffling` waits for its
deck again (a shuffle the shuffler lost meanwhile, or one its deck check let go while the table
waited, is asked of it at the clear: nothing is sent for the round in `malfunction`). A round
begun by the input that failed, before the machine entered it (`open_table`, `next_round`, a
clear), is void at once as the game rules a machine failure before the deal, with its article
and nothing to return. A table that failed while `out_of_service` stays out of service at the
clear (the supervisor opens it with `open_table`); between rounds the clear begins the next
round. Under `[integrity] alarm = "stop"` a deck alarm pending when the round's deck is ready in
`shuffling` (the shuffler's shuffle done, or the croupier's `deck_ready` with the shoe) keeps
betting closed until `clear_integrity`. Every irregularity is ruled by the
game's `ruling` and published with its article; a device event that is not legal in the current
state is published as an `irregular_event` and changes nothing; a command that is not legal
raises an error and changes nothing. `[cond]` marks a transition taken only when its condition
holds (the next line with the same trigger and source is taken otherwise).
"""


def mermaid() -> str:
    lines = ["stateDiagram-v2", "    [*] --> out_of_service"]
    for t in TRANSITIONS:
        sources = t["source"] if isinstance(t["source"], list) else [t["source"]]
        label = t["trigger"] + (f" [{t['conditions']}]" if "conditions" in t else "")
        for src in sources:
            if t["trigger"] == "fail" and src not in ("dealing", "dice_shaking", "bets_open",
                                                       "bets_closed", "shuffling",
                                                       "out_of_service"):
                continue   # drawn once below, to keep the picture readable
            lines.append(f"    {src} --> {t['dest']}: {label}")
    lines.append("    note right of malfunction: fail is legal from every state")
    return "\n".join(lines)


def flows_table() -> str:
    rows = ["| game | bets close at | play/fold wager | hands open after the deal | "
            "betting streets | dice | fresh deck each round | articles |",
            "|---|---|---|---|---|---|---|---|"]
    for gid, f in FLOWS.items():
        rows.append(f"| `{gid}` | {f.close_bets_at} | {f.decision_wager or '-'} | "
                    f"{'yes' if f.hands_open_after_deal else 'no'} | "
                    f"{'yes' if f.betting_streets else 'no'} | {'yes' if f.dice else 'no'} | "
                    f"{'yes' if f.shuffle_every_round else 'no'} | {f.articles} |")
    return "\n".join(rows)


def commands_table() -> str:
    rows = ["| command | roles | arguments | what it does |", "|---|---|---|---|"]
    for c in COMMANDS.values():
        rows.append(f"| `{c.name}` | {', '.join(c.roles)} | "
                    f"{', '.join(f'`{p}`' for p in c.params) or '-'} | {c.help} |")
    return "\n".join(rows)


def document() -> str:
    return (INTRO + "\n## States and transitions\n\n```mermaid\n" + mermaid() + "\n```\n\n"
            + "States: " + ", ".join(f"`{s}`" for s in STATES) + ".\n\n"
            + "## The shape of each game's round\n\n" + flows_table() + "\n\n"
            + "## Dealer and supervisor commands\n\n`Table.command(name, role, **arguments)`; "
            + "a command that is not allowed now raises TablectlError naming why, and changes "
            + "nothing.\n\n" + commands_table() + "\n\n" + SWITCH_MODE_NOTE)


# Where switch_mode is taken, and the way from a shuffler's round to the shoe that
# deck_ready's refusal gives (machine.py, _cmd_deck_ready).
SWITCH_MODE_NOTE = """\
`switch_mode` is taken in `malfunction` (with no round held), `round_complete`, `round_void`
and `out_of_service`, never in `shuffling`: a table dealt by the shuffler whose round waits
for its shuffle refuses the croupier's `deck_ready`, and says so with the ways out it takes:
wait for the shuffler's shuffle done, or (when a shoe is configured) `close_table` (the round
ends not played), `switch_mode` with `mode` `shoe`, and `open_table`.
"""


if __name__ == "__main__":
    print(document(), end="")
