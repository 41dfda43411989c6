"""A bench document as Markdown: the tables docs/performance.md keeps of the latest full run.

``tablectl bench --json > run.json`` measures once; ``tablectl bench --from run.json
--markdown`` prints that run's tables again without measuring, so the figures in the
documentation are the run's own, not copied by hand. :func:`load` checks that a file is such a
document before anything is printed.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controller.errors import TablectlError

from .figures import fmt
from .interpreter import built

HOW = ("`tablectl bench --json > run.json`, then `tablectl bench --from run.json --markdown` "
       "prints these tables")


def load(path: str | Path) -> dict[str, Any]:
    """The bench document saved in ``path`` (``tablectl bench --json``), or TablectlError
    naming what is wrong with it and how to get a good one."""
    way_out = "save one with tablectl bench --json > FILE"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TablectlError(f"--from {path}: cannot read it ({exc.strerror}); {way_out}"
                            ) from None
    except UnicodeDecodeError:
        raise TablectlError(f"--from {path}: not text, so not a bench document; {way_out}"
                            ) from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise TablectlError(f"--from {path}: not JSON ({exc}); {way_out}") from None
    missing = [k for k in ("machine", "pi_factor", "benchmarks")
               if not isinstance(doc, dict) or k not in doc]
    if missing:
        raise TablectlError(f"--from {path}: not a bench document (no {', '.join(missing)}); "
                            f"{way_out}")
    problem = _problem(doc)
    if problem:
        raise TablectlError(f"--from {path}: {problem}; {way_out}")
    return doc


def _problem(doc: dict[str, Any]) -> str | None:
    """What in ``doc`` a report cannot be made of (None: nothing)."""
    if not isinstance(doc["benchmarks"], dict) or not isinstance(doc["machine"], dict):
        return "its machine and benchmarks are not objects"
    for name, b in doc["benchmarks"].items():
        if not isinstance(b, dict) or not ("error" in b or isinstance(b.get("figures"), dict)):
            return f"benchmark {name!r} has neither figures nor an error"
        for key, f in (b.get("figures") or {}).items():
            base = f.get("baseline") if isinstance(f, dict) else None
            if not (isinstance(f, dict) and isinstance(f.get("title"), str)
                    and isinstance(f.get("unit"), str) and _number(f.get("value"))
                    and isinstance(base, dict) and isinstance(base.get("title"), str)
                    and _number(base.get("value"))):
                return (f"figure {key!r} lacks its title, unit, value or baseline "
                        "{title, value}")
    return None


def _number(value: Any) -> bool:
    # null stands for a figure that could not be taken (fmt prints n/a)
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _cell(text: str) -> str:
    # A title may hold a '|' one day; inside a table cell it must be escaped.
    return str(text).replace("|", "\\|")


def _ratio(ratio: float | None) -> str:
    if ratio is None:
        return "n/a"
    return f"{ratio:.3g}" if abs(ratio) >= 0.001 else f"{ratio:.2e}"


def _machine(doc: dict[str, Any]) -> list[str]:
    m = doc["machine"]
    it = m.get("interpreter") or {}
    load = ", ".join(f"{x:g}" for x in m.get("load_average") or [])
    lines = [f"- Machine: {m.get('cpus')} CPUs ({m.get('cpu') or 'unknown CPU'}), "
             f"load average {load or 'unknown'} at the start.",
             f"- Interpreter: Python {m.get('python')}"
             + (f", `{it['executable']}`, {built(it)}." if it.get("executable") else ".")]
    if it.get("note"):
        lines.append(f"- Note: {it['note']}")
    w = doc.get("cpu_wakeup") or {}
    if w.get("held"):
        lines.append(f"- CPU wake-up latency held at {w['us']} µs for the run, as the "
                     "service holds it.")
    elif w:
        lines.append("- CPU wake-up latency not held"
                     + (f": {w['error']}." if w.get("error") else " (--cpu-wakeup-us -1)."))
    li = doc.get("listener") or {}
    if li.get("policies"):
        lines.append(f"- Event stream listener: asked priority {li.get('priority')}, got "
                     f"{', '.join(li['policies'])}.")
    lines.append(f"- Pi ≈: this machine's figure with its CPU part taken "
                 f"{doc['pi_factor']:g} times slower (a flush is not multiplied).")
    if doc.get("quick"):
        lines.append("- **Quick run** (`--quick`): small samples, to check the bench runs; "
                     "not figures to quote.")
    return lines


def render_markdown(doc: dict[str, Any]) -> str:
    """The document as Markdown: where it ran, then one table a benchmark, each figure with
    its baseline, ratio and Pi estimate; a benchmark that could not run says why."""
    lines = _machine(doc) + [""]
    for name, b in doc["benchmarks"].items():
        seconds = b.get("seconds")
        lines.append(f"**{_cell(b.get('title', name))}** (`{name}`"
                     + (f", {seconds:.0f} s" if isinstance(seconds, (int, float)) else "")
                     + ")")
        lines.append("")
        if "error" in b:
            lines += [f"Could not run: {_cell(b['error'])}", ""]
            continue
        lines += ["| figure | value | baseline | ratio | Pi ≈ |", "|---|---|---|---|---|"]
        for key, f in b.get("figures", {}).items():
            unit, base, pi = f["unit"], f["baseline"], f.get("pi") or {}
            lines.append(
                f"| {_cell(f['title'])} (`{key}`) | {fmt(f['value'], unit)} | "
                f"{fmt(base['value'], base.get('unit', unit))}: {_cell(base['title'])} | "
                f"{_ratio(f.get('ratio'))} | {fmt(pi.get('value'), unit)}"
                + (f": {_cell(pi['note'])}" if pi.get("note") else "") + " |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
