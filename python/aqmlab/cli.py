"""The ``aqmlab`` command.

Every command is a thin layer over the Python API. Bad input (an invalid
scenario, an unreadable file, a malformed ``--set``) prints one line per
problem on stderr and exits with status 2, with no traceback and nothing
written.

Start-up matters here: a short run is over in milliseconds, so this module
imports only what `aqmlab run` needs (click, the engine, the scenario), and
each command imports the rest (pandas, duckdb, numpy, matplotlib, ...)
itself; tests/test_startup.py checks that it stays so.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import click

import aqmlab
from aqmlab.exceptions import AqmlabError, ConfigError
from aqmlab.result import Summary
from aqmlab.scenario import Scenario


class _Group(click.Group):
    """Turns aqmlab's own errors into exit status 2 with one line each."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigError as e:
            for line in e.lines():
                click.echo(f"error: {line}", err=True)
            ctx.exit(2)
        except AqmlabError as e:
            click.echo(f"error: {e}", err=True)
            ctx.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(aqmlab.__version__, "--version", "-V", message="aqmlab %(version)s")
def cli() -> None:
    """aqmlab: simulate queue disciplines at a bottleneck, packet by packet."""


def main(argv: list[str] | None = None) -> None:
    """The entry point: usage errors, like scenario errors, are one line on
    stderr and exit status 2."""
    try:
        code = cli.main(args=argv, prog_name="aqmlab", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as e:
        click.echo(e.ctx.get_help() if e.ctx is not None else e.format_message())
        sys.exit(0)
    except click.UsageError as e:
        hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None and e.ctx.parent is not None else \
            " (see 'aqmlab --help')"
        click.echo(f"error: {e.format_message()}{hint}", err=True)
        sys.exit(2)
    except click.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def _load(path: str, assignments: tuple[str, ...]) -> Scenario:
    """The scenario file with the --set overrides applied, not yet
    validated: the engine checks a scenario as it reads it, so a command
    that hands it to the engine validates it only there."""
    return Scenario.load(path).with_set(list(assignments))


_SET_HELP = "Override a key: --set topology.qdisc.limit=100pkt (repeatable)."


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=str))
@click.option("--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE", help=_SET_HELP)
def validate(scenario: str, assignments: tuple[str, ...]) -> None:
    """Check a scenario file and report every problem in it."""
    sc = _load(scenario, assignments).validate()
    click.echo(f"{scenario}: valid scenario {sc.name!r}")


@cli.command("schema")
@click.argument("kind", type=click.Choice(["scenario", "experiment"]), default="scenario")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Write the schema to FILE instead of standard output.")
@click.option("--markdown", is_flag=True,
              help="Print the key tables of every scenario table as Markdown (the README's) instead.")
def schema_cmd(kind: str, out: str | None, markdown: bool) -> None:
    """The JSON Schema (draft 2020-12) of scenario or experiment files, for
    editors: with `#:schema ./FILE` as a TOML file's first line, Taplo / Even
    Better TOML complete its keys and check their values."""
    import json

    from aqmlab import schema
    from aqmlab.files import write_atomic

    if markdown and kind != "scenario":
        raise AqmlabError("--markdown: the key tables are those of scenario files; drop 'experiment'")
    text = schema.keys_markdown() if markdown else json.dumps(schema.schema(kind), indent=2) + "\n"
    if out is None:
        click.echo(text, nl=False)
    else:
        write_atomic(Path(out), lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=str))
@click.option("--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE", help=_SET_HELP)
@click.option("--seed", type=click.IntRange(min=0, max=2**64 - 1), default=None,
              help="Run seed, 0 to 2^64-1 (default: the scenario's seed).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON instead of tables.")
