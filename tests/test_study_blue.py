"""Study D (BLUE vs RED with ECN) end to end at smoke scale: files, columns,
row labels, ranges, and values known independently of the study's code."""

from __future__ import annotations

import json
import math
import tomllib

import pandas as pd
import pytest

from aqmlab.store import Store
from aqmlab.studies import reproduce
from aqmlab.studies.blue import SCALES
from aqmlab.studies.framework import VERDICTS

# The paper's configurations (study D), written out here rather than
# imported, so a typo in the study is caught.
PAPER_BLUE = {"B1": (0.010, 0.0025, 0.00025), "B2": (0.100, 0.0025, 0.00025),
              "B3": (0.010, 0.02, 0.002), "B4": (0.100, 0.02, 0.002)}
PAPER_RED_W_Q = {"R1": 0.0002, "R2": 0.002, "R3": 0.02, "R4": 0.2}
SCHEMES = [*PAPER_RED_W_Q, *PAPER_BLUE]
SMOKE = SCALES["smoke"]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    path = tmp_path_factory.mktemp("blue")
    reproduce("blue", "smoke", path, jobs=2)
    return path


@pytest.fixture(scope="module")
def runs(out):
    """Every stored run: experiment, labels and summary."""
    with Store(out / "results.duckdb", read_only=True) as st:
        rows = st.db.execute("SELECT experiment, labels, summary, status FROM runs").fetchall()
    return [{"experiment": e, "labels": json.loads(l), "summary": json.loads(s) if s else None, "status": st_}
            for e, l, s, st_ in rows]


def test_report_and_every_file_exist(out):
    assert (out / "report.html").stat().st_size > 0
    for name in ("d1", "d3_onoff", "d2", "d3_ramp", "d4_testbed", "d5_sensitivity", "d5_rate", "claims"):
        assert (out / f"{name}.csv").exists()
    for fig in ("d1_loss_rate", "d1_utilization", "d3_onoff_loss_rate", "d3_onoff_utilization", "d2_series",
                "d3_ramp_series"):
        assert (out / f"{fig}.png").exists() and (out / f"{fig}.svg").exists()
    page = (out / "report.html").read_text()
    assert "SMOKE scale" in page and "d1.csv" in page


def test_no_run_failed(runs):
    assert runs and all(r["status"] == "ok" for r in runs)


@pytest.mark.parametrize("name", ["d1", "d3_onoff"])
def test_onoff_tables_columns_rows_and_ranges(out, name):
    df = pd.read_csv(out / f"{name}.csv")
    for col in ("scheme", "connections", "buffer_kb", "loss_rate", "loss_rate_ci95_low", "loss_rate_ci95_high",
                "utilization", "utilization_ci95_low", "utilization_ci95_high", "n"):
        assert col in df.columns
    # One row per configuration, number of connections and buffer, labelled as the study does (R1-R4, B1-B4).
    assert sorted(df["scheme"].unique()) == sorted(SCHEMES)
    assert len(df) == len(SCHEMES) * len(SMOKE["connections"]) * len(SMOKE["buffers_kb"])
    assert set(df["connections"]) == set(SMOKE["connections"])
    assert set(df["buffer_kb"]) == set(SMOKE["buffers_kb"])
    assert (df["n"] == SMOKE["replications"]).all()
    assert df["loss_rate"].between(0, 1).all()
    assert ((df["utilization"] > 0) & (df["utilization"] <= 1)).all()
    for m in ("loss_rate", "utilization"):
        assert (df[f"{m}_ci95_low"] <= df[m] + 1e-12).all() and (df[m] <= df[f"{m}_ci95_high"] + 1e-12).all()
    # A full buffer of 1040 B packets drains at 45 Mb/s in limit * 1040 * 8 / 45e6 seconds.
    assert df["buffer_delay_ms"].to_numpy() == pytest.approx(df["buffer_pkts"] * 1040 * 8 / 45e6 * 1e3)


@pytest.mark.parametrize("name", ["d2", "d3_ramp"])
def test_ramp_tables(out, name):
    df = pd.read_csv(out / f"{name}.csv")
    assert sorted(df["scheme"]) == ["B4", "R2"]
    assert (df["connections"] == SMOKE["ramp"]["per_group"] * SMOKE["ramp"]["groups"]).all()
    for m in ("loss_rate", "utilization", "stalled_flows"):
        assert df[m].between(0, 1).all()


