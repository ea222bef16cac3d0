"""The JSON Schemas of scenario and experiment files (``aqmlab schema``):
valid draft 2020-12, accepting every example and every experiment the
studies render, rejecting malformed files at the key that is wrong, in step
with the engine's own validation, and the source of the README's key
tables."""

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from aqmlab import schema
from aqmlab.scenario import Scenario
from aqmlab.studies import SCALES, STUDIES
from conftest import EXAMPLES, ROOT

# Constants

SCENARIO = Draft202012Validator(schema.scenario_schema())
EXPERIMENT = Draft202012Validator(schema.experiment_schema())
GOOD = (EXAMPLES / "cbr-dumbbell.toml").read_text()
FILES = sorted(EXAMPLES.glob("*.toml")) + [ROOT / "python" / "aqmlab" / "data" / "demo.toml"]


# Helpers

def edit(old: str, new: str, text: str = GOOD) -> dict[str, Any]:
    assert old in text, old
    return tomllib.loads(text.replace(old, new, 1))


def is_experiment(doc: dict[str, Any]) -> bool:
    return "scenario" in doc


def rendered_experiments() -> list[tuple[str, str]]:
    """(label, TOML text) of every experiment every study renders at every
    scale before it runs. (Experiments derived from stored results, such as
    a buffer sized from a calibration run, need a run and are not here.)"""
    return [(f"{name}/{scale}/{exp}", text) for name, study in STUDIES.items() for scale in SCALES
            for exp, text in study.experiments(scale).items()]


def check_rejected(validator: Draft202012Validator, doc: dict[str, Any], path: list, words: list[str]) -> None:
    """The document is rejected at `path` (the most relevant error, and
    every other error too, is there), and the messages there say `words`
    (a misspelt required key is both unknown and missing)."""
    # An error of anyOf (an inline scenario or a file name) stands for the
    # most relevant error of its alternatives.
    errors = [best_match([e]) for e in validator.iter_errors(doc)]
    assert errors, "accepted"
    best = best_match(errors)
    assert list(best.absolute_path) == path, best.message
    at_path = [best.message] + [e.message for e in errors if list(e.absolute_path) == path]
    assert all(list(e.absolute_path)[:len(path)] == path for e in errors), [e.message for e in errors]
    for w in words:
        assert any(w in m for m in at_path), (w, at_path)


# Tests

@pytest.mark.parametrize("kind", schema.KINDS)
def test_schema_is_valid_draft_2020_12(kind: str) -> None:
    s = schema.schema(kind)
    Draft202012Validator.check_schema(s)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["title"] == f"aqmlab {kind}"


def test_every_key_has_a_description_and_tables_are_closed() -> None:
    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            for key, sub in node.get("properties", {}).items():
                if sub is not True:
                    assert sub.get("description"), f"{where}.{key} has no description"
            if node.get("type") == "object" and "properties" in node and "allOf" not in node:
                assert node.get("additionalProperties") is False, f"{where} accepts any key"
            for key, sub in node.items():
                if key != "if":  # conditions name a key, they do not describe it
                    walk(sub, f"{where}.{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{where}[{i}]")

    walk(schema.scenario_schema(), "")


def test_defaults_satisfy_their_own_keys() -> None:
    root = schema.scenario_schema()
    seen = 0

    def walk(node: Any) -> None:
        nonlocal seen
        if isinstance(node, dict):
            if "default" in node:
                own = {k: v for k, v in node.items() if k != "default"} | {"$defs": root["$defs"]}
                assert Draft202012Validator(own).is_valid(node["default"]), node
                seen += 1
            for sub in node.values():
                walk(sub)
        elif isinstance(node, list):
            for sub in node:
                walk(sub)

    walk(root)
    assert seen > 100


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_accepts_every_example(path: Path) -> None:
    doc = tomllib.loads(path.read_text())
    validator = EXPERIMENT if is_experiment(doc) else SCENARIO
    assert [e.message for e in validator.iter_errors(doc)] == []


def test_accepts_every_experiment_the_studies_render() -> None:
    texts = rendered_experiments()
    assert len(texts) > 50
    for label, text in texts:
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in EXPERIMENT.iter_errors(tomllib.loads(text))]
        assert errors == [], label


