"""Linux TCP against aqmlab's TCP on the A1 dumbbell, side by side.

    sudo .venv/bin/python bench/emulation_vs_sim.py [--runs 3] [--duration 100] [--warmup 30] [--json OUT]
        [--flows 16 64] [--queues TD RED] [--variant NAME] [--sim-set KEY=VALUE ...]

The standard dumbbell of study A1 (examples/tcp-dumbbell.toml: 4 sender
hosts, round trips of 120-180 ms, a 10 Mb/s bottleneck with a 300-packet
buffer, 4 CBR sources of 250 kb/s) with 16 and 64 bulk TCP flows, through
Tail Drop and RED with the standard parameters, each emulated (Linux `reno`
with SACK, `aqmlab emulate`) and simulated (ns-2's SACK agent with delayed
ACKs, `aqmlab run`), with seeds 1..RUNS each. Prints, per configuration and
metric, the mean and 95% confidence interval of each engine and their
difference, then the kernels' loss-recovery counters (`kernel.tcp`, over
the whole run) beside the simulated agents' timeouts and fast retransmits
(over the window). `--variant NAME` sets `traffic[0].tcp={variant="NAME"}`
on both sides instead of the scenario's "sack": a variant of the Linux-style
family ("linux-reno", "cubic", "bbr", ...) is simulated with its own defaults
(initial window 10, delayed ACKs, Linux's RTO), which are Linux's, and
emulated with the kernel's module of that name ("linux-reno" as `reno` with
SACK). `--sim-set` changes the simulated side only (for example
`traffic[0].tcp.delayed_ack=false`, or with a Linux-style variant
`traffic[0].tcp.rack=false`), for sensitivity runs.
Emulation runs in real time: RUNS x DURATION seconds per configuration.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import aqmlab
from aqmlab import emulation
from aqmlab.stats import summarize

ROOT = Path(__file__).resolve().parent.parent
METRICS = {
    "goodput": ("traffic.ftp.goodput_bps", 1e-6, "Mb/s"),
    "drop rate": ("queues.bottleneck.loss_rate", 100, "%"),
    "mean queue": ("queues.bottleneck.qlen_mean_pkts", 1, "pkts"),
    "queueing delay": ("queues.bottleneck.qdelay_mean_s", 1e3, "ms"),
    "utilisation": ("queues.bottleneck.utilization", 100, "%"),
    "CBR loss": ("traffic.cbr.loss_rate", 100, "%"),
}
QDISCS = {
    "TD": 'topology.qdisc={kind="droptail", limit="300pkt"}',
    "RED": 'topology.qdisc={kind="red", limit="300pkt", min_th="45pkt", max_th="195pkt", max_p=0.1, w_q=0.002}',
}


def get(summary: dict, path: str) -> float:
    node = summary
    for k in path.split("."):
        node = node[k]
    return float(node)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--duration", type=float, default=100)
    ap.add_argument("--warmup", type=float, default=30)
    ap.add_argument("--flows", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--queues", nargs="+", default=list(QDISCS), choices=list(QDISCS))
    ap.add_argument("--variant", default=None, metavar="NAME",
                    help='tcp.variant on both sides (default: the scenario\'s "sack")')
    ap.add_argument("--sim-set", nargs="*", default=[], metavar="KEY=VALUE",
                    help="settings for the simulated runs only")
    ap.add_argument("--json", default=None, help="also write every run's summary here")
    args = ap.parse_args()
    why = emulation.unavailable()
    if why:
        raise SystemExit(f"error: {why}")
    base = aqmlab.Scenario.load(ROOT / "examples" / "tcp-dumbbell.toml")
    if args.variant:
        base = base.with_set([f'traffic[0].tcp={{variant="{args.variant}"}}'])
    kept: dict[str, list] = {}
    sim_label = " ".join([f"aqmlab {args.variant or 'sack'}", *args.sim_set])
    print(f"| flows | queue | metric | Linux (emulated) | {sim_label} (simulated) | Linux - aqmlab |")
    print("|---|---|---|---|---|---|")
    for n in args.flows:
        for qname in args.queues:
            qset = QDISCS[qname]
            sc = base.with_set([f"traffic[0].count={n}", f"duration={args.duration:g}s", f"warmup={args.warmup:g}s",
                                qset])
            emu = [aqmlab.emulate(sc, seed=s).summary for s in range(1, args.runs + 1)]
            simulated = sc.with_set(args.sim_set)
            sim = [aqmlab.run(simulated, seed=s).summary for s in range(1, args.runs + 1)]
            kept[f"{n}-{qname}"] = [{"emulated": e, "simulated": s} for e, s in zip(emu, sim)]
            for label, (path, scale, unit) in METRICS.items():
                e = summarize([get(x, path) * scale for x in emu])
                s = summarize([get(x, path) * scale for x in sim])
                print(f"| {n} | {qname} | {label} ({unit}) | {e.mean:.3g} [{e.low:.3g}, {e.high:.3g}] "
                      f"| {s.mean:.3g} [{s.low:.3g}, {s.high:.3g}] | {e.mean - s.mean:+.3g} |", flush=True)
            t = [x["timing"] for x in emu]
            k = [x["kernel"] for x in emu]
            print(f"| {n} | {qname} | router late p99 (ms), kernel drops | "
                  f"{max(x['late_p99_s'] for x in t) * 1e3:.2f} max over runs, "
                  f"{sum(x['ring_drops'] + x['send_failures'] for x in k)} | | |", flush=True)
            for counter in ("TCPTimeouts", "TCPSackRecovery", "TCPRenoRecovery", "TCPFastRetrans", "TCPLossProbes",
                            "TCPLostRetransmit", "TCPLossUndo"):
                e = summarize([x["tcp"][counter] for x in k])
                print(f"| {n} | {qname} | Linux {counter} (run) | {e.mean:.4g} [{e.low:.4g}, {e.high:.4g}] | | |")
            for key in ("timeouts", "fast_retransmits", "retransmits"):
                s = summarize([x["traffic"]["ftp"][key] for x in sim])
                print(f"| {n} | {qname} | aqmlab {key} (window) | | {s.mean:.4g} [{s.low:.4g}, {s.high:.4g}] | |",
                      flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(kept))


if __name__ == "__main__":
    main()
