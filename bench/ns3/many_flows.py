"""CoDel, PIE and FQ-CoDel with many flows in aqmlab: `aqmlab demo`'s dumbbell against the A1 one of compare.py.

    .venv/bin/python bench/ns3/many_flows.py [--flows 256] [--seeds 5] [--qdisc codel fq_codel pie]

For each discipline, runs the demo's scenario (python/aqmlab/data/demo.toml:
payloads uniform on 1400-1628 B, aqmlab's default TCP header, the demo's
settings of the discipline) and compare.py's A1 scenario
(bench/ns3/dumbbell-a1.toml with compare.py's AQMS settings) over the same
seeds, one run at a time, and prints per scenario the mean over the seeds
with the 95% confidence half-width of: the mean queueing delay, the
bottleneck's drop rate and its overflow drops, TCP goodput, TCP timeouts per
second, and, from a 1 ms trace of the bottleneck, the share of samples in
which CoDel was in its dropping state, the median, 90th percentile and
largest of its count, and its entries into the dropping state (CoDel only;
with seed 1's count at each entry). `--guard` runs FQ-CoDel's guard
sensitivity instead. Tells whether the A1 dumbbell that ns-3 runs sits in
the same regime as the demo. The demo runs 80 s after 20 s of warm-up, as
A1 does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tomllib
from pathlib import Path

import aqmlab

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from compare import AQMS, SCENARIO, mean_ci  # noqa: E402

DEMO = HERE.parent.parent / "python" / "aqmlab" / "data" / "demo.toml"


def demo_scenario(qdisc: str) -> tuple[aqmlab.Scenario, dict]:
    exp = tomllib.loads(DEMO.read_text())
    data = exp["scenario"]
    data["warmup"] = exp["warmup"]
    axis = exp["sweep"]["topology.qdisc"]
    return aqmlab.Scenario.from_dict(data), axis["values"][axis["labels"].index(qdisc)]


def one(sc: aqmlab.Scenario, flows: int, qdisc: dict, seed: int) -> dict:
    res = aqmlab.run(sc.with_(**{"traffic[0].count": flows, "topology.qdisc": qdisc,
                                 "trace": {"interval": "1ms", "queues": ["bottleneck"]}}), seed=seed)
    s = res.summary
    q, ftp = s["queues"]["bottleneck"], s["traffic"]["ftp"]
    window = 80.0
    out = {"qdelay_ms": 1e3 * q["qdelay_mean_s"], "drop_rate_pct": 100 * q["loss_rate"],
           "overflow_drops": q["drops_overflow"], "goodput_mbps": ftp["goodput_bps"] / 1e6,
           "timeouts_per_s": ftp["timeouts"] / window}
    if qdisc["kind"] == "codel":
        ser = res.series
        t = ser["time_s"] if "time_s" in ser else ser[ser.columns[0]]
        w = ser[t >= 20.0]
        drop_col = next(c for c in ser.columns if c.endswith("dropping"))
        count_col = next(c for c in ser.columns if c.endswith(".count"))
        out["dropping_share"] = float(w[drop_col].mean())
        counts = sorted(w[count_col])
        out["count_median"] = float(statistics.median(counts))
        out["count_p90"] = float(counts[int(0.9 * (len(counts) - 1))])
        out["count_max"] = float(counts[-1])
        # Entries into the dropping state: lastcount is set at each one.
        lc = list(w[next(c for c in ser.columns if c.endswith(".lastcount"))])
        out["entries"] = float(sum(1 for a, b in zip(lc, lc[1:]) if a != b))
        out["_entry_counts"] = [int(b) for a, b in zip(lc, lc[1:]) if a != b]
    return out


def guard(args: argparse.Namespace) -> None:
    """What sets FQ-CoDel's delay in the demo: its guard against the packet sizes."""
    sc, q = demo_scenario("fq_codel")
    variants = {
        "demo as is": {},
        "bottleneck mtu 1700B": {"topology.bottleneck": {"rate": "10Mbps", "delay": "50ms", "mtu": "1700B"}},
        "quantum 1668B": {"topology.qdisc": dict(q, quantum="1668B")},
        "packets 1460B + 42B header": {"traffic[0].packet_size": "1460B", "traffic[0].tcp.header": "42B"},
    }
    print(f"aqmlab {aqmlab.__version__}, demo's fq_codel, {args.flows} flows, seeds 1-{args.seeds},"
          " mean ±95% CI half-width")
    for name, over in variants.items():
        rs = []
        for seed in range(1, args.seeds + 1):
            s = aqmlab.run(sc.with_(**{"traffic[0].count": args.flows, "topology.qdisc": q, **over}),
                           seed=seed).summary
            b = s["queues"]["bottleneck"]
            rs.append({"qdelay_ms": 1e3 * b["qdelay_mean_s"], "overflow_drops": b["drops_overflow"],
                       "codel_drops": b["drops_head"], "timeouts_per_s": s["traffic"]["ftp"]["timeouts"] / 80.0})
        cells = []
        for key in rs[0]:
            m, hw = mean_ci([r[key] for r in rs])
            cells.append(f"{key} {m:.1f}" + ("" if hw is None else f" ±{hw:.1f}"))
        print(f"{name:28s} " + "; ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=256)
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..S (the demo's replications)")
    ap.add_argument("--qdisc", nargs="+", choices=list(AQMS), default=["codel", "fq_codel", "pie"])
    ap.add_argument("--guard", action="store_true",
                    help="instead: the demo's FQ-CoDel as is, with the bottleneck MTU (CoDel's 'queue almost"
                         " empty' guard) raised to 1700 B, with quantum 1668 B, and with A1's packets")
    args = ap.parse_args()
    if args.guard:
        guard(args)
        return
    a1 = aqmlab.Scenario.load(SCENARIO)
    print(f"aqmlab {aqmlab.__version__}, {args.flows} flows, seeds 1-{args.seeds}, mean ±95% CI half-width")
    for name in args.qdisc:
        demo, demo_q = demo_scenario(name)
        for label, sc, q in [("demo", demo, demo_q), ("A1", a1, AQMS[name])]:
            rs = [one(sc, args.flows, q, seed) for seed in range(1, args.seeds + 1)]
            cells = []
            for key in (k for k in rs[0] if not k.startswith("_")):
                m, hw = mean_ci([r[key] for r in rs])
                cells.append(f"{key} {m:.3f}" + ("" if hw is None else f" ±{hw:.3f}"))
            print(f"{name:8s} {label:4s} " + "; ".join(cells))
            if "_entry_counts" in rs[0]:
                print(f"{'':13s} seed 1, count at each entry into the dropping state: {rs[0]['_entry_counts']}")


if __name__ == "__main__":
    main()
