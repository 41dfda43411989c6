"""Logs: JSON lines with the bound table, round and device ids; a readable console format."""
import asyncio
import io
import json
import logging

import pytest
import structlog

from controller.logs import bind, bound, configure_logging, get_logger, unbind


@pytest.fixture(autouse=True)
def clean_context():
    structlog.contextvars.clear_contextvars()
    yield
    structlog.contextvars.clear_contextvars()
    structlog.reset_defaults()
    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, "_tablectl", False)]:
        root.removeHandler(h)


def lines(stream):
    return [json.loads(l) for l in stream.getvalue().splitlines()]


def test_json_lines_with_bound_ids():
    out = io.StringIO()
    configure_logging("info", "json", out)
    bind(table="macau-07")
    log = get_logger("table")
    with bound(round="42"):
        log.info("round_open", boxes=[1, 3])
    log.warning("idle")
    first, second = lines(out)
    assert first["event"] == "round_open" and first["level"] == "info"
    assert (first["table"], first["round"], first["boxes"]) == ("macau-07", "42", [1, 3])
    assert first["logger"] == "table" and first["ts"].endswith("Z")
    assert "round" not in second and second["table"] == "macau-07"


def test_level_filters():
    out = io.StringIO()
    configure_logging("warning", "json", out)
    log = get_logger()
    log.info("quiet")
    log.debug("quieter")
    log.error("loud", code=7)
    assert [(d["event"], d["level"]) for d in lines(out)] == [("loud", "error")]


def test_device_id_per_task():
    """Each driver task binds its own device; the ids do not leak between tasks."""
    out = io.StringIO()
    configure_logging("info", "json", out)
    bind(table="t1")
    log = get_logger("driver")

    async def driver(name):
        bind(device=name)
        await asyncio.sleep(0)
        log.info("frame", n=1)

    async def main():
        await asyncio.gather(driver("shoe"), driver("shuffler"))
        log.info("after")

    asyncio.run(main())
    docs = lines(out)
    assert sorted(d.get("device") for d in docs if d["event"] == "frame") == ["shoe", "shuffler"]
    assert all(d["table"] == "t1" for d in docs)
    assert "device" not in docs[-1]


def test_unbind_and_exceptions():
    out = io.StringIO()
    configure_logging("info", "json", out)
    bind(table="t1", round="7")
    unbind("round")
    try:
        raise RuntimeError("jam sensor")
    except RuntimeError:
        get_logger().exception("driver_failed")
    doc = lines(out)[0]
    assert "round" not in doc and "RuntimeError: jam sensor" in doc["exception"]


def test_stdlib_logging_goes_the_same_way():
    out = io.StringIO()
    configure_logging("info", "json", out)
    bind(table="t1")
    logging.getLogger("transitions.core").warning("no transition %s", "deal")
    doc = lines(out)[0]
    assert doc["event"] == "no transition deal" and doc["table"] == "t1"
    assert doc["logger"] == "transitions.core" and doc["level"] == "warning"


def test_console_format_is_readable():
    out = io.StringIO()
    configure_logging("debug", "console", out)
    bind(table="t1")
    get_logger().info("ready", devices=3)
    text = out.getvalue()
    assert "ready" in text and "table=t1" in text and "devices=3" in text
    assert not text.lstrip().startswith("{")
    # auto on a non-terminal stream is JSON
    out2 = io.StringIO()
    configure_logging("info", "auto", out2)
    get_logger().info("x")
    assert json.loads(out2.getvalue())["event"] == "x"


def test_bad_level_or_format():
    with pytest.raises(ValueError, match="level"):
        configure_logging("loud", "json", io.StringIO())
    with pytest.raises(ValueError, match="format"):
        configure_logging("info", "xml", io.StringIO())


def test_journald_priority_prefix():
    out = io.StringIO()
    configure_logging("debug", "json", out, journald=True)
    log = get_logger()
    log.debug("d")
    log.info("i")
    log.warning("w")
    log.error("e")
    logging.getLogger("lib").error("from a library")
    lines_ = out.getvalue().splitlines()
    assert [l[:3] for l in lines_] == ["<7>", "<6>", "<4>", "<3>", "<3>"]
    assert json.loads(lines_[3][3:])["event"] == "e"


def test_journald_prefix_only_under_systemd():
    import subprocess
    import sys
    # systemd names the journal stream by device and inode; the child plays systemd by naming
    # its own stdout, or another stream (stdout redirected elsewhere: no prefix).
    code = ("import os, sys; st = os.fstat(1); "
            "os.environ['JOURNAL_STREAM'] = f'{st.st_dev}:{st.st_ino}' if sys.argv[1] == 'journal'"
            " else os.environ.get('JOURNAL_STREAM', ''); "
            "from controller.logs import configure_logging, get_logger; "
            "configure_logging('info', 'json'); get_logger().error('boom')")
    env = {k: v for k, v in __import__('os').environ.items() if k != "JOURNAL_STREAM"}
    run = lambda how, **extra: subprocess.run([sys.executable, "-c", code, how],
                                              capture_output=True, text=True,
                                              env={**env, **extra}).stdout
    assert json.loads(run("plain"))["event"] == "boom"
    assert json.loads(run("plain", JOURNAL_STREAM="8:12345"))["event"] == "boom"
    assert run("journal").startswith("<3>{")
