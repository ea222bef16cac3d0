"""Mutation fuzzing of scenario and experiment files (issue 19).

The seeds are the example files and a few study experiments as the studies
render them. A mutant is a seed changed once or a few times, either as a
TOML tree (a key deleted or added, a value swapped for one of another type,
a unit swapped, a number made huge, negative, NaN or infinite, a list
emptied or its items repeated) or as bytes (truncated, a byte flipped,
bytes that are not UTF-8 inserted, lines deleted or repeated).

Each mutant is validated the way the command line does it; one that
validates is shortened (a few tens of milliseconds of simulated time, a few
flows) and run. The only outcomes allowed are a result or aqmlab's own
errors (:class:`aqmlab.ConfigError`, :class:`aqmlab.AqmlabError`); anything
else, a Rust panic above all (``pyo3_runtime.PanicException``), is a crash.

``tests/test_fuzz.py`` runs a bounded number of mutants in CI;
``bench/fuzz_campaign.py`` runs a longer campaign with the same code.
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
import shutil
import subprocess
import sys
import time
import tomllib
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import aqmlab
from aqmlab.exceptions import AqmlabError, ConfigError
from aqmlab.experiment import Experiment
from aqmlab.scenario import Scenario
from aqmlab.studies.framework import toml_value

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# A few study experiments per study: (study, scale, experiment name).
STUDY_SEEDS = [
    ("bonald", "smoke", 0), ("td-vs-red", "smoke", 0), ("ted", "smoke", 0), ("blue", "smoke", 0),
    ("parallel-queue", "smoke", 0), ("parallel-queue", "smoke", 1),
]


@dataclass(frozen=True)
class Seed:
    name: str
    kind: str  # "scenario" or "experiment"
    text: str
    base_dir: Path  # where an experiment's relative scenario path is read from


# A short experiment for the command-line sample: `aqmlab sweep` runs every
# point, so the mutants of a long one would take minutes.
SMALL_EXPERIMENT = """name = "small"
replications = 1
metrics = ["queues.bottleneck.loss_rate"]
zip = [["topology.qdisc", "traffic[0].rate"]]

[sweep]
"traffic[0].count" = [1, 2]
"topology.qdisc" = [{ kind = "droptail", limit = "20pkt" }, { kind = "red", limit = "40pkt", min_th = "5pkt", max_th = "15pkt", max_p = 0.1, w_q = 0.002 }]
"traffic[0].rate" = ["5Mbps", "15Mbps"]

[scenario]
duration = "50ms"
warmup = "10ms"
trace = { interval = "10ms", queues = ["bottleneck"] }

[scenario.topology]
kind = "dumbbell"
senders = 2
access_rate = "100Mbps"
access_delay = "1ms"
bottleneck = { rate = "10Mbps", delay = "5ms" }
qdisc = { kind = "droptail", limit = "20pkt" }

[[scenario.traffic]]
name = "poisson"
kind = "poisson"
rate = "5Mbps"
size = { dist = "uniform", min = "40B", max = "1500B" }
start = "0s"

