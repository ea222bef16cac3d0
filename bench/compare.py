"""aqmlab against ns-3 on the dumbbell of study A1 (Brandauer et al.): speed and agreement.

    .venv/bin/python bench/compare.py [--flows N ...] [--qdisc droptail|red|red_step|codel|pie|fq_codel|fq_pie|cobalt|fq_cobalt ...] [--repeat K] [--seed S ...]
    .venv/bin/python bench/compare.py --tcp cubic|bbr|dctcp|linux-reno ... [--ns3-tcp-attr NAME=VALUE]

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
delay (and for the AQMs drop rate and ECN marks), each with the ratio
aqmlab/ns-3. Wall times are the median of the K repetitions; every
repetition runs the same seeds, so the other figures are the same in each.
With several seeds every figure but the wall times is the mean over the
seeds with the half-width of its 95% confidence interval (Student's t). The last line is `speed ratio aqmlab/ns-3: X`, X being
the smallest ratio of simulated seconds per wall second over the cases run.
With --markdown a markdown table follows: goodput, mean queueing delay and
drop rate per case, aqmlab / ns-3 with their ratio, and which of the three
agree within 5% (bench/ns3/README.md, "FQ-PIE and COBALT against ns-3").

With `--tcp linux-reno|cubic|bbr|dctcp` aqmlab's flows are its Linux-style
family with the variant's defaults (`traffic[0].tcp = {variant = ...}`, only
the header set to ns-3's 42 B, the window fixed, `rwnd = "10000pkt"`, and
timestamps off, as ns-3's) and ns-3 runs the matching congestion control
(bench/ns3/README.md, "CUBIC, BBR and DCTCP against ns-3"); the table then
also gives the bottleneck's ECN mark rate and utilisation, and so does the
markdown table. `red_step` is RED as a step ECN marker at 20 packets, for
DCTCP.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import aqmlab

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "ns3" / "dumbbell-a1.toml"
NS3_SCRIPT = HERE / "ns3" / "dumbbell.py"
NS3_PIN = "ns3==3.44.post0"
DROPTAIL = {"kind": "droptail", "limit": "300pkt"}
# CoDel, PIE and FQ-CoDel as in `aqmlab demo` (their defaults with a
# 300-packet limit), every default written out: ns-3 is set to match these
# (AQM_ATTRS in bench/ns3/dumbbell.py; bench/ns3/README.md lists each).
AQMS = {
    "codel": {"kind": "codel", "limit": "300pkt", "target": "5ms", "interval": "100ms", "ecn": False},
    "pie": {"kind": "pie", "limit": "300pkt", "qdelay_ref": "15ms", "t_update": "15ms", "alpha": 0.125,
            "beta": 1.25, "max_burst": "150ms", "delay_estimator": "timestamp", "mean_pktsize": "1000B",
            "derandomize": False, "cap_drop_adjustment": True, "ecn": False, "byte_mode": False,
            "idle_decay_factor": 0.98},
    # quantum: one data packet, 1502 B with aqmlab's 2-byte link header;
    # ns-3's quantum is the device MTU, 1500 B, and its qdisc sees the 1500 B
    # IP packet (the PPP header is added below it): one packet per round in both.
    "fq_codel": {"kind": "fq_codel", "limit": "300pkt", "flows": 1024, "quantum": "1502B", "target": "5ms",
                 "interval": "100ms", "ecn": True, "drop_batch": 64},
    # FQ-PIE, COBALT and FQ-COBALT: aqmlab's defaults (crates/qdisc/src/fq_pie.rs,
    # cobalt.rs, fq_cobalt.rs) with the dumbbell's 300-packet limit and, for the
    # two FQs, fq_codel's one-data-packet quantum; ns-3 is set to match these,
    # its defaults changed where they differ (bench/ns3/README.md, "FQ-PIE and
    # COBALT against ns-3").
    "fq_pie": {"kind": "fq_pie", "limit": "300pkt", "flows": 1024, "quantum": "1502B", "target": "15ms",
               "t_update": "15ms", "alpha": 0.125, "beta": 1.25, "max_burst": "150ms", "ecn": False,
               "ecn_prob": 0.1, "byte_mode": False, "derandomize": True},
    "cobalt": {"kind": "cobalt", "limit": "300pkt", "target": "5ms", "interval": "100ms",
               "increment": 1 / 256, "decrement": 1 / 4096, "blue_threshold": "400ms", "ecn": False},
    "fq_cobalt": {"kind": "fq_cobalt", "limit": "300pkt", "flows": 1024, "quantum": "1502B", "drop_batch": 1,
                  "target": "5ms", "interval": "100ms", "increment": 1 / 256, "decrement": 1 / 4096,
                  "blue_threshold": "none", "ecn": True},
}
# RED as a step marker for DCTCP: the instantaneous queue (w_q 1), every
# ECN-capable arrival marked once 21 packets wait (max_p 1 between 20 and
# 21, a mark rather than a drop above max_th); ns-3's RedQueueDisc is set to
# match (dumbbell.py).
RED_STEP = {"kind": "red", "limit": "300pkt", "min_th": "20pkt", "max_th": "21pkt", "max_p": 1.0, "w_q": 1.0,
            "ecn": True, "gentle": False, "ecn_above_max_th": "mark"}
QDISCS = ["droptail", "red", "red_step", *AQMS]
# aqmlab's Linux-style variants, each run with its defaults.
LINUX_TCPS = ["linux-reno", "cubic", "bbr", "dctcp"]


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, nargs="+", default=[16, 64, 256], metavar="N")
    ap.add_argument("--qdisc", nargs="+", choices=QDISCS, default=["droptail", "red"])
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets",
                    help="aqmlab only: a scenario override over the case's (e.g. topology.qdisc.target=3.8ms,"
                         " VALUE as TOML); repeatable")
    ap.add_argument("--ns3-attr", action="append", default=[], metavar="NAME=VALUE",
                    help="ns-3 only: an attribute of the bottleneck's AQM (any qdisc but droptail, red and red_step)"
                         " (dumbbell.py --attr); repeatable")
    ap.add_argument("--repeat", type=int, default=1, metavar="K",
                    help="repetitions; wall times are their median")
    ap.add_argument("--tcp", choices=["sack", "newreno", *LINUX_TCPS], default="sack",
                    help="TCP in both simulators: sack or newreno (ns-2's agents), or a Linux-style"
                         " variant with its defaults (default sack; see bench/ns3/README.md)")
    ap.add_argument("--ns3-tcp-attr", action="append", default=[], metavar="NAME=VALUE",
                    help="ns-3 only: the default of any attribute by its full name, e.g."
                         " ns3::TcpSocket::DelAckCount=1 (dumbbell.py --tcp-attr); repeatable")
    ap.add_argument("--seed", type=int, nargs="+", default=[1], metavar="S",
                    help="seeds; with more than one, every figure but the wall times is the mean over"
                         " them with its 95%% confidence interval")
    ap.add_argument("--duration", type=float, default=100.0, help="simulated seconds")
    ap.add_argument("--warmup", type=float, default=20.0, help="seconds discarded before measuring")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write every run's figures to FILE")
    ap.add_argument("--markdown", action="store_true",
                    help="after the table, print goodput, mean queueing delay and drop rate per case as a"
                         " markdown table (aqmlab / ns-3, ratio) with the figures that agree within 5%%")
    args = ap.parse_args()
    if args.repeat < 1 or min(args.flows) < 1 or not 0 <= args.warmup < args.duration:
        ap.error("need --repeat >= 1, --flows >= 1 and 0 <= --warmup < --duration")
    if len(args.seed) > 10:
        ap.error("at most 10 seeds")
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


def run_aqmlab(flows: int, qdisc: str, seed: int, args: argparse.Namespace) -> dict:
    sc = aqmlab.Scenario.load(SCENARIO)
    over = {"traffic[0].count": flows, "traffic[0].tcp.variant": args.tcp,
            "duration": f"{args.duration}s", "warmup": f"{args.warmup}s"}
    if args.tcp in LINUX_TCPS:
        # The family's defaults; only the header is ns-3's (dumbbell-a1.toml),
        # and the receiver's window: ns-3 has a fixed 2 MiB buffer and no
        # autotuning, so aqmlab's window is fixed too, effectively unlimited
        # (its default since engine 0.8.0 is Linux's autotuned window); and
        # timestamps are off, as ns-3's are set (`Timestamp` false).
        del over["traffic[0].tcp.variant"]
        over["traffic[0].tcp"] = {"variant": args.tcp, "header": "42B", "rwnd": "10000pkt", "timestamps": False}
    if qdisc == "droptail":
        over["topology.qdisc"] = DROPTAIL
    elif qdisc == "red_step":
        over["topology.qdisc"] = RED_STEP
    elif qdisc in AQMS:
        over["topology.qdisc"] = AQMS[qdisc]
    for kv in args.sets:
        key, _, value = kv.partition("=")
        over[key] = tomllib.loads(f"v = {value}")["v"]
    s = aqmlab.run(sc.with_(**over), seed=seed).summary
    q = s["queues"]["bottleneck"]
    return {"wall_s": s["wall_s"], "events": s["events"],
            "goodput_bps": s["traffic"]["ftp"]["goodput_bps"],
            "udp_loss": s["traffic"]["cbr"]["loss_rate"],
            "drops": q["drops"], "marks": q.get("marks"), "loss_rate": q.get("loss_rate"),
            "mark_rate": q["marks"] / q["arrivals"] if q.get("marks") is not None and q.get("arrivals") else None,
            "utilization": q.get("utilization"),
            "tcp_timeouts": s["traffic"]["ftp"]["timeouts"],
            "tcp_fast_recoveries": s["traffic"]["ftp"]["fast_retransmits"],
            "qdelay_mean_s": q["qdelay_mean_s"]}


def run_ns3(py: str, flows: int, qdisc: str, seed: int, args: argparse.Namespace) -> dict:
    cmd = [py, str(NS3_SCRIPT), "--flows", str(flows), "--qdisc", qdisc, "--tcp", args.tcp,
           "--seed", str(seed), "--duration", str(args.duration), "--warmup", str(args.warmup)]
    if qdisc not in ("droptail", "red", "red_step"):
        cmd += [f"--attr={a}" for a in args.ns3_attr]
    cmd += [f"--tcp-attr={a}" for a in args.ns3_tcp_attr]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare.py: ns-3 failed ({' '.join(cmd)}):\n{p.stderr.strip()}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


# Student's t quantile 0.975 for 1..9 degrees of freedom: 95% confidence
# intervals over 2 to 10 seeds.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262]


def mean_ci(xs: list[float | None]) -> tuple[float | None, float | None]:
    """The mean and the half-width of its 95% confidence interval (None for one value)."""
    if any(x is None for x in xs):
        return None, None
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, None
    return m, T975[min(len(xs), 10) - 2] * statistics.stdev(xs) / len(xs) ** 0.5


#: The figures of the markdown table: key, heading, short name, format.
MARKDOWN = [("goodput", "TCP goodput Mb/s", "goodput", ".2f"),
            ("qdelay", "mean queueing delay ms", "delay", ".2f"),
            ("droprate", "bottleneck drop rate %", "drop rate", ".2f")]


#: With a Linux-style TCP, the markdown table also has these.
MARKDOWN_LINUX = [("markrate", "ECN mark rate %", "mark rate", ".2f"),
                  ("util", "utilisation %", "utilisation", ".2f")]


def markdown_table(cases: list[tuple[int, str]], sides: dict, figures: list = MARKDOWN) -> str:
    """Goodput, delay and drop rate per case, "aqmlab ±hw / ns-3 ±hw (ratio)",
    and which of them agree within 5% (ratio of the means in [0.95, 1.05])."""
    head = ["flows", "qdisc", *(f"{h}, aqmlab / ns-3 (ratio)" for _, h, _, _ in figures), "within 5%"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n, q in cases:
        a, b = sides[n, q]
        cells, agree = [], []
        for key, _, short, spec in figures:
            def one(v: tuple[float | None, float | None]) -> str:
                m, hw = v
                return fmt(m, spec) + ("" if hw is None else " ±" + fmt(hw, spec))
            r = ratio(a[key][0], b[key][0])
            cells.append(f"{one(a[key])} / {one(b[key])} ({fmt(r, '.3f')})")
            if r is not None and 0.95 <= r <= 1.05:
                agree.append(short)
        lines.append("| " + " | ".join([str(n), q, *cells, ", ".join(agree) or "none"]) + " |")
    return "\n".join(lines)


def main() -> None:
    args = parse_args()
    py = ns3_python()
    seeds = args.seed
    cases = [(n, q) for n in args.flows for q in args.qdisc]
    runs: dict[tuple[int, str], dict[str, list[dict]]] = {c: {"aqmlab": [], "ns-3": []} for c in cases}
    for rep in range(args.repeat):
        for n, q in cases:
            for seed in seeds:
                print(f"[{rep + 1}/{args.repeat}] {n} flows, {q}, seed {seed}: aqmlab ...",
                      end="", file=sys.stderr, flush=True)
                runs[n, q]["aqmlab"].append(run_aqmlab(n, q, seed, args))
                print(" ns-3 ...", end="", file=sys.stderr, flush=True)
                t0 = time.perf_counter()
                runs[n, q]["ns-3"].append(run_ns3(py, n, q, seed, args))
                print(f" done ({time.perf_counter() - t0:.1f} s for ns-3 in all)", file=sys.stderr)

    sim_s = args.duration
    rows = []
    speed = []
    figures = [("goodput", "TCP goodput Mb/s", ".4f", lambda r: r["goodput_bps"] / 1e6),
               ("udp", "UDP loss %", ".3f", lambda r: None if r["udp_loss"] is None else 100 * r["udp_loss"]),
               ("drops", "bottleneck drops", ",.0f", lambda r: r["drops"]),
               ("droprate", "bottleneck drop rate %", ".3f",
                lambda r: None if r.get("loss_rate") is None else 100 * r["loss_rate"]),
               ("marks", "bottleneck ECN marks", ",.0f", lambda r: r.get("marks")),
               ("qdelay", "mean queueing delay ms", ".2f",
                lambda r: None if r["qdelay_mean_s"] is None else 1e3 * r["qdelay_mean_s"]),
               # aqmlab: the senders' timeouts and fast retransmits; ns-3: entries of
               # the sockets into CA_LOSS and CA_RECOVERY.
               ("timeouts", "TCP timeouts", ",.0f", lambda r: r.get("tcp_timeouts")),
               ("recoveries", "TCP fast recoveries", ",.0f", lambda r: r.get("tcp_fast_recoveries"))]
    if args.tcp in LINUX_TCPS:
        figures += [("markrate", "bottleneck ECN mark rate %", ".3f",
                     lambda r: None if r.get("mark_rate") is None else 100 * r["mark_rate"]),
                    ("util", "bottleneck utilisation %", ".2f",
                     lambda r: None if r.get("utilization") is None else 100 * r["utilization"])]
    sides = {}
    for n, q in cases:
        side = {}
        for name, rs in runs[n, q].items():
            wall = statistics.median(r["wall_s"] for r in rs)
            first = rs[:len(seeds)]  # one run per seed: the other repetitions repeat them
            side[name] = {"wall": (wall, None), "simrate": (sim_s / wall, None),
                          "events": (first[0]["events"], None), "evrate": (first[0]["events"] / wall, None)}
            for key, _, _, get in figures:
                side[name][key] = mean_ci([get(r) for r in first])
        a, b = side["aqmlab"], side["ns-3"]
        sides[n, q] = a, b
        speed.append(a["simrate"][0] / b["simrate"][0])
        for key, label, spec in [("wall", "wall s (simulation only)", ".3f"),
                                 ("simrate", "simulated s / wall s", ",.1f"),
                                 ("events", "events", ",.0f"),
                                 ("evrate", "events / wall s", ",.0f"),
                                 *((k, lab, sp) for k, lab, sp, _ in figures)]:
            def cell(v: tuple[float | None, float | None]) -> str:
                m, hw = v
                return fmt(m, spec) + ("" if hw is None else " ±" + fmt(hw, spec))
            rows.append((str(n), q, label, cell(a[key]), cell(b[key]), fmt(ratio(a[key][0], b[key][0]), ".3f")))

    ns3_version = runs[cases[0]]["ns-3"][0].get("ns3_version")
    seed_text = f"seed {seeds[0]}" if len(seeds) == 1 else \
        f"seeds {' '.join(map(str, seeds))} (mean ±95% CI half-width)"
    print(f"aqmlab {aqmlab.__version__} vs ns-3 {ns3_version}: "
          f"A1 dumbbell, TCP {args.tcp}, {seed_text}, {args.duration:g} s simulated, "
          f"{args.warmup:g} s warm-up; wall times: median of {args.repeat * len(seeds)}")
    if args.sets or args.ns3_attr or args.ns3_tcp_attr:
        print(f"overrides: aqmlab {' '.join(args.sets) or '-'}; "
              f"ns-3 {' '.join(args.ns3_attr + args.ns3_tcp_attr) or '-'}")
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
    if args.markdown:
        print()
        print(markdown_table(cases, sides, MARKDOWN + MARKDOWN_LINUX if args.tcp in LINUX_TCPS else MARKDOWN))
    if args.json:
        args.json.write_text(json.dumps(
            [{"flows": n, "qdisc": q, **runs[n, q]} for n, q in cases], indent=1))


if __name__ == "__main__":
    main()
