//! The keys of every queue discipline, traffic kind and `tcp` table: a
//! missing required key is reported alone, at its path, and never makes the
//! valid keys beside it look unknown.
//!
//! Each case below is a table that sets every key of its kind to a valid
//! value. Its key set is checked against the kind's declared list
//! (`qdisc_keys`, `traffic_keys`, `TCP_KEYS`) and against the reader itself
//! (the reader asks for no other key, and an invalid value of each listed
//! key is an error at that key), so the lists cannot silently drift from
//! the readers.

use std::collections::BTreeSet;

use aqmlab_sim::qdiscs::{qdisc_keys, QDISC_KINDS};
use aqmlab_sim::scenario::{traffic_keys, TRAFFIC_KINDS};
use aqmlab_sim::tcp::config::TCP_KEYS;
use aqmlab_sim::Scenario;
use serde_json::{json, Map, Value};

// Helpers

/// A valid scenario whose bottleneck queue is `qdisc` and whose one
/// traffic group is `group`.
fn scenario(qdisc: Value, group: Value) -> Value {
    json!({
        "duration": "10s",
        "topology": {
            "kind": "dumbbell", "senders": 2, "access_rate": "100Mbps", "access_delay": "5ms",
            "bottleneck": { "rate": "10Mbps", "delay": "20ms" },
            "qdisc": qdisc,
        },
        "traffic": [group],
    })
}

fn droptail() -> Value {
    json!({ "kind": "droptail", "limit": "100pkt" })
}

fn cbr() -> Value {
    json!({ "name": "c", "kind": "cbr", "rate": "1Mbps", "size": "1000B" })
}

fn errors(v: &Value) -> Vec<(String, String)> {
    match Scenario::from_value(v) {
        Ok(_) => Vec::new(),
        Err(es) => es.into_iter().map(|e| (e.path, e.message)).collect(),
    }
}

/// A table under test: where it sits in the scenario, a value for every
/// key it may have, and which keys are required.
struct Case {
    label: &'static str,
    /// The scenario holding the table.
    scenario: Value,
    /// JSON pointer to the table, e.g. `/topology/qdisc`.
    pointer: &'static str,
    /// The table's key path in error messages, e.g. `topology.qdisc`.
    path: &'static str,
    required: &'static [&'static str],
    /// Keys the kind allows that this table cannot set together with the
    /// others (`stop` of a TCP group, `gap` beside `rate`).
    also_allowed: &'static [&'static str],
    /// Required as a pair: exactly one of these must be given.
    either: &'static [&'static str],
    /// The keys the kind declares (as the engine lists them).
    declared: Vec<&'static str>,
}

impl Case {
    fn table(&self) -> &Map<String, Value> {
        self.scenario.pointer(self.pointer).and_then(Value::as_object).unwrap()
    }

    /// The scenario with the table changed by `edit`.
    fn with(&self, edit: impl FnOnce(&mut Map<String, Value>)) -> Value {
        let mut v = self.scenario.clone();
        edit(v.pointer_mut(self.pointer).and_then(Value::as_object_mut).unwrap());
        v
    }