[[scenario.traffic]]
name = "tcp"
kind = "ftp"
count = 2
tcp = { variant = "sack" }
"""


def seeds(studies: bool = True) -> list[Seed]:
    """The example files, and (with `studies`) a few study experiments."""
    out = []
    for path in sorted(EXAMPLES.glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        kind = "experiment" if "scenario" in tomllib.loads(text) else "scenario"
        out.append(Seed(path.name, kind, text, EXAMPLES))
    out.append(Seed("small-experiment", "experiment", SMALL_EXPERIMENT, EXAMPLES))
    if studies:
        from aqmlab.studies import STUDIES

        for study, scale, index in STUDY_SEEDS:
            texts = STUDIES[study].experiments(scale)
            name = sorted(texts)[index]
            out.append(Seed(f"{study}/{name}", "experiment", texts[name], EXAMPLES))
    return out


# --- Writing a tree back as TOML -------------------------------------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE_KEY.match(k) else json.dumps(k)


def to_toml(tree: dict[str, Any]) -> str:
    """A tree as TOML text: top-level keys one per line, tables inline."""
    return "".join(f"{_key(str(k))} = {toml_value(v, non_finite=True)}\n" for k, v in tree.items())


# --- Mutations ---------------------------------------------------------------

UNITS = ["ns", "us", "ms", "s", "min", "h", "bps", "kbps", "Kbps", "Mbps", "Gbps", "Mbs", "B", "KB", "MB", "GB",
         "KiB", "pkt", "pkts", "pps", "parsecs", " ms", "", "%", "e", "e999", "s s"]
NUMBERS: list[Any] = [0, -1, 1, 2, 3, 0.5, 1.5, -0.5, 1e-300, 1e308, -1e308, 2**31, 2**32, 2**53 + 1, 2**63 - 1,
                      2**63, 2**64, -(2**63), 10**30, math.nan, math.inf, -math.inf]
STRINGS = ["", "inf", "nan", "auto", "x", "10Mbps", "20ms", "1500B", "300pkt", "-5ms", "0s", "0bps", "0B", "0pkt",
           "1e308s", "1e308Gbps", "18446744073709551616B", "nanms", "infMbps", "1e-30s", "0x10ms", "1_000ms",
           "é", "\u0000", "a" * 300, "1.5.5ms", "NaNpkt", "-0pkt", "+3pkt"]
NEW_KEYS = ["colour", "kind", "rate", "delay", "limit", "count", "dist", "mean", "size", "seed", "name", "tcp",
            "qdisc", "zip", "sweep", "values", "labels", "ecn", "gentle", "trace", "src", "dst", "start", "stop",
            "senders", "warmup", "duration", "scenario", "replications", "interval", "queues", "mtu"]


def _other_values(rng: random.Random) -> Any:
    """A value of a random type."""
    pick = rng.randrange(7)
    if pick == 0:
        return rng.choice(NUMBERS)
    if pick == 1:
        return rng.choice(STRINGS)
    if pick == 2:
        return rng.choice([True, False])
    if pick == 3:
        return [] if rng.random() < 0.5 else [rng.choice(NUMBERS), rng.choice(STRINGS)]
    if pick == 4:
        return {} if rng.random() < 0.5 else {rng.choice(NEW_KEYS): rng.choice(STRINGS)}
    if pick == 5:
        return float(rng.choice([0.0, 0.1, 0.9, 1.0, 1.0000001, -0.0]))
    return rng.randrange(-3, 10**rng.randrange(1, 25))


def _nodes(tree: Any, path: tuple = ()) -> list[tuple]:
    """The path of every node (table entry or list item) of a tree."""
    out = []
    if isinstance(tree, dict):
        for k, v in tree.items():
            out.append(path + (k,))
            out.extend(_nodes(v, path + (k,)))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            out.append(path + (i,))
            out.extend(_nodes(v, path + (i,)))
    return out


def _parent(tree: Any, path: tuple) -> Any:
    for k in path[:-1]:
        tree = tree[k]
    return tree


_QUANTITY = re.compile(r"^\s*([-+]?[0-9._eE+-]*)\s*([A-Za-z% ]*)$")


def _mutate_value(v: Any, rng: random.Random) -> Any:
    """A changed value: a unit swapped, a number pushed to an edge, another type."""
    roll = rng.random()
    if isinstance(v, str) and roll < 0.5:
        m = _QUANTITY.match(v)
        if m and m.group(1):
            number, unit = m.groups()
            choice = rng.randrange(4)
            if choice == 0:
                return number + rng.choice(UNITS)  # unit swapped or dropped
            if choice == 1:
                return rng.choice(["0", "-1", "1e308", "1e-308", "nan", "inf", "-0", "18446744073709551616",
                                   "0.0000001", "99999999999999999999"]) + unit
            if choice == 2:
                try:
                    return float(number) if rng.random() < 0.5 else int(float(number))
                except (ValueError, OverflowError):
                    return number  # a bare number where a unit is required
            return v[: rng.randrange(len(v) + 1)]
        return rng.choice(STRINGS)
    if isinstance(v, bool):
        return rng.choice([not v, 1, "true", 0.0])
    if isinstance(v, (int, float)) and roll < 0.6:
        return rng.choice([rng.choice(NUMBERS), v * rng.choice([-1, 0, 10, 1000, 1e300]), str(v), f"{v}pkt"])
    if isinstance(v, list) and roll < 0.6:
        choice = rng.randrange(4)
        if choice == 0:
            return []
        if choice == 1 and v:
            return v + [copy.deepcopy(rng.choice(v))] * rng.randrange(1, 4)
        if choice == 2 and v:
            return v[: rng.randrange(len(v))]
        return {str(i): x for i, x in enumerate(v)}  # a table where a list belongs
    if isinstance(v, dict) and roll < 0.6:
        return [v] if rng.random() < 0.5 else {}
    return _other_values(rng)


def mutate_tree(tree: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One change to a copy of a TOML tree."""
    tree = copy.deepcopy(tree)
    nodes = _nodes(tree)
    if not nodes:
        tree[rng.choice(NEW_KEYS)] = _other_values(rng)
        return tree
    path = rng.choice(nodes)
    parent = _parent(tree, path)
    key = path[-1]
    op = rng.randrange(6)
    if op == 0:  # delete
        del parent[key]
    elif op == 1 and isinstance(parent, dict):  # add a key, often a misspelling of a neighbour
        name = rng.choice(NEW_KEYS) if rng.random() < 0.5 else _misspell(str(key), rng)
        parent[name] = copy.deepcopy(parent[key]) if rng.random() < 0.5 else _other_values(rng)
    elif op == 2 and isinstance(parent, dict):  # rename
        parent[_misspell(str(key), rng)] = parent.pop(key)
    else:
        parent[key] = _mutate_value(parent[key], rng)
    return tree