def test_rendered_configurations_are_the_papers(out):
    """Every D1 file has the paper's BLUE (freeze_time, d1, d2) and RED
    thresholds at 20% and 80% of the buffer, max_p 1, ECN on; D1 uses TCP
    that ignores an echo at cwnd 1, D3 the ECN timeout."""
    for b in SMOKE["buffers_kb"]:
        for name, mode in ((f"d1-{b}KB", "ignore"), (f"d1-ecn-timeout-{b}KB", "timeout")):
            exp = tomllib.loads((out / "experiments" / f"{name}.toml").read_text())
            assert exp["scenario"]["traffic"][0]["tcp"]["ecn_at_cwnd1"] == mode
            axis = exp["sweep"]["topology.qdisc"]
            for label, q in zip(axis["labels"], axis["values"]):
                assert q["limit"] == f"{b}pkt" and q["ecn"] is True
                if label in PAPER_BLUE:
                    freeze, d1, d2 = PAPER_BLUE[label]
                    assert q["kind"] == "blue"
                    assert float(q["freeze_time"].removesuffix("ms")) / 1e3 == pytest.approx(freeze)
                    assert (q["d1"], q["d2"]) == (d1, d2)
                else:
                    assert q["kind"] == "red" and q["max_p"] == 1.0 and q["w_q"] == PAPER_RED_W_Q[label]
                    # The paper's RED marks deterministically above max_th.
                    assert q["ecn_above_max_th"] == "mark"
                    assert q["min_th"] == f"{b // 5}pkt" and q["max_th"] == f"{4 * b // 5}pkt"


def test_engine_ran_the_papers_blue_parameters(runs):
    """The effective parameters the engine reports for each BLUE run."""
    seen = set()
    for r in runs:
        label = r["labels"]["topology.qdisc"]
        if label in PAPER_BLUE:
            q = r["summary"]["queues"]["bottleneck"]["qdisc"]
            freeze, d1, d2 = PAPER_BLUE[label]
            assert (q["kind"], q["freeze_time_s"], q["d1"], q["d2"], q["ecn"]) == ("blue", freeze, d1, d2, True)
            seen.add(label)
    assert seen == set(PAPER_BLUE)


def test_loss_rate_is_drops_over_arrivals(out, runs):
    """The CSV's loss rate is the replication mean of drops / arrivals at A -> B."""
    df = pd.read_csv(out / "d1.csv")
    for row in df.itertuples():
        name = f"d1-{row.buffer_kb}KB"
        ratios = []
        for r in runs:
            if (r["experiment"] == name and r["labels"]["topology.qdisc"] == row.scheme
                    and r["labels"]["traffic[0].count"] == str(row.connections)):
                q = r["summary"]["queues"]["bottleneck"]
                assert q["arrivals"] > 0 and q["drops"] <= q["arrivals"]
                ratios.append(q["drops"] / q["arrivals"])
        assert len(ratios) == SMOKE["replications"]
        assert row.loss_rate == pytest.approx(math.fsum(ratios) / len(ratios), rel=1e-5)


def test_testbed_is_the_papers(out):
    """Section 3.5: 10 Mb/s, a 50 KB queue, RED 10 KB / 40 KB / max_p 1 /
    w_q 0.002, BLUE d1 0.01, d2 0.001, freeze_time 50 ms."""
    exp = tomllib.loads((out / "experiments" / "d4-testbed.toml").read_text())
    assert exp["scenario"]["topology"]["bottleneck"]["rate"] == "10Mbps"
    red, blue = exp["sweep"]["topology.qdisc"]["values"]
    assert (red["kind"], red["limit"], red["min_th"], red["max_th"], red["max_p"], red["w_q"]) == \
        ("red", "50000B", "10000B", "40000B", 1.0, 0.002)
    assert (blue["kind"], blue["limit"], blue["d1"], blue["d2"], blue["freeze_time"]) == \
        ("blue", "50000B", 0.01, 0.001, "50ms")
    df = pd.read_csv(out / "d4_testbed.csv")
    assert sorted(df["scheme"].unique()) == ["BLUE", "RED"]
    assert set(df["connections"]) == set(SMOKE["testbed"]["connections"])
    # Goodput of 1460 B payloads in 1500 B packets cannot exceed 10 Mb/s x
    # 1460 / 1500, plus what arrived out of order before the window and was
    # released in order inside it (at most a 50 KB buffer's worth).
    window = SMOKE["testbed"]["duration_s"] - SMOKE["testbed"]["warmup_s"]
    bound = 10e6 * 1460 / 1500 + 50000 * 8 / window
    assert (df["goodput_bps"] <= bound).all() and (df["goodput_bps"] > 0).all()


def test_claims_table(out):
    claims = pd.read_csv(out / "claims.csv")
    assert list(claims.columns) == ["claim", "paper", "aqmlab", "verdict", "how"]
    assert set(claims["verdict"]) <= set(VERDICTS)
    assert any(claims["claim"].str.startswith("Testbed")) and any(claims["claim"].str.startswith("D2"))


