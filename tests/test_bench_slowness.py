"""`tablectl bench --slowness X` (or TABLECTL_BENCH_SLOWNESS): how much longer the bench's
croupier gives a slow table (a Raspberry Pi) before calling it stuck. A value that is not a
number from 1 to 1000 is named with the way out, before anything is measured."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench(*args, env=None):
    full = {k: v for k, v in os.environ.items() if k != "TABLECTL_BENCH_SLOWNESS"}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "controller.cli", "bench", *args],
                          capture_output=True, text=True, cwd=ROOT, env=full, timeout=300)


@pytest.mark.parametrize("args, env, words", [
    (["--slowness", "abc"], None, "--slowness 'abc'"),
    (["--slowness", "0.5"], None, "--slowness '0.5'"),
    (["--slowness", "nan"], None, "--slowness 'nan'"),
    ([], {"TABLECTL_BENCH_SLOWNESS": "ten"}, "TABLECTL_BENCH_SLOWNESS 'ten'"),
])
def test_a_slowness_that_is_not_one_is_named_before_anything_runs(args, env, words):
    out = bench("--quick", "--only", "daemon", *args, env=env)
    assert out.returncode == 2, out.stderr
    assert words in out.stderr and "from 1 to 1000" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_the_slowness_reaches_the_croupier():
    code = ("import os, sys; from controller.bench_cli import set_slowness; "
            "set_slowness(sys.argv[1]); from controller.bench import rigplay; "
            "print(rigplay.SLOWNESS, rigplay.PATIENCE_S)")
    out = subprocess.run([sys.executable, "-c", code, "10"], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    slowness, patience = map(float, out.stdout.split())
    assert slowness == 10.0 and patience == 300.0, out.stderr


def test_a_saved_run_is_printed_without_a_slowness(tmp_path):
    saved = tmp_path / "run.json"
    saved.write_text('{"machine": {}, "benchmarks": {}}')
    out = bench("--from", str(saved), "--slowness", "2")
    assert out.returncode == 2 and "--from prints a saved run" in out.stderr
