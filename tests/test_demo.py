"""``aqmlab demo``: the main job on the built-in default, end to end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aqmlab.experiment import Experiment
from conftest import ROOT, decoded_images, needs_chromium, run_cli

DEMO = ROOT / "python" / "aqmlab" / "data" / "demo.toml"
QDISCS = ["droptail", "red", "gentle-red", "ared", "feng-ared", "red-tail", "blue", "sfb", "ted", "codel", "pie",
          "fq_codel", "fq_pie", "cobalt", "fq_cobalt", "dualpi2"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("demo") / "out"
    res = run_cli("demo", "--out", str(out), "--quiet")
    assert res.returncode == 0, res.stderr
    return out, res.stdout


def test_demo_sweeps_every_discipline_over_three_loads() -> None:
    exp = Experiment.load(DEMO)
    axes = {a.path: a.labels for a in exp.axes}
    assert list(axes["topology.qdisc"]) == QDISCS
    assert list(axes["traffic[0].count"]) == ["16", "64", "256"]
    assert len(exp.runs()) == len(QDISCS) * 3 * exp.replications


def test_demo_ends_with_the_path_of_its_report(demo) -> None:
    out, stdout = demo
    last = stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"report written to (.+)", last)
    assert m is not None and Path(m.group(1)) == out / "report.html"
    assert (out / "report.html").is_file() and (out / "results.duckdb").is_file()


def test_demo_runs_again_from_its_store(demo) -> None:
    out, first = demo
    res = run_cli("demo", "--out", str(out))
    assert res.returncode == 0
    total = len(Experiment.load(DEMO).runs())
    assert f"runs: 0 done, 0 failed, 0 remaining ({total} already stored)" in res.stderr
    assert res.stdout == first  # the same table and report path from the stored runs


@needs_chromium
def test_demo_report_renders_with_all_plots(demo, tmp_path) -> None:
    out, _ = demo
    ok, total = decoded_images(out / "report.html", tmp_path)
    # Six metric plots, a loss-run plot and the queue time series.
    assert total >= 8 and ok == total