def test_accepts_what_the_engine_accepts_with_every_key_set() -> None:
    # Keys the examples leave at their defaults: a scenario with many of them.
    doc = edit('kind = "droptail"', 'kind = "red"\nmin_th = "auto"\nmax_th = "auto"\nmax_p = 0.1\nw_q = "auto"\n'
               'gentle = "to_limit"\nidle_decay = "paper"\nmean_pktsize = "1KiB"\ntarget_delay = "5ms"')
    doc["topology"]["bottleneck"]["mtu"] = "1500B"
    doc["traffic"].append({"name": "bulk", "kind": "ftp", "packet_size": {"dist": "pareto", "shape": 1.5, "mean": "1KB"},
                           "tcp": {"variant": "sack", "rto": {"fixed": "40ms"}, "rwnd": 20, "initial_ssthresh": "16pkt"},
                           "start": {"dist": "lognormal", "sigma": 0.5, "mean": "100ms"}})
    assert Scenario.from_dict(doc).problems() == []
    assert [e.message for e in SCENARIO.iter_errors(doc)] == []


# Quantities with units: (definition, a key of cbr-dumbbell.toml that takes
# one, values the engine accepts, values it refuses).
UNITS = [
    ("time", "topology.bottleneck.delay", ["20ms", "1e-3s", "1_500us", " 2 min", ".5s", "0.1ms", "+3ns"],
     ["20", "20 sec", "-1ms", "ms", "1e3", 20]),
    ("rate", "topology.bottleneck.rate", ["10Mbps", "1.5Gbps", "250kbps", "64Kbps", "9600bps"],
     ["10Mbs", "10", "10MBps", 10e6]),
    ("size", "traffic[0].size", ["1500B", "2.3KB", "1KiB", "1kB", "1e3B"], ["1500", "1500b", 1500]),
    ("limit", "topology.qdisc.limit", ["300pkt", "300p", "300pkts", "450KB", "inf"], ["300", "infinite", 300]),
    ("packets", "topology.qdisc.limit", [], ["20B", -1]),
]


@pytest.mark.parametrize("unit,key,good,bad", UNITS, ids=[u[0] for u in UNITS])
def test_unit_patterns_accept_what_the_engine_accepts(unit: str, key: str, good: list, bad: list) -> None:
    defs = schema.scenario_schema()["$defs"]
    check = Draft202012Validator(defs[unit] | {"$defs": defs})
    base = Scenario.from_dict(tomllib.loads(GOOD))
    for value in good:
        assert check.is_valid(value), (unit, value)
        assert base.with_(**{key: value}).problems() == [], (unit, value)
    for value in bad:
        assert not check.is_valid(value), (unit, value)


def test_threshold_and_packet_rate_patterns() -> None:
    defs = schema.scenario_schema()["$defs"]
    for unit, good, bad in [("threshold", ["auto", "45pkt", "45.5pkt", "45000B", "45KB"], ["45", "automatic", 45]),
                            ("packet-rate", ["10pps", "2.5pkt/s"], ["10", "10pkt"]),
                            ("packets", [20, "20pkt", "20pkts"], ["20B", -1, "20"])]:
        check = Draft202012Validator(defs[unit] | {"$defs": defs})
        assert [v for v in good if not check.is_valid(v)] == [], unit
        assert [v for v in bad if check.is_valid(v)] == [], unit


# (label, scenario, key path of the error, words its message has)
MALFORMED = [
    ("misspelt key", edit("bottleneck = {", "bottlenek = {"), ["topology"], ["bottlenek"]),
    ("misspelt key of a kind", edit('rate = "250kbps"', 'rat = "250kbps"'), ["traffic", 0], ["rat"]),
    ("wrong unit", edit('rate = "10Mbps"', 'rate = "10Mbs"'), ["topology", "bottleneck", "rate"], ["10Mbs"]),
    ("size without unit", edit('limit = "100pkt"', 'limit = "100"'), ["topology", "qdisc", "limit"], ["100"]),
    ("missing required key", edit('duration = "100s"\n', ""), [], ["duration", "required"]),
    ("missing key of a kind", edit('kind = "droptail"', 'kind = "red"\nmin_th = "5pkt"\nmax_th = "15pkt"\nmax_p = 0.1'),
     ["topology", "qdisc"], ["w_q", "required"]),
    ("wrong type", edit('duration = "100s"', "duration = 100"), ["duration"], ["100", "string"]),
    ("number as a string", edit("count = 4 ", 'count = "4" '), ["traffic", 0, "count"], ["integer"]),
    ("out-of-range probability", edit('kind = "droptail"', 'kind = "bernoulli"\np = 1.5'),
     ["topology", "qdisc", "p"], ["1.5", "maximum"]),
    ("zero count", edit("count = 4 ", "count = 0 "), ["traffic", 0, "count"], ["0", "minimum"]),
    ("unknown kind", edit('kind = "droptail"', 'kind = "reed"'), ["topology", "qdisc", "kind"], ["reed"]),
    ("unknown distribution", edit('dist = "uniform", min = "40B"', 'dist = "unifrom", min = "40B"'),
     ["traffic", 1, "size", "dist"], ["unifrom"]),
    ("distribution of the wrong quantity", edit('min = "40B"', 'min = "40ms"'), ["traffic", 1, "size", "min"],
     ["40ms"]),
    ("unknown class", edit('name = "cross"', 'name = "cross"\nclass = "realtme"'), ["traffic", 1, "class"],
     ["realtme"]),
    ("no traffic", {**tomllib.loads(GOOD), "traffic": []}, ["traffic"], ["non-empty"]),
]