def _misspell(word: str, rng: random.Random) -> str:
    if not word:
        return "x"
    i = rng.randrange(len(word))
    op = rng.randrange(4)
    if op == 0:
        return word[:i] + word[i + 1:] or "x"
    if op == 1:
        return word[:i] + word[i] + word[i:]
    if op == 2:
        return word[:i] + rng.choice("aeiouxz_.[]") + word[i + 1:]
    return word.upper()


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One change to the raw bytes of a file."""
    if not data:
        return bytes([rng.randrange(256)])
    op = rng.randrange(7)
    i = rng.randrange(len(data) + 1)
    if op == 0:  # truncated
        return data[:i]
    if op == 1:  # a byte flipped
        j = min(i, len(data) - 1)
        return data[:j] + bytes([data[j] ^ (1 << rng.randrange(8))]) + data[j + 1:]
    if op == 2:  # bytes that are not UTF-8, or control characters
        junk = rng.choice([b"\xff", b"\xc3", b"\xe9", b"\xed\xa0\x80", b"\x00", b"\x1b[2J", b"\r", b"\xef\xbb\xbf"])
        return data[:i] + junk + data[i:]
    lines = data.split(b"\n")
    k = rng.randrange(len(lines))
    if op == 3:  # a line deleted
        return b"\n".join(lines[:k] + lines[k + 1:])
    if op == 4:  # a line repeated (duplicate keys, duplicate tables)
        return b"\n".join(lines[:k + 1] + lines[k:])
    if op == 5:  # a number made huge, negative or not a number
        digits = list(re.finditer(rb"\d+(\.\d+)?", data))
        if digits:
            m = rng.choice(digits)
            new = rng.choice([b"1e308", b"18446744073709551616", b"-1", b"0", b"nan", b"inf", b"9" * 40])
            return data[:m.start()] + new + data[m.end():]
        return data
    j = rng.randrange(len(data) + 1)  # a slice repeated
    return data[:i] + data[min(i, j):max(i, j)] + data[i:]


def mutant(seed: Seed, rng: random.Random) -> bytes:
    """A mutant of a seed: one to three tree changes, or one to two byte changes."""
    if rng.random() < 0.7:
        tree = tomllib.loads(seed.text)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            tree = mutate_tree(tree, rng)
        return to_toml(tree).encode()
    data = seed.text.encode()
    for _ in range(rng.choice([1, 1, 2])):
        data = mutate_bytes(data, rng)
    return data


# --- Running a mutant --------------------------------------------------------

SHORT = {"duration": "30ms", "warmup": "0s"}
MAX_FLOWS = 3


def shorten(sc: Scenario) -> Scenario | None:
    """A short version of a valid scenario (tens of milliseconds, a few flows,
    a coarse trace) so that running it takes well under a second; None if
    the shortened copy is not valid (its problem is then one of the changes
    made here, not of the mutant)."""
    d = sc.to_dict()
    d.update(SHORT)
    if isinstance(d.get("trace"), dict):
        d["trace"]["interval"] = "10ms"
    for group in d.get("traffic", []) if isinstance(d.get("traffic"), list) else []:
        if isinstance(group, dict):
            if isinstance(group.get("count"), int) and group["count"] > MAX_FLOWS:
                group["count"] = MAX_FLOWS
            group["start"] = "0s"
    topo = d.get("topology")
    if isinstance(topo, dict) and isinstance(topo.get("senders"), int) and topo["senders"] > MAX_FLOWS:
        topo["senders"] = MAX_FLOWS
    short = Scenario(d, sc.source)
    try:
        short.validate()
    except ConfigError:
        return None
    return short


@dataclass
class Outcome:
    """What one mutant did: 'invalid' (rejected with aqmlab's errors),
    'ran', 'valid' (valid but not run) or 'crash' (anything else)."""

    status: str
    detail: str = ""
    lines: list[str] = field(default_factory=list)


def _is_panic(e: BaseException) -> bool:
    return type(e).__name__ == "PanicException"


def check(seed: Seed, data: bytes, tmp: Path, run: bool = True) -> Outcome:
    """Validates a mutant in-process as the command line does, and runs a
    short version of it if it is valid."""
    path = tmp / ("mutant-scenario.toml" if seed.kind == "scenario" else "mutant-experiment.toml")
    path.write_bytes(data)
    try:
        if seed.kind == "scenario":
            sc = Scenario.load(path).validate()
            scenarios = [sc]
        else:
            text = data.decode("utf-8")
            exp = Experiment.from_toml(text, base_dir=seed.base_dir, source=str(path))
            points = exp.points()
            scenarios = [exp.scenario(points[0]), exp.scenario(points[-1])] if points else []
    except (ConfigError, AqmlabError) as e:
        lines = e.lines() if isinstance(e, ConfigError) else [str(e)]
        if not lines or not all(line.strip() for line in lines):
            return Outcome("crash", f"an error with an empty message: {e!r}")
        return Outcome("invalid", lines=lines)
    except UnicodeDecodeError as e:
        # Experiment.load reads the file itself; decoding here stands in for it.
        return Outcome("invalid", lines=[f"not UTF-8: {e.reason}"])
    except BaseException as e:  # noqa: BLE001 - everything else is what we are looking for
        if isinstance(e, KeyboardInterrupt):
            raise
        return Outcome("crash", f"{'panic' if _is_panic(e) else type(e).__name__} while validating: "
                                f"{''.join(traceback.format_exception(e))[-3000:]}")
    if not run:
        return Outcome("valid")
    ran = False
    for sc in scenarios:
        try:
            short = shorten(sc)
            if short is None:
                continue
            aqmlab.run(short)
            ran = True
        except (ConfigError, AqmlabError):
            # An experiment's point may be invalid on its own (a swept value
            # the engine rejects): the sweep stores it as failed.
            continue
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            return Outcome("crash", f"{'panic' if _is_panic(e) else type(e).__name__} while running: "
                                    f"{''.join(traceback.format_exception(e))[-3000:]}")
    return Outcome("ran" if ran else "valid")


def cli_check(seed: Seed, data: bytes, tmp: Path) -> tuple[int, str]:
    """Runs a mutant through the real command in a fresh interpreter and
    returns (exit status, problem or ""). Scenarios go through `validate`
    and, shortened with --set, `run`; experiments (mutants of
    SMALL_EXPERIMENT, which is short already) through `sweep` into a scratch
    store."""
    name = "cli-scenario.toml" if seed.kind == "scenario" else "cli-experiment.toml"
    path = tmp / name
    path.write_bytes(data)
    short = [f"--set={k}={v}" for k, v in SHORT.items()]
    if seed.kind == "scenario":
        commands = [["validate", str(path)], ["run", str(path), *short]]
    else:
        commands = [["sweep", str(path), "--quiet", "--jobs", "1", "--store", str(tmp / "cli.duckdb")]]
    try:
        return _run_commands(commands, seed.base_dir)
    finally:
        for p in tmp.glob("cli.duckdb*"):  # the store, its WAL and its series folder
            shutil.rmtree(p) if p.is_dir() else p.unlink()


def _run_commands(commands: list[list[str]], cwd: Path) -> tuple[int, str]:
    worst = 0
    for args in commands:
        r = subprocess.run([sys.executable, "-m", "aqmlab", *args], capture_output=True, text=True, cwd=cwd,
                           timeout=120)
        out = r.stdout + r.stderr
        allowed = {0, 2} if args[0] != "sweep" else {0, 1, 2}  # sweep: 1 = some runs failed on their own
        if r.returncode not in allowed:
            return r.returncode, f"exit status {r.returncode}: {out[-2000:]}"
        if "Traceback" in out or "panicked" in out or "PanicException" in out:
            return r.returncode, f"traceback or panic: {out[-2000:]}"
        if r.returncode == 2 and not r.stderr.startswith("error: "):
            return r.returncode, f"exit 2 without an error line: {r.stderr[-2000:]}"
        worst = max(worst, r.returncode)
        if r.returncode == 2:
            break  # validate rejected it: run would say the same
    return worst, ""


SLOW_S = 10.0  # a mutant that takes longer than this to check is listed


@dataclass
class Tally:
    mutants: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    crashes: list[tuple[str, bytes, str]] = field(default_factory=list)
    slow: list[tuple[str, bytes, float]] = field(default_factory=list)  # (seed, mutant, seconds) over SLOW_S
    messages: list[tuple[str, str]] = field(default_factory=list)

    def add(self, seed: Seed, data: bytes, out: Outcome) -> None:
        self.mutants += 1
        self.outcomes[out.status] = self.outcomes.get(out.status, 0) + 1
        if out.status == "crash":
            self.crashes.append((seed.name, data, out.detail))
        elif out.lines:
            self.messages.append((seed.name, out.lines[0]))


def campaign(n: int, seed_value: int, tmp: Path, *, studies: bool = True, run: bool = True,
             on_each: Callable[[int, Tally], None] | None = None) -> Tally:
    """`n` mutants, drawn with the random seed `seed_value`, checked in-process."""
    rng = random.Random(seed_value)
    pool = seeds(studies)
    tally = Tally()
    for i in range(n):
        s = pool[i % len(pool)]
        data = mutant(s, rng)
        start = time.monotonic()
        tally.add(s, data, check(s, data, tmp, run=run))
        if time.monotonic() - start > SLOW_S:
            tally.slow.append((s.name, data, time.monotonic() - start))
        if on_each is not None:
            on_each(i, tally)
    return tally
