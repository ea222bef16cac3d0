"""Byte-identical results, checked by checksum.

The engine's JSON for every example scenario, the first sweep point of every
study experiment at smoke scale and every case of the ns-2 validation suite
(``validation/ns2/suite.toml``), run with seed 1, is hashed (SHA-256 of the
exact bytes the engine returns, with only the wall time blanked) and compared
with the list checked in at ``tests/data/checksums.txt``. The snapshot tests
show *what* moved when a number changes; this test also catches changes no
summary key shows: the order of keys, the formatting of a float, a flow row.

A change to the engine that is meant to move results also bumps
``ENGINE_VERSION``; then rewrite the list with

    .venv/bin/python tests/test_checksums.py --write
"""

from __future__ import annotations

import hashlib
import re
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import aqmlab  # noqa: E402
from aqmlab import _engine  # noqa: E402
from test_snapshots import CASES, SEED  # noqa: E402

LIST = ROOT / "tests" / "data" / "checksums.txt"
VALIDATION = ROOT / "validation" / "ns2"
# The wall time is the one number in the JSON that is not a result.
WALL = re.compile(rb'"wall_s":[^,}]*')


def _validation_cases() -> dict[str, aqmlab.Scenario]:
    suite = tomllib.loads((VALIDATION / "suite.toml").read_text(encoding="utf-8"))
    cases = {}
    for case in suite["case"]:
        sc = aqmlab.Scenario.load(VALIDATION / case["scenario"])
        cases[f"validation/{case['name']}"] = sc.with_(**case["set"]) if case.get("set") else sc
    return cases


ALL = {**CASES, **_validation_cases()}


def checksum(engine_json: str) -> str:
    """SHA-256 of the engine's JSON with the wall time blanked."""
    return hashlib.sha256(WALL.sub(b'"wall_s":0', engine_json.encode())).hexdigest()


def compute() -> dict[str, str]:
    # The engine releases the GIL, so two threads run two scenarios at once.
    with ThreadPoolExecutor(max_workers=2) as pool:
        sums = pool.map(lambda sc: checksum(_engine.run(sc.to_json(), SEED)), ALL.values())
        return dict(zip(ALL, sums))


def read_list() -> tuple[str, dict[str, str]]:
    lines = LIST.read_text(encoding="utf-8").splitlines()
    version = lines[0].removeprefix("# engine ").strip()
    return version, dict(line.split() [::-1] for line in lines[1:] if line.strip())


def test_every_case_gives_the_checked_in_bytes():
    version, expected = read_list()
    assert version == _engine.ENGINE_VERSION, (
        "the engine version changed: if results are meant to change, rewrite the list")
    got = compute()
    assert sorted(got) == sorted(expected), "the cases changed: rewrite the list"
    changed = [name for name in got if got[name] != expected[name]]
    assert not changed, f"{len(changed)} of {len(got)} cases give different bytes: {changed}"


def test_checksum_sees_every_byte_but_the_wall_time():
    a = '{"events":7,"wall_s":0.25,"x":1.5}'
    assert checksum(a) == checksum('{"events":7,"wall_s":3e-05,"x":1.5}')
    assert checksum(a) != checksum('{"events":7,"wall_s":0.25,"x":1.50}')
    assert checksum(a) != checksum('{"x":1.5,"events":7,"wall_s":0.25}')
    assert checksum(a) == hashlib.sha256(b'{"events":7,"wall_s":0,"x":1.5}').hexdigest()


def test_the_validation_suite_is_covered():
    suite = tomllib.loads((VALIDATION / "suite.toml").read_text(encoding="utf-8"))
    assert len([c for c in ALL if c.startswith("validation/")]) == len(suite["case"]) > 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: tests/test_checksums.py --write")
    sums = compute()
    LIST.write_text(f"# engine {_engine.ENGINE_VERSION}\n"
                    + "".join(f"{s}  {name}\n" for name, s in sorted(sums.items())), encoding="utf-8")
    print(f"wrote {len(sums)} checksums to {LIST.relative_to(ROOT)}")