@pytest.mark.parametrize("label,doc,path,words", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_rejects_malformed_scenario_at_its_key(label: str, doc: dict[str, Any], path: list, words: list[str]) -> None:
    check_rejected(SCENARIO, doc, path, words)
    # The engine refuses it too, at the same place.
    dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    problems = Scenario.from_dict(doc).problems()
    assert any(p.startswith(dotted) for p, _ in problems), (label, problems)


MALFORMED_EXPERIMENTS = [
    ("misspelt key", 'replicatons = 3\nscenario = "cbr-dumbbell.toml"', [], ["replicatons"]),
    ("no scenario", "replications = 3", [], ["scenario", "required"]),
    ("zero replications", 'scenario = "x.toml"\nreplications = 0', ["replications"], ["minimum"]),
    ("sweep axis without values", 'scenario = "x.toml"\n[sweep]\n"topology.qdisc.limit" = { labels = ["a"] }',
     ["sweep", "topology.qdisc.limit"], []),
    ("inline scenario with a bad unit", (EXAMPLES / "red-vs-droptail.toml").read_text().replace(
        'scenario = "tcp-dumbbell.toml"', "") + "\n[scenario]\n" + GOOD.replace('rate = "10Mbps"', 'rate = "10Mbs"')
        .replace("[topology", "[scenario.topology").replace("[[traffic]]", "[[scenario.traffic]]")
        .replace("[trace]", "[scenario.trace]"),
     ["scenario", "topology", "bottleneck", "rate"], ["10Mbs"]),
]


@pytest.mark.parametrize("label,text,path,words", MALFORMED_EXPERIMENTS, ids=[c[0] for c in MALFORMED_EXPERIMENTS])
def test_rejects_malformed_experiment_at_its_key(label: str, text: str, path: list, words: list[str]) -> None:
    check_rejected(EXPERIMENT, tomllib.loads(text), path, words)


def test_cli_prints_and_writes_the_schemas(cli, tmp_path: Path) -> None:
    r = cli("schema", "scenario")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == schema.scenario_schema()
    out = tmp_path / "aqmlab-experiment.schema.json"
    r = cli("schema", "experiment", "--out", str(out))
    assert r.returncode == 0 and r.stdout == "", r.stderr
    assert json.loads(out.read_text()) == schema.experiment_schema()
    r = cli("schema", "--markdown")
    assert r.returncode == 0 and r.stdout == schema.keys_markdown()
    r = cli("schema", "experiment", "--markdown")
    assert r.returncode == 2 and r.stderr.startswith("error: --markdown")



def test_readme_key_tables_are_the_declarations() -> None:
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- schema-keys:start -->\n(.*?)<!-- schema-keys:end -->", readme, re.S)
    assert m, "the README has no generated key tables"
    assert m.group(1) == schema.keys_markdown(), \
        "the README's key tables differ from the declarations; paste the output of `aqmlab schema --markdown`"


def test_readme_schema_example_is_valid() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = [b for b in re.findall(r"```toml\n(.*?)```", readme, re.S) if b.startswith("#:schema ")]
    assert len(blocks) == 1
    doc = tomllib.loads(blocks[0])
    assert [e.message for e in SCENARIO.iter_errors(doc)] == []
    assert Scenario.from_dict(doc).problems() == []
