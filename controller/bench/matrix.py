"""The fault matrix: every fault the simulator can inject, at every phase, in every game and mode.

Each case plays one round on a :class:`~controller.bench.live.LiveTable` (simulated devices,
real drivers, real runner and journal), injects the fault on a device the round uses as the
round reaches the phase, lets the croupier and the supervisor carry on as the table asks,
then plays one clean round to see the table recover. A case passes when:

* nothing escaped the runner and the machine never fell into ``controller_fault``;
* the round ended (settled or void), its ``round_close`` is in the journal, and a void round
  cites an article of the game's own regulation;
* what the regulation says of this fault holds (see :func:`regulation_checks`; a refused
  command is ruled on over both rounds, see :func:`_refusal_checks`);
* the journal's hash chain verifies;
* the next round completes (the table recovered) or the table stopped safely (in
  ``malfunction`` or ``out_of_service``, never mid-round).

The faults that undo another (``door_close``, ``reconnect``, ``heartbeat_resume``, ``resume``)
are the supervisor's fixes: every case that needs them uses them.
"""
from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .live import LiveCroupier, LiveTable
from .rounds import GAMES as _ROUND_GAMES

# Hold'em is played here by the live croupier (seat_players, holdem_action, with the devices
# and their faults); .rounds.GAMES holds the other three.
GAMES = _ROUND_GAMES + ("texas-holdem",)
MODES = ("shoe", "shuffler")
FIXES = ("door_close", "reconnect", "heartbeat_resume", "resume")
REGULATION = {"q-poker": "89/2004", "fortune-3-card-poker": "78/2008",
              "super-pan-9": "261/96/M", "texas-holdem": "11/2008"}
# Art. 11(5) of 89/2004 and 11(4) of 78/2008: a shuffler malfunction while dealing voids the
# round; 261/96/M has no such rule (interpretation P3: the same reading); 11/2008 neither:
# art. 9(2) voids a dealing error that cannot be corrected, and interpretation H11
# (machine_failure, default void) reads a shuffler failure while dealing as one.
SHUFFLER_FAILURE_VOIDS = {"q-poker": "89/2004 art. 11(5)",
                          "fortune-3-card-poker": "78/2008 art. 11(4)",
                          "super-pan-9": "261/96/M",
                          "texas-holdem": "11/2008 art. 9(2)"}
# Faults the link layer must absorb: the round goes on as if nothing happened.
TRANSIENT = ("garbage", "corrupt_crc", "drop", "duplicate", "delay")
DICE_RESHAKE = ("die_not_flat", "die_out_of_cup")       # 261/96/M art. 2(4)
# Faults that change the next deck: a shuffler makes one every round, a shoe only when the
# croupier loads it. A case that arms one on the shoe has the croupier load the shoe with it
# before a card of a round is drawn: at once when armed while betting, else between the case's
# round and the next (a shoe is not changed in the middle of a deal).
DECK_FAULTS = ("deck_missing", "deck_extra", "deck_duplicate", "deck_sorted", "deck_cut",
               "deck_repeat", "deck_order")


def phases(game: str) -> tuple[str, ...]:
    if game == "super-pan-9":
        return ("betting", "shaking", "dealing", "settlement")
    return ("betting", "dealing", "decisions", "settlement")


def faults_for(device_class: str) -> list[str]:
    from firmware_sim.faults import FAULTS
    return [n for n, s in FAULTS.items() if device_class in s.devices and n not in FIXES]


@dataclass(frozen=True)
class Case:
    game: str
    mode: str
    phase: str
    device: str
    fault: str

    @property
    def name(self) -> str:
        return f"{self.game}/{self.mode}/{self.phase}/{self.device}:{self.fault}"


def all_cases() -> list[Case]:
    """The whole matrix: the dealing device of the mode (and the dice in Super Pan 9)."""
    out = []
    for game in GAMES:
        for mode in MODES:
            devices = [mode] + (["dice"] if game == "super-pan-9" else [])
            for phase in phases(game):
                for device in devices:
                    for fault in faults_for(device):
                        out.append(Case(game, mode, phase, device, fault))
    return out


