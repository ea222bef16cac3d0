"""JSON Schemas (draft 2020-12) of scenario and experiment files, so that an
editor completes and checks them (Taplo / Even Better TOML read a
``#:schema ./aqmlab-scenario.schema.json`` first line).

The scenario schema comes from the engine's declaration of every table's
keys, the same declarations its readers use; the experiment schema is
declared beside the experiment reader and holds the scenario schema for its
inline ``[scenario]`` table. A schema checks what one key or one table says;
``aqmlab validate`` checks the rest (relations between keys, routes, node
names), so a file the schema accepts may still be refused, never the other
way round.
"""

from __future__ import annotations

import json
from typing import Any

from aqmlab import _engine

DRAFT = "https://json-schema.org/draft/2020-12/schema"
KINDS = ("scenario", "experiment")


def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of scenario files."""
    schema: dict[str, Any] = json.loads(_engine.scenario_schema())
    return schema


def experiment_schema() -> dict[str, Any]:
    """The JSON Schema of experiment files. The scenario schema sits in
    ``$defs.scenario``, its own definitions beside it, so that its references
    (``#/$defs/qdisc``) resolve unchanged."""
    from aqmlab.experiment import KEYS

    scenario = scenario_schema()
    defs = scenario.pop("$defs")
    scenario.pop("$schema")
    return {
        "$schema": DRAFT,
        "title": "aqmlab experiment",
        "description": "A base scenario, sweep axes over its key paths, replications and the metrics to report "
                       "(aqmlab sweep).",
        "type": "object",
        "properties": KEYS,
        "required": ["scenario"],
        "additionalProperties": False,
        "$defs": {"scenario": scenario, **defs},
    }


def schema(kind: str) -> dict[str, Any]:
    """The schema of ``"scenario"`` or ``"experiment"`` files."""
    return scenario_schema() if kind == "scenario" else experiment_schema()


def keys_markdown() -> str:
    """Every table of a scenario file and its keys, as the README shows them."""
    return _engine.scenario_keys_markdown()
