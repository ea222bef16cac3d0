"""The Python API: Scenario, run, Result, determinism across threads."""

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import aqmlab
from aqmlab import ConfigError, Scenario
from conftest import EXAMPLES


def dumbbell(**overrides) -> Scenario:
    return Scenario.load(EXAMPLES / "cbr-dumbbell.toml").with_(**{"duration": "10s", "warmup": "1s", **overrides})


def test_with_resolves_paths_and_does_not_touch_the_original():
    sc = dumbbell()
    sc2 = sc.with_(**{"qdisc.limit": "20pkt", "traffic[1].count": 2, "traffic.0.rate": "100kbps"})
    d = sc2.to_dict()
    assert d["topology"]["qdisc"]["limit"] == "20pkt"
    assert d["traffic"][1]["count"] == 2 and d["traffic"][0]["rate"] == "100kbps"
    assert sc.to_dict()["topology"]["qdisc"]["limit"] == "100pkt"


def test_with_rejects_bad_paths():
    with pytest.raises(ConfigError, match="out of range"):
        dumbbell().with_(**{"traffic[5].count": 1})


def test_run_returns_summary_flows_and_series():
    res = aqmlab.run(dumbbell(), seed=3)
    assert res.summary["seed"] == 3
    assert set(res.summary["queues"]) == {"bottleneck", "bottleneck_rev"}
    flows = res.flows
    assert len(flows) == 8 and set(flows["group"]) == {"cbr", "cross"}
    assert {"goodput_bps", "delay_mean_s", "rtt_prop_s"} <= set(flows.columns)
    # RTT of flow i: 2 x (access 10(i+1) ms + 50 ms + 0.1 ms).
    cbr = flows[flows["group"] == "cbr"].sort_values("id")
    assert list(cbr["rtt_prop_s"].round(9)) == [0.1202, 0.1402, 0.1602, 0.1802]
    assert list(res.series.columns[:3]) == ["time_s", "bottleneck.backlog_pkts", "bottleneck.backlog_bytes"]
    assert len(res.series) == 101


def test_invalid_scenario_raises_config_error_with_every_problem():
    with pytest.raises(ConfigError) as e:
        aqmlab.run(dumbbell(**{"qdisc.kind": "nope", "warmup": "1h"}))
    paths = [p for p, _ in e.value.problems]
    assert "topology.qdisc.kind" in paths and "warmup" in paths
    assert isinstance(e.value, ValueError)


def _without_wall(res: aqmlab.Result) -> str:
    s = dict(res.summary, wall_s=0)
    return json.dumps(s, sort_keys=True)


def test_same_seed_identical_on_threads():
    sc = dumbbell()
    ref = _without_wall(aqmlab.run(sc, seed=5))
    with ThreadPoolExecutor(4) as ex:
        outs = list(ex.map(lambda _: _without_wall(aqmlab.run(sc, seed=5)), range(8)))
    assert all(o == ref for o in outs)


def test_engine_releases_the_gil():
    # While one thread runs a long simulation, another Python thread keeps
    # running: it counts ticks that could not happen if the GIL were held.
    sc = Scenario.load(EXAMPLES / "mm1k.toml").with_(duration="4000s")
    ticks = 0
    done = threading.Event()

    def ticker():
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    start = time.perf_counter()
    aqmlab.run(sc)
    elapsed = time.perf_counter() - start
    done.set()
    t.join()
    assert elapsed > 0.05, "the run must be long enough to observe"
    assert ticks >= 10


def test_summary_parts_read_as_attributes_and_as_the_engines_dict():
    res = aqmlab.run(Scenario.load(EXAMPLES / "cbr-dumbbell.toml").with_(duration="5s", warmup="1s"), seed=1)
    raw = json.loads(res.to_json())
    q = res.queue("bottleneck")
    assert q == raw["queues"]["bottleneck"] and isinstance(q, dict)
    assert (q.loss_rate, q.utilization, q.qdisc) == (q["loss_rate"], q["utilization"], q["qdisc"])
    assert res.bottleneck == q and res.summary.bottleneck.arrivals == q["arrivals"]
    name = next(iter(raw["traffic"]))
    g = res.group(name)
    assert (g.kind, g.goodput_bps, g.loss_rate) == (g["kind"], g["goodput_bps"], g["loss_rate"])
    assert res.summary.traffic[name] == raw["traffic"][name]
    assert res.summary.flows == raw["flows"] and res.summary.seed == 1
    assert res.summary.jain == raw.get("fairness", {}).get("jain")