@click.option("--series", "series_out", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Write the time series to this Parquet file (needs a [trace] table).")
def run(scenario: str, assignments: tuple[str, ...], seed: int | None, as_json: bool, series_out: str | None) -> None:
    """Run a scenario once and print its summary."""
    sc = _load(scenario, assignments)
    if series_out is not None and "trace" not in sc.to_dict():
        sc.validate()  # the scenario's own problems come first
        raise ConfigError([("--series", "the scenario has no [trace] table to sample; add one, "
                            "e.g. --set trace.interval=100ms")])
    res = aqmlab.run(sc, seed=seed)
    if series_out is not None:
        from aqmlab.files import write_atomic

        write_atomic(Path(series_out), lambda tmp: res.series.to_parquet(tmp, index=False))
    if as_json:
        click.echo(res.to_json())
    else:
        click.echo(format_summary(res.summary))
        if series_out is not None:
            click.echo(f"\ntime series ({len(res.series)} samples) written to {series_out}")


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=str), required=False)
@click.option("--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE", help=_SET_HELP)
@click.option("--seed", type=click.IntRange(min=0, max=2**64 - 1), default=None,
              help="Run seed, 0 to 2^64-1 (default: the scenario's seed).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON instead of tables.")
@click.option("--cleanup", is_flag=True,
              help="Remove the namespaces left by emulations whose process is gone, and exit.")
def emulate(scenario: str | None, assignments: tuple[str, ...], seed: int | None, as_json: bool,
            cleanup: bool) -> None:
    """Run a scenario through real Linux TCP/IP stacks, in real time: each host a
    network namespace, the links and queue disciplines emulated by aqmlab's own
    code in a user-space router. Needs root."""
    from aqmlab import emulation

    if cleanup:
        removed = emulation.cleanup()
        click.echo(f"removed {len(removed)} namespace(s)" + (": " + " ".join(removed) if removed else ""))
        return
    if scenario is None:
        raise AqmlabError("missing SCENARIO (or give --cleanup)")
    sc = _load(scenario, assignments)
    why = emulation.unavailable()
    if why is not None:
        raise AqmlabError(why)
    try:
        res = emulation.emulate(sc, seed=seed)
    except KeyboardInterrupt:
        click.echo("interrupted; the emulation's namespaces were removed", err=True)
        sys.exit(130)
    if as_json:
        click.echo(res.to_json())
    else:
        click.echo(format_summary(res.summary))
        t = res.summary["timing"]
        k = res.summary["kernel"]
        click.echo(f"\ntiming: {t['wakeups']:,} wake-ups late by p50 {_fmt(t['late_p50_s'], 'ms')}, "
                   f"p99 {_fmt(t['late_p99_s'], 'ms')}, max {_fmt(t['late_max_s'], 'ms')}; "
                   f"router CPU {_fmt(t['router_cpu_share'], '%')}")
        lost = {key: v for key, v in k.items() if v}
        if lost:
            click.echo("outside the scenario's queues: " + ", ".join(f"{key} {v}" for key, v in lost.items()))


@cli.command()
@click.argument("experiment", type=click.Path(dir_okay=False, path_type=str))
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Runs at once (default: the number of cores).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where runs happen: local threads, or Dask (a LocalCluster of --jobs workers, "
                   "or the cluster at --scheduler).")
@click.option("--scheduler", default=None, metavar="ADDR",
              help="A Dask scheduler, e.g. tcp://10.0.0.5:8786 (implies --executor dask).")
