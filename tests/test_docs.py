"""The README's commands and Python example, and the docstring examples, run
as written."""

import doctest
import re
import shlex

import pytest

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


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs(cli, tmp_path, command):
    args = shlex.split(command)[1:]
    # Outputs named in the README go to a scratch folder, not the checkout.
    args = [str(tmp_path / a) if a.endswith(".parquet") else a for a in args]
    r = cli(*args)
    assert r.returncode == 0, (command, r.stderr)


def test_readme_python_example_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    (block,) = code_blocks("python")
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["res"].summary["queues"]["bottleneck"]["qdisc"]["limit"] == "20pkt"


def test_docstring_examples():
    failures, tried = doctest.testmod(aqmlab.scenario)
    assert tried > 0 and failures == 0
