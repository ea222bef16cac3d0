use super::*;
use serde_json::json;

/// Two nodes joined by a 10 Mb/s, 10 ms duplex link with drop-tail
/// queues, and one paced ON/OFF TCP flow from `a` to `b` starting at 0:
/// 1000 B payloads at 800 kb/s (10 ms apart), bursts of 50 ms (5
/// packets) and OFF periods of `off`, both constant.
fn paced(tcp: serde_json::Value, off: &str, duration: &str) -> Scenario {
    let v = json!({
        "duration": duration,
        "topology": {
            "kind": "graph",
            "nodes": ["a", "b"],
            "links": [{ "from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms",
                        "qdisc": { "kind": "droptail", "limit": "1000pkt" } }],
        },
        "traffic": [{ "name": "app", "kind": "onoff", "transport": "tcp", "rate": "800kbps",
                      "on": "50ms", "off": off, "packet_size": "1000B", "src": "a", "dst": "b",
                      "start": "0s", "tcp": tcp }],
    });
    Scenario::from_value(&v).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The (time in ns, sequence number) of every packet flow 0 sent.
fn sent(sc: &Scenario) -> Vec<(u64, u32)> {
    let mut sim = Sim::new(sc, 1);
    sim.run_to_end();
    sim.tcp_log.iter().map(|&(t, _, seq)| (t.0, seq)).collect()
}

const MS: u64 = 1_000_000;

#[test]
fn test_paced_onoff_sends_on_the_application_schedule_when_the_window_allows() {
    // No SYN, an initial window of 10 and no restart after idle periods:
    // the window never holds a packet back, so packet k leaves when the
    // application makes it. The application starts with an OFF period:
    // bursts at 1010..1050 ms, then each burst's first packet an
    // interval plus 1 s after the previous burst's last one.
    let sc = paced(
        json!({ "variant": "reno", "syn": false, "initial_window": 10, "slow_start_restart": false }),
        "1s",
        "3.5s",
    );
    let expected: Vec<(u64, u32)> = [
        1010, 1020, 1030, 1040, 1050, 2060, 2070, 2080, 2090, 2100, 3110, 3120, 3130, 3140, 3150,
    ]
    .iter()
    .enumerate()
    .map(|(k, &ms)| (ms * MS, k as u32))
    .collect();
    assert_eq!(sent(&sc), expected);
}

#[test]
fn test_paced_onoff_buffers_what_the_window_holds_back() {
    // ns-2.35's defaults (SYN, initial window 2, restart after an idle
    // RTO), as ns-2.35 sends it (Application/Traffic/Pareto with shape
    // 1e9 on Agent/TCP/Reno over the same link). The SYN leaves with the
    // first packet made (1010 ms); its ACK is back one round trip later,
    // 2 x (10 ms + 32 us for 40 B) = 20.064 ms. By then packets 1..3 are
    // waiting; the window of 2 sends 1 and 2. A data packet's round trip
    // is 20 ms + 832 us + 32 us = 20.864 ms: ACK 1 at 1050.928 ms
    // (window 3) sends 3 and 4, ACK 2 at 1051.760 ms sends 5 (made at
    // 1050 ms). The next burst is made from 2060 ms = 1050 + 10 + 1000
    // ms, counted from when packet 5 was made, not sent. The idle RTO
    // has put the window back to 1: 6 leaves at once, 7 and 8 on its
    // ACK, 9 and 10 on 7's.
    let sc = paced(json!({ "variant": "reno" }), "1s", "3.5s");
    let us = |x: u64| x * 1000;
    let expected = vec![
        (us(1_010_000), 0),
        (us(1_030_064), 1),
        (us(1_030_064), 2),
        (us(1_050_928), 3),
        (us(1_050_928), 4),
        (us(1_051_760), 5),
        (us(2_060_000), 6),
        (us(2_080_864), 7),
        (us(2_080_864), 8),
        (us(2_101_728), 9),
        (us(2_101_728), 10),
        (us(3_110_000), 11),
        (us(3_130_864), 12),
        (us(3_130_864), 13),
        (us(3_151_728), 14),
        (us(3_151_728), 15),
    ];
    assert_eq!(sent(&sc), expected);
}

#[test]
fn test_paced_onoff_backlog_outlasts_the_on_period_and_the_schedule_goes_on() {
    // A window of 1 packet: one packet per round trip (20.864 ms after
    // the SYN's 20.064 ms), while the application makes 5 packets every
    // 60 ms (OFF 10 ms), 12 ms apart on average. The sender falls ever
    // further behind and sends through every OFF period, one packet per
    // round trip, as ns-2.35 does: SYN at 20 ms (the first packet made),
    // then data packet k at 40.064 + 20.864 (k - 1) ms. By 290 ms the
    // application has made 24 packets (bursts from 20, 80, 140, 200 and
    // 260 ms); 13 have left.
    let sc = paced(
        json!({ "variant": "reno", "rwnd": "1pkt", "initial_window": 1 }),
        "10ms",
        "300ms",
    );
    let mut expected = vec![(20 * MS, 0)];
    expected.extend((1..=13u32).map(|k| (40_064_000 + 20_864_000 * (k as u64 - 1), k)));
    assert_eq!(sent(&sc), expected);
}
