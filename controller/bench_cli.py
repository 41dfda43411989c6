"""``tablectl bench [--json | --markdown] [--quick] [--only NAME…] [--cpu-wakeup-us US]
[--listener-priority N] [--from FILE]``: the controller's figures and baselines.

Each figure is printed beside the baseline measured in the same run, as a ratio, and with
what it means on a Raspberry Pi (ten times slower than most development machines). ``--json``
prints one document: ``machine`` (where it ran, with ``interpreter``: ``executable``,
``version``, ``origin``, ``optimisations`` and ``note``, controller/bench/interpreter.py),
``quick``, ``pi_factor``, ``cpu_wakeup`` (``us``, ``held``, ``error``: the CPU wake-up latency
request the run held), ``listener`` (``priority``, ``policies``: the real-time priority the
event stream's listeners asked for and what they got, each ``fifo``, ``other`` or ``other: ``
and why) and ``benchmarks``, each benchmark with its ``title`` and ``figures``: key ->
``title``, ``value``, ``unit``, ``baseline`` {``title``, ``value``, ``unit``}, ``ratio``
(value / baseline), ``better`` (``lower`` or ``higher``), ``pi`` {``value``, ``note``} and
``extra``. A benchmark that could not run has ``error`` instead of ``figures``.
docs/performance.md describes every figure. ``--markdown`` prints the run as the Markdown
tables that document keeps (controller/bench/markdown.py), and ``--from FILE`` measures
nothing: it prints a run saved with ``--json`` again.
"""
from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
import time
from typing import Any

from controller.bench import Options
from controller.errors import TablectlError


def register(sub: argparse._SubParsersAction) -> None:
    from controller.bench import BENCHMARKS

    p = sub.add_parser("bench", help="measure latency, throughput, footprint and the odds "
                                     "engine, each against its baseline",
                       description="Measure the controller's figures beside their baselines "
                                   "(docs/performance.md).")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.add_argument("--markdown", action="store_true",
                   help="Markdown tables on stdout, as docs/performance.md keeps them")
    p.add_argument("--from", dest="from_file", metavar="FILE", default=None,
                   help="measure nothing: print the run saved in FILE (tablectl bench --json) "
                        "again, as text, --markdown or --json")
    p.add_argument("--quick", action="store_true",
                   help="small samples (seconds, not minutes): to check the bench runs")
    p.add_argument("--only", nargs="+", metavar="NAME", default=None,
                   help=f"run only these: {', '.join(BENCHMARKS)}")
    p.add_argument("--cpu-wakeup-us", type=int, default=Options.cpu_wakeup_us, metavar="US",
                   help="[service] cpu_wakeup_us of the daemons started, also held by the "
                        "bench for the whole run (default 0, as a table runs; -1: measure "
                        "with no request, as the kernel leaves the CPUs)")
    p.add_argument("--listener-priority", type=int, default=Options.listener_priority,
                   metavar="N",
                   help="real-time (SCHED_FIFO) priority of the process that stamps the "
                        "daemon's events as they reach its stream, so that the simulated "
                        "devices on the same CPUs do not delay the stamp (default 10; 0: the "
                        "normal policy)")
    p.add_argument("--slowness", metavar="X", default=None,
                   help="how many times slower than a developer's machine this one is (about "
                        "10 on a Raspberry Pi; default 1, or TABLECTL_BENCH_SLOWNESS): the "
                        "bench's croupier gives a slow table that much longer before it calls "
                        "it stuck; no figure depends on it")
    p.set_defaults(func=cmd_bench)


SLOWNESS_ENV = "TABLECTL_BENCH_SLOWNESS"
SLOWNESS_MAX = 1000.0