@click.option("--store", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Results file (default: the experiment file with .duckdb).")
@click.option("--rerun", is_flag=True, help="Run again the runs already stored.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
@click.option("--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE",
              help="Override a key of the base scenario: --set duration=50s (repeatable; not a swept key).")
@click.option("--emulate", is_flag=True,
              help="Emulate every run through real Linux stacks (as `aqmlab emulate`), one after another in real "
                   "time, instead of simulating it; stored beside the simulated runs. Needs root.")
def sweep(experiment: str, jobs: int | None, executor: str, scheduler: str | None, store: str | None, rerun: bool,
          quiet: bool, assignments: tuple[str, ...], emulate: bool) -> None:
    """Run an experiment: every sweep point x replication not yet stored."""
    from aqmlab.experiment import Experiment

    exp = Experiment.load(experiment, list(assignments))
    path = Path(store) if store else exp.default_store()
    if not path.parent.exists():
        raise AqmlabError(f"--store: the folder {path.parent} does not exist")
    try:
        result = exp.sweep(executor="dask" if scheduler is not None else executor, jobs=jobs, store=path,
                           rerun=rerun, scheduler=scheduler, progress=not quiet, emulate=emulate)
    except KeyboardInterrupt:
        if not emulate:
            raise
        click.echo(("\n" if sys.stderr.isatty() else "") + "interrupted: the emulation under way was abandoned and "
                   f"its namespaces removed; the runs finished before it are in {path} (run the sweep again to "
                   "resume)", err=True)
        sys.exit(130)
    counts, df = result.counts, result.table
    click.echo(f"{exp.name}: {counts['ok']} runs ok, {counts['failed']} failed, "
               f"{counts['skipped']} already stored; results in {path}")
    if exp.metrics and not df.empty:
        click.echo(format_table(df))
    missing = [m for m in exp.metrics if df.empty or m not in set(df["metric"])]
    if missing and not df.empty:
        click.echo(f"warning: no run measured {', '.join(missing)} (see 'aqmlab table {path}' for the metrics "
                   "there are)", err=True)
    if result.failures:
        import json

        for labels, n, error in result.failures:
            click.echo(f"failed: {n} run(s) at {json.dumps(labels)}: {error}", err=True)
        sys.exit(1)


@cli.command("table")
@click.argument("store", type=click.Path(dir_okay=False, path_type=str))
@click.option("--metrics", "-m", multiple=True, metavar="PATH",
              help="A summary metric such as queues.bottleneck.loss_rate (repeatable; default: all).")
@click.option("--experiment", default=None, help="Only this experiment of the store.")
@click.option("--csv", "as_csv", is_flag=True, help="CSV instead of an aligned table.")
def table_cmd(store: str, metrics: tuple[str, ...], experiment: str | None, as_csv: bool) -> None:
    """Mean, standard deviation, n and 95% confidence interval per sweep point and metric."""
    from aqmlab.store import Store
    from aqmlab.sweep import table

    with Store(store, read_only=True) as st:
        df = table(st, experiment, list(metrics) or None)
    if metrics:
        known = set(df["metric"]) if not df.empty else set()
        missing = [m for m in metrics if m not in known]
        if missing:
            raise AqmlabError(f"--metrics: {', '.join(missing)} not found in {store}")
    click.echo(df.to_csv(index=False).rstrip("\n") if as_csv else format_table(df))


@cli.command()
@click.argument("store", type=click.Path(dir_okay=False, path_type=str))
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Folder for report.html and the PNG/SVG plots (default: the store's name with -report).")
@click.option("--metrics", "-m", multiple=True, metavar="PATH",
              help="Metrics to plot (repeatable; default: the experiment's metrics).")
@click.option("--experiment", default=None, help="Only this experiment of the store.")
@click.option("--series", "series_points", multiple=True, type=click.IntRange(min=0), metavar="POINT",
              help="Sweep point whose replication 0 gets time-series plots (repeatable; "
                   "default: the first 24 points that traced).")
def report(store: str, out: str | None, metrics: tuple[str, ...], experiment: str | None,
           series_points: tuple[int, ...]) -> None:
    """Plots (PNG, SVG) and one self-contained HTML page from a results store."""
    from aqmlab.report import write_report

    path = Path(store)
    if not path.exists():
        raise AqmlabError(f"{store}: no such results store")
    folder = Path(out) if out else path.with_name(path.stem + "-report")
    page = write_report(path, folder, experiment, list(metrics) or None, list(series_points) or None)
    click.echo(f"report written to {page}")


@cli.command()
@click.argument("study", required=False)
@click.option("--scale", type=click.Choice(["smoke", "quick", "full"]), default="quick", show_default=True,
              help="quick: minutes on a laptop; full: the paper's durations and replications; smoke: seconds, "
                   "to check it runs.")
@click.option("--out", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Folder for the results, CSVs, plots and report.html (default: STUDY-SCALE).")
@click.option("--list", "as_list", is_flag=True, help="List the studies and their expected run times.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Runs at a time (default: CPUs).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True)
@click.option("--scheduler", default=None, metavar="ADDR", help="Dask scheduler address (implies --executor dask).")
@click.option("--rerun", is_flag=True, help="Run again the runs already stored in the folder.")
@click.option("--all", "every", is_flag=True,
              help="Every study, each into OUT/STUDY-SCALE, and a scorecard of every paper's claims in OUT "
                   "(default: reproduce-SCALE).")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
@click.option("--mode", type=click.Choice(["simulate", "emulate"]), default="simulate", show_default=True,
              help="emulate: the paper's testbed half only, each run both simulated and emulated through real "
                   "Linux TCP (aqmlab emulate: real time, needs root), side by side.")
def reproduce(study: str | None, scale: str, out: str | None, as_list: bool, jobs: int | None, executor: str,
              scheduler: str | None, rerun: bool, every: bool, quiet: bool, mode: str) -> None:
    """Reproduce one of the classic AQM studies and write its report."""
    from aqmlab.studies import SCALES, STUDIES
    from aqmlab.studies import reproduce as run_study

    if every and mode != "simulate":
        raise click.UsageError("--all runs every study simulated; give one STUDY with --mode emulate")
    if every:
        if study is not None:
            raise click.UsageError(f"give a STUDY ({study!r}) or --all, not both")
        from aqmlab.studies.scorecard import reproduce_all

        page = reproduce_all(scale, out or f"reproduce-{scale}", executor="dask" if scheduler else executor,
                             jobs=jobs, scheduler=scheduler, rerun=rerun, progress=not quiet,
                             log=lambda m: click.echo(m, err=True))
        click.echo(f"scorecard written to {page}")
        return
    if as_list or study is None:
        if not as_list:
            raise click.UsageError("give a STUDY or --all (see 'aqmlab reproduce --list')")
        width = max(map(len, STUDIES))
        click.echo(f"{'study'.ljust(width)}  " + "  ".join(f"{s:>10}" for s in SCALES) + "  title")
        for s in STUDIES.values():
            click.echo(f"{s.name.ljust(width)}  " + "  ".join(f"{s.runtime.get(k, '?'):>10}" for k in SCALES)
                       + f"  {s.title}")
        click.echo("(expected wall time on 2 cores)")
        return
    page = run_study(study, scale, out, executor="dask" if scheduler else executor, jobs=jobs, scheduler=scheduler,
                     rerun=rerun, progress=not quiet, log=lambda m: click.echo(m, err=True), mode=mode)
    click.echo(f"report written to {page}")


@cli.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=str), default="aqmlab-demo", show_default=True,
              help="Folder for the results store, plots and report.html.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Runs at a time (default: CPUs).")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
def demo(out: str, jobs: int | None, quiet: bool) -> None:
    """The main job on the built-in default: the standard dumbbell through every
    queue discipline, a short sweep over load, and the report."""
    from aqmlab.experiment import Experiment
    from aqmlab.report import write_report
    from aqmlab.store import Store
    from aqmlab.sweep import execute, table

    exp = Experiment.load(Path(__file__).parent / "data" / "demo.toml")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    store = folder / "results.duckdb"
    click.echo(f"demo: {len(exp.runs())} runs of the standard dumbbell ({len(exp.points())} points x "
               f"{exp.replications} replications); results in {store}", err=True)
    with Store(store) as st:
        counts = execute(exp, st, jobs=jobs, progress=not quiet)
        df = table(st, exp.name, ["queues.bottleneck.qdelay_mean_s"])
    click.echo(format_table(df))
    page = write_report(store, folder, exp.name)
    if counts["failed"]:
        click.echo(f"error: {counts['failed']} runs failed (the report lists them)", err=True)
    click.echo(f"report written to {page}")
    if counts["failed"]:
        sys.exit(1)


class _ModelGroup(_Group):
    """``aqmlab model NAME``: one command per registered model, built from
    its parameters (aqmlab.models.registry)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from aqmlab.models import MODELS

        return list(MODELS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from aqmlab.models import MODELS

        return _model_command(MODELS[name]) if name in MODELS else None


@cli.group("model", cls=_ModelGroup, invoke_without_command=True, no_args_is_help=False)
@click.option("--list", "as_list", is_flag=True, help="List the models, one line each.")
@click.pass_context
def model(ctx: click.Context, as_list: bool) -> None:
    """The analytic models of the classic papers: aqmlab model NAME [--param value ...] [--json].

    Lists and ranges (--rho 0.5,1,2 or --rho 0.5:3:0.25) sweep a parameter.
    """
    if ctx.invoked_subcommand is not None:
        return
    if not as_list:
        click.echo(ctx.get_help())
        return
    from aqmlab.models import MODELS

    width = max(map(len, MODELS))
    for m in MODELS.values():
        click.echo(f"{m.name.ljust(width)}  {m.summary}")


def _model_command(m: Any) -> click.Command:
    from aqmlab.models import registry

    def callback(as_json: bool, **given: Any) -> None:
        values = {p.name: None if given[p.name] is None else
                  given[p.name] if p.kind is bool else registry.parse(p, given[p.name]) for p in m.params}
        quantities = m.compute(**values)
        if as_json:
            click.echo(registry.to_json(quantities))
            return
        shown = "  ".join(f"{p.name}={given[p.name]}" for p in m.params if given[p.name] is not None)
        click.echo(f"{m.name}: {m.summary}\n{shown}")
        for headers, rows in registry.render(quantities):
            click.echo("\n" + _table(headers, rows))

    options = []
    for p in m.params:
        dashed = "--" + p.name.replace("_", "-")
        decls = [dashed] + ([f"--{p.name}"] if "_" in p.name else [])
        if p.kind is bool:
            pair = [f"{dashed}/--no-{dashed[2:]}"] + ([f"--{p.name}/--no_{p.name}"] if "_" in p.name else [])
            options.append(click.Option([*pair, p.name], default=p.default,
                                        show_default=True, help=p.help))
        else:
            default = None if p.default is None else f"{p.default:g}" if isinstance(p.default, float) else str(
                p.default)
            options.append(click.Option([*decls, p.name], default=default,
                                        show_default=p.default is not None, help=p.help,
                                        metavar="|".join(p.choices) if p.choices else "LIST" if p.many else "VALUE"))
    options.append(click.Option(["--json", "as_json"], is_flag=True, help="Print the quantities as one JSON object."))
    return click.Command(m.name, callback=callback, params=options, help=m.summary)


def format_table(df: Any) -> str:
    """A results table with mean +- half-width columns, aligned."""
    if df.empty:
        return "(no finished runs)"
    keys = [c for c in df.columns if c not in ("mean", "std", "n", "ci_low", "ci_high")]
    rows = []
    for d in df.to_dict("records"):
        half = (d["ci_high"] - d["ci_low"]) / 2
        rows.append([str(d[k]) for k in keys] + [_fmt(d["mean"]), _fmt(half), _fmt(d["std"]), str(d["n"])])
    return _table(keys + ["mean", "+- 95% CI", "std", "n"], rows)


def _fmt(x: Any, kind: str = "") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if kind == "bps":
        for unit, k in (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
            if abs(x) >= k:
                return f"{x / k:.3f} {unit}"
        return f"{x:.1f} bps"
    if kind == "ms":
        return f"{1e3 * x:.3f} ms"
    if kind == "%":
        return f"{100 * x:.3f} %"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def format_summary(s: dict[str, Any]) -> str:
    """The summary as text tables: queues, then traffic groups."""
    emulated = s.get("engine") == "emulation"
    s = Summary(s)
    head = (f"{s.scenario}  seed {s.seed}  window {s.warmup_s:g}-{s.duration_s:g} s  "
            f"{s.events:,} {'wake-ups' if emulated else 'events'} in {s.wall_s:.3f} s "
            f"({'emulation, ' if emulated else ''}engine {s.engine_version})")
    q_rows = [
        [name, q.qdisc["kind"], str(q.arrivals), str(q.drops), _fmt(q.loss_rate, "%"),
         _fmt(q.qdelay_mean_s, "ms"), _fmt(q.qlen_mean_pkts), _fmt(q.utilization, "%")]
        for name, q in s.queues.items()
    ]
    t_rows = [
        [name, g.kind, str(g.flows), _fmt(g.throughput_bps, "bps"), _fmt(g.goodput_bps, "bps"),
         _fmt(g.loss_rate, "%"), _fmt(g.delay_mean_s, "ms")]
        for name, g in s.traffic.items()
    ]
    return "\n\n".join([
        head,
        _table(["queue", "qdisc", "arrivals", "drops", "loss", "qdelay mean", "qlen mean", "utilization"], q_rows),
        _table(["traffic", "kind", "flows", "sent", "delivered", "loss", "delay mean"], t_rows),
    ])


@cli.group("export")
def export_group() -> None:
    """Write a scenario for another simulator."""


@export_group.command("ns2")
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=str))
@click.option("--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE", help=_SET_HELP)
@click.option("--seed", type=click.IntRange(min=0, max=2**31 - 2), default=None,
              help="The seed written into the script (default: the scenario's); `ns FILE SEED` overrides it.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Write the script here instead of to standard output.")
def export_ns2(scenario: str, assignments: tuple[str, ...], seed: int | None, output: str | None) -> None:
    """The scenario as an ns-2.35 Tcl script. `ns FILE [SEED]` runs it and prints
    one JSON object with the keys of `aqmlab run --json`. What ns-2.35 cannot
    express is refused, one line per setting, with exit status 2."""
    from aqmlab import ns2

    script = ns2.export(_load(scenario, assignments), seed)
    if output is None:
        click.echo(script, nl=False)
    else:
        Path(output).write_text(script, encoding="utf-8")


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=str))
@click.option("--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE", help=_SET_HELP)
@click.option("--replications", "-r", type=click.IntRange(min=2), default=10, show_default=True,
              help="Runs per simulator, with seeds seed, seed + 1, ...")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Runs at a time (default: the number of cores).")
@click.option("--all", "all_metrics", is_flag=True, help="Every metric both report, not only the headline ones.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Also write both simulators' summaries and the comparison to this JSON file.")
@click.option("--store", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Also keep every run in this results store (experiment crosscheck-NAME, one point per "
                   "simulator), for `aqmlab table` and `aqmlab report`.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
def crosscheck(scenario: str, assignments: tuple[str, ...], replications: int, jobs: int | None,
               all_metrics: bool, json_out: str | None, store: str | None, quiet: bool) -> None:
    """Run a scenario in aqmlab and in ns-2.35 and compare them metric by metric:
    means with 95% intervals, the difference, and Welch's t-test. Exits with
    status 1 if a headline metric (loss, queueing delay, queue length, loss
    runs, goodput) differs significantly by more than 2%."""
    import dataclasses
    import json

    from aqmlab import ns2

    # Checked before ns-2 is looked for and the runs start.
    sc = _load(scenario, assignments).validate()

    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if quiet:
            return
        line = f"runs: {done}/{total} done (aqmlab and ns-2)"
        if tty:
            click.echo("\r" + line, err=True, nl=done == total)
        elif done == total or done % max(1, total // 10) == 0:
            click.echo(line, err=True)

    rows, aq, ns = ns2.crosscheck(sc, replications=replications, jobs=jobs, progress=progress, store=store)
    click.echo(ns2.format_table(rows, all_metrics=all_metrics))
    failing = [r for r in rows if r.fails]
    if json_out is not None:
        Path(json_out).write_text(json.dumps({
            "comparison": [dataclasses.asdict(r) | {"fails": r.fails} for r in rows],
            "aqmlab": aq, "ns2": ns}, indent=1, default=str), encoding="utf-8")
    if failing:
        click.echo(f"{len(failing)} headline metric(s) differ significantly by more than 2%: "
                   + ", ".join(r.metric for r in failing), err=True)
        sys.exit(1)
    click.echo(f"agreement: no headline metric differs significantly by more than 2% "
               f"({replications} replications each)")


if __name__ == "__main__":
    main()
