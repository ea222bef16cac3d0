"""How faithfully `aqmlab emulate` reproduces a link, at 10, 45 and 100 Mb/s.

    sudo .venv/bin/python bench/emulation_accuracy.py [--runs 3] [--rates 10 45 100]

For each rate, `examples/emulation-accuracy.toml` with both links at that
rate: a CBR source at half the rate (nothing queues: each packet should take
exactly 50 ms plus its transmission time) and one at 1.2 times the rate (the
link should deliver exactly its rate). Prints, per run, the light flow's
delay above propagation + transmission (p50, p99), the overloaded flow's
offered rate (what reached the router: a loaded machine's source may fall
short of 1.2) and delivered rate against the link's, the router's wake-up lateness and CPU
share; then the machine's own timer latency (crates/emu/examples/
timer_latency.rs), the floor under any of it. Needs root.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import aqmlab
from aqmlab import emulation

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per rate")
    ap.add_argument("--rates", type=int, nargs="+", default=[10, 45, 100], help="link rates, Mb/s")
    args = ap.parse_args()
    why = emulation.unavailable()
    if why:
        raise SystemExit(f"error: {why}")
    print("| rate | run | delay p50 above | delay p99 above | offered / link rate | delivered / link rate "
          "| router late p99 | late max | router CPU |")
    print("|---|---|---|---|---|---|---|---|---|")
    for rate in args.rates:
        sc = aqmlab.Scenario.load(ROOT / "examples" / "emulation-accuracy.toml").with_set([
            f"topology.links[0].rate={rate}Mbps", f"topology.links[1].rate={rate}Mbps",
            f"traffic[0].rate={rate / 2:g}Mbps", f"traffic[1].rate={rate * 1.2:g}Mbps"])
        expected = 0.050 + 1000 * 8 / (rate * 1e6)
        for run in range(1, args.runs + 1):
            s = aqmlab.emulate(sc).summary
            light = next(f for f in s["flows"] if f["group"] == "light")
            over = next(f for f in s["flows"] if f["group"] == "overload")
            t = s["timing"]
            print(f"| {rate} Mb/s | {run} | {1e6 * (light['delay_p50_s'] - expected):.0f} us "
                  f"| {1e6 * (light['delay_p99_s'] - expected):.0f} us "
                  f"| {over['throughput_bps'] / (rate * 1e6):.4f} "
                  f"| {over['goodput_bps'] / (rate * 1e6):.4f} | {1e6 * t['late_p99_s']:.0f} us "
                  f"| {1e3 * t['late_max_s']:.1f} ms | {100 * t['router_cpu_share']:.0f}% |", flush=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "aqmlab-emu", "--example", "timer_latency"],
                   cwd=ROOT, check=True)
    out = subprocess.run([str(ROOT / "target" / "release" / "examples" / "timer_latency"), "5000"],
                         capture_output=True, text=True, check=True).stdout
    print("\nthis machine's timer latency, deadlines 800 us apart (us):")
    for line in out.splitlines():
        d = json.loads(line)
        print(f"  {d['pattern']:16s} p50 {d['p50_us']:7.1f}  p99 {d['p99_us']:7.1f}  max {d['max_us']:8.1f}")


if __name__ == "__main__":
    main()