def fault_args(case: Case) -> dict[str, Any]:
    if case.fault == "deck_order":
        from controller.rules.cards import full_deck
        return {"cards": [str(c) for c in reversed(full_deck())]}
    if case.fault in ("disconnect", "silence", "heartbeat_stop"):
        return {"duration_s": None}      # until the supervisor acts
    if case.fault == "delay":
        return {"seconds": 0.2}
    return {}


@dataclass
class Result:
    case: Case
    passed: bool
    outcome: str = ""
    article: str | None = None
    problems: list[str] = field(default_factory=list)
    recovered: str = ""
    seconds: float = 0.0


async def _run_case(case: Case, workdir: Path, seed: int) -> Result:
    live = LiveTable(workdir, case.game, case.mode, seed=seed)
    res = Result(case, False)
    problems = res.problems
    injected = {"done": False}

    async def inject(**trigger: Any) -> None:
        await live.act(case.device, "inject", case.fault, **trigger, **fault_args(case))
        injected["done"] = True

    async def hook(phase: str) -> None:
        if injected["done"]:
            return
        dev = live.sim[case.device]
        if case.phase == "dealing" and phase == "betting" and case.mode == "shuffler" \
                and case.device == "shuffler":
            # The shuffler deals by itself once bets close: arm the fault two cards in, by
            # the device's own count (the cards of its deck checks count too).
            await inject(at_card=dev.reached("at_card") + 2)
        elif case.device == "dice" and phase == "shaking" and case.phase in ("betting",
                                                                               "shaking"):
            if case.fault in DICE_RESHAKE or case.phase == "shaking":
                await inject(at_shake=dev.reached("at_shake") + 1)
            else:
                await inject()
        elif phase == case.phase:
            await inject()
            if case.device == "shoe" and case.fault in DECK_FAULTS and phase == "betting":
                await live.act("shoe", "load_deck", fresh=True)
            await asyncio.sleep(0.05)

    t0 = time.monotonic()
    try:
        await live.start()
        croupier = LiveCroupier(live, seed, hook)
        await live.must("open_table", "supervisor")
        mark = len(live.published)
        try:
            res.outcome = await croupier.play_round()
        except TimeoutError as exc:
            problems.append(f"the round did not end: {exc}")
        if croupier.stuck:
            problems.append(f"the supervisor had to void a round stuck in "
                            f"{', '.join(croupier.stuck)} (devices working, no way on)")
        if not injected["done"]:
            problems.append(f"phase {case.phase} was not reached; fault not injected")
        public = live.public(mark)
        if any(e.kind == "controller_fault" for e in public):
            problems.append("controller_fault: " + "; ".join(
                str(e.data.get("message")) for e in public if e.kind == "controller_fault"))
        closes = list(live.journal.records(kinds=["round_close"]))
        if res.outcome and not closes:
            problems.append("no round_close in the journal")
        elif closes:
            close = closes[0]       # the case's round is the table's first
            outcome = close.payload.get("outcome") if close else None
            res.article = close.article if close else None
            if outcome not in ("settled", "void"):
                problems.append(f"round_close outcome {outcome!r}")
            if outcome == "void" and not (res.article or "").startswith(REGULATION[case.game]) \
                    and not left_to_supervisor(case, public, res.article):
                problems.append(f"void without an article of {REGULATION[case.game]}: "
                                f"{res.article!r}")
            problems += regulation_checks(case, live, public, outcome, res.article)
        # The table recovers: one clean round.
        try:
            await croupier.fix_devices()
            if case.device == "shoe" and case.fault in DECK_FAULTS and case.phase != "betting":
                await live.act("shoe", "load_deck", fresh=True)
            res.recovered = await LiveCroupier(live, seed + 1).play_round()
        except TimeoutError:
            if live.state in ("malfunction", "out_of_service"):
                res.recovered = f"stopped safely ({live.state})"
            else:
                problems.append(f"the table did not recover; it is in {live.state}")
        if injected["done"]:
            left = still_armed(live, case.device)
            if left:
                problems.append(f"the {case.fault} was armed but never took effect in either "
                                f"round (still armed: {', '.join(left)})")
        if case.fault == "refuse":
            # Checked over both rounds: a refusal armed late in a round meets the next
            # round's first command (a shuffle, a hand, a shake).
            problems += _refusal_checks(case, live)
        if live.escaped:
            problems.append("escaped: " + "; ".join(repr(e) for e in live.escaped[:3]))
        report = live.journal.verify()
        if not report.ok:
            problems.append(f"journal: {report}")
    except Exception as exc:    # noqa: BLE001 - a case that blows up is a failed case
        problems.append(f"{type(exc).__name__}: {exc}")
    finally:
        try:
            await live.close()
        except Exception as exc:   # noqa: BLE001
            problems.append(f"close: {exc!r}")
    res.seconds = time.monotonic() - t0
    res.passed = not problems
    return res


