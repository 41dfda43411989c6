"""`tablectl bench --markdown` and `--from FILE`: a run's figures as the Markdown tables of
docs/performance.md, and a saved run printed again without measuring. The documents here are
built from real :class:`Figure` objects, so they have the schema the bench writes."""
import json
import subprocess
import sys

import pytest

from controller.bench.figures import Figure, machine, wire_pi_note, wire_time_s
from controller.bench.markdown import load, render_markdown
from controller.errors import TablectlError


def _doc(quick=False):
    wire = wire_time_s(13)
    dice = Figure("daemon.dice.p99_wire", "dice result frame via the daemon: p99 against the "
                  "wire time", 0.00102, "s", wire, "13 bytes at 115,200 baud", "lower",
                  pi=0.0087, pi_note=wire_pi_note(0.0087, wire))
    rate = Figure("throughput.core", "rules + state machine | alone", 30924.0, "events/s", 960.0,
                  "card frames a second on a 115,200-baud line", "higher")
    return {"machine": machine(), "quick": quick, "pi_factor": 10.0,
            "cpu_wakeup": {"us": 0, "held": True, "error": None},
            "listener": {"priority": 10, "policies": ["fifo"]},
            "benchmarks": {
                "daemon": {"title": "Event latency through the daemon",
                           "figures": {dice.key: dice.to_json()}, "seconds": 111.2},
                "throughput": {"title": "Throughput", "figures": {rate.key: rate.to_json()},
                               "seconds": 4.0},
                "odds": {"title": "Odds engine", "error": "OSError: no such command",
                         "seconds": 0.1}}}


def _row(text, key):
    rows = [line for line in text.splitlines() if f"(`{key}`)" in line]
    assert len(rows) == 1, text
    return [c.strip() for c in rows[0].strip("|").split(" | ")]


def test_each_figure_is_a_row_with_its_value_baseline_ratio_and_pi():
    text = render_markdown(_doc())
    title, value, baseline, ratio, pi = _row(text, "daemon.dice.p99_wire")
    assert title.startswith("dice result frame via the daemon")
    assert value == "1.02 ms"
    assert baseline == "1.13 ms: 13 bytes at 115,200 baud"
    assert ratio == "0.904"
    assert pi.startswith("8.7 ms: target: below 1; on a Pi about 7.7 times the wire time")
    title, value, baseline, ratio, pi = _row(text, "throughput.core")
    assert value == "30,924 events/s" and baseline.startswith("960 events/s: card frames")
    assert ratio == "32.2" and pi == "3,092 events/s"      # a rate: the Pi's is a tenth
    # A '|' inside a title would split the cell: it is escaped.
    assert title == "rules + state machine \\| alone (`throughput.core`)"


def test_a_benchmark_that_could_not_run_says_why_and_the_run_says_where_it_ran():
    text = render_markdown(_doc())
    assert "**Odds engine** (`odds`, 0 s)" in text
    assert "Could not run: OSError: no such command" in text
    m = machine()
    assert f"Python {m['python']}" in text and "held at 0 µs" in text
    assert "asked priority 10, got fifo" in text
    assert "Quick run" not in text
    assert "**Quick run**" in render_markdown(_doc(quick=True))


def _bench(*args):
    return subprocess.run([sys.executable, "-m", "controller.cli", "bench", *args],
                          capture_output=True, text=True, timeout=60)


def test_a_saved_run_is_printed_again_without_measuring(tmp_path):
    doc = _doc()
    del doc["benchmarks"]["odds"]
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(doc))
    md = _bench("--from", str(saved), "--markdown")
    assert md.returncode == 0, md.stderr
    assert md.stdout == render_markdown(doc)
    assert md.stderr == ""          # nothing measured, no progress lines
    again = _bench("--from", str(saved), "--json")
    assert again.returncode == 0 and json.loads(again.stdout) == doc
    text = _bench("--from", str(saved))
    assert text.returncode == 0 and "ratio 0.904x" in text.stdout


def test_a_saved_run_with_a_benchmark_that_could_not_run_still_exits_1(tmp_path):
    # As when it was measured: the exit status says the run is not whole.
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(_doc()))
    text = _bench("--from", str(saved))
    assert text.returncode == 1
    assert "could not run: OSError: no such command" in text.stdout


@pytest.mark.parametrize("content, says", [
    (None, "cannot read it"),
    ("not json at all", "not JSON"),
    ('{"machine": {}}', "not a bench document (no pi_factor, benchmarks)"),
    ('{"machine": {}, "pi_factor": 10, "benchmarks": {"x": {"title": "X"}}}',
     "benchmark 'x' has neither figures nor an error"),
    ('{"machine": {}, "pi_factor": 10, "benchmarks": {"x": {"figures": {"x.a": '
     '{"title": "A", "unit": "s", "value": "fast", "baseline": {"title": "B", "value": 1}}}}}}',
     "figure 'x.a' lacks its title, unit, value or baseline"),
])
def test_a_file_that_is_not_a_saved_run_is_refused_with_the_way_out(tmp_path, content, says):
    path = tmp_path / "run.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(TablectlError) as err:
        load(path)
    assert says in str(err.value) and "tablectl bench --json > FILE" in str(err.value)
    proc = _bench("--from", str(path), "--markdown")
    assert proc.returncode == 2 and says in proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr


@pytest.mark.parametrize("args, says", [
    (["--json", "--markdown"], "choose one output"),
    (["--quick"], "leave out --quick"),
    (["--only", "codec"], "leave out --only"),
])
def test_options_that_contradict_each_other_are_refused(tmp_path, args, says):
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(_doc()))
    proc = _bench("--from", str(saved), *args)
    assert proc.returncode == 2 and says in proc.stderr and proc.stdout == ""

