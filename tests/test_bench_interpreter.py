"""The bench names the interpreter it ran on and says when it is not built as a table's is."""
import os
import platform

from controller.bench.interpreter import describe, interpreter, note
from controller.bench_cli import _interpreter_line

PYENV = ("'--prefix=/root/.pyenv/versions/3.11.7' '--enable-shared' "
         "'LDFLAGS=-L/root/.pyenv/versions/3.11.7/lib'")


def test_a_source_build_without_the_optimising_options_gets_a_note_naming_them():
    info = describe(PYENV, "/root/.pyenv/versions/3.11.7")
    assert info == {"origin": "source", "optimisations": []}
    text = note(info)
    assert "--enable-optimizations" in text and "--with-lto" in text
    assert "PYTHON=/usr/bin/python3" in text


def test_a_source_build_with_one_option_is_told_of_the_other():
    info = describe(PYENV + " '--enable-optimizations'", "/opt/python")
    assert info["optimisations"] == ["--enable-optimizations"]
    text = note(info)
    assert "--with-lto" in text and "--enable-optimizations" not in text


def test_a_fully_optimised_or_distribution_build_gets_no_note():
    assert note(describe(PYENV + " '--enable-optimizations' '--with-lto=full'", "/opt/py")) \
        is None
    # Debian's package passes its flags to make, not configure: none show in CONFIG_ARGS.
    distro = describe("'--enable-shared' '--prefix=/usr' '--with-computed-gotos'", "/usr")
    assert distro == {"origin": "distribution", "optimisations": []} and note(distro) is None


def test_unbalanced_quotes_in_the_configure_arguments_are_read_word_by_word():
    assert describe("'--prefix=/x --enable-optimizations", "/x")["optimisations"] == \
        ["--enable-optimizations"]


def test_the_running_interpreter_is_described_by_its_real_executable():
    info = interpreter()
    assert os.path.isfile(info["executable"]) and not os.path.islink(info["executable"])
    assert info["version"] == platform.python_version()
    assert info["origin"] in ("distribution", "source")
    assert info["note"] == note(info)


def test_the_report_line_carries_the_note_only_when_there_is_one():
    base = {"executable": "/usr/bin/python3.11", "version": "3.11.2",
            "origin": "distribution", "optimisations": [], "note": None}
    assert _interpreter_line(base) == \
        "Interpreter: /usr/bin/python3.11 3.11.2, the distribution's build"
    src = {**base, "origin": "source", "note": "why"}
    assert _interpreter_line(src).endswith("built from source (no optimising options)\n"
                                           "  NOTE: why")
