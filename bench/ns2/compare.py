"""aqmlab against ns-2.35: engine speed, whole-process time and agreement.

    .venv/bin/python bench/ns2/compare.py [--repeat K] [--runs R] [--flows N ...] [--json FILE]

Every ns-2 script is written by `aqmlab export ns2` from the scenario files
next to this one; nothing in the exporter is changed. Three things are timed,
alternating the two simulators within every repetition:

1. Engine time per simulated second, on the A1 dumbbell (`dumbbell-a1.toml`,
   64 flows and whatever `--flows` adds) and on the open-loop queue
   (`openloop-red.toml`). aqmlab: `wall_s` of `aqmlab run FILE --json`, its
   event loop alone. ns-2, two variants of the exported script, made by text
   edits here:
     - untraced: the packet-trace lines (`[$ns link ...] trace $ns
       $aq(trace_ch)`, the EDrop trace and RED's `early-drop-target`) removed
       and `aq_finish` (which parses the trace into the summary) replaced by a
       procedure that prints the time since `$ns run` and the delivered
       packets and goodput per traffic group, read from the agents. This is
       the engine-against-engine figure and the one the ratio uses: ns-2 then
       does what aqmlab's event loop does, and no more.
     - exported: the script as exported, with two clock reads added, one
       just before `$ns run` and one when `aq_finish` starts, and `exit`
       wrapped to print both. Its simulation time includes writing the
       trace; its summary time is the trace being parsed in Tcl. Run
       `--traced-repeat` times (default 1: on the open-loop queue the trace
       is 9 million lines and takes ns-2 about two minutes to parse).
   Both variants follow the same sample path (tracing draws no random
   numbers): the script checks that they deliver the same packets.
2. Whole processes, `--runs` times per repetition, one command after the
   other: `aqmlab --version`, `aqmlab run dumbbell-10s.toml` (with and
   without `--json`), `ns d10.tcl` (the exported script as a user runs it,
   tracing and all), and the floors `python -c pass` and `ns` on an empty
   script.
3. Agreement: TCP goodput, UDP loss and the bottleneck's loss rate and drops
   of the two simulators on each case (one seed; aqmlab and ns-2 draw
   different random numbers, so they follow different sample paths of the
   same model; `aqmlab crosscheck` is the statistical comparison).

Times are reported as best / median over all repetitions (the machine is
shared; the best is the one to compare). The last lines are the ratios of
the three goals.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BIN = Path(sys.executable).parent
AQMLAB = str(BIN / "aqmlab")
A1 = HERE / "dumbbell-a1.toml"
OPENLOOP = HERE / "openloop-red.toml"
SHORT = HERE / "dumbbell-10s.toml"

# Timing hooks for the exported script: a clock read before `$ns run`, one
# when the summary starts, and `exit` wrapped to print both (seconds) on
# stderr as `aqbench SIM SUMMARY`.
HOOKS_EXPORTED = r"""
proc aqb_mark {} { set ::aqb_t1 [clock microseconds] }
rename exit aqb_exit
proc exit {{code 0}} {
    if {[info exists ::aqb_t1]} {
        puts stderr "aqbench [expr {($::aqb_t1 - $::aqb_t0) / 1e6}] [expr {([clock microseconds] - $::aqb_t1) / 1e6}]"
    }
    aqb_exit $code
}
"""

# The end of the untraced script: the time since `$ns run`, then per traffic
# group the packets delivered and the goodput over the window, as the
# exported summary counts them, read from the agents (no trace needed).
HOOKS_UNTRACED = r"""
proc aqb_end {} {
    global aq aqgrp aqflow
    set sim [expr {([clock microseconds] - $::aqb_t0) / 1e6}]
    aq_snapshot e
    set w [expr {double($aq(duration) - $aq(warmup))}]
    set out {}
    foreach g $aq(groups) {
        set gp 0.0; set dl 0
        foreach i $aqgrp($g,flows) {
            if {$aqflow($i,tcp)} {
                set d [expr {[aq_diff $i bytes_] / ($aqflow($i,payload) + $aqflow($i,hdr))}]
                set gp [expr {$gp + wide($d) * $aqflow($i,payload) * 8.0 / $w}]
            } else {
                set d [aq_diff $i npkts_]
                set gp [expr {$gp + [aq_diff $i bytes_] * 8.0 / $w}]
            }
            incr dl $d
        }
        lappend out "\"$g\": \{\"delivered\": $dl, \"goodput_bps\": $gp\}"
    }
    puts "\{\"sim_s\": $sim, \"traffic\": \{[join $out {, }]\}\}"
    exit 0
}
"""

RUN_LINE = "\n$ns run\n"
FINISH_LINE = "$ns at $aq(duration) {aq_finish}"


def sub(pattern: str, repl: str, text: str, what: str) -> str:
    """re.sub that insists on at least one match, so that a change in the
    exporter's output stops the benchmark instead of timing something else."""
    out, n = re.subn(pattern, repl, text, flags=re.M)
    if n == 0:
        sys.exit(f"compare.py: no {what} in the exported script; has `aqmlab export ns2` changed?")
    return out


def replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        sys.exit(f"compare.py: expected {old.strip()!r} once in the exported script")
    return text.replace(old, new)


def timed_exported(script: str) -> str:
    script = replace_once(script, FINISH_LINE, "$ns at $aq(duration) {aqb_mark; aq_finish}")
    return replace_once(script, RUN_LINE, HOOKS_EXPORTED + "set ::aqb_t0 [clock microseconds]" + RUN_LINE)


def untraced(script: str) -> str:
    s = sub(r"^\[\$ns link \$n\(\d+\) \$n\(\d+\)\] trace \$ns \$aq\(trace_ch\)\n", "", script, "link trace")
    if "early-drop-target" in s:  # RED queues only
        s = sub(r"^set aqet \[\$ns create-trace EDrop .*\n", "", s, "EDrop trace")
        s = sub(r"^\$aqet target .*\n", "", s, "EDrop target")
        s = sub(r"^\$aqlq\(\d+\) early-drop-target \$aqet\n", "", s, "early-drop-target")
    s = sub(r"^set aq\(trace_ch\) \[open \$aq\(trace\) w\]\n", "", s, "trace file")
    s = replace_once(s, FINISH_LINE, "$ns at $aq(duration) {aqb_end}")
    s = replace_once(s, RUN_LINE, HOOKS_UNTRACED + "set ::aqb_t0 [clock microseconds]" + RUN_LINE)
    for left in ("trace $ns", "create-trace", "early-drop-target", "aq(trace_ch)]"):
        if left in s.split("# The summary:")[0]:
            sys.exit(f"compare.py: {left!r} left in the untraced script")
    return s


def run(cmd: list[str], cwd: str | None = None) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"compare.py: {' '.join(cmd)} exited with {p.returncode}:\n{p.stderr.strip()[-2000:]}")
    return dt, p


def last_json(p: subprocess.CompletedProcess) -> dict:
    return json.loads(p.stdout.strip().splitlines()[-1])


def machine() -> dict:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ns_pkg = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "ns2"], capture_output=True, text=True).stdout
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return {"nproc": os.cpu_count(), "cpu": cpu, "kernel": platform.release(),
            "python": platform.python_version(),
            "aqmlab": subprocess.run([AQMLAB, "--version"], capture_output=True, text=True).stdout.strip(),
            "ns2_deb": ns_pkg or "?", "commit": git.stdout.strip() or "?",
            "date": time.strftime("%Y-%m-%d %H:%M %Z")}


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def summarize(r: dict) -> dict:
    """The figures compared between the two simulators, from either's JSON."""
    tr, qs = r["traffic"], r["queues"]
    q = qs.get("bottleneck") or qs.get("q")
    out = {"drops": q["drops"], "queue_loss": q["loss_rate"]}
    for g, v in tr.items():
        out[f"{g}_goodput_mbps"] = v["goodput_bps"] / 1e6
        out[f"{g}_loss"] = v["loss_rate"]
    return out


def best_med(xs: list[float]) -> tuple[float, float]:
    return min(xs), statistics.median(xs)


