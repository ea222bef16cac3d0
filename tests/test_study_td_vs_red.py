"""Study A (td-vs-red) end to end at smoke scale: files, columns, the
schemes' shared buffer, GREDstd as the paper defines it, and REDopt's
parameters against the model for the UDP loss measured in a run."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from aqmlab import models
from aqmlab.studies import reproduce
from aqmlab.studies.td_vs_red import SCALES
from aqmlab.store import Store
from conftest import decoded_images, needs_chromium

SCHEMES = ["TD", "REDstd", "GREDstd", "REDopt"]
SMOKE = SCALES["smoke"]


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("td-vs-red")
    reproduce("td-vs-red", "smoke", folder)
    return folder


def test_every_table_and_figure_is_written(out: Path) -> None:
    for part in ("a1", "a2"):
        for name in ("goodput", "udp-loss", "qdelay", "qdelay-std", "loss-runs", "redopt"):
            assert (out / f"{part}-{name}.csv").is_file()
        for name in ("metrics", "loss-runs"):
            assert (out / f"{part}-{name}.png").is_file() and (out / f"{part}-{name}.svg").is_file()
    assert (out / "report.html").is_file()
    names = sorted(p.stem for p in (out / "experiments").iterdir())
    assert names == sorted([f"a1-udp-n{n}" for n in SMOKE["flows"]] + [f"a1-n{n}" for n in SMOKE["flows"]]
                           + [f"a2-calibrate-{s}" for s in SMOKE["sessions"]]
                           + [f"a2-udp-{s}" for s in SMOKE["sessions"]] + [f"a2-s{s}" for s in SMOKE["sessions"]])


def test_csv_columns_and_rows_use_the_metrics_and_scheme_names(out: Path) -> None:
    df = pd.read_csv(out / "a1-goodput.csv")
    assert list(df.columns) == ["scheme", "flows", "paper_bps", "goodput_bps", "ci95_low", "ci95_high", "n"]
    assert (df["paper_bps"] == 8.4e6).all()  # the paper's A1 goodput (testbed), every scheme and load
    assert sorted(df["scheme"].unique()) == sorted(SCHEMES)
    assert sorted(df["flows"].unique()) == SMOKE["flows"]
    assert ((df["ci95_low"] <= df["goodput_bps"]) & (df["goodput_bps"] <= df["ci95_high"])).all()
    # Goodput cannot exceed what the link leaves to TCP (10 Mb/s less 1 Mb/s of CBR, less headers).
    assert (df["goodput_bps"] < 9e6).all() and (df["goodput_bps"] > 5e6).all()
    assert list(pd.read_csv(out / "a2-udp-loss.csv").columns) == ["scheme", "sessions", "loss_rate", "ci95_low",
                                                                  "ci95_high", "n"]
    runs = pd.read_csv(out / "a1-loss-runs.csv")
    assert set(runs["flows"]) == {max(SMOKE["flows"])} and runs["n"].tolist()[:3] == [1, 2, 3]


def measured(out: Path, experiment: str, metric: str, scheme: str | None = None) -> float:
    """The mean of `metric` over `experiment`'s runs (of `scheme`'s only, when
    given), read from the store."""
    with Store(out / "results.duckdb", read_only=True) as st:
        keys = list(st.experiment_keys()[experiment])
        rows = st.db.execute("SELECT m.value, r.labels FROM metrics m JOIN runs r USING (key) WHERE r.key IN "
                             "(SELECT unnest(?)) AND m.metric = ?", [keys, metric]).fetchall()
    values = [v for v, labels in rows if scheme is None or json.loads(labels)["topology.qdisc"] == scheme]
    assert values
    return sum(values) / len(values)


def test_all_schemes_share_redopts_buffer_and_redopt_has_the_models_parameters(out: Path) -> None:
    for n in SMOKE["flows"]:
        exp = tomllib.loads((out / "experiments" / f"a1-n{n}.toml").read_text())
        loss = measured(out, f"a1-udp-n{n}", "traffic.cbr.loss_rate")
        opt = models.redopt(10e6, n, 0.150, 1514, b=2, udp_rate_bps=1e6, udp_loss=loss)
        buffer = math.ceil(opt.buffer)
        axis = exp["sweep"]["topology.qdisc"]
        assert axis["labels"] == SCHEMES
        assert {q["limit"] for q in axis["values"]} == {f"{buffer}pkt"}
        red_opt = axis["values"][3]
        assert float(red_opt["min_th"][:-3]) == pytest.approx(opt.min_th, rel=1e-4)
        assert float(red_opt["max_th"][:-3]) == pytest.approx(opt.max_th, rel=1e-4)
        assert red_opt["max_p"] == pytest.approx(opt.max_p, rel=1e-5)
        assert red_opt["w_q"] == pytest.approx(opt.w_q, rel=1e-5)
        # REDstd and GREDstd both at 3/20 and 13/20 of the buffer; GREDstd's gentle line ends at the buffer.
        for std, gentle in ((axis["values"][1], None), (axis["values"][2], "to_limit")):
            assert (float(std["min_th"][:-3]), float(std["max_th"][:-3])) == (3 * buffer / 20, 13 * buffer / 20)
            assert std.get("gentle") == gentle


def test_redopts_udp_adaptation_uses_the_loss_measured_with_the_loss_taken_as_0(out: Path) -> None:
    table = pd.read_csv(out / "a1-redopt.csv")
    for n in SMOKE["flows"]:
        # The measuring run: REDopt alone, with the parameters for a loss of 0.
        exp = tomllib.loads((out / "experiments" / f"a1-udp-n{n}.toml").read_text())
        zero = models.redopt(10e6, n, 0.150, 1514, b=2, udp_rate_bps=1e6, udp_loss=0.0)
        assert exp["scenario"]["topology"]["qdisc"]["max_p"] == pytest.approx(zero.max_p, rel=1e-5)
        assert "sweep" not in exp
        loss = measured(out, f"a1-udp-n{n}", "traffic.cbr.loss_rate")
        row = table[table["flows"] == n].iloc[0]
        assert row["udp_loss"] == pytest.approx(loss, rel=1e-5)
        # C = (10 Mb/s - 1 Mb/s (1 - loss)) / (8 x 1514 B) packets/s, from the loss measured.
        opt = models.redopt(10e6, n, 0.150, 1514, b=2, udp_rate_bps=1e6, udp_loss=loss)
        assert opt.C == pytest.approx((10e6 - 1e6 * (1 - loss)) / (8 * 1514), rel=1e-12)
        assert row["max_p"] == pytest.approx(opt.max_p, rel=1e-5)
        assert row["udp_loss_after"] == pytest.approx(measured(out, f"a1-n{n}", "traffic.cbr.loss_rate", "REDopt"),
                                                      rel=1e-5)
    # 64 flows lose UDP packets at this buffer, so the adaptation sees a loss above 0.
    assert table["udp_loss"].max() > 0


def test_a2_redopt_uses_the_active_connections_measured_under_tail_drop(out: Path) -> None:
    table = pd.read_csv(out / "a2-redopt.csv")
    with Store(out / "results.duckdb", read_only=True) as st:
        for s in SMOKE["sessions"]:
            keys = list(st.experiment_keys()[f"a2-calibrate-{s}"])
            rows = st.db.execute("SELECT m.value FROM metrics m JOIN runs r USING (key) WHERE r.key IN "
                                 "(SELECT unnest(?)) AND m.metric = 'traffic.web.active_connections_mean'",
                                 [keys]).fetchall()
            n_active = sum(v for (v,) in rows) / len(rows)
            row = table[table["sessions"] == s].iloc[0]
            assert row["N"] == pytest.approx(n_active, rel=1e-5)
            loss = measured(out, f"a2-udp-{s}", "traffic.cbr.loss_rate")
            assert row["buffer_pkts"] == math.ceil(models.redopt(10e6, n_active, 0.150, 1514, b=2,
                                                                 udp_rate_bps=1e6, udp_loss=loss).buffer)


def test_the_report_states_scale_and_replications(out: Path) -> None:
    page = (out / "report.html").read_text()
    assert "SMOKE scale" in page and "95% confidence" in page
    assert f"{SMOKE['a1_reps']} replications" in page


@needs_chromium
def test_the_report_renders_with_all_plots(out: Path, tmp_path) -> None:
    ok, total = decoded_images(out / "report.html", tmp_path)
    assert total == 4 and ok == total


def test_claims_table(out):
    """Every claim of the paper has a row and a verdict; at smoke scale the
    REDopt max_p growth needs loads the scale does not run."""
    import pandas as pd

    from aqmlab.studies.framework import VERDICTS

    claims = pd.read_csv(out / "claims.csv").set_index("claim")
    assert set(claims["verdict"]) <= set(VERDICTS)
    assert sum(c.startswith("A1: ") for c in claims.index) == 6
    assert claims.loc["A2: REDopt's max_p grows by a factor 2.6 from 800 to 1000 sessions", "verdict"] == \
        "not run at this scale"


def test_report_needs_no_sideways_scrolling_at_1280_px(out, tmp_path):
    from conftest import chromium, scroll_width

    if chromium() is None:
        pytest.skip("no Chromium on this machine (./dev setup installs it on Debian)")
    assert scroll_width(out / "report.html", tmp_path) <= 1280
