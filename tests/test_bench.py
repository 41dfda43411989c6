"""`tablectl bench --quick` runs every benchmark and reports every documented figure with its
baseline, ratio and Pi estimate. No time is asserted: speed is what the bench reports."""
import importlib
import json
import math
import subprocess
import sys

import pytest

from controller.bench import BENCHMARKS

pytestmark = pytest.mark.hil     # the latency and throughput figures use simulated devices


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    env_dir = tmp_path_factory.mktemp("bench")
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "bench", "--quick", "--json"],
                          capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "TABLECTL_BENCH_DIR": str(env_dir)})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_every_benchmark_ran_without_error(report):
    assert list(report["benchmarks"]) == list(BENCHMARKS)
    for name, b in report["benchmarks"].items():
        assert "error" not in b, f"{name}: {b.get('error')}"
        assert b["title"] == importlib.import_module(BENCHMARKS[name]).TITLE
    assert report["quick"] is True and report["pi_factor"] == 10.0
    assert report["machine"]["cpus"] >= 1 and report["machine"]["python"]
    it = report["machine"]["interpreter"]      # the daemon's too: it runs sys.executable
    assert it["version"] == report["machine"]["python"] and it["origin"] in ("distribution",
                                                                           "source")


def test_every_documented_key_has_a_figure_with_its_baseline(report):
    for name, b in report["benchmarks"].items():
        keys = importlib.import_module(BENCHMARKS[name]).KEYS
        assert set(keys) <= set(b["figures"]), f"{name} lacks {set(keys) - set(b['figures'])}"
        for key, f in b["figures"].items():
            assert isinstance(f["title"], str) and f["title"], key
            assert f["unit"] == f["baseline"]["unit"], key
            assert f["better"] in ("lower", "higher"), key
            v, base = f["value"], f["baseline"]["value"]
            # (idle CPU may round to 0 over a short --quick sample: clock ticks are 10 ms)
            assert isinstance(v, (int, float)) and v >= 0 and math.isfinite(v), (key, v)
            # (what the daemon adds to the do-nothing path is a difference, and may be 0)
            assert v > 0 or key in ("footprint.idle_cpu", "daemon.card.own_p99_wire",
                                    "daemon.dice.own_p99_wire"), (key, v)
            assert isinstance(base, (int, float)) and base > 0, (key, base)
            assert f["ratio"] == pytest.approx(v / base, rel=1e-6), key
            assert f["pi"]["value"] is not None and f["pi"]["value"] >= 0, key
            assert f["pi"]["note"], key
            assert isinstance(f["extra"], dict)


def test_latency_figures_hold_percentiles_in_order(report):
    for key, f in report["benchmarks"]["latency"]["figures"].items():
        x = f["extra"]
        if "p50_s" in x:
            assert 0 < x["p50_s"] <= x["p99_s"] <= x["max_s"], key
            assert x["samples"] >= 1
            assert x["escaped"] == 0, key             # nothing escaped the runner


def test_pause_figures_hold_each_condition_with_its_percentiles(report):
    figures = report["benchmarks"]["pause"]["figures"]
    for key, f in figures.items():
        x = f["extra"]
        for c in ("back_to_back", "busy", "sleep"):
            assert 0 < x[f"{c}_p50_s"] <= x[f"{c}_p99_s"], (key, c)
        p = key.rsplit(".", 1)[1]
        assert f["value"] == pytest.approx(x[f"busy_{p}_s"], rel=1e-6), key
        assert f["baseline"]["value"] == pytest.approx(x[f"back_to_back_{p}_s"], rel=1e-6), key
        assert x["samples"] >= 6 and x["pause_s"] == 0.005, key
    assert figures["pause.commit.p50"]["extra"]["journal_on"] == "disk"
    assert figures["pause.card.p50"]["extra"]["journal_on"] in ("tmpfs", "disk")


def test_odds_baseline_agrees_with_the_engine(report):
    for key, f in report["benchmarks"]["odds"]["figures"].items():
        # the plain enumeration must find the engine's own counts for the hands it sampled
        assert f["extra"]["agrees"] in (True, None), key
        assert f["extra"]["player_hands_sampled"] <= f["extra"]["player_hands_total"]


