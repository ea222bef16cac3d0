"""Runs every classic study at quick scale and prints its wall time: the
benchmark job behind the run times `aqmlab reproduce --list` shows (the test
suite runs the studies at smoke scale only).

    .venv/bin/python bench/studies_quick.py [STUDY ...] [--out DIR] [--scale quick|full]

Each study is run from scratch into DIR/<study> (default: a temporary
folder), with the local executor on every core.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from aqmlab.studies import STUDIES, reproduce


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("studies", nargs="*", default=list(STUDIES), help="studies to run (default: all five)")
    ap.add_argument("--out", default=None, help="keep the results here (default: a temporary folder)")
    ap.add_argument("--scale", default="quick", choices=["quick", "full"])
    args = ap.parse_args()
    root = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="aqmlab-studies-"))
    rows = []
    for name in args.studies:
        out = root / name
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.perf_counter()
        page = reproduce(name, args.scale, out)
        rows.append((name, time.perf_counter() - t0, page))
        print(f"{name:16s} {rows[-1][1]:8.1f} s  {page}", flush=True)
    print(f"{'total':16s} {sum(r[1] for r in rows):8.1f} s")
    if not args.out:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