def test_sensitivity_changes_one_thing_each(out):
    """Each d5 experiment is D1 at the smallest buffer with one change: the
    rate variants set the application's rate (or none: unlimited data), the
    window variant the receiver window, packet0-ect the TCP's negotiation,
    the round-trip variants the senders' delays."""
    def scenario(name):
        return tomllib.loads((out / "experiments" / f"{name}.toml").read_text())["scenario"]
    base = scenario("d5-default")
    # 45 Mb/s over 400 sources ON, at 1000 B of payload per 1040 B packet.
    assert base["traffic"][0]["rate"] == "108.17kbps"
    assert [s["delay"] for s in base["topology"]["senders"]] == ["20ms", "30ms", "40ms", "50ms", "60ms"]
    assert "rate" not in scenario("d5-unlimited")["traffic"][0]
    assert scenario("d5-rate-64kbps")["traffic"][0]["rate"] == "64kbps"
    assert scenario("d5-window-20")["traffic"][0]["tcp"]["rwnd"] == "20pkt"
    assert scenario("d5-packet0-ect")["traffic"][0]["tcp"] == base["traffic"][0]["tcp"] | {"ecn_negotiate": False}
    assert [s["delay"] for s in scenario("d5-rtt-24-62ms")["topology"]["senders"]] == \
        ["1ms", "5ms", "10ms", "15ms", "20ms"]
    for name in ("d5-unlimited", "d5-rate-64kbps", "d5-window-20", "d5-shape-1.2", "d5-packet0-ect"):
        assert scenario(name)["topology"] == base["topology"]
        assert scenario(name)["traffic"] != base["traffic"]
    for name in ("d5-rtt-24ms", "d5-rtt-24-62ms", "d5-rtt-102-182ms"):
        assert scenario(name)["traffic"] == base["traffic"]
        assert scenario(name)["topology"] != base["topology"]
    df = pd.read_csv(out / "d5_sensitivity.csv")
    assert df["experiment"].nunique() == 11 and df["loss_rate"].between(0, 1).all()


def test_rate_sweep_changes_only_the_rate(out):
    """d5-rate is d5-default with the application's rate swept over 0.85 to
    1.1 times 108.17 kb/s and 128 kb/s, at the smallest number of connections."""
    def experiment(name):
        return tomllib.loads((out / "experiments" / f"{name}.toml").read_text())
    base, sweep = experiment("d5-default"), experiment("d5-rate")
    assert sweep["scenario"] == base["scenario"] | {"name": "d5-rate"}
    assert sweep["sweep"]["traffic[0].rate"] == ["91.95kbps", "97.36kbps", "102.76kbps", "108.17kbps",
                                                 "113.58kbps", "118.99kbps", "128kbps"]
    assert sweep["sweep"]["traffic[0].count"]["values"] == SMOKE["connections"][:1]
    df = pd.read_csv(out / "d5_rate.csv")
    assert len(df) == 7 * len(SCHEMES) and (df["n"] == SMOKE["replications"]).all()
    # 100 connections (smoke scale) at 108.17 kb/s offer a tenth of the link.
    assert df.loc[df["rate"] == "108.17kbps", "offered_load"].iloc[0] == pytest.approx(0.1, rel=1e-4)
    assert df.loc[df["scheme"].str.startswith("B"), "p_m_median"].between(0, 1).all()
    assert df.loc[df["scheme"].str.startswith("R"), "p_m_median"].isna().all()


def test_fill_rate_by_hand():
    """45e6 b/s / 400 sources ON = 112.5 kb/s on the wire each, 1000/1040 of
    it payload: 108173.08 b/s; 128 kb/s is then 1.1833 times the link."""
    from aqmlab.studies.blue import fill_rate_bps, offered_load, rate_text

    assert fill_rate_bps() == pytest.approx(112_500 * 1000 / 1040, rel=1e-12)
    assert rate_text(fill_rate_bps()) == "108.17kbps" and rate_text(128e3) == "128kbps"
    assert offered_load("128kbps") == pytest.approx(128 * 1040 / 1000 * 400 / 45e3, rel=1e-12)
    assert offered_load("128kbps", 4000) == pytest.approx(4 * offered_load("128kbps"), rel=1e-12)


