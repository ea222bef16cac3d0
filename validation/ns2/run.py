"""Runs the ns-2.35 validation suite (suite.toml beside this file) and writes
its agreement tables.

    .venv/bin/python validation/ns2/run.py [--only NAME ...] [--jobs J]
        [--replications R] [--out DIR]

For every case it runs the scenario in aqmlab and in ns-2 (`aqmlab
crosscheck`'s comparison for statistical cases, exact counters for lockstep
ones) and writes, to DIR (default validation/ns2/results): NAME.json per case
(both simulators' summaries; `--render` rebuilds the tables from them
without running anything), agreement.csv (every metric
of every case), agreement.md (the headline table the README shows) and
report.html (the same, self-contained). Exits with status 1 if a case fails.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import html
import json
import math
import sys
import time
import tomllib
from pathlib import Path

import aqmlab
from aqmlab import ns2

HERE = Path(__file__).resolve().parent

# The headline columns of the README table: (label, metric path suffix).
COLUMNS = [
    ("loss rate", "queues.{q}.loss_rate"),
    ("queueing delay", "queues.{q}.qdelay_mean_s"),
    ("mean queue", "queues.{q}.qlen_mean_pkts"),
    ("loss run", "queues.{q}.consecutive_loss.mean"),
]

LOCKSTEP_QUEUE = ("arrivals", "departures", "drops")
LOCKSTEP_FLOW = ("sent", "delivered", "drops", "retransmits", "timeouts", "delivered_bytes")


def load_case(case: dict) -> aqmlab.Scenario:
    sc = aqmlab.Scenario.load(HERE / case["scenario"])
    if case.get("set"):
        sc = sc.with_(**case["set"])
    return sc


def lockstep(sc: aqmlab.Scenario) -> dict:
    """One run each with seed 1; every counter must be equal."""
    return check_lockstep(aqmlab.run(sc, seed=1).summary, ns2.run_ns(sc, seed=1))


def check_lockstep(a: dict, b: dict) -> dict:
    mismatches = []
    for q, qa in a["queues"].items():
        qb = b["queues"].get(q, {})
        mismatches += [f"queues.{q}.{k}: {qa[k]} against {qb.get(k)}" for k in LOCKSTEP_QUEUE if qa[k] != qb.get(k)]
    for fa, fb in zip(a["flows"], b["flows"]):
        mismatches += [f"flows[{fa['group']}][{fa['id']}].{k}: {fa[k]} against {fb.get(k)}"
                       for k in LOCKSTEP_FLOW if fa.get(k) != fb.get(k)]
    return {"ok": not mismatches, "mismatches": mismatches, "aqmlab": a, "ns2": b}


def bottleneck(summary: dict) -> str:
    """The reported queue that drops the most (the bottleneck)."""
    return max(summary["queues"], key=lambda q: (summary["queues"][q]["drops"], summary["queues"][q]["arrivals"]))


START, END = "<!-- ns2-agreement:start -->", "<!-- ns2-agreement:end -->"


def write_readme_block(readme: Path, short: list, footer: str) -> None:
    """Replaces the text between the markers in `readme` with the short
    table: per case the bottleneck's headline metrics, aqmlab / ns-2."""
    head = ["case", "runs"] + [label for label, _ in COLUMNS] + ["verdict"]
    lines = [START, "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += [f"| `{name}` | {reps} | " + " | ".join(cells) + f" | {verdict} |" for name, reps, cells, verdict in short]
    lines += ["", footer, END]
    text = readme.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"{readme}: no {START} ... {END} markers")
    before, rest = text.split(START, 1)
    readme.write_text(before + "\n".join(lines) + rest.split(END, 1)[1])


