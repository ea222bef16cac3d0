"""Mutation fuzzing of the example scenarios and experiments, and of a few
study experiments (issue 19): every mutant is rejected with aqmlab's own
errors or validates and runs; no other exception, no Rust panic. A smaller
sample goes through the real command. Deterministic (fixed seeds) and
bounded to well under a minute on one core; bench/fuzz_campaign.py runs the
same harness for longer."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

import fuzzing

MUTANTS = 800
CLI_MUTANTS = 16


@pytest.fixture(scope="module")
def pool() -> list[fuzzing.Seed]:
    return fuzzing.seeds()


def test_seeds_are_valid(pool, tmp_path: Path):
    """Unchanged, every seed validates: the mutants start from good files."""
    assert len(pool) >= 12
    for s in pool:
        assert fuzzing.check(s, s.text.encode(), tmp_path, run=False).status == "valid", s.name


def test_mutants_never_crash(pool, tmp_path: Path):
    start = time.monotonic()
    tally = fuzzing.campaign(MUTANTS, 19, tmp_path)
    elapsed = time.monotonic() - start
    report = "\n\n".join(f"{name}:\n{data[:3000]!r}\n{detail}" for name, data, detail in tally.crashes[:5])
    assert not tally.crashes, f"{len(tally.crashes)} crashes in {tally.mutants} mutants:\n{report}"
    # The mutants must exercise both paths: rejections and runs.
    assert tally.outcomes.get("invalid", 0) > MUTANTS // 4, tally.outcomes
    assert tally.outcomes.get("ran", 0) > MUTANTS // 10, tally.outcomes
    assert elapsed < 120, f"the fuzz test took {elapsed:.0f} s"


def test_mutants_through_the_command(pool, tmp_path: Path):
    rng = random.Random(20)
    scenarios = [s for s in pool if s.kind == "scenario"]
    experiments = [s for s in pool if s.name == "small-experiment"]
    problems = []
    for i in range(CLI_MUTANTS):
        s = experiments[0] if i % 8 == 7 else scenarios[i % len(scenarios)]
        data = fuzzing.mutant(s, rng)
        code, problem = fuzzing.cli_check(s, data, tmp_path)
        if problem:
            problems.append(f"{s.name}: {problem}\n{data[:2000]!r}")
    assert not problems, "\n\n".join(problems)
