"""The simulator's source is laid out in layers a newcomer can walk.

`crates/sim/src` has one folder per layer. Each layer may use only the
layers below it, so there is no import cycle between them and each can be
read (and tested, and reused, as the network is without the event engine)
knowing only what is under it. No source file of the simulator or of the
emulator (`crates/emu/src`) is longer than ``MAX_LINES`` lines before its
tests.

The tests themselves keep one rule of layout: every test module that runs
an emulation carries the ``emulation`` marker, since `./dev test` runs the
rest on two workers and these alone afterwards.
"""

from __future__ import annotations

import re

import pytest

from conftest import ROOT

SRC = ROOT / "crates" / "sim" / "src"
EMU = ROOT / "crates" / "emu" / "src"
# Bottom first. `sim` is the top: it runs a scenario.
LAYERS = ["config", "engine", "monitor", "net", "transport", "app", "scenario", "sim"]
MAX_LINES = 900
OUT_OF_FILE_MOD = re.compile(r"^\s*(pub(\([a-z]+\))? )?mod \w+;\s*$")
USE = re.compile(r"\bcrate::([a-z_]+)")


def code(text: str) -> str:
    """Rust source without comments (line and doc comments)."""
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def uses(text: str) -> set[str]:
    """The crate's top-level modules a piece of source names."""
    return set(USE.findall(code(text)))


def layer_of(path) -> str:
    return path.relative_to(SRC).parts[0]


def test_every_folder_is_a_layer():
    folders = sorted(p.name for p in SRC.iterdir() if p.is_dir())
    assert folders == sorted(LAYERS)
    loose = sorted(p.name for p in SRC.glob("*.rs"))
    assert loose == ["lib.rs"]


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_uses_only_layers_below_it(layer):
    below = set(LAYERS[: LAYERS.index(layer)])
    wrong = []
    for path in sorted((SRC / layer).rglob("*.rs")):
        for other in sorted(uses(path.read_text(encoding="utf-8")) - below - {layer}):
            wrong.append(f"{path.relative_to(ROOT)} uses crate::{other}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("src", [SRC, EMU], ids=["sim", "emu"])
def test_no_source_file_is_too_long_before_its_tests(src):
    long = []
    for path in sorted(src.rglob("*.rs")):
        if path.name in ("tests.rs",) or path.stem.endswith("_test"):
            continue
        lines = path.read_text(encoding="utf-8").splitlines() + [""]
        # The code ends at the first test item written in the file; a
        # `#[cfg(test)] mod tests;` whose tests live in another file does
        # not end it.
        n = next((i for i, line in enumerate(lines[:-1]) if line.startswith("#[cfg(test)]")
                  and not OUT_OF_FILE_MOD.match(lines[i + 1])), len(lines) - 1)
        if n > MAX_LINES:
            long.append(f"{path.relative_to(ROOT)}: {n} lines")
    assert not long, "\n".join(long)


EMULATES = re.compile(r"\bemulate\(|\"emulate\"")


def test_every_test_module_that_emulates_is_marked():
    unmarked = [p.name for p in sorted((ROOT / "tests").glob("test_*.py"))
                if EMULATES.search(text := p.read_text(encoding="utf-8")) and "pytest.mark.emulation" not in text]
    assert not unmarked, f"these emulate but lack pytestmark = pytest.mark.emulation: {unmarked}"
    assert EMULATES.search('aqmlab.emulate(path)') and EMULATES.search('run_cli("x", "--mode", "emulate")')


def test_the_checks_see_a_use_and_ignore_comments():
    text = "use crate::net::link::Link;\n// crate::sim in a comment\n/// [`crate::app`] in a doc\nlet x = crate::engine::Timer::default();"
    assert uses(text) == {"net", "engine"}
