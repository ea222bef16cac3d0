"""Malformed scenarios: exit status 2, one clear line per problem naming the
key path, the value and what is allowed, no traceback, nothing written."""

from pathlib import Path

import pytest

from conftest import EXAMPLES

GOOD = (EXAMPLES / "cbr-dumbbell.toml").read_text()


def edit(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


# (label, file text or None for a missing file, extra args, substrings every
# one of which must appear in the single error line)
CASES = [
    ("unknown key", 'colour = "red"\n' + GOOD, [], ["colour", "unknown key", "allowed here", "duration"]),
    ("misspelt key", edit("bottleneck = {", "bottlenek = {"), [], ["topology.bottlenek", "did you mean \"bottleneck\""]),
    ("bad unit", edit('rate = "10Mbps"', 'rate = "10Mbs"'), [], ["topology.bottleneck.rate", '"10Mbs"', "Mbps"]),
    ("negative rate", edit('rate = "250kbps"', 'rate = "-250kbps"'), [], ["traffic[0].rate", '"-250kbps"', "negative"]),
    ("zero count", edit("count = 4 ", "count = 0 "), [], ["traffic[0].count", "got 0", ">= 1"]),
    ("unknown qdisc kind", edit('kind = "droptail"', 'kind = "reed"'), [], ["topology.qdisc.kind", '"reed"', '"droptail"']),
    ("unknown distribution", edit('dist = "uniform", min = "40B"', 'dist = "unifrom", min = "40B"'), [],
     ["traffic[1].size.dist", '"unifrom"', '"uniform"']),
    ("missing bottleneck", edit('bottleneck = { rate = "10Mbps", delay = "50ms" }\n', ""), [],
     ["topology.bottleneck", "missing", "rate"]),
    ("warmup >= duration", edit('warmup = "10s"', 'warmup = "100s"'), [], ["warmup", "100s", "shorter than duration"]),
    ("TOML syntax error", edit('name = "cbr-dumbbell"', 'name = "cbr-dumbbell'), [], ["TOML syntax error", "line"]),
    ("unreadable file", None, [], ["cannot read the scenario file"]),
    ("wrong type", edit('duration = "100s"', "duration = 100"), [], ["duration", "bare number 100", '"20ms"']),
    ("bad --set", GOOD, ["--set", "topology.qdisc.limit"], ["--set", "key.path=value"]),
    ("--set bad value", GOOD, ["--set", "topology.qdisc.limit=12 apples"], ["topology.qdisc.limit", '"12 apples"', "pkt"]),
    ("unknown traced queue", edit('queues = ["bottleneck"]', 'queues = ["bottlenck"]'), [],
     ["trace.queues[0]", '"bottlenck"', '"bottleneck"']),
    ("unknown host", edit('name = "cross"', 'name = "cross"\nsrc = "s9"'), [], ["traffic[1].src", '"s9"', '"s0"']),
    ("not a number", GOOD, ["--set", "warmup=nan"], ["warmup", "nan", "finite"]),
    ("seed out of range", GOOD, ["--seed", str(2**64)], ["--seed", "18446744073709551616", "range", "aqmlab run --help"]),
    ("sub-bps link rate", edit('rate = "10Mbps"', 'rate = "0.4bps"'), [], ["topology.bottleneck.rate", '"0.4bps"', "whole number"]),
    ("absurd time", edit('delay = "50ms"', 'delay = "1e30s"'), [], ["topology.bottleneck.delay", '"1e30s"', "too large"]),
    ("zero-byte packets", edit('size = { dist = "uniform", min = "40B", max = "1500B" }', 'size = "0B"'), [],
     ["traffic[1].size", '"0B"', "at least 1B"]),
    ("too fast to simulate", edit('rate = "2Mbps"', 'rate = "1e5Gbps"'), [], ["traffic[1].rate", "at most 1e9 per second"]),
    ("too many flows", edit("count = 4 ", "count = 4294967296 "), [], ["traffic[0].count", "too many"]),
    ("unknown class", edit('name = "cross"', 'name = "cross"\nclass = "realtme"'), [],
     ["traffic[1].class", '"realtme"', 'did you mean "realtime"']),
    # The keys read after a missing one are not reported as unknown.
    ("missing key beside optional ones", GOOD,
     ["--set", 'topology.qdisc={kind = "red", limit = "100pkt", min_th = "10pkt", max_th = "30pkt", max_p = 0.1, '
               'avg_of = "instantaneous", drop_spacing = "count", exempt_first = true}'],
     ["topology.qdisc.w_q", "missing", "averaging weight"]),
]


@pytest.mark.parametrize("label,text,args,needles", CASES, ids=[c[0] for c in CASES])
def test_malformed_scenario_exits_2_with_one_clear_line(cli, tmp_path: Path, label, text, args, needles):
    scenario = tmp_path / "scenario.toml"
    if text is not None:
        scenario.write_text(text)
    series = tmp_path / "series.parquet"
    commands = [["run", str(scenario), "--json", "--series", str(series), *args]]
    if "--seed" not in args:
        commands.append(["validate", str(scenario), *args])
    for command in commands:
        r = cli(*command)
        assert r.returncode == 2, (label, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, (label, r.stderr)
        assert lines[0].startswith("error: "), lines[0]
        for needle in needles:
            assert needle in lines[0], (label, needle, lines[0])
        assert "Traceback" not in r.stderr
        assert r.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == (["scenario.toml"] if text is not None else [])


def test_several_problems_are_all_reported(cli, tmp_path: Path):
    text = edit('rate = "10Mbps"', 'rate = "10Mbs"').replace('warmup = "10s"', 'warmup = "1000s"').replace("count = 4 ", "count = 0 ")
    scenario = tmp_path / "s.toml"
    scenario.write_text(text)
    r = cli("validate", str(scenario))
    assert r.returncode == 2
    paths = sorted(line.split(":")[1].strip() for line in r.stderr.strip().splitlines())
    assert paths == ["topology.bottleneck.rate", "traffic[0].count", "warmup"]


def test_series_without_trace_is_rejected_before_running(cli, tmp_path: Path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(edit('trace = { interval = "100ms", queues = ["bottleneck"] }\n', ""))
    r = cli("run", str(scenario), "--series", str(tmp_path / "x.parquet"))
    assert r.returncode == 2 and "--series" in r.stderr and "trace" in r.stderr
    assert not (tmp_path / "x.parquet").exists()


def test_unwritable_series_folder_leaves_nothing(cli, tmp_path: Path):
    r = cli("run", str(EXAMPLES / "cbr-dumbbell.toml"), "--series", str(tmp_path / "no" / "x.parquet"))
    assert r.returncode == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []


TCP = (EXAMPLES / "tcp-dumbbell.toml").read_text()

TCP_CASES = [
    ("unknown tcp key", TCP.replace('delayed_ack = true', 'delayed_akc = true'), ["traffic[0].tcp.delayed_akc", 'did you mean "delayed_ack"']),
    ("bad variant", TCP.replace('variant = "sack"', 'variant = "vegas"'), ["traffic[0].tcp.variant", '"vegas"', '"newreno"']),
    ("ted rto without ted", TCP.replace('delayed_ack = true', 'delayed_ack = true, rto = "ted"'), ["traffic[0].tcp.rto", "TED queue"]),
    ("stop on tcp", TCP.replace('count = 64', 'count = 64\nstop = "50s"'), ["traffic[0].stop", "size"]),
    ("zero rto bound", TCP.replace('delayed_ack = true', 'delayed_ack = true, rto = "rfc6298", min_rto = "0s"'),
     ["traffic[0].tcp.min_rto", "longer than 0s"]),
    ("min above max rto", TCP.replace('delayed_ack = true', 'delayed_ack = true, min_rto = "2s", max_rto = "1s"'),
     ["traffic[0].tcp", "min", "max"]),
    ("huge payload", TCP.replace('max = "1628B"', 'max = "4294967295B"'), ["traffic[0].packet_size", "65495B"]),
    ("huge transfer", TCP.replace('count = 64', 'count = 64\nsize = "1e15B"'), ["traffic[0].size", "at most"]),
    ("tick with rfc6298", TCP.replace('delayed_ack = true', 'delayed_ack = true, rto = "rfc6298", tick = "1ms"'),
     ["traffic[0].tcp.tick", "ns2"]),
    ("huge web objects", TCP.replace('kind = "ftp"', 'kind = "web"\nobject_size = 1e12').replace('packet_size = { dist = "uniform", min = "1400B", max = "1628B" }', 'packet_size = "1000B"'),
     ["traffic[0].object_size", "at most"]),
    ("auto rwnd for ns-2's agent", TCP.replace('delayed_ack = true', 'delayed_ack = true, rwnd = "auto"'),
     ["traffic[0].tcp.rwnd", '"auto" applies only to the Linux-style variants', '"sack"']),
    ("bad linux rwnd", TCP.replace('variant = "sack", delayed_ack = true', 'variant = "cubic", rwnd = "big"'),
     ["traffic[0].tcp.rwnd", '"auto" or a whole number of packets', '"big"']),
    ("tiny tcp on/off", TCP.replace('kind = "ftp"', 'kind = "onoff"\ntransport = "tcp"\non = "0s"\noff = "1s"'),
     ["traffic[0].on", "1ms"]),
]


@pytest.mark.parametrize("label,text,needles", TCP_CASES, ids=[c[0] for c in TCP_CASES])
def test_malformed_tcp_group_exits_2_with_one_clear_line(cli, tmp_path: Path, label, text, needles):
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(text)
    r = cli("validate", str(scenario))
    assert r.returncode == 2, (label, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (label, r.stderr)
    for needle in needles:
        assert needle in lines[0], (label, needle, lines[0])