def test_rate_sweep_text_follows_the_numbers():
    """The saturation sentence names the lowest load from which on every
    BLUE configuration's median p_m is at least 0.9 at every load swept, and
    is absent when the highest load is not saturated."""
    from aqmlab.studies.blue import rate_sweep_text

    rows = []
    for load, p_m in ((0.95, 0.2), (1.05, 0.9), (1.1, 1.0)):
        for scheme in ("R1", "B1", "B2"):
            rows.append({"offered_load": load, "rate": f"{load}x", "scheme": scheme,
                         "loss_rate": {"R1": 0.1, "B1": 0.002, "B2": 0.03}[scheme] * load,
                         "utilization": 1.0, "cwnd_end_mean": 1.0,
                         "p_m_median": float("nan") if scheme == "R1" else p_m})
    df = pd.DataFrame(rows)
    # BLUE's losses at 1.05 and 1.1: 0.21%, 3.15%, 0.22%, 3.3%.
    assert rate_sweep_text(df)[-2].startswith("From offered load 1.05 on, every BLUE")
    assert rate_sweep_text(df)[-2].endswith("BLUE loses 0.21-3.3% at these loads, most in B2 (3.3% at 1.10).")
    df.loc[(df["offered_load"] == 1.05) & (df["scheme"] == "B2"), "p_m_median"] = 0.8999
    assert rate_sweep_text(df)[-2].startswith("From offered load 1.10 on, every BLUE")
    df.loc[df["offered_load"] == 1.05, "p_m_median"] = 1.0
    df.loc[df["offered_load"] == 1.1, "p_m_median"] = 0.5
    assert rate_sweep_text(df)[-2] == "At no rate swept is every BLUE configuration's median p_m at least 0.9."
    assert rate_sweep_text(df)[0].startswith("Offered load 0.95 (0.95x): BLUE loses 0.19-2.85%, RED 9.5%;")


def test_rate_sweep_says_which_claims_hold_at_each_rate():
    """Per rate, the three Fig. 5 claims at the smallest buffer by the claims
    table's rules: every BLUE below 0.1%, RED's mean at least 10%, every
    utilisation at least 0.95."""
    from aqmlab.studies.blue import rate_sweep_text

    def table(blue_loss, red_loss, util):
        return pd.DataFrame([{"offered_load": 1.0, "rate": "108.17kbps", "scheme": scheme, "cwnd_end_mean": 1.0,
                              "loss_rate": red_loss if scheme[0] == "R" else blue_loss, "utilization": util,
                              "p_m_median": 0.5} for scheme in ("R1", "R2", "B1")])

    text = rate_sweep_text(table(0.0009, 0.10, 0.95))
    assert text[0].endswith("BLUE loses nothing; RED's loss is in double digits; utilisation is full hold.")
    assert text[-1] == "All three claims hold together at offered load 1.00."
    text = rate_sweep_text(table(0.001, 0.10, 0.95))
    assert text[0].endswith("RED's loss is in double digits; utilisation is full hold.")
    assert text[-1] == "At no rate swept do the three claims hold together."
    assert rate_sweep_text(table(0.001, 0.0999, 0.95))[0].endswith("utilisation is full holds.")
    assert rate_sweep_text(table(0.001, 0.0999, 0.9499))[0].endswith("none hold.")


def test_report_needs_no_sideways_scrolling_at_1280_px(out, tmp_path):
    from conftest import chromium, scroll_width

    if chromium() is None:
        pytest.skip("no Chromium on this machine (./dev setup installs it on Debian)")
    assert scroll_width(out / "report.html", tmp_path) <= 1280


def _d1_fixture(blue_small=0.0, red_small=0.15, red_large_4000=0.30, util=1.0):
    """A D1 table by hand: 1000 and 4000 connections, buffers 100 and 600
    KB, R1-R2 and B1-B2 (mean loss rates and utilisation)."""
    rows = []
    for n in (1000, 4000):
        for b in (100, 600):
            for scheme in ("R1", "R2", "B1", "B2"):
                if n == 1000:
                    loss = (red_small if b == 100 else 0.0) if scheme[0] == "R" else (blue_small if b == 100 else 0.0)
                else:
                    loss = (0.40 if b == 100 else red_large_4000) if scheme[0] == "R" else 0.05
                rows.append({"scheme": scheme, "connections": n, "buffer_kb": b, "loss_rate": loss,
                             "utilization": util})
    return pd.DataFrame(rows)