# Deck faults that can put one face twice into a single round's cards.
DECK_TWICE = ("deck_extra", "deck_duplicate")


def left_to_supervisor(case: Case, public: list[Any], article: str | None) -> bool:
    """A round dealt a card twice from a deck with an extra or duplicated card: the rules
    cannot settle it, no article speaks of a defective deck, and the table leaves the round
    to the supervisor (``settlement_refused``, then ``void_round`` with the reason;
    docs/controller.md). That void cites the supervisor, not an article."""
    return case.fault in DECK_TWICE and article == "supervisor" \
        and any(e.kind == "settlement_refused" for e in public)


def still_armed(live: LiveTable, device: str) -> list[str]:
    """What of an injected fault the simulated ``device`` still holds, waiting for its card,
    deck, shake, command or frame: a case whose fault is still waiting when both rounds are
    over has tested nothing."""
    dev = live.sim[device]

    def look() -> list[str]:
        rt = dev.runtime
        model = rt.model
        out = [f"{f.name} at {t}" for t, f in rt.schedule.pending()]
        for attr, what in (("_refusal", "a refusal"), ("_next_misread", "a misread"),
                           ("_next_face_up", "a card face up"),
                           ("_pending_changes", "a deck's content"),
                           ("_order_mode", "a deck's order"), ("_explicit", "a deck's order"),
                           ("_next_faults", "a die's fault")):
            if getattr(model, attr, None):
                out.append(what)
        out += [f"{name} of {armed[0]} frame(s)" for name, armed in rt.out_faults.items()
                if armed and armed[0] > 0]
        return out
    return dev.table._call(look)


def regulation_checks(case: Case, live: LiveTable, public: list[Any], outcome: str | None,
                      article: str | None) -> list[str]:
    """What the regulation (docs/regulations, docs/interpretations.md) says of this fault."""
    out = []
    if case.device == "shuffler" and case.mode == "shuffler" and case.phase == "dealing" \
            and case.fault in ("jam", "malfunction"):
        want = SHUFFLER_FAILURE_VOIDS[case.game]
        if outcome != "void" or not (article or "").startswith(want):
            out.append(f"a shuffler {case.fault} while dealing voids the round ({want}); "
                       f"got {outcome} {article}")
    if case.device == "dice" and case.fault in DICE_RESHAKE and case.phase in ("betting",
                                                                                "shaking"):
        reshakes = [e for e in public if e.kind == "reshake"]
        if not reshakes or not all(str(e.data.get("article", "")).startswith(
                "261/96/M art. 2(4)") for e in reshakes):
            out.append("a die not flat or out of the cup: the banker shakes again "
                       "(261/96/M art. 2(4))")
        if outcome == "void":
            out.append("a dice fault never voids the round (261/96/M art. 2(4))")
    if case.fault in TRANSIENT:
        if outcome != "settled":
            out.append(f"a {case.fault} on the link must not change the round; it ended "
                       f"{outcome} ({article})")
    if case.fault in TRANSIENT or case.fault == "duplicate":
        for cls, kinds in (("shoe", ("card_drawn",)), ("shuffler", ("hand_dispensed",
                                                                    "card_dispensed"))):
            dev = live.sim.devices.get(cls)
            if dev is None:
                continue
            for kind in kinds:
                sent, taken = len(dev.emitted(kind)), live.count(cls, kind)
                if sent != taken:
                    out.append(f"{cls} emitted {sent} {kind}, the table took {taken}")
    if case.game == "super-pan-9" and case.fault == "face_up" and outcome == "void":
        out.append("an exposed card stays valid in Super Pan 9 (261/96/M art. 4)")
    if case.game == "texas-holdem" and case.fault == "face_up" and outcome == "void":
        out.append("an exposed card is a dealing error the croupier rectifies (11/2008 "
                   "art. 9(1)); it never voids the hand")
    return out