def test_every_daemon_frame_is_found_in_the_daemons_journal(report):
    """The split at the journal stamp covers every timed frame: each found its input record
    (by device and link sequence number) between its write and its event's arrival."""
    figures = report["benchmarks"]["daemon"]["figures"]
    for kind, whole in (("card", "daemon.card.p99"), ("jam", "daemon.jam.p99"),
                        ("dice", "daemon.dice.p99")):
        x = figures[f"daemon.{kind}.p99_to_journal"]["extra"]
        assert x["unmatched"] == 0 and x["samples"] == figures[whole]["extra"]["samples"], kind
        assert x == figures[f"daemon.{kind}.p99_from_journal"]["extra"]
        # the two parts are positive and neither is longer than the slowest whole frame
        for part in ("to_journal", "from_journal"):
            assert 0 < x[f"{part}_p50_s"] <= x[f"{part}_p99_s"] <= figures[whole]["extra"][
                "max_s"], (kind, part)


def test_dice_figures_hold_the_do_nothing_path_after_the_same_gap(report):
    """The dice result's own share is its p99 less the do-nothing path's after the same idle
    gap, both measured in the same blocks; that path's p99 is also set against the wire."""
    figures = report["benchmarks"]["daemon"]["figures"]
    own, null = figures["daemon.dice.own_p99_wire"], figures["daemon.dice.null_p99_wire"]
    x = own["extra"]
    assert x is not None and x == null["extra"] == figures["daemon.dice.p99_null"]["extra"]
    assert x["null_samples"] >= 1 and x["idle_before_s"] == 0.005
    assert x["blocks"] == figures["daemon.card.p99"]["extra"]["blocks"]
    assert own["value"] == pytest.approx(max(x["p99_s"] - x["null_p99_s"], 0.0))
    assert null["value"] == pytest.approx(x["null_p99_s"])
    assert own["baseline"]["value"] == null["baseline"]["value"] == pytest.approx(13e-4 / 1.152)


def test_group_commit_journal_recovers(report):
    assert report["benchmarks"]["throughput"]["figures"]["throughput.group_commit"][
        "extra"]["recovers"] is True


def test_the_run_holds_the_cpu_wakeup_latency_the_service_holds(report):
    """By default the bench, and each daemon it starts, hold [service] cpu_wakeup_us = 0,
    as a table runs; the document says whether it was held and, if not, why."""
    import os

    from controller.cpu_latency import DEVICE

    w = report["cpu_wakeup"]
    assert w["us"] == 0
    assert w["held"] is os.access(DEVICE, os.W_OK)
    assert (w["error"] is None) is w["held"]
    card = report["benchmarks"]["daemon"]["figures"]["daemon.card.p99"]["extra"]
    assert card["cpu_wakeup_us"] == 0
    assert card["daemon_held_cpu_wakeup"] is w["held"]


def test_the_cpu_wakeup_request_can_be_left_out_and_a_bad_one_is_refused():
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "bench", "--quick", "--json",
                           "--only", "codec", "--cpu-wakeup-us", "-1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["cpu_wakeup"] == {"us": -1, "held": False, "error": None}
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "bench", "--only", "codec",
                           "--cpu-wakeup-us", "-7"], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--cpu-wakeup-us -7" in proc.stderr and "-1 to measure with no request" in proc.stderr


def test_the_run_says_what_policy_its_stream_listeners_got(report):
    """By default each listener of the daemon's event stream asks for SCHED_FIFO priority 10;
    the document says what they got, and that matches what a process here may take."""
    from test_bench_listener import fifo_allowed

    li = report["listener"]
    assert li["priority"] == 10
    if fifo_allowed():
        assert li["policies"] == ["fifo"]
    else:
        assert li["policies"] and all(p.startswith("other: ") for p in li["policies"])


def test_a_bad_listener_priority_is_refused_before_anything_runs():
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "bench", "--only", "codec",
                           "--listener-priority", "100"], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--listener-priority 100" in proc.stderr and "or 0 for the normal one" in proc.stderr
    assert "codec" not in proc.stdout


def test_unknown_benchmark_is_a_clear_error():
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "bench", "--only", "nosuch"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "no benchmark named nosuch" in proc.stderr and "Traceback" not in proc.stderr


def test_text_report_names_each_figure_and_baseline():
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "bench", "--quick",
                           "--only", "codec"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "decode one card frame" in proc.stdout and "115,200 baud" in proc.stdout
    assert "ratio" in proc.stdout and "Pi ≈" in proc.stdout