    fn key_path(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    /// Every key the table may have: the ones it sets and `also_allowed`.
    fn allowed(&self) -> BTreeSet<String> {
        let mut keys: BTreeSet<String> = self.table().keys().cloned().collect();
        keys.extend(self.also_allowed.iter().map(|k| k.to_string()));
        keys
    }
}

/// The "allowed here" list of an unknown-key message.
fn allowed_in(message: &str) -> BTreeSet<String> {
    let list = message
        .split("(allowed here: ")
        .nth(1)
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or_else(|| panic!("no allowed list in {message:?}"));
    list.split(", ").map(str::to_string).collect()
}

fn with_kind(keys: Vec<&'static str>) -> BTreeSet<String> {
    keys.into_iter().chain(["kind"]).map(str::to_string).collect()
}

fn qdisc_case(label: &'static str, table: Value, required: &'static [&'static str]) -> Case {
    let kind = table["kind"].as_str().unwrap();
    Case {
        label,
        declared: qdisc_keys(kind),
        scenario: scenario(table, cbr()),
        pointer: "/topology/qdisc",
        path: "topology.qdisc",
        required,
        also_allowed: &[],
        either: &[],
    }
}

fn traffic_case(label: &'static str, group: Value, required: &'static [&'static str]) -> Case {
    let kind = group["kind"].as_str().unwrap();
    let tcp = ["ftp", "file", "web", "http11"].contains(&kind) || group["transport"] == "tcp";
    Case {
        label,
        declared: traffic_keys(kind, group["transport"] == "tcp"),
        scenario: scenario(droptail(), group),
        pointer: "/traffic/0",
        path: "traffic[0]",
        required,
        // TCP groups run to the end of the run: `stop` is read, and refused.
        also_allowed: if tcp { &["stop"] } else { &[] },
        either: &[],
    }
}

/// Every key of the group table of any kind, with valid values.
fn group(name: &str, kind: &str, source: Value) -> Value {
    let mut g = json!({
        "name": name, "kind": kind, "count": 2, "src": ["s0", "s1"], "dst": "d0",
        "start": { "dist": "uniform", "min": "0s", "max": "1s" }, "stop": "9s",
        "ted_deadline": "50ms", "class": "bulk",
    });
    g.as_object_mut().unwrap().extend(source.as_object().unwrap().clone());
    if ["ftp", "file", "web", "http11"].contains(&kind) || g["transport"] == "tcp" {
        g.as_object_mut().unwrap().remove("stop");
    }
    g
}

/// Every key of a `tcp` table, with valid values.
fn full_tcp() -> Value {
    json!({
        "variant": "sack", "initial_window": 2, "rwnd": "100pkt", "initial_ssthresh": "64pkt",
        "dupack_threshold": 3, "limited_transmit": true, "rto": "ns2", "tick": "10ms", "min_rto": "200ms",
        "max_rto": "60s", "initial_rto": "3s", "slow_start_restart": false, "ecn": true, "ecn_negotiate": true,
        "ecn_at_cwnd1": "ignore", "max_burst": 4, "syn": true, "delayed_ack": true, "delack_interval": "100ms",
        "header": "40B",
    })
}

/// RED's own keys with valid values (`red` and `feng-ared` require the
/// first four).
fn red_keys() -> Value {
    json!({
        "min_th": "10pkt", "max_th": "30pkt", "max_p": 0.1, "w_q": 0.002, "gentle": true, "wait": true,
        "byte_mode": false, "mean_pktsize": "1000B", "ecn": true, "ecn_above_max_th": "mark",
        "drop_spacing": "count", "idle_decay": "paper", "exempt_first": true, "avg_of": "instantaneous",
        "target_delay": "5ms",
    })
}

fn merged(a: Value, b: Value) -> Value {
    let mut m = a.as_object().unwrap().clone();
    m.extend(b.as_object().unwrap().clone());
    Value::Object(m)
}

const RED_REQUIRED: &[&str] = &["kind", "limit", "min_th", "max_th", "max_p", "w_q"];

fn qdisc_cases() -> Vec<Case> {
    let red = |kind: &str, extra: Value| merged(json!({ "kind": kind, "limit": "100pkt" }), merged(red_keys(), extra));
    let ared = json!({ "interval": "500ms", "alpha": 0.01, "beta": 0.9, "top": 0.5, "bottom": 0.01,
                       "update": "arrival", "gentle_slope": "initial" });
    let feng = json!({ "a": 3.0, "b": 2.0, "bottom": 0.001, "dynamic_thresholds":
                       { "p_low": 0.01, "p_high": 0.02, "w_p": 0.002, "interval": "500ms", "gamma": 0.05 } });
    let mut cases = vec![
        qdisc_case(
            "droptail",
            json!({ "kind": "droptail", "limit": "100pkt", "drop": "front" }),
            &["kind", "limit"],
        ),
        qdisc_case(
            "bernoulli",
            json!({ "kind": "bernoulli", "limit": "100pkt", "p": 0.01, "ecn": true }),
            &["kind", "limit", "p"],
        ),
        qdisc_case("red", red("red", json!({})), RED_REQUIRED),
        qdisc_case("ared", red("ared", ared), &["kind", "limit"]),
        qdisc_case("feng-ared", red("feng-ared", feng), RED_REQUIRED),
        qdisc_case(
            "red-tail",
            json!({ "kind": "red-tail", "limit": "100pkt", "red": { "kind": "ared" }, "min_th1": 5, "max_th1": "15pkt",
                    "c1_min": 0.1, "c1_max": 0.5, "queue1_classes": ["realtime"] }),
            &["kind", "limit", "red"],
        ),
        qdisc_case(
            "blue",
            json!({ "kind": "blue", "limit": "100pkt", "d1": 0.02, "d2": 0.002, "freeze_time": "100ms",
                    "l_threshold": "40pkt", "ecn": true }),
            &["kind", "limit"],
        ),
        qdisc_case(
            "sfb",
            json!({ "kind": "sfb", "limit": "100pkt", "target": "20pkt", "max": "25pkt", "increment": 0.0005,
                    "decrement": 0.0001, "penalty_rate": "10pps", "penalty_burst": "20pkt", "rehash_interval": "600s",
                    "warmup": "60s", "ecn": true }),
            &["kind", "limit"],
        ),
        qdisc_case(
            "ted",
            json!({ "kind": "ted", "limit": "100pkt", "mode": "ebd", "check": "arrival",
                    "deadlines": { "bulk": "50ms", "realtime": "10ms" }, "default_deadline": "20ms" }),
            &["kind", "limit"],
        ),
        qdisc_case(
            "codel",
            json!({ "kind": "codel", "limit": "100pkt", "target": "5ms", "interval": "100ms", "ecn": true,
                    "ce_threshold": "1ms" }),
            &["kind"],
        ),
        qdisc_case(
            "pie",
            json!({ "kind": "pie", "limit": "100pkt", "qdelay_ref": "15ms", "t_update": "15ms", "alpha": 0.125,
                    "beta": 1.25, "max_burst": "150ms", "delay_estimator": "dequeue_rate", "dq_threshold": "16384B",
                    "dq_rate_weight": 0.25, "mean_pktsize": "1000B", "derandomize": true,
                    "cap_drop_adjustment": false, "ecn": true, "mark_ecn_threshold": 0.1, "byte_mode": true,
                    "idle_decay_factor": 0.98 }),
            &["kind"],
        ),
        qdisc_case(
            "fq_codel",
            json!({ "kind": "fq_codel", "limit": "100pkt", "flows": 64, "quantum": "1514B", "target": "5ms",
                    "interval": "100ms", "ecn": true, "ce_threshold": "1ms", "drop_batch": 32 }),
            &["kind"],
        ),
    ];
    // Queue 2 of red-tail: a `red` table whose limit is red-tail's (the
    // reader inserts it, so `limit` is allowed there and then refused).
    let mut inner = red("red", json!({}));
    inner.as_object_mut().unwrap().remove("limit");
    cases.push(Case {
        label: "red-tail's red",
        declared: qdisc_keys("red"),
        scenario: scenario(json!({ "kind": "red-tail", "limit": "100pkt", "red": inner }), cbr()),
        pointer: "/topology/qdisc/red",
        path: "topology.qdisc.red",
        required: &["kind", "min_th", "max_th", "max_p", "w_q"],
        also_allowed: &["limit"],
        either: &[],
    });
    cases
}

fn traffic_cases() -> Vec<Case> {
    let tcp_app = json!({ "packet_size": "1000B", "tcp": { "variant": "newreno" } });
    let on_off = json!({ "on": { "dist": "exponential", "mean": "500ms" }, "off": "1s" });
    let mut cases = vec![
        traffic_case(
            "ftp",
            group("f", "ftp", merged(json!({ "size": "1MB" }), tcp_app.clone())),
            &["name", "kind"],
        ),
        traffic_case(
            "file",
            group(
                "f",
                "file",
                merged(json!({ "size": "100KB", "gap": "1s" }), tcp_app.clone()),
            ),
            &["name", "kind", "size", "gap"],
        ),
        traffic_case(
            "web",
            group(
                "w",
                "web",
                merged(
                    json!({ "pages_per_session": 5, "inter_page": "2s", "objects_per_page": 3, "inter_object": "100ms",
                            "object_size": { "dist": "exponential", "mean": 10 }, "replace": false,
                            "response": "same-connection" }),
                    tcp_app.clone(),
                ),
            ),
            &["name", "kind"],
        ),
        traffic_case(
            "http11",
            group(
                "h",
                "http11",
                merged(json!({ "response_size": "20KB", "think": "1s" }), tcp_app.clone()),
            ),
            &["name", "kind"],
        ),
        traffic_case(
            "cbr",
            group("c", "cbr", json!({ "rate": "1Mbps", "size": "1000B", "jitter": true })),
            &["name", "kind", "rate", "size"],
        ),
        traffic_case(
            "poisson",
            group(
                "p",
                "poisson",
                json!({ "rate": "1Mbps", "size": { "dist": "exponential", "mean": "500B" } }),
            ),
            &["name", "kind", "rate", "size"],
        ),
        traffic_case(
            "onoff (udp)",
            group(
                "o",
                "onoff",
                merged(
                    json!({ "transport": "udp", "rate": "64kbps", "size": "210B" }),
                    on_off.clone(),
                ),
            ),
            &["name", "kind", "rate", "size", "on", "off"],
        ),
        traffic_case(
            "onoff (tcp)",
            group(
                "o",
                "onoff",
                merged(merged(json!({ "transport": "tcp", "rate": "1Mbps" }), on_off), tcp_app),
            ),
            &["name", "kind", "on", "off"],
        ),
    ];
    // Batches at a mean rate or with a gap distribution: one or the other.
    for (label, timing) in [
        ("batch-poisson (rate)", json!({ "rate": "1Mbps" })),
        ("batch-poisson (gap)", json!({ "gap": "10ms" })),
    ] {
        let mut c = traffic_case(
            label,
            group(
                "b",
                "batch-poisson",
                merged(json!({ "batch": 3, "size": "500B" }), timing),
            ),
            &["name", "kind", "batch", "size"],
        );
        c.also_allowed = if label.contains("rate") { &["gap"] } else { &["rate"] };
        c.either = &["rate", "gap"];
        cases.push(c);
    }
    let mut tcp = traffic_case("tcp table", group("f", "ftp", json!({ "tcp": full_tcp() })), &[]);
    tcp.declared = TCP_KEYS.to_vec();
    tcp.pointer = "/traffic/0/tcp";
    tcp.path = "traffic[0].tcp";
    tcp.also_allowed = &[];
    cases.push(tcp);
    cases
}

// Tests

#[test]
fn test_every_kind_has_a_case() {
    let labels: Vec<&str> = qdisc_cases().iter().chain(&traffic_cases()).map(|c| c.label).collect();
    for kind in QDISC_KINDS.iter().chain(TRAFFIC_KINDS) {
        assert!(
            labels.iter().any(|l| l.split(' ').next() == Some(*kind)),
            "no case for {kind}"
        );
    }
}

#[test]
fn test_each_case_sets_every_declared_key_and_validates() {
    for c in qdisc_cases().iter().chain(&traffic_cases()) {
        let declared = if c.label == "tcp table" {
            c.declared.iter().map(|k| k.to_string()).collect()
        } else {
            with_kind(c.declared.clone())
        };
        assert_eq!(
            c.allowed(),
            declared,
            "{}: the case's keys differ from the declared list",
            c.label
        );
        assert_eq!(errors(&c.scenario), vec![], "{}", c.label);
    }
}

#[test]
fn test_reader_asks_for_no_undeclared_key() {
    // With every key set nothing stops the reader early: it asks for every
    // key it knows, and the "allowed here" list shows them all.
    for c in qdisc_cases().iter().chain(&traffic_cases()) {
        let v = c.with(|t| {
            t.insert("colour".into(), json!(1));
        });
        let es = errors(&v);
        assert_eq!(es.len(), 1, "{}: {es:?}", c.label);
        assert_eq!(es[0].0, c.key_path("colour"), "{}", c.label);
        assert_eq!(allowed_in(&es[0].1), c.allowed(), "{}", c.label);
    }
}

#[test]
fn test_reader_reads_every_declared_key() {
    // A declared key the reader never read would take any value in silence.
    for c in qdisc_cases().iter().chain(&traffic_cases()) {
        for key in c.allowed() {
            let v = c.with(|t| {
                t.insert(key.clone(), json!([[]]));
            });
            let es = errors(&v);
            let at = c.key_path(&key);
            assert!(
                es.iter().any(|(p, _)| *p == at || p.starts_with(&format!("{at}."))),
                "{}: an invalid {key} is not reported at {at}: {es:?}",
                c.label
            );
        }
    }
}

#[test]
fn test_missing_required_key_is_the_only_error() {
    for c in qdisc_cases().iter().chain(&traffic_cases()) {
        for key in c.required {
            let v = c.with(|t| {
                t.remove(*key);
            });
            let es = errors(&v);
            assert_eq!(es.len(), 1, "{} without {key}: {es:?}", c.label);
            assert_eq!(es[0].0, c.key_path(key), "{} without {key}", c.label);
            assert!(es[0].1.starts_with("missing"), "{} without {key}: {}", c.label, es[0].1);
        }
    }
}

#[test]
fn test_optional_keys_may_be_left_out() {
    // Leaving one out may break a rule between keys (ce_threshold needs
    // ecn), but is never reported as a missing key. (`transport` is left
    // aside: without it an onoff group is UDP, another set of keys.)
    for c in qdisc_cases().iter().chain(&traffic_cases()) {
        for key in c.table().keys() {
            if c.required.contains(&key.as_str()) || c.either.contains(&key.as_str()) || key == "transport" {
                continue;
            }
            let v = c.with(|t| {
                t.remove(key);
            });
            let es = errors(&v);
            assert!(
                es.iter()
                    .all(|(p, m)| *p != c.key_path(key) && !m.starts_with("missing")),
                "{} without {key}: {es:?}",
                c.label
            );
        }
    }
}

#[test]
fn test_one_of_rate_and_gap_is_required() {
    for c in traffic_cases().iter().filter(|c| !c.either.is_empty()) {
        let given = c.either.iter().find(|k| c.table().contains_key(**k)).unwrap();
        let v = c.with(|t| {
            t.remove(*given);
        });
        let es = errors(&v);
        assert_eq!(es.len(), 1, "{}: {es:?}", c.label);
        assert_eq!(es[0].0, c.path);
        assert!(
            es[0].1.contains("missing \"rate\"") && es[0].1.contains("\"gap\""),
            "{}",
            es[0].1
        );
    }
}

#[test]
fn test_unknown_key_beside_a_missing_one_lists_every_allowed_key() {
    // The reader stops at the missing key; the keys it would have read
    // after it are still allowed, and listed.
    for c in qdisc_cases().iter().chain(&traffic_cases()) {
        for key in c.required.iter().filter(|k| **k != "kind") {
            let v = c.with(|t| {
                t.remove(*key);
                t.insert("colour".into(), json!(1));
            });
            let es = errors(&v);
            let paths: Vec<&str> = es.iter().map(|(p, _)| p.as_str()).collect();
            let (missing, colour) = (c.key_path(key), c.key_path("colour"));
            assert_eq!(
                paths,
                [missing.as_str(), colour.as_str()],
                "{} without {key}: {es:?}",
                c.label
            );
            assert_eq!(allowed_in(&es[1].1), c.allowed(), "{} without {key}", c.label);
        }
    }
}

#[test]
fn test_red_without_w_q_reports_only_w_q() {
    // The report that found the fault: the optional keys read after w_q
    // were reported as unknown.
    let q = json!({ "kind": "red", "limit": "100pkt", "min_th": "10pkt", "max_th": "30pkt", "max_p": 0.1,
                    "avg_of": "instantaneous", "drop_spacing": "none", "exempt_first": true });
    let es = errors(&scenario(q, cbr()));
    assert_eq!(
        es,
        vec![(
            "topology.qdisc.w_q".to_string(),
            "missing; the averaging weight, e.g. 0.002, or \"auto\"".to_string()
        )]
    );
}