def _refusal_checks(case: Case, live: LiveTable) -> list[str]:
    """A refused command reaches the journal as the device's input; a refused hand or card
    voids its round as a failure of the shuffler would (SHUFFLER_FAILURE_VOIDS); a refused
    shake is shaken again and a refused deck check is let go, and their round goes on."""
    journal = live.journal
    refusals = [r for r in journal.records(kinds=["device"])
                if r.payload["event"]["kind"] == "command_refused"]
    if not refusals:
        return ["the armed refusal met no command in either round"]
    closes = {r.round_id: r for r in journal.records(kinds=["round_close"])}
    out = []
    for r in refusals:
        action = r.payload["event"]["action"]
        close = closes.get(r.round_id)
        if close is None:
            continue        # refused between rounds (a shuffle): no round to rule on
        outcome = close.payload.get("outcome")
        if action.startswith("dispense"):
            want = SHUFFLER_FAILURE_VOIDS[case.game]
            if outcome != "void" or not (close.article or "").startswith(want):
                out.append(f"a refused {action} while dealing voids the round ({want}); got "
                           f"{outcome} {close.article}")
        elif action == "shake" and outcome != "settled":
            out.append(f"a refused shake shook nothing: the round goes on; it ended {outcome} "
                       f"({close.article})")
        elif action == "deck_check" and outcome != "settled":
            out.append(f"a refused deck check holds nothing back: the round goes on; it ended "
                       f"{outcome} ({close.article})")
    return out


async def _bounded(case: Case, workdir: Path, seed: int, timeout: float) -> Result:
    try:
        return await asyncio.wait_for(_run_case(case, workdir, seed), timeout)
    except asyncio.TimeoutError:
        return Result(case, False, problems=[f"the case did not finish in {timeout:g} s"],
                      seconds=timeout)


def run_cases(cases: list[Case], seed: int = 1, workdir: str | Path | None = None,
              progress: Any = None, case_timeout: float = 60.0) -> list[Result]:
    """Run ``cases``, one fresh table each; ``progress(result)`` after each."""
    results = []
    base = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="tablectl-matrix-"))
    for i, case in enumerate(cases):
        res = asyncio.run(_bounded(case, base / f"case-{i:04d}", seed + i, case_timeout))
        results.append(res)
        if progress:
            progress(res)
    return results


def render(results: list[Result]) -> str:
    """Markdown: a table of cases passed per fault (rows) and game/mode (columns), then every
    failure with its reasons."""
    cols = [(g, m) for g in GAMES for m in MODES]
    rows: dict[str, dict[tuple[str, str], list[Result]]] = {}
    for r in results:
        key = f"{r.case.device}: {r.case.fault}"
        rows.setdefault(key, {}).setdefault((r.case.game, r.case.mode), []).append(r)
    short = {"q-poker": "Q Poker", "fortune-3-card-poker": "Fortune 3CP",
             "super-pan-9": "Super Pan 9", "texas-holdem": "Hold'em"}
    head = "| fault | " + " | ".join(f"{short[g]} {m}" for g, m in cols) + " |"
    lines = [f"# Fault matrix: {sum(r.passed for r in results)} of {len(results)} cases "
             "passed", "",
             "Each cell: cases passed / cases run (one case per phase of the round). "
             "`–`: not applicable or not sampled.", "", head,
             "|" + "---|" * (len(cols) + 1)]
    for key in sorted(rows):
        cells = []
        for col in cols:
            rs = rows[key].get(col, [])
            cells.append("–" if not rs else f"{sum(r.passed for r in rs)}/{len(rs)}"
                         + ("" if all(r.passed for r in rs) else " ✗"))
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    failed = [r for r in results if not r.passed]
    if failed:
        lines += ["", "## Failures", ""]
        for r in failed:
            lines.append(f"- `{r.case.name}`: {'; '.join(r.problems)}")
    return "\n".join(lines) + "\n"