def table(head: tuple[str, ...], rows: list[tuple[str, ...]], left: int = 1) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]

    def line(cells) -> str:
        return "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    print(line(head))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, metavar="K", help="repetitions of the engine cases (default 3)")
    ap.add_argument("--runs", type=int, default=10, metavar="R",
                    help="whole-process runs of each command per repetition (default 10)")
    ap.add_argument("--traced-repeat", type=int, default=1, metavar="T",
                    help="repetitions of the exported (traced) ns-2 script per case, at most K (default 1)")
    ap.add_argument("--flows", type=int, nargs="+", default=[64], metavar="N",
                    help="A1 dumbbell flow counts (default 64)")
    ap.add_argument("--no-openloop", action="store_true", help="skip the open-loop queue")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write every measurement to FILE")
    args = ap.parse_args()
    ns = shutil.which(os.environ.get("AQMLAB_NS", "ns"))
    if ns is None:
        sys.exit("compare.py: the 'ns' command was not found (Debian: apt-get install ns2)")

    info = machine()
    info["load_before"] = load()
    tmp = tempfile.mkdtemp(prefix="aqmlab-bench-ns2-")
    cases: list[tuple[str, Path, list[str]]] = [
        (f"A1 dumbbell, {n} flows", A1, ["--set", f"traffic[0].count={n}"]) for n in args.flows]
    if not args.no_openloop:
        cases.append(("open-loop RED queue", OPENLOOP, []))

    # The scripts, written once by the exporter.
    scripts: dict[str, dict[str, str]] = {}
    for i, (name, path, sets) in enumerate(cases):
        _, p = run([AQMLAB, "export", "ns2", str(path), *sets])
        base = os.path.join(tmp, f"case{i}")
        Path(base + "-exported.tcl").write_text(timed_exported(p.stdout))
        Path(base + "-untraced.tcl").write_text(untraced(p.stdout))
        scripts[name] = {"exported": base + "-exported.tcl", "untraced": base + "-untraced.tcl"}
    short_tcl = os.path.join(tmp, "d10.tcl")
    run([AQMLAB, "export", "ns2", str(SHORT), "-o", short_tcl])
    short_untraced = os.path.join(tmp, "d10-untraced.tcl")
    Path(short_untraced).write_text(untraced(Path(short_tcl).read_text()))
    empty_tcl = os.path.join(tmp, "empty.tcl")
    Path(empty_tcl).write_text("exit 0\n")

    eng: dict[str, dict[str, list]] = {c[0]: {"aqmlab": [], "aqmlab_proc": [], "untraced": [],
                                               "exported_sim": [], "exported_summary": [],
                                               "exported_proc": [], "untraced_proc": []} for c in cases}
    results: dict[str, dict] = {}
    whole_cmds = [
        ("aqmlab --version", [AQMLAB, "--version"]),
        ("aqmlab run dumbbell-10s.toml", [AQMLAB, "run", str(SHORT)]),
        ("ns d10.tcl (exported)", [ns, short_tcl]),
        ("ns d10-untraced.tcl", [ns, short_untraced]),
        ("aqmlab run dumbbell-10s.toml --json", [AQMLAB, "run", str(SHORT), "--json"]),
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("ns empty.tcl", [ns, empty_tcl]),
    ]
    whole: dict[str, list[float]] = {n: [] for n, _ in whole_cmds}
    for n, c in whole_cmds:  # warm the page cache
        run(c, cwd=tmp)

    for rep in range(args.repeat):
        for name, path, sets in cases:
            print(f"[{rep + 1}/{args.repeat}] {name}: aqmlab", end="", file=sys.stderr, flush=True)
            dt, p = run([AQMLAB, "run", str(path), *sets, "--json"])
            a = json.loads(p.stdout)
            e = eng[name]
            e["aqmlab"].append(a["wall_s"])
            e["aqmlab_proc"].append(dt)
            scripts[name]["duration"] = a["duration_s"] - 0.0
            print(", ns-2 untraced", end="", file=sys.stderr, flush=True)
            dt, p = run([ns, scripts[name]["untraced"]], cwd=tmp)
            u = last_json(p)
            e["untraced"].append(u["sim_s"])
            e["untraced_proc"].append(dt)
            if rep < args.traced_repeat:
                print(", ns-2 exported", end="", file=sys.stderr, flush=True)
                dt, p = run([ns, scripts[name]["exported"]], cwd=tmp)
                x = last_json(p)
                m = re.search(r"^aqbench (\S+) (\S+)$", p.stderr, re.M)
                e["exported_sim"].append(float(m.group(1)))
                e["exported_summary"].append(float(m.group(2)))
                e["exported_proc"].append(dt)
                # The untraced run must have followed the same sample path.
                for g, v in u["traffic"].items():
                    if v["delivered"] != x["traffic"][g]["delivered"] or \
                            abs(v["goodput_bps"] - x["traffic"][g]["goodput_bps"]) > 1e-6 * max(1.0, v["goodput_bps"]):
                        sys.exit(f"compare.py: {name}: the untraced ns-2 run differs from the exported one "
                                 f"in {g}: {v} against {x['traffic'][g]}")
                if any(v["goodput_bps"] < 0 for v in x["traffic"].values()):
                    sys.exit(f"compare.py: {name}: negative goodput from ns-2: its sinks' byte counters "
                             "(C ints) wrapped past 2^31 bytes; shorten the scenario")
                results[name] = {"aqmlab": summarize(a), "ns-2": summarize(x), "events": a["events"]}
            print(file=sys.stderr)
        print(f"[{rep + 1}/{args.repeat}] whole processes x {args.runs}", file=sys.stderr, flush=True)
        for _ in range(args.runs):
            for n, c in whole_cmds:
                whole[n].append(run(c, cwd=tmp)[0])
    info["load_after"] = load()
    shutil.rmtree(tmp, ignore_errors=True)

    print(f"{info['aqmlab']} (commit {info['commit']}) vs ns-2 (Debian ns2 {info['ns2_deb']}), {info['date']}")
    print(f"{info['nproc']} x {info['cpu']}, Linux {info['kernel']}, CPython {info['python']}; "
          f"load average before {info['load_before']}, after {info['load_after']}")
    print(f"engine cases: {args.repeat} repetitions (exported ns-2 script: {min(args.traced_repeat, args.repeat)}); "
          f"whole processes: {args.repeat * args.runs} runs each; times best / median\n")

    rows = []
    ratios = {}
    for name, _, _ in cases:
        e, sim = eng[name], scripts[name]["duration"]
        ab, am = best_med(e["aqmlab"])
        ub, um = best_med(e["untraced"])
        xb, xm = best_med(e["exported_sim"])
        sb, _ = best_med(e["exported_summary"])
        pb, _ = best_med(e["exported_proc"])
        ratios[name] = (ub / ab, um / am)
        rows.append((name, f"{sim:g}", f"{ab:.3f} / {am:.3f}", f"{sim / ab:,.0f}",
                     f"{ub:.3f} / {um:.3f}", f"{sim / ub:,.0f}", f"{xb:.3f}", f"{sb:.3f}", f"{pb:.2f}",
                     f"{ub / ab:.2f} / {um / am:.2f}"))
    print("Engine time (s): aqmlab's event loop (wall_s) against ns-2's `$ns run` to the end of the run")
    table(("case", "sim s", "aqmlab s", "aqmlab sim s/s", "ns-2 untraced s", "ns-2 sim s/s",
           "ns-2 exported: sim", "+ summary", "process", "ratio (untraced)"), rows)

    print("\nAgreement (one seed each; different random numbers, so different sample paths)")
    rows = []
    for name, _, _ in cases:
        r = results[name]
        for k, a in r["aqmlab"].items():
            b = r["ns-2"][k]
            spec = ",d" if k == "drops" else (".4f" if "goodput" in k else ".4%")
            rows.append((name, k, "-" if a is None else format(a, spec), "-" if b is None else format(b, spec),
                         "-" if a is None or not b else f"{a / b:.3f}"))
            name = ""
    table(("case", "metric", "aqmlab", "ns-2", "aqmlab/ns-2"), rows, left=2)

    print("\nWhole processes, ms (best / median)")
    rows = [(n, f"{1e3 * min(v):.0f} / {1e3 * statistics.median(v):.0f}") for n, v in whole.items()]
    table(("command", "wall ms"), rows)

    print()
    for name in ratios:
        b, m = ratios[name]
        print(f"engine speed ratio aqmlab/ns-2, {name}: {b:.2f} (best), {m:.2f} (median); goal >= 3: "
              f"{'met' if min(b, m) >= 3 else 'met on best only' if b >= 3 else 'NOT met'}")
    wa, wn = whole["aqmlab run dumbbell-10s.toml"], whole["ns d10.tcl (exported)"]
    print(f"whole process, 10 s dumbbell: ns / aqmlab run = {min(wn) / min(wa):.1f} (best), "
          f"{statistics.median(wn) / statistics.median(wa):.1f} (median); goal > 1: "
          f"{'met' if min(wn) > min(wa) and statistics.median(wn) > statistics.median(wa) else 'NOT met'}")
    v = whole["aqmlab --version"]
    print(f"aqmlab --version: {1e3 * min(v):.0f} ms best, {1e3 * statistics.median(v):.0f} ms median; goal < 150 ms: "
          f"{'met' if statistics.median(v) < 0.150 else 'met on best only' if min(v) < 0.150 else 'NOT met'}")
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "engine": eng, "results": results, "whole": whole,
                                         "durations": {n: s["duration"] for n, s in scripts.items()}}, indent=1))


if __name__ == "__main__":
    main()