def fmt(x: float, half: float | None = None) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    s = f"{x:.4g}"
    if half is not None and math.isfinite(half):
        s += f" ± {half:.2g}"
    return s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=None, help="run only these cases")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--replications", type=int, default=None, help="override every case's replications")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--readme", type=Path, default=None,
                    help="also write the short table between this file's ns2-agreement markers")
    ap.add_argument("--render", action="store_true",
                    help="run nothing: write the tables again from the stored summaries")
    args = ap.parse_args()
    if ns2.find_ns() is None:
        print("ns-2 is not installed: the 'ns' command was not found (Debian: apt-get install ns2)", file=sys.stderr)
        return 2
    suite = tomllib.loads((HERE / "suite.toml").read_text())["case"]
    if args.only:
        unknown = set(args.only) - {c["name"] for c in suite}
        if unknown:
            print(f"unknown case(s): {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        suite = [c for c in suite if c["name"] in args.only]
    args.out.mkdir(parents=True, exist_ok=True)
    t_start = time.monotonic()
    for case in suite:
        name, kind = case["name"], case.get("kind", "statistical")
        path = args.out / f"{name}.json"
        if args.render:
            if not path.exists():
                print(f"{name}: no stored result, skipped", file=sys.stderr)
            continue
        t0 = time.monotonic()
        sc = load_case(case)
        print(f"{name}: {case['what']} ...", file=sys.stderr, flush=True)
        if kind == "lockstep":
            path.write_text(json.dumps(lockstep(sc)))
        else:
            reps = args.replications or case.get("replications", 10)
            _, aq, ns = ns2.crosscheck(sc, replications=reps, jobs=args.jobs)
            # The per-flow rows are left out: hundreds of flows per run would
            # make the file large, and no comparison reads them.
            strip = [{k: v for k, v in x.items() if k != "flows"} for x in aq + ns]
            path.write_text(json.dumps({"aqmlab": strip[:len(aq)], "ns2": strip[len(aq):]}))
        print(f"{name}: done in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    elapsed = time.monotonic() - t_start
    rows, short, csv_rows, failed = [], [], [], []
    versions: dict[str, int] = {}  # the aqmlab engine each stored case ran, and how many cases
    for case in suite:
        name, kind = case["name"], case.get("kind", "statistical")
        path = args.out / f"{name}.json"
        if not path.exists():
            continue
        stored = json.loads(path.read_text())
        first = stored["aqmlab"] if kind == "lockstep" else stored["aqmlab"][0]
        versions[first.get("engine_version", "?")] = versions.get(first.get("engine_version", "?"), 0) + 1
        if kind == "lockstep":
            res = check_lockstep(stored["aqmlab"], stored["ns2"])
            ok = res["ok"]
            q = bottleneck(res["aqmlab"])
            qa, qb = res["aqmlab"]["queues"][q], res["ns2"]["queues"][q]
            cells = [f"{qa[k]} / {qb[k]}" for k in ("arrivals", "drops")]
            short.append((name, "1", [f"arrivals {cells[0]}", f"drops {cells[1]}", "", ""],
                          "identical" if ok else "differs"))
            rows.append((name, case["what"], "1 (no randomness)",
                         [f"arrivals {cells[0]}, drops {cells[1]}", "", "", ""],
                         "identical" if ok else "DIFFERS: " + "; ".join(res["mismatches"][:3])))
        else:
            aq, ns = stored["aqmlab"], stored["ns2"]
            comps = ns2.compare(aq, ns)
            ok = not any(c.fails for c in comps)
            by = {c.metric: c for c in comps}
            q = bottleneck(aq[0])
            cells = []
            for _, pattern in COLUMNS:
                c = by.get(pattern.format(q=q))
                if c is None:
                    cells.append("n/a")
                elif c.aqmlab_mean:
                    cells.append(f"{fmt(c.aqmlab_mean, c.aqmlab_half)} / {fmt(c.ns2_mean, c.ns2_half)} "
                                 f"({100 * c.diff:+.1f}%)")
                else:
                    cells.append(f"{fmt(c.aqmlab_mean)} / {fmt(c.ns2_mean)}")
            worst = [c for c in comps if c.headline and c.significant]
            verdict = ("agree" if not worst else
                       ("significant but within 2%: " if ok else "DIFFERS: ")
                       + ", ".join(f"{c.metric} {100 * c.diff:+.1f}%" for c in worst))
            rows.append((name, case["what"], str(len(aq)), cells, verdict))
            short.append((name, str(len(aq)), [
                "n/a" if (c := by.get(pattern.format(q=q))) is None else
                f"{c.aqmlab_mean:.4g} / {c.ns2_mean:.4g}" + (f" ({100 * c.diff:+.1f}%)" if c.aqmlab_mean else "")
                for _, pattern in COLUMNS], "agree" if ok else "differs"))
            for c in comps:
                csv_rows.append({"case": name, **dataclasses.asdict(c), "fails": c.fails})
        if not ok:
            failed.append(name)
    with open(args.out / "agreement.csv", "w", newline="") as f:
        if csv_rows:
            w = csv.DictWriter(f, fieldnames=list(csv_rows[0]))
            w.writeheader()
            w.writerows(csv_rows)
    head = ["case", "runs each"] + [f"bottleneck {label}: aqmlab / ns-2" for label, _ in COLUMNS] + ["verdict"]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, what, reps, cells, verdict in rows:
        md.append(f"| `{name}`: {what} | {reps} | " + " | ".join(cells) + f" | {verdict} |")
    # A case keeps the result of the engine it last ran on: the footer says
    # which, so a table of mixed versions does not pass for one version's.
    ran = ", ".join(f"{v} ({n} cases)" if len(versions) > 1 else v for v, n in sorted(versions.items()))
    footer = f"aqmlab {ran} against ns-2.35, {len(rows)} cases, {len(failed)} failed."
    if not args.render:
        footer += f" {elapsed / 60:.0f} min."
    (args.out / "agreement.md").write_text("\n".join(md) + "\n\n" + footer + "\n")
    if args.readme is not None:
        write_readme_block(args.readme, short, footer)
    page = ["<!doctype html><meta charset=utf-8>",
            "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'\">",
            "<title>aqmlab against ns-2.35</title>",
            "<style>body{font:14px sans-serif;max-width:1200px;margin:2em auto}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}</style>",
            "<h1>aqmlab against ns-2.35</h1>",
            f"<p>{html.escape(footer)} Each cell: mean ± 95% interval over the runs, aqmlab / ns-2, and the "
            "difference. A case fails if a headline metric differs significantly (Welch's test, Holm-adjusted) "
            "by more than 2%; lockstep cases must match exactly.</p>",
            "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for name, what, reps, cells, verdict in rows:
        tds = [f"<b>{html.escape(name)}</b><br>{html.escape(what)}"] + [html.escape(t) for t in (reps, *cells, verdict)]
        page.append("<tr>" + "".join(f"<td>{t}</td>" for t in tds) + "</tr>")
    page.append("</table>")
    (args.out / "report.html").write_text("\n".join(page) + "\n")
    print(footer, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
