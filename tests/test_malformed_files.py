"""Hand-written malformed scenario and experiment files (issue 19), in
tests/data/malformed: each is rejected with exit status 2, no traceback and
no panic, nothing written, and one error line that names the key path and
says what is wrong. The expected fragments of that line were read by hand.

Scenario files (s-*) go through `aqmlab validate` and `aqmlab run`,
experiment files (e-*) through `aqmlab sweep`. The command runs in-process
(an exception other than its own exit is a failure, as a traceback would
be); a few files also go through a fresh interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest

from aqmlab.cli import main
from conftest import ROOT, run_cli

MALFORMED = ROOT / "tests" / "data" / "malformed"

# file -> fragments that must all appear in one error line
EXPECTED: dict[str, list[str]] = {
    # Misspelt keys, at every level.
    "s-key-misspelt-top.toml": ["error: durration: unknown key", 'did you mean "duration"'],
    "s-key-misspelt-topology.toml": ["topology.bottlenek: unknown key", 'did you mean "bottleneck"'],
    "s-key-misspelt-link.toml": ["topology.bottleneck.dealy: unknown key", 'did you mean "delay"',
                                 "allowed here: delay, mtu, name, rate"],
    "s-key-misspelt-qdisc.toml": ["topology.qdisc.maxp: unknown key", 'did you mean "max_p"'],
    "s-key-misspelt-traffic.toml": ["traffic[0].rat: unknown key", 'did you mean "rate"'],
    "s-key-misspelt-dist.toml": ["traffic[0].start.mni: unknown key", 'did you mean "min"'],
    "s-key-misspelt-trace.toml": ["trace.intervall: unknown key", 'did you mean "interval"'],
    "s-key-misspelt-tcp.toml": ["traffic[0].tcp.varient: unknown key", 'did you mean "variant"'],
    "s-key-uppercase.toml": ["traffic[0].START: unknown key", 'did you mean "start"'],
    # Units.
    "s-unit-mbs.toml": ["topology.bottleneck.rate", '"10Mbs" has unknown unit "Mbs"', 'did you mean "Mbps"'],
    "s-unit-parsecs.toml": ["topology.bottleneck.delay", '"20 parsecs" has unknown unit "parsecs"',
                            "(ns, us, ms, s, min)"],
    "s-unit-time-for-size.toml": ['traffic[0].size: "500ms" is a time, not a size; expected a size as a string with a unit'],
    "s-unitless-delay.toml": ["topology.bottleneck.delay", "got the bare number 20", '"20ms"'],
    "s-unitless-limit.toml": ["topology.qdisc.limit", '"300pkt"', "got 100"],
    # Types.
    "s-type-string-for-number.toml": ['topology.qdisc.max_p: expected a number, got "0.1"'],
    "s-type-bool-for-count.toml": ["traffic[0].count: expected a whole number >= 1, got true"],
    "s-type-float-count.toml": ["traffic[0].count: expected a whole number >= 1, got 2.5"],
    "s-type-table-for-list.toml": ["traffic: expected a list of [[traffic]] tables, got a table"],
    "s-type-list-for-table.toml": ["topology.bottleneck: expected a table, got a list"],
    # Ranges.
    "s-range-probability.toml": ["topology.qdisc.max_p: must be in (0, 1] (got 1.5)"],
    "s-range-negative-delay.toml": ["topology.bottleneck.delay", '"-20ms" must not be negative'],
    "s-range-zero-rate.toml": ["topology.bottleneck.rate", '"0Mbps" must be a positive rate'],
    "s-range-count-zero.toml": ["traffic[0].count: expected a whole number >= 1, got 0"],
    "s-range-zero-duration.toml": ["duration: must be longer than 0s"],
    "s-range-negative-seed.toml": ["seed: expected a whole number >= 0, got -1"],
    "s-tcp-tick-zero.toml": ["traffic[0].tcp.tick: must be longer than 0s"],
    "s-range-access-rate-below-1bps.toml": ['topology.access_rate: "1e-308Mbps" is not a whole number of bits per second',
                                            "at least 1bps"],
    # Huge numbers, NaN, infinities.
    "s-huge-float.toml": ["traffic[0].rate", '"1e308Mbps" is too large; at most 1e6Gbps'],
    "s-huge-time.toml": ["duration", '"1e308s" is too large; at most 1e9s'],
    "s-huge-int-2-64.toml": ["traffic[0].count: 18446744073709551616 is out of range", "2^64 - 1"],
    "s-huge-seed.toml": ["seed: 18446744073709551616 is out of range", "2^64 - 1"],
    "s-nan-weight.toml": ["topology.qdisc.w_q: nan is not allowed; numbers must be finite"],
    "s-inf-probability.toml": ["topology.qdisc.max_p: inf is not allowed; numbers must be finite"],
    "s-nan-in-unit-string.toml": ["traffic[0].rate", '"nanMbps" is not a rate'],
    "s-inf-in-unit-string.toml": ["topology.bottleneck.delay", '"infms" is not a time'],
    # Inconsistent combinations.
    "s-red-thresholds-reversed.toml": ["topology.qdisc.max_th: must be greater than min_th (got 30 <= 40)"],
    "s-red-thresholds-equal.toml": ["topology.qdisc.max_th: must be greater than min_th (got 30 <= 30)"],
    "s-red-buffer-below-max-th.toml": ["topology.qdisc.max_th: must not exceed the limit (got 30 > 20)"],
    "s-duplicate-traffic-name.toml": ['traffic[1].name: "cbr" is used by another traffic group'],
    "s-unknown-host.toml": ['traffic[0].src: no node is named "s7"', '"s0"'],
    # Unknown kinds.
    "s-unknown-qdisc.toml": ['topology.qdisc.kind: "reed" is not allowed', '"droptail"', 'did you mean "red"'],
    "s-unknown-traffic.toml": ['traffic[0].kind: "vbr" is not allowed', '"poisson"'],
    "s-unknown-dist.toml": ['traffic[0].start.dist: "gaussian" is not allowed', '"exponential"'],
    "s-unknown-topology.toml": ['topology.kind: "star" is not allowed', '"dumbbell", "chain", "graph"'],
    # Missing keys.
    "s-missing-duration.toml": ["duration: missing", '"100s"'],
    "s-missing-qdisc-key.toml": ["topology.qdisc.max_th: missing", "upper threshold"],
    "s-missing-traffic.toml": ["traffic: missing", "[[traffic]]"],
    "s-empty.toml": ["duration: missing"],
    # Files that are not TOML, or not text.
    "s-duplicate-key.toml": ["s-duplicate-key.toml: TOML syntax error: Cannot overwrite a value", "line 18"],
    "s-syntax-error.toml": ["s-syntax-error.toml: TOML syntax error: Unclosed inline table", "line 10"],
    "s-truncated.toml": ["s-truncated.toml: TOML syntax error: Unterminated string"],
    "s-not-utf8.toml": ["s-not-utf8.toml: not a UTF-8 text file"],
    "s-binary.toml": ["s-binary.toml: not a UTF-8 text file"],
    # Experiments.
    "e-scenario-file-missing.toml": ["scenario: no-such-scenario.toml: cannot read the scenario file"],
    "e-scenario-path-nul.toml": ["scenario: 'mm1k\\x00.toml': cannot read the scenario file: embedded null byte"],
    "e-base-invalid.toml": ["topology.sendrs: unknown key", 'did you mean "senders"'],
    "e-key-misspelt.toml": ['replicatons: unknown key; did you mean "replications"?',
                            "(allowed here: name, scenario, replications"],
    "e-replications-zero.toml": ["replications: must be a whole number from 1 to 100000, got 0"],
    "e-replications-string.toml": ["replications: must be a whole number from 1 to 100000, got '3'"],
    "e-seed-2-64.toml": ["seed: must be a whole number from 0 to 2^63 - 1, got 18446744073709551616"],
    "e-metrics-not-list.toml": ["metrics: must be a list of summary key paths"],
    "e-warmup-unitless.toml": ["warmup", "got the bare number 1"],
    "e-sweep-path-nowhere.toml": ['topology.qdsic: unknown key "qdsic"', 'did you mean "qdisc"'],
    "e-sweep-key-nowhere.toml": ['duraton: unknown key "duraton"', 'did you mean "duration"'],
    "e-sweep-index-out-of-range.toml": ['sweep."traffic[3].count": index 3 is out of range'],
    "e-sweep-unquoted-path.toml": ['sweep."topology": is a table without `values`', "must be quoted"],
    "e-sweep-empty.toml": ['sweep."duration": must be a non-empty list'],
    "e-sweep-nan.toml": ["traffic[0].count: nan is not allowed; numbers must be finite"],
    "e-labels-mismatch.toml": ['sweep."duration".labels: must be 2 strings, one per value'],
    "e-sweep-too-many-points.toml": ["sweep: makes 2000000 points (10 x 10 x 10 x 10 x 2 x 10 x 10)",
                                     "at most 100000 points"],
    "e-zip-unequal.toml": ["zip[0]: axes that move together need equal lengths, got [2, 3]"],
    "e-zip-unswept.toml": ['zip[0]: "warmup" is not a swept key path'],
    "e-truncated.toml": ["e-truncated.toml: TOML syntax error"],
    "e-not-utf8.toml": ["e-not-utf8.toml: cannot read the experiment file", "utf-8"],
}


# Files with more than one problem; each of the others has exactly one, and
# must be reported once, not also as a consequence of itself.
SEVERAL = {"s-empty.toml": 3}


def test_every_file_has_its_expectation():
    assert sorted(p.name for p in MALFORMED.iterdir()) == sorted(EXPECTED)
    assert len(EXPECTED) >= 40


def commands(name: str, tmp: Path) -> list[list[str]]:
    path = str(MALFORMED / name)
    if name.startswith("e-"):
        return [["sweep", path, "--quiet", "--store", str(tmp / "store.duckdb")]]
    return [["validate", path], ["run", path, "--json", "--series", str(tmp / "series.parquet")]]


def check_rejection(code: int, out: str, err: str, needles: list[str], count: int = 1) -> None:
    assert code == 2, (code, out, err)
    assert out == ""
    assert "Traceback" not in err and "panicked" not in err and "PanicException" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == count and all(line.startswith("error: ") for line in lines), err
    assert any(all(n in line for n in needles) for line in lines), (needles, err)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_file_is_rejected_clearly(name: str, tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(MALFORMED)  # messages name the file as given on the command line
    for args in commands(name, tmp_path):
        args = [a.replace(str(MALFORMED) + "/", "") for a in args]
        with pytest.raises(SystemExit) as exit_:
            main(args)
        captured = capsys.readouterr()
        check_rejection(exit_.value.code, captured.out, captured.err, EXPECTED[name], SEVERAL.get(name, 1))
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("name", ["s-not-utf8.toml", "s-huge-int-2-64.toml", "s-nan-weight.toml",
                                  "e-zip-unequal.toml"])
def test_malformed_file_in_a_fresh_process(name: str, tmp_path: Path):
    for args in commands(name, tmp_path):
        r = run_cli(*[a.replace(str(MALFORMED) + "/", "") for a in args], cwd=MALFORMED)
        check_rejection(r.returncode, r.stdout, r.stderr, EXPECTED[name], SEVERAL.get(name, 1))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path,message", [
    ("topology.kind.x", 'topology.kind is "dumbbell", not a table, so it has no key "x"'),
    ("traffic.x", 'traffic is a list, not a table, so it has no key "x"'),
    ("duration[0]", 'duration is "5s", not a list, so it has no item [0]'),
    ("traffic[7].count", "index 7 is out of range"),
])
def test_override_through_a_value_says_what_is_there(path: str, message: str):
    from aqmlab import ConfigError, Scenario

    sc = Scenario.load(MALFORMED / "s-range-count-zero.toml")
    with pytest.raises(ConfigError) as e:
        sc.with_(**{path: 1})
    assert e.value.problems == [(path, message)]
