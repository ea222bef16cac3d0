"""Start-up stays light: importing aqmlab or its command, and a plain
`aqmlab run`, load none of the heavy libraries (pandas, numpy, duckdb, ...),
which would take most of a short run's wall time. Checked through
sys.modules in a fresh interpreter, never by timing; the figures are in
bench/README.md ("Process start-up")."""

import json
import subprocess
import sys

import pytest

from conftest import EXAMPLES, ROOT

HEAVY = ("pandas", "numpy", "scipy", "duckdb", "pyarrow", "matplotlib", "dask", "distributed", "jinja2", "rich",
         "tqdm", "aqmlab.experiment", "aqmlab.models", "aqmlab.sweep", "aqmlab.store", "aqmlab.report",
         "aqmlab.studies", "aqmlab.stats")


def loaded_after(code: str) -> dict:
    """Runs `code` in a fresh interpreter and returns, for each moment it
    records with `mark(name)`, which of HEAVY (or their submodules) are
    loaded by then."""
    prelude = f"""
import json, sys
HEAVY = {HEAVY!r}
marks = {{}}
def mark(name):
    marks[name] = sorted(h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in sys.modules))
"""
    epilogue = "\nprint('MARKS ' + json.dumps(marks))\n"
    r = subprocess.run([sys.executable, "-c", prelude + code + epilogue], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("MARKS ")][-1]
    return json.loads(line[len("MARKS "):])


def test_import_aqmlab_loads_no_heavy_module():
    marks = loaded_after("import aqmlab\nmark('import aqmlab')\n"
                         "aqmlab.run, aqmlab.Scenario, aqmlab.Result, aqmlab.ConfigError, aqmlab.__version__\n"
                         "mark('plain attributes')")
    assert marks == {"import aqmlab": [], "plain attributes": []}


@pytest.mark.parametrize("extra", [[], ["--json"]], ids=["table", "json"])
def test_cli_import_and_run_load_no_heavy_module(extra):
    scenario = str(EXAMPLES / "tcp-dumbbell.toml")
    marks = loaded_after(f"""
import aqmlab.cli
mark("import aqmlab.cli")
try:
    aqmlab.cli.main(["run", {scenario!r}, "--set", "duration=2s", "--set", "warmup=1s", *{extra!r}])
except SystemExit as e:
    assert e.code == 0, e.code
mark("aqmlab run")
""")
    assert marks == {"import aqmlab.cli": [], "aqmlab run": []}


def test_lazy_attributes_load_on_first_use():
    marks = loaded_after("""
import aqmlab
from aqmlab import Experiment, models
import aqmlab.experiment
assert Experiment is aqmlab.Experiment is aqmlab.experiment.Experiment
assert models is aqmlab.models and callable(models.mm1k)
assert callable(aqmlab.stats.batch_means)
assert {"Experiment", "models", "stats", "studies", "run", "Scenario"} <= set(dir(aqmlab))
try:
    aqmlab.no_such_name
except AttributeError as e:
    assert "no_such_name" in str(e)
else:
    raise AssertionError("aqmlab.no_such_name did not raise")
from aqmlab import *
assert Experiment is aqmlab.Experiment
mark("after")
""")
    assert {"numpy", "scipy", "aqmlab.models", "aqmlab.stats", "aqmlab.experiment"} <= set(marks["after"])