def set_slowness(given: str | None) -> float:
    """The run's slowness from ``--slowness`` (else the environment's), checked, and put in
    the environment the bench's croupiers read when they load."""
    source = "--slowness" if given is not None else SLOWNESS_ENV
    raw = given if given is not None else os.environ.get(SLOWNESS_ENV) or "1"
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 1.0 <= value <= SLOWNESS_MAX:     # NaN fails both
        raise TablectlError(f"{source} {raw!r}: give how many times slower than a developer's "
                            f"machine this one runs, a number from 1 to {SLOWNESS_MAX:g} "
                            "(about 10 on a Raspberry Pi)")
    os.environ[SLOWNESS_ENV] = repr(value)
    return value


def run_benchmarks(names: list[str] | None = None, quick: bool = False,
                   progress: Any = None, cpu_wakeup_us: int = Options.cpu_wakeup_us,
                   listener_priority: int = Options.listener_priority) -> dict[str, Any]:
    """Run the named benchmarks (all by default); the document ``--json`` prints.
    ``cpu_wakeup_us``: the CPU wake-up latency the run holds, as ``[service]`` of the same
    name (controller.cpu_latency); ``-1`` holds none. ``listener_priority``: the real-time
    priority of the event stream's listener (controller.bench.floor.Listener); 0: none."""
    from controller.bench import BENCHMARKS, OPTIONS, configure
    from controller.bench.figures import PI_FACTOR, machine
    from controller.cpu_latency import MAX_US, OFF, CpuLatency

    names = list(names or BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise TablectlError(f"no benchmark named {', '.join(unknown)}; choose from "
                            f"{', '.join(BENCHMARKS)}")
    if cpu_wakeup_us != OFF and not 0 <= cpu_wakeup_us <= MAX_US:
        raise TablectlError(f"--cpu-wakeup-us {cpu_wakeup_us}: give 0 to {MAX_US} "
                            "microseconds, or -1 to measure with no request")
    top = os.sched_get_priority_max(os.SCHED_FIFO)
    if not 0 <= listener_priority <= top:
        raise TablectlError(f"--listener-priority {listener_priority}: give 1 to {top} for the "
                            "real-time policy, or 0 for the normal one")
    _quiet_logs()
    doc: dict[str, Any] = {"machine": machine(), "quick": quick, "pi_factor": PI_FACTOR,
                           "cpu_wakeup": {"us": cpu_wakeup_us, "held": False, "error": None},
                           "listener": {"priority": listener_priority, "policies": []},
                           "benchmarks": {}}
    held: CpuLatency | None = None
    if cpu_wakeup_us != OFF:
        try:
            held = CpuLatency.hold(cpu_wakeup_us)
            doc["cpu_wakeup"]["held"] = True
        except TablectlError as exc:      # measured all the same; the document says so
            doc["cpu_wakeup"]["error"] = str(exc)
    configure(cpu_wakeup_us=cpu_wakeup_us, listener_priority=listener_priority)
    try:
        _run_each(doc, names, quick, progress)
    finally:
        doc["listener"]["policies"] = sorted(OPTIONS.listener_policies)
        configure()                 # the next run starts from the defaults
        if held is not None:
            held.release()
    return doc


def _run_each(doc: dict[str, Any], names: list[str], quick: bool, progress: Any) -> None:
    from controller.bench import BENCHMARKS

    for name in names:
        module = importlib.import_module(BENCHMARKS[name])
        if progress:
            progress(f"{name}: {module.TITLE} …")
        t0 = time.perf_counter()
        entry: dict[str, Any] = {"title": module.TITLE}
        try:
            entry["figures"] = {f.key: f.to_json() for f in module.run(quick=quick)}
        except (OSError, RuntimeError, TimeoutError, TablectlError) as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"
        entry["seconds"] = round(time.perf_counter() - t0, 3)
        doc["benchmarks"][name] = entry


def _quiet_logs() -> None:
    """The drivers log every event at info; a benchmark wants only warnings and worse."""
    from controller.logs import configure_logging

    configure_logging("error", "json", stream=sys.stderr)
    logging.getLogger().setLevel(logging.ERROR)


def cmd_bench(args: argparse.Namespace) -> int:
    if args.json and args.markdown:
        raise TablectlError("--json and --markdown both asked for: choose one output")
    if args.from_file is not None:
        from controller.bench.markdown import load

        measuring = [flag for flag, given in (("--only", args.only is not None),
                                              ("--quick", args.quick),
                                              ("--slowness", args.slowness is not None))
                     if given]
        if measuring:
            raise TablectlError(f"--from prints a saved run and measures nothing: leave out "
                                f"{' and '.join(measuring)}")
        doc = load(args.from_file)
    else:
        set_slowness(args.slowness)     # before a croupier's module is loaded
        quiet = args.json or args.markdown
        progress = None if quiet else (lambda s: print(s, file=sys.stderr, flush=True))
        doc = run_benchmarks(args.only, args.quick, progress, args.cpu_wakeup_us,
                             args.listener_priority)
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        print()
    elif args.markdown:
        from controller.bench.markdown import render_markdown

        sys.stdout.write(render_markdown(doc))
    else:
        print(render(doc))
    return 1 if any("error" in b for b in doc["benchmarks"].values()) else 0


def _wakeup_line(w: dict[str, Any]) -> str:
    if w["held"]:
        return (f"CPU wake-up latency held at {w['us']} µs for the run, as the service holds "
                "it ([service] cpu_wakeup_us)")
    if w["error"]:
        return f"CPU wake-up latency NOT held (asked {w['us']} µs): {w['error']}"
    return "CPU wake-up latency: no request (--cpu-wakeup-us -1), as the kernel leaves it"


def _interpreter_line(it: dict[str, Any]) -> str:
    from controller.bench.interpreter import built

    line = f"Interpreter: {it['executable']} {it['version']}, {built(it)}"
    return line if it["note"] is None else f"{line}\n  NOTE: {it['note']}"


def _listener_line(li: dict[str, Any]) -> list[str]:
    if not li["policies"]:
        return []           # no benchmark of this run read the event stream
    if li["policies"] == ["fifo"]:
        return [f"Event stream listener: real-time policy (SCHED_FIFO) at priority "
                f"{li['priority']}"]
    if not li["priority"]:
        return ["Event stream listener: the normal policy (--listener-priority 0)"]
    return [f"Event stream listener NOT always real-time (asked priority {li['priority']}): "
            f"{'; '.join(li['policies'])}"]


def render(doc: dict[str, Any]) -> str:
    """The document as a table for people."""
    from controller.bench.figures import fmt

    m = doc["machine"]
    lines = [f"tablectl bench{' --quick' if doc['quick'] else ''}: Python {m['python']}, "
             f"{m['cpus']} CPUs ({m['cpu'] or 'unknown CPU'}), load {m['load_average']}",
             _interpreter_line(m["interpreter"]),
             f"Pi: taken as {doc['pi_factor']:g} times slower than this machine",
             _wakeup_line(doc["cpu_wakeup"]), *_listener_line(doc["listener"]), ""]
    for name, b in doc["benchmarks"].items():
        lines.append(f"{b['title']}  [{name}, {b['seconds']:.1f} s]")
        if "error" in b:
            lines.append(f"  could not run: {b['error']}")
            lines.append("")
            continue
        for key, f in b["figures"].items():
            unit = f["unit"]
            ratio = f["ratio"]
            rtxt = "n/a" if ratio is None else (f"{ratio:.3g}x" if ratio >= 0.001
                                                 else f"{ratio:.2e}x")
            lines.append(f"  {f['title']}")
            lines.append(f"      {fmt(f['value'], unit):>18}   vs {fmt(f['baseline']['value'], unit)}"
                         f" ({f['baseline']['title']})   ratio {rtxt}"
                         f" ({f['better']} is better)")
            pi = f["pi"]
            lines.append(f"      Pi ≈ {fmt(pi['value'], unit)}: {pi['note']}")
        lines.append("")
    return "\n".join(lines).rstrip()