def one_flow_path(variant: str) -> dict:
    """One bulk flow alone on a 10 Mb/s bottleneck, round trip 2 x (1 + 4 +
    0.1) ms of propagation, with Linux's packets (1448 B of payload in
    1500), its flow traced every 100 ms."""
    return {"duration": "4s",
            "topology": {"kind": "dumbbell", "senders": 1, "access_rate": "100Mbps", "access_delay": "1ms",
                         "bottleneck": {"rate": "10Mbps", "delay": "4ms"},
                         "qdisc": {"kind": "droptail", "limit": "100pkt"}},
            "traffic": [{"name": "bulk", "kind": "ftp", "start": "0s", "packet_size": "1448B",
                         "tcp": {"variant": variant, "header": "52B"}}],
            "trace": {"interval": "100ms", "flows": ["bulk[0]"]}}


def test_traced_linux_flows_report_their_pacing_rate_and_bbrs_model():
    # BBR's columns are Linux's (`ss`'s bbr:(bw,mrtt,pacing_gain,cwnd_gain)),
    # in payload bits as Linux reports them.
    s = aqmlab.run(one_flow_path("bbr")).series
    bbr = ["pacing_rate_bps", "rwnd_pkts", "bbr_bw_bps", "bbr_min_rtt_s", "bbr_pacing_gain", "bbr_cwnd_gain"]
    assert [c for c in s.columns if c.startswith("bulk[0].")] == \
        [f"bulk[0].{k}" for k in ["cwnd", "ssthresh", "srtt_s", "rto_s", *bbr]]
    late = s[s["time_s"] >= 1.0]
    # The receiver's window is Linux's: at least the 45 packets (65160 B)
    # it opens with, in the 1024-B units of its window scale (10, from a
    # 32 MB buffer), and ahead of a lone flow's cwnd once it has grown.
    wnd = s["bulk[0].rwnd_pkts"].dropna()
    assert wnd.min() >= 45 and ((wnd * 1448).round() % 1024 == 0).all()
    assert (late["bulk[0].rwnd_pkts"] > late["bulk[0].cwnd"]).all()
    # A lone flow's delivery rate is the link's, in payload: 10 Mb/s x
    # 1448/1500, less at most one of BBR's 2^-24 packets/us units (833.3
    # packets/s is 13981 of them, so 7.2e-5 of it).
    assert (late["bulk[0].bbr_bw_bps"] / (10e6 * 1448 / 1500)).between(1 - 7.2e-5, 1.0).all()
    # min_rtt is the handshake's, the lowest any packet sees: the
    # propagation plus a 52-B SYN and its 52-B answer at 100, 10 and 100
    # Mb/s (2 x 49.92 us), 10.29984 ms, in BBR's whole microseconds.
    assert (abs(late["bulk[0].bbr_min_rtt_s"] - 0.010299) < 1e-12).all()
    # Nothing before the handshake is done, as emulation reports it.
    assert s["bulk[0].bbr_bw_bps"].isna().iloc[0] and s["bulk[0].pacing_rate_bps"].isna().iloc[0]
    # STARTUP's gain is 739/256 (Linux's 2/ln 2 rounded up); PROBE_BW then
    # cycles 1.25, 0.75 and 1 with a cwnd gain of 2.
    gains = s["bulk[0].bbr_pacing_gain"]
    assert gains[gains > 0].iloc[0] == 739 / 256
    assert set(late["bulk[0].bbr_pacing_gain"]) == {1.25, 0.75, 1.0}
    assert set(late["bulk[0].bbr_cwnd_gain"]) == {2.0}
    # The pacing rate is gain x bw less Linux's 1% margin.
    paced = late["bulk[0].bbr_pacing_gain"] * late["bulk[0].bbr_bw_bps"] * 0.99
    assert (late["bulk[0].pacing_rate_bps"] / paced).between(1 - 1e-6, 1 + 1e-6).all()
    # CUBIC does not pace, but Linux computes the rate anyway
    # (`tcp_update_pacing_rate`): 200% of cwnd/srtt below half ssthresh,
    # 120% above, of max(cwnd, packets out), so never below this.
    c = aqmlab.run(one_flow_path("cubic")).series
    assert [col for col in c.columns if col.startswith("bulk[0].")][4:] == ["bulk[0].pacing_rate_bps", "bulk[0].rwnd_pkts"]
    c = c.dropna()
    ratio = (c["bulk[0].cwnd"] < c["bulk[0].ssthresh"] // 2).map({True: 2.0, False: 1.2})
    by_cwnd = c["bulk[0].pacing_rate_bps"] / (ratio * c["bulk[0].cwnd"] * 1448 * 8 / c["bulk[0].srtt_s"])
    assert (by_cwnd >= 1 - 1e-9).all() and by_cwnd.median() == pytest.approx(1, abs=1e-9)
    # ns-2's agents have neither.
    assert "bulk[0].pacing_rate_bps" not in aqmlab.run(one_flow_path("sack")).series.columns


def test_delay_histogram_and_traced_group_delays():
    # A 84 B probe every 67.2 ms (10 kb/s) alone on the path: every one-way
    # delay is 1 + 5 + 0.1 ms of propagation (the sender's access link, the
    # bottleneck, the receiver's access link by default) plus 84 B sent at
    # 100, 10 and 100 Mb/s (6.72 + 67.2 + 6.72 us), 6.18064 ms. The histogram holds them all in one bin, and
    # the percentiles, clamped to the exact extremes, are exact.
    sc = {"duration": "2s",
          "topology": {"kind": "dumbbell", "senders": 1, "access_rate": "100Mbps", "access_delay": "1ms",
                       "bottleneck": {"rate": "10Mbps", "delay": "5ms"},
                       "qdisc": {"kind": "droptail", "limit": "100pkt"}},
          "traffic": [{"name": "ping", "kind": "cbr", "rate": "10kbps", "size": "84B", "start": "0s",
                       "delay_histogram": True}],
          "trace": {"interval": "100ms", "groups": ["ping"]}}
    r = aqmlab.run(sc)
    g = r.summary["traffic"]["ping"]
    exact = 0.0061 + 84 * 8 / 100e6 + 84 * 8 / 10e6 + 84 * 8 / 100e6
    assert g["delay_p50_s"] == pytest.approx(exact, abs=1e-12)
    assert g["delay_p99_s"] == pytest.approx(exact, abs=1e-12)
    h = g["delay_histogram"]
    assert sum(h["counts"]) == g["delivered"] == 30
    assert len(h["counts"]) == 1 and h["lower_s"][0] <= exact < h["upper_s"][0]
    # Each bin is at most 1/64 of its lower edge wide.
    assert h["upper_s"][0] - h["lower_s"][0] <= h["lower_s"][0] / 64
    # Nothing queues: no queueing time at all.
    assert g["queueing_p99_s"] == 0.0
    assert g["queueing_histogram"] == {"lower_s": [0.0], "upper_s": [1e-9], "counts": [30]}
    delays = r.series["traffic.ping.delay_max_s"].dropna()
    assert len(delays) >= 19 and (abs(delays - exact) < 1e-12).all()
    # Emulation refuses what it cannot sample, by key.
    from aqmlab import _engine
    assert _engine.emulate_check(json.dumps(sc), 1) == [
        ("trace.groups", "emulation does not sample groups' delays over time; the summary's delay percentiles and "
                         "delay_histogram cover UDP groups")]
