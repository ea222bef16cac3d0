"""Sweep throughput: 200 short runs through an executor, runs per second and
the overhead per run beyond the engine's own time.

    .venv/bin/python bench/sweep_throughput.py [--jobs 2] [--executor local] [--runs 200]

Each run is the M/M/1/K example for 2 simulated seconds (about 0.3 ms in the
engine), so the figure is dominated by what the sweep machinery costs: the
scenario copy and hash, validation, JSON both ways, and the DuckDB
transaction that stores the run. The overhead per run is
(wall time x jobs - the engines' own time) / runs.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import duckdb

from aqmlab.experiment import Experiment
from aqmlab.store import Store
from aqmlab.sweep import execute

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--executor", default="local")
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    points = 10
    exp = Experiment.from_dict({
        "name": "throughput",
        "scenario": str(ROOT / "examples" / "mm1k.toml"),
        "replications": args.runs // points,
        "sweep": {"duration": ["2s"], "warmup": ["0s"],
                  "traffic[0].rate": [f"{r}Mbps" for r in range(5, 5 + points)]},
    })
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "b.duckdb"
        with Store(store) as st:
            t0 = time.perf_counter()
            counts = execute(exp, st, executor=args.executor, jobs=args.jobs)
            wall = time.perf_counter() - t0
        db = duckdb.connect(str(store), read_only=True)
        engine = sum(json.loads(s)["wall_s"] for (s,) in db.execute("SELECT summary FROM runs").fetchall())
        db.close()
    n = counts["ok"]
    print(f"{n} runs ({counts['failed']} failed), executor {args.executor}, {args.jobs} jobs: "
          f"{wall:.2f} s wall, {n / wall:.1f} runs/s; engine {1e3 * engine / n:.2f} ms/run, "
          f"overhead {1e3 * (wall * args.jobs - engine) / n:.2f} ms/run")


if __name__ == "__main__":
    main()
