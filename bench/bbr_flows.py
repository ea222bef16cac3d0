"""BBR's model flow by flow, Linux's against aqmlab's, on the A1 dumbbell.

    sudo .venv/bin/python bench/bbr_flows.py [--flows 64] [--queue TD] [--seeds 1 2] [--duration 60]
        [--interval 0.1] [--sim-set KEY=VALUE ...] [--sim-only] [--json OUT]

Emulates (Linux's `bbr`) and simulates (aqmlab's `bbr`) examples/tcp-dumbbell.toml
with every bulk flow BBR, Linux's packets (1448 bytes of payload in 1500) on
both sides, and `[trace]` sampling the bottleneck's backlog and every bulk
flow's model (`bbr_bw_bps`, `bbr_min_rtt_s`, the gains, cwnd, and the
receiver's window `rwnd_pkts`: the simulator from its own BBR, emulation from
the kernel's TCP_INFO and TCP_CC_INFO, in the same columns). Prints, for each
engine and every 5 s of the run: the bottleneck's smallest and mean backlog
in those 5 s, how many flows are in STARTUP (pacing gain 739/256), the median
and largest bandwidth estimates, the median and smallest min_rtt estimates,
the flows' summed cwnd and their median receiver window; then per run the
drop rate after the warm-up, Jain's index over the flows' goodputs, the
largest flow's goodput, the flows that got under 20 kb/s and the RTO
expiries (Linux's TCPTimeouts cover the whole run, the simulated senders'
count only the window after the warm-up, so the two are not alike).
`--sim-set` changes the simulated side only (for example
`traffic[0].tcp.rwnd=64`); `--sim-only` skips emulation (no root needed).
Emulation runs in real time: each seed takes DURATION seconds.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import aqmlab
from aqmlab import emulation

ROOT = Path(__file__).resolve().parent.parent
QDISCS = {
    "TD": 'topology.qdisc={kind="droptail", limit="300pkt"}',
    "RED": 'topology.qdisc={kind="red", limit="300pkt", min_th="45pkt", max_th="195pkt", max_p=0.1, w_q=0.002}',
}
STARTUP_GAIN = 739 / 256
STEP = 5.0


def scenario(flows: int, queue: str, duration: float, interval: float) -> aqmlab.Scenario:
    base = aqmlab.Scenario.load(ROOT / "examples" / "tcp-dumbbell.toml")
    # The whole `tcp` table first: setting it after `tcp.header` would drop the header.
    sc = base.with_set(['traffic[0].tcp={variant="bbr"}', f"traffic[0].count={flows}", f"duration={duration:g}s",
                        "warmup=20s", QDISCS[queue], 'traffic[0].packet_size="1448B"', 'traffic[0].tcp.header="52B"'])
    names = ", ".join(f'"ftp[{j}]"' for j in range(flows))
    return sc.with_set([f'trace={{interval="{interval:g}s", queues=["bottleneck"], flows=[{names}]}}'])


def num(v) -> float:
    """A trace value as a float, NaN for a missing one."""
    return math.nan if v is None else float(v)


def window_rows(series, flows: int) -> list[tuple]:
    """Per 5 s: backlog min and mean, flows in STARTUP, bw median and max
    (Mb/s), min_rtt median and min (ms), summed cwnd and median receiver
    window (at the window's end)."""
    rows = []
    t = series["time_s"]
    end = float(t.max())
    start = 0.0
    while start < end:
        w = series[(t > start) & (t <= start + STEP)]
        if w.empty:
            break
        last = w.iloc[-1]
        # Before a flow connects, Linux reports zeros: only estimates taken.
        bw = sorted(x for j in range(flows) if (x := num(last[f"ftp[{j}].bbr_bw_bps"])) > 0)
        rtt = sorted(x for j in range(flows) if (x := num(last[f"ftp[{j}].bbr_min_rtt_s"])) > 0)
        startup = sum(1 for j in range(flows) if num(last[f"ftp[{j}].bbr_pacing_gain"]) == STARTUP_GAIN)
        cwnd = sum(x for j in range(flows) if not math.isnan(x := num(last[f"ftp[{j}].cwnd"])))
        rwnd = sorted(x for j in range(flows) if (x := num(last[f"ftp[{j}].rwnd_pkts"])) > 0)
        med = lambda xs: xs[len(xs) // 2] if xs else math.nan  # noqa: E731
        rows.append((start + STEP, float(w["bottleneck.backlog_pkts"].min()), float(w["bottleneck.backlog_pkts"].mean()),
                     startup, med(bw) / 1e6, (bw[-1] if bw else math.nan) / 1e6, med(rtt) * 1e3,
                     (rtt[0] if rtt else math.nan) * 1e3, cwnd, med(rwnd)))
        start += STEP
    return rows


def per_run(summary: dict) -> str:
    flows = [f["goodput_bps"] for f in summary["flows"] if f["group"] == "ftp"]
    jain = sum(flows) ** 2 / (len(flows) * sum(g * g for g in flows))
    timeouts = summary.get("kernel", {}).get("tcp", {}).get("TCPTimeouts", summary["traffic"]["ftp"].get("timeouts"))
    return (f"drop rate {summary['queues']['bottleneck']['loss_rate'] * 100:.1f}%, Jain {jain:.2f}, "
            f"largest flow {max(flows) / 1e6:.2f} Mb/s, under 20 kb/s: {sum(g < 20e3 for g in flows)}, "
            f"RTO expiries {timeouts}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flows", type=int, default=64)
    ap.add_argument("--queue", default="TD", choices=list(QDISCS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--interval", type=float, default=0.1, help="trace interval, seconds")
    ap.add_argument("--sim-set", nargs="*", default=[], metavar="KEY=VALUE", help="the simulated side only")
    ap.add_argument("--sim-only", action="store_true", help="skip emulation")
    ap.add_argument("--json", default=None, help="also write every run's summary and series here")
    args = ap.parse_args()
    why = None if args.sim_only else emulation.unavailable()
    if why:
        raise SystemExit(f"error: {why}")
    sc = scenario(args.flows, args.queue, args.duration, args.interval)
    kept = {}
    for seed in args.seeds:
        runs = {} if args.sim_only else {"Linux": aqmlab.emulate(sc, seed=seed)}
        runs["aqmlab"] = aqmlab.run(sc.with_set(args.sim_set), seed=seed)
        for engine, res in runs.items():
            print(f"\n{engine}, {args.flows} flows, {args.queue}, seed {seed}: {per_run(res.summary)}")
            print("| until s | backlog min | backlog mean | in STARTUP | bw median Mb/s | bw max Mb/s "
                  "| min_rtt median ms | min_rtt min ms | cwnd sum | rwnd median |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            for r in window_rows(res.series, args.flows):
                print(f"| {r[0]:.0f} | {r[1]:.0f} | {r[2]:.0f} | {r[3]} | {r[4]:.3f} | {r[5]:.2f} | {r[6]:.0f} "
                      f"| {r[7]:.0f} | {r[8]:.0f} | {r[9]:.0f} |", flush=True)
            kept[f"{engine}-{seed}"] = {"summary": res.summary, "series": res.series.to_dict(orient="list")}
    if args.json:
        Path(args.json).write_text(json.dumps(kept))


if __name__ == "__main__":
    main()
