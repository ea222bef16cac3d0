"""A long mutation-fuzzing campaign over the example scenarios, the example
experiment and a few study experiments, with the harness of
tests/test_fuzz.py (tests/fuzzing.py): every mutant is validated as the
command line does it and, if valid, run for a few tens of milliseconds.

    .venv/bin/python bench/fuzz_campaign.py --mutants 5000 [--seed 1] [--cli 100] [--out DIR]

Prints the outcome counts and the time taken; writes each crashing input to
DIR (default: fuzz-crashes/) with its traceback, a sample of the error
messages to DIR/messages.txt for reading by hand, and exits 1 if anything
crashed. `--cli N` also sends N mutants through the real command in fresh
interpreters and counts their exit statuses.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import fuzzing  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutants", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cli", type=int, default=0, help="mutants to send through the command as well")
    ap.add_argument("--out", type=Path, default=Path("fuzz-crashes"))
    args = ap.parse_args()

    start = time.monotonic()

    def progress(i: int, tally: fuzzing.Tally) -> None:
        if (i + 1) % 500 == 0:
            print(f"{i + 1} mutants, {time.monotonic() - start:.0f} s: {dict(tally.outcomes)}", file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        tally = fuzzing.campaign(args.mutants, args.seed, Path(tmp), on_each=progress)
        elapsed = time.monotonic() - start
        print(f"{tally.mutants} mutants in {elapsed:.0f} s (seed {args.seed}): "
              + ", ".join(f"{k} {v}" for k, v in sorted(tally.outcomes.items())))

        statuses: Counter[int] = Counter()
        cli_problems = []
        if args.cli:
            rng = random.Random(args.seed + 1)
            pool = fuzzing.seeds()
            scenarios = [s for s in pool if s.kind == "scenario"]
            small = next(s for s in pool if s.name == "small-experiment")
            t0 = time.monotonic()
            for i in range(args.cli):
                s = small if i % 5 == 4 else scenarios[i % len(scenarios)]
                data = fuzzing.mutant(s, rng)
                code, problem = fuzzing.cli_check(s, data, Path(tmp))
                statuses[code] += 1
                if problem:
                    cli_problems.append((s.name, data, problem))
            print(f"{args.cli} mutants through the command in {time.monotonic() - t0:.0f} s: exit statuses "
                  + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
                  + f"; {len(cli_problems)} problems")

    crashes = tally.crashes + cli_problems
    args.out.mkdir(parents=True, exist_ok=True)
    for i, (name, data, seconds) in enumerate(tally.slow):
        (args.out / f"slow-{i}.toml").write_bytes(data)
        print(f"slow: a mutant of {name} took {seconds:.0f} s (slow-{i}.toml)")
    for i, (name, data, detail) in enumerate(crashes):
        (args.out / f"crash-{i}.toml").write_bytes(data)
        (args.out / f"crash-{i}.txt").write_text(f"{name}\n{detail}\n")
    # Distinct messages, a few per seed, for reading by hand.
    seen: set[str] = set()
    sample = []
    for name, line in tally.messages:
        if line not in seen:
            seen.add(line)
            sample.append(f"{name}\t{line}")
    rng = random.Random(args.seed)
    rng.shuffle(sample)
    (args.out / "messages.txt").write_text("\n".join(sample[:300]) + "\n")
    print(f"{len(crashes)} crashes; {len(seen)} distinct messages, 300 of them in {args.out / 'messages.txt'}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
