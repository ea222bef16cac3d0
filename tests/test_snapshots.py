"""Frozen summaries of seeded runs.

Every example scenario, and the first sweep point of every study experiment
at smoke scale, run with a fixed seed: its whole summary (the per-flow rows
as a SHA-256 of their JSON, the wall time and engine version left out) is
frozen in ``tests/__snapshots__/test_snapshots.ambr``. The engine promises
bit-identical results for a scenario and seed, so any change that moves a
number, even one that only reorders two events at the same instant, fails
here and shows as a diff to review. When the change is intended (a fixed
bug, a new mechanism), look at the diff and rewrite the snapshots with
``pytest tests/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import aqmlab
from aqmlab.experiment import Experiment
from aqmlab.studies import STUDIES

ROOT = Path(__file__).resolve().parent.parent
SEED = 1
# Not results: how long the run took and which engine made it.
UNFROZEN = ("wall_s", "engine_version")


def _cases() -> dict[str, aqmlab.Scenario]:
    cases = {}
    for path in sorted((ROOT / "examples").glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        if "[sweep" in text:   # an experiment file: its base scenario is an example too
            continue
        cases[f"example/{path.stem}"] = aqmlab.Scenario.load(path)
    for name, study in STUDIES.items():
        for exp_name, text in study.experiments("smoke").items():
            exp = Experiment.from_toml(text, source=f"{exp_name}.toml")
            cases[f"{name}/{exp_name}"] = exp.scenario(exp.points()[0])
    return cases


CASES = _cases()


def frozen(summary: dict) -> dict:
    """The summary as frozen: per-flow rows hashed, unfrozen keys dropped."""
    out = {k: v for k, v in summary.items() if k not in UNFROZEN and k != "flows"}
    flows = json.dumps(summary.get("flows", []), sort_keys=True).encode()
    out["flows_sha256"] = hashlib.sha256(flows).hexdigest()
    out["flows_count"] = len(summary.get("flows", []))
    return out


@pytest.fixture(scope="module")
def summaries() -> dict[str, dict]:
    # The engine releases the GIL, so two threads run two scenarios at once.
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda sc: aqmlab.run(sc, seed=SEED).summary, CASES.values())
        return dict(zip(CASES, results))


@pytest.mark.parametrize("case", list(CASES))
def test_summary_is_unchanged(case, summaries, snapshot):
    assert frozen(summaries[case]) == snapshot


def test_every_example_and_study_is_covered():
    """At least one case per study, and every example that is a scenario."""
    assert {c.split("/")[0] for c in CASES} == {"example", *STUDIES}
    scenarios = [p.stem for p in (ROOT / "examples").glob("*.toml") if "[sweep" not in p.read_text(encoding="utf-8")]
    assert sorted(c.removeprefix("example/") for c in CASES if c.startswith("example/")) == sorted(scenarios)


def test_frozen_keeps_results_and_hashes_flows():
    summary = {"wall_s": 0.1, "engine_version": "x", "events": 7, "queues": {"q": {"drops": 3}},
               "flows": [{"id": 0, "delivered": 5}]}
    out = frozen(summary)
    assert out["events"] == 7 and out["queues"] == {"q": {"drops": 3}} and out["flows_count"] == 1
    assert "wall_s" not in out and "engine_version" not in out and "flows" not in out
    assert out["flows_sha256"] == hashlib.sha256(b'[{"delivered": 5, "id": 0}]').hexdigest()
    summary["flows"][0]["delivered"] = 6
    assert frozen(summary)["flows_sha256"] != out["flows_sha256"]
