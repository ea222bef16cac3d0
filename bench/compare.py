"""aqmlab against ns-3 on the dumbbell of study A1 (Brandauer et al.): speed and agreement.

    .venv/bin/python bench/compare.py [--flows N ...] [--qdisc droptail|red ...] [--repeat K]

Runs aqmlab (`bench/ns3/dumbbell-a1.toml`, through the Python API, in this
process) and ns-3 (`bench/ns3/dumbbell.py`, in a subprocess of the
interpreter named by the environment variable NS3_PYTHON, default this one)
for every number of flows and discipline asked, one after the other, aqmlab
then ns-3 for each case, the whole list K times. Nothing is installed: ns-3
is an optional benchmark dependency, see bench/ns3/README.md.

Prints one table: per case, the wall time of the simulation proper (aqmlab's
event loop; ns-3's Simulator::Run()), simulated seconds per wall second,
events and events per second (each simulator's own events, which are not the
same unit), then TCP goodput, UDP loss, bottleneck drops and mean queueing
delay, each with the ratio aqmlab/ns-3. Wall times are the median of the K
repetitions; every repetition runs the same seed, so the other figures are
the same in each. The last line is `speed ratio aqmlab/ns-3: X`, X being
the smallest ratio of simulated seconds per wall second over the cases run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aqmlab

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "ns3" / "dumbbell-a1.toml"
NS3_SCRIPT = HERE / "ns3" / "dumbbell.py"
NS3_PIN = "ns3==3.44.post0"
DROPTAIL = {"kind": "droptail", "limit": "300pkt"}


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, nargs="+", default=[16, 64, 256], metavar="N")
    ap.add_argument("--qdisc", nargs="+", choices=["droptail", "red"], default=["droptail", "red"])
    ap.add_argument("--repeat", type=int, default=1, metavar="K",
                    help="repetitions; wall times are their median")
    ap.add_argument("--tcp", choices=["sack", "newreno"], default="sack",
                    help="TCP loss recovery in both simulators (default sack; see bench/ns3/README.md)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=100.0, help="simulated seconds")
    ap.add_argument("--warmup", type=float, default=20.0, help="seconds discarded before measuring")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write every run's figures to FILE")
    args = ap.parse_args()
    if args.repeat < 1 or min(args.flows) < 1 or not 0 <= args.warmup < args.duration:
        ap.error("need --repeat >= 1, --flows >= 1 and 0 <= --warmup < --duration")
    return args


def ns3_python() -> str:
    """The interpreter that has ns-3; exits with status 2 if it has not."""
    py = os.environ.get("NS3_PYTHON") or sys.executable
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('ns3') is None)"
    try:
        ok = subprocess.run([py, "-c", probe], capture_output=True).returncode == 0
    except OSError:
        ok = False
    if not ok:
        print(f"compare.py: NS3_PYTHON={py} cannot import ns3; install it outside this venv with "
              f"`python3 -m venv ../ns3-venv && ../ns3-venv/bin/pip install {NS3_PIN}` and set "
              f"NS3_PYTHON=../ns3-venv/bin/python (bench/ns3/README.md)", file=sys.stderr)
        sys.exit(2)
    return py


def run_aqmlab(flows: int, qdisc: str, args: argparse.Namespace) -> dict:
    sc = aqmlab.Scenario.load(SCENARIO)
    over = {"traffic[0].count": flows, "traffic[0].tcp.variant": args.tcp,
            "duration": f"{args.duration}s", "warmup": f"{args.warmup}s"}
    if qdisc == "droptail":
        over["topology.qdisc"] = DROPTAIL
    s = aqmlab.run(sc.with_(**over), seed=args.seed).summary
    q = s["queues"]["bottleneck"]
    return {"wall_s": s["wall_s"], "events": s["events"],
            "goodput_bps": s["traffic"]["ftp"]["goodput_bps"],
            "udp_loss": s["traffic"]["cbr"]["loss_rate"],
            "drops": q["drops"], "qdelay_mean_s": q["qdelay_mean_s"]}


def run_ns3(py: str, flows: int, qdisc: str, args: argparse.Namespace) -> dict:
    cmd = [py, str(NS3_SCRIPT), "--flows", str(flows), "--qdisc", qdisc, "--tcp", args.tcp,
           "--seed", str(args.seed), "--duration", str(args.duration), "--warmup", str(args.warmup)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare.py: ns-3 failed ({' '.join(cmd)}):\n{p.stderr.strip()}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def main() -> None:
    args = parse_args()
    py = ns3_python()
    cases = [(n, q) for n in args.flows for q in args.qdisc]
    runs: dict[tuple[int, str], dict[str, list[dict]]] = {c: {"aqmlab": [], "ns-3": []} for c in cases}
    for rep in range(args.repeat):
        for n, q in cases:
            print(f"[{rep + 1}/{args.repeat}] {n} flows, {q}: aqmlab ...",
                  end="", file=sys.stderr, flush=True)
            runs[n, q]["aqmlab"].append(run_aqmlab(n, q, args))
            print(" ns-3 ...", end="", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            runs[n, q]["ns-3"].append(run_ns3(py, n, q, args))
            print(f" done ({time.perf_counter() - t0:.1f} s for ns-3 in all)", file=sys.stderr)

    sim_s = args.duration
    rows = []
    speed = []
    for n, q in cases:
        side = {}
        for name, rs in runs[n, q].items():
            wall = statistics.median(r["wall_s"] for r in rs)
            r = rs[0]
            side[name] = {"wall": wall, "simrate": sim_s / wall, "events": r["events"],
                          "evrate": r["events"] / wall, "goodput": r["goodput_bps"] / 1e6,
                          "udp": None if r["udp_loss"] is None else 100 * r["udp_loss"],
                          "drops": r["drops"],
                          "qdelay": None if r["qdelay_mean_s"] is None else 1e3 * r["qdelay_mean_s"]}
        a, b = side["aqmlab"], side["ns-3"]
        speed.append(a["simrate"] / b["simrate"])
        for key, label, spec in [("wall", "wall s (simulation only)", ".3f"),
                                 ("simrate", "simulated s / wall s", ",.1f"),
                                 ("events", "events", ",d"),
                                 ("evrate", "events / wall s", ",.0f"),
                                 ("goodput", "TCP goodput Mb/s", ".4f"),
                                 ("udp", "UDP loss %", ".3f"),
                                 ("drops", "bottleneck drops", ",d"),
                                 ("qdelay", "mean queueing delay ms", ".2f")]:
            rows.append((str(n), q, label, fmt(a[key], spec), fmt(b[key], spec),
                         fmt(ratio(a[key], b[key]), ".3f")))

    ns3_version = runs[cases[0]]["ns-3"][0].get("ns3_version")
    print(f"aqmlab {aqmlab.__version__} vs ns-3 {ns3_version}: "
          f"A1 dumbbell, TCP {args.tcp}, seed {args.seed}, {args.duration:g} s simulated, "
          f"{args.warmup:g} s warm-up; wall times: median of {args.repeat}")
    head = ("flows", "qdisc", "metric", "aqmlab", "ns-3", "aqmlab/ns-3")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]

    def line(cells) -> str:
        return "  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    print(line(head))
    print("  ".join("-" * w for w in widths))
    last = None
    for r in rows:
        case = r[:2]
        print(line(r if case != last else ("", "", *r[2:])))
        last = case
    print(f"speed ratio aqmlab/ns-3: {min(speed):.1f}")
    if args.json:
        args.json.write_text(json.dumps(
            [{"flows": n, "qdisc": q, **runs[n, q]} for n, q in cases], indent=1))


if __name__ == "__main__":
    main()
