"""The README's commands and Python example, and the docstring examples, run
as written."""

import doctest
import re
import shlex

import pytest

import aqmlab.experiment
import aqmlab.models
import aqmlab.scenario
from conftest import ROOT

README = (ROOT / "README.md").read_text()


def code_blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


COMMANDS = [line.split("#")[0].strip() for block in code_blocks("sh") for line in block.splitlines()
            if line.startswith("aqmlab ")]


def test_readme_has_the_two_commands_first():
    first = code_blocks("sh")[0].splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["./dev demo", "./dev test"]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """One scratch folder for the module, so a store that one README command
    writes is there for the next."""
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs(cli, outputs, command):
    args = shlex.split(command)[1:]
    # Outputs named in the README go to a scratch folder, not the checkout.
    args = [str(outputs / a) if a.endswith((".parquet", ".duckdb")) or prev in ("--out", "-o") else a
            for prev, a in zip([""] + args, args)]
    r = cli(*args)
    assert r.returncode == 0, (command, r.stderr)


def test_readme_python_examples_run(monkeypatch, tmp_path):
    # Run in a scratch folder that sees the examples, so nothing is written
    # into the checkout.
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in code_blocks("python"):
        exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["res"].summary["queues"]["bottleneck"]["qdisc"]["limit"] == "20pkt"
    table = namespace["table"]
    assert set(table["topology.qdisc"]) == {"droptail", "red", "gentle-red", "ared", "blue", "codel", "pie"}
    assert (table["n"] == 3).all() and len(table) == 21 * 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["examples", "results.duckdb"]


@pytest.mark.parametrize("module", [aqmlab.scenario, aqmlab.experiment, aqmlab.models], ids=lambda m: m.__name__)
def test_docstring_examples(monkeypatch, module):
    monkeypatch.chdir(ROOT)
    failures, tried = doctest.testmod(module)
    assert tried > 0 and failures == 0
