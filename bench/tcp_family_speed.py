"""The cost per packet of the Linux-style TCP family against ns-2's SACK
agent, side by side in one run.

    .venv/bin/python bench/tcp_family_speed.py [--reps 5] [--flows 64] [--duration 100]

The A1 dumbbell (examples/tcp-dumbbell.toml: RED, 4 CBR sources, N bulk
flows) with every flow of the `ftp` group on one variant, for "sack" and
each Linux-style variant, repetitions alternating between variants so that
a busy machine slows them alike. Prints, per variant, the median engine
time (`wall_s`, setup excluded) per million packets that crossed the
bottleneck in either direction (data and ACKs), and its ratio to sack's.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import aqmlab

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ["sack", "linux-reno", "cubic", "bbr", "dctcp", "prague"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--flows", type=int, default=64)
    ap.add_argument("--duration", type=float, default=100)
    args = ap.parse_args()
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for rep in range(args.reps):
        for v in VARIANTS:
            sc = aqmlab.Scenario.load(ROOT / "examples" / "tcp-dumbbell.toml").with_set([
                f'traffic[0].tcp={{variant="{v}"}}', f"traffic[0].count={args.flows}",
                f'duration="{args.duration}s"'])
            s = aqmlab.run(sc, seed=rep + 1).summary
            q = s["queues"]
            pkts = q["bottleneck"]["arrivals"] + q["bottleneck_rev"]["arrivals"]
            times[v].append(s["wall_s"] / pkts * 1e6)
    base = statistics.median(times["sack"])
    print(f"{'variant':12s} {'s per 1e6 packets':>18s} {'ratio to sack':>14s}")
    for v in VARIANTS:
        m = statistics.median(times[v])
        print(f"{v:12s} {m:18.3f} {m / base:14.2f}")


if __name__ == "__main__":
    main()