def test_fig5_verdicts_follow_the_numbers():
    """The Fig. 5 claims are decided from the table: changing one number in
    the fixture flips the verdict it decides and no other."""
    from aqmlab.studies.blue import d1_claims

    def verdicts(df, p_m=1.0):
        return {claim: ok for claim, _, _, ok, _ in d1_claims(df, lambda n: p_m)}

    base = verdicts(_d1_fixture())
    assert base == {
        "1000 connections: BLUE loses nothing at any buffer (Fig. 5)": True,
        "1000 connections: RED's loss is in double digits at 100 KB": True,
        "1000 connections: RED needs at least 6 times the buffer to match BLUE's loss at 100 KB": True,
        "4000 connections: BLUE's loss is far below RED's at every buffer": True,
        "4000 connections: RED at 600 KB still loses more than BLUE at 100 KB": True,
        "4000 connections: BLUE's marking probability stays at 1": True,
        "Link utilisation is full for RED and BLUE in every case (Fig. 5)": True,
    }
    # BLUE loses 2% at 100 KB: not "nothing"; RED at 600 KB (0%) now matches it, 6 times the buffer.
    changed = verdicts(_d1_fixture(blue_small=0.02))
    assert {k for k in base if base[k] != changed[k]} == {
        "1000 connections: BLUE loses nothing at any buffer (Fig. 5)"}
    # RED at 100 KB loses 9%: no longer double digits.
    assert not verdicts(_d1_fixture(red_small=0.09))["1000 connections: RED's loss is in double digits at 100 KB"]
    # With 4000, RED at 600 KB at 4%: below BLUE's 5% at 100 KB, and no longer above BLUE there.
    changed = verdicts(_d1_fixture(red_large_4000=0.04))
    assert {k for k in base if base[k] != changed[k]} == {
        "4000 connections: BLUE's loss is far below RED's at every buffer",
        "4000 connections: RED at 600 KB still loses more than BLUE at 100 KB"}
    assert not verdicts(_d1_fixture(util=0.94))["Link utilisation is full for RED and BLUE in every case (Fig. 5)"]
    assert verdicts(_d1_fixture(), p_m=0.5)["4000 connections: BLUE's marking probability stays at 1"] is False
    assert verdicts(_d1_fixture(), p_m=None)["4000 connections: BLUE's marking probability stays at 1"] is None


def test_window_floor_load_by_hand():
    """1000 sources, 400 ON, each at one packet per round trip; round trips
    62-142 ms plus 18.49 ms of full 100-packet buffer (100 x 1040 B at 45
    Mb/s): 400 x mean(1/0.08049, ..., 1/0.16049) = 3522 packets/s against
    the link's 45e6 / 8320 = 5409."""
    from aqmlab.studies.blue import floor_load

    q = 100 * 1040 * 8 / 45e6
    per_source = sum(1 / (rtt + q) for rtt in (0.062, 0.082, 0.102, 0.122, 0.142)) / 5
    assert floor_load(1000, 100) == pytest.approx(400 * per_source / (45e6 / 8320), rel=1e-12)
    assert floor_load(1000, 100) == pytest.approx(0.6512, abs=1e-4)
    assert floor_load(4000, 100) == pytest.approx(4 * floor_load(1000, 100))
    # D2's infinite sources: all ON. 600 of them at one packet per round trip
    # with a full 200 KB buffer (36.98 ms) stay below the link, 800 do not.
    q = 200 * 1040 * 8 / 45e6
    per_source = sum(1 / (rtt + q) for rtt in (0.062, 0.082, 0.102, 0.122, 0.142)) / 5
    assert floor_load(600, 200, on_share=1.0) == pytest.approx(600 * per_source / (45e6 / 8320), rel=1e-12)
    assert floor_load(600, 200, on_share=1.0) < 1 < floor_load(800, 200, on_share=1.0)


def test_testbed_text_by_hand():
    """Two numbers of connections: BLUE 1% below RED with overlapping
    intervals at 10, 2% below with disjoint ones at 20; utilisation lower by
    0.5 and 1.5 points."""
    from aqmlab.studies.blue import testbed_text

    def row(scheme, n, g, low, high, util):
        return {"scheme": scheme, "connections": n, "goodput_bps": g, "goodput_bps_ci95_low": low,
                "goodput_bps_ci95_high": high, "utilization": util}
    df = pd.DataFrame([row("RED", 10, 100.0, 99.0, 101.0, 0.99), row("BLUE", 10, 99.0, 98.0, 100.0, 0.985),
                       row("RED", 20, 100.0, 99.5, 100.5, 0.98), row("BLUE", 20, 98.0, 97.0, 99.0, 0.965)])
    assert testbed_text(df) == (
        "D4: BLUE's mean goodput differs from RED's by -2.00% to -1.00%, and the two 95% intervals overlap at 1 of "
        "2 numbers of connections. BLUE's utilisation of the bottleneck differs from RED's by -1.50 to -0.50 points, "
        "with the same sign as the goodput's difference at 2 of 2: BLUE's goodput is lower where the link "
        "idles more under it.")
