//! The keys of every table of a scenario: each reader reads exactly the keys
//! its declaration lists (see `aqmlab_sim::config::schema`), a missing required key
//! is reported alone, at its path, and never makes the valid keys beside it
//! look unknown.
//!
//! Each case below is a table that sets every key of its kind to a valid
//! value. Its key set is checked against the declaration and against the
//! reader itself (the reader asks for no other key, an invalid value of each
//! declared key is an error at that key, each key the declaration calls
//! required is reported missing when left out and no other), so the
//! declarations cannot silently drift from the readers.

use std::collections::BTreeSet;

use aqmlab_sim::config::dist::DIST;
use aqmlab_sim::config::schema::{Key, TableDecl, Tagged, Ty};
use aqmlab_sim::net::qdisc::{DYNAMIC_THRESHOLDS, QDISC, QDISC_KINDS, RED_QUEUE2, TED_DEADLINES};
use aqmlab_sim::scenario::{
    BOTTLENECK, CHAIN_HOST, CHAIN_LINK, GRAPH_LINK, HOST, SCENARIO, TOPOLOGY, TRACE, TRAFFIC, TRAFFIC_KINDS,
};
use aqmlab_sim::transport::tcp::config::{RTO_FIXED, TCP};
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

/// Which declaration a table follows.
#[derive(Clone, Copy)]
enum Decl {
    Table(&'static TableDecl),
    Tagged(&'static Tagged),
}

impl Decl {
    /// The declared keys of `table` (a tagged table's by its tag, and by
    /// `transport` for `onoff`).
    fn keys(self, table: &Map<String, Value>) -> Vec<&'static Key> {
        match self {
            Decl::Table(t) => t.keys().collect(),
            Decl::Tagged(t) => {
                let tag = t.tag[0].name;
                let variant = t.variant(table[tag].as_str().unwrap(), |k, v| table.get(k) == Some(&json!(v)));
                t.tag.iter().chain(t.common).chain(variant.keys()).collect()
            }
        }
    }

    /// `id` or `id:variant`, to match cases with declarations.
    fn label(self, table: &Map<String, Value>) -> String {
        match self {
            Decl::Table(t) => t.id.to_string(),
            Decl::Tagged(t) => {
                let tag = t.tag[0].name;
                let name = table[tag].as_str().unwrap();
                let variant = t.variant(name, |k, v| table.get(k) == Some(&json!(v)));
                format!(
                    "{}:{name}{}",
                    t.id,
                    variant.when.map(|(_, v)| format!("({v})")).unwrap_or_default()
                )
            }
        }
    }
}

/// A table under test: where it sits in the scenario, a value for every
/// key it may have, and the declaration it follows.
struct Case {
    label: &'static str,
    decl: Decl,
    /// The scenario holding the table.
    scenario: Value,
    /// JSON pointer to the table, e.g. `/topology/qdisc`.
    pointer: &'static str,
    /// The table's key path in error messages, e.g. `topology.qdisc`.
    path: &'static str,
    /// Keys the kind allows that this table cannot set together with the
    /// others (`stop` of a TCP group, `gap` beside `rate`).
    also_allowed: &'static [&'static str],
    /// Optional, but exactly one of these must be given.
    either: &'static [&'static str],
    /// Keys the reader lists as allowed that the declaration does not have
    /// (queue 2 of red-tail reads a RED table with red-tail's limit and
    /// refuses one of its own).
    refused: &'static [&'static str],
}

/// The keys that say which variant a table is.
const TAGS: &[&str] = &["kind", "dist"];

impl Case {
    fn new(label: &'static str, decl: Decl, scenario: Value, pointer: &'static str, path: &'static str) -> Case {
        Case {
            label,
            decl,
            scenario,
            pointer,
            path,
            also_allowed: &[],
            either: &[],
            refused: &[],
        }
    }

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
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// Every key the table may have: the ones it sets and `also_allowed`.
    fn allowed(&self) -> BTreeSet<String> {
        let mut keys: BTreeSet<String> = self.table().keys().cloned().collect();
        keys.extend(self.also_allowed.iter().map(|k| k.to_string()));
        keys
    }

    /// The keys the declaration lists, and the ones the reader refuses.
    fn declared(&self) -> BTreeSet<String> {
        let declared = self.decl.keys(self.table()).into_iter().map(|k| k.name);
        declared
            .chain(self.refused.iter().copied())
            .map(str::to_string)
            .collect()
    }

    fn required(&self) -> Vec<&'static str> {
        self.decl
            .keys(self.table())
            .iter()
            .filter(|k| k.required)
            .map(|k| k.name)
            .collect()
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

fn qdisc_case(label: &'static str, table: Value) -> Case {
    Case::new(
        label,
        Decl::Tagged(&QDISC),
        scenario(table, cbr()),
        "/topology/qdisc",
        "topology.qdisc",
    )
}

fn traffic_case(label: &'static str, group: Value) -> Case {
    let kind = group["kind"].as_str().unwrap();
    let tcp = ["ftp", "file", "web", "http11"].contains(&kind) || group["transport"] == "tcp";
    let mut c = Case::new(
        label,
        Decl::Tagged(&TRAFFIC),
        scenario(droptail(), group),
        "/traffic/0",
        "traffic[0]",
    );
    // TCP groups run to the end of the run: `stop` is read, and refused.
    c.also_allowed = if tcp { &["stop"] } else { &[] };
    c
}

/// Every key of the group table of any kind, with valid values.
fn group(name: &str, kind: &str, source: Value) -> Value {
    let mut g = json!({
        "name": name, "kind": kind, "count": 2, "src": ["s0", "s1"], "dst": "d0",
        "start": { "dist": "uniform", "min": "0s", "max": "1s" }, "stop": "9s",
        "ted_deadline": "50ms", "class": "bulk", "delay_histogram": true,
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

/// Every key of a Linux-style variant's `tcp` table, with valid values.
fn full_linux_tcp() -> Value {
    json!({
        "variant": "linux-reno", "initial_window": 10, "rwnd": "100pkt", "initial_ssthresh": "64pkt",
        "dupack_threshold": 3, "min_rto": "200ms", "max_rto": "120s", "initial_rto": "1s", "ecn": true,
        "syn": true, "delayed_ack": true, "delack_interval": "40ms", "header": "40B", "pacing": true,
        "rack": true, "tlp": true, "prr": true, "timestamps": true,
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

fn qdisc_cases() -> Vec<Case> {
    let red = |kind: &str, extra: Value| merged(json!({ "kind": kind, "limit": "100pkt" }), merged(red_keys(), extra));
    let ared = json!({ "interval": "500ms", "alpha": 0.01, "beta": 0.9, "top": 0.5, "bottom": 0.01,
                       "update": "arrival", "gentle_slope": "initial" });
    let feng = json!({ "a": 3.0, "b": 2.0, "bottom": 0.001, "dynamic_thresholds":
                       { "p_low": 0.01, "p_high": 0.02, "w_p": 0.002, "interval": "500ms", "gamma": 0.05 } });
    let ted = json!({ "kind": "ted", "limit": "100pkt", "mode": "ebd", "check": "arrival",
                      "deadlines": { "bulk": "50ms", "realtime": "10ms" }, "default_deadline": "20ms" });
    let mut cases = vec![
        qdisc_case(
            "droptail",
            json!({ "kind": "droptail", "limit": "100pkt", "drop": "front" }),
        ),
        qdisc_case(
            "bernoulli",
            json!({ "kind": "bernoulli", "limit": "100pkt", "p": 0.01, "ecn": true }),
        ),
        qdisc_case("red", red("red", json!({}))),
        qdisc_case("ared", red("ared", ared)),
        qdisc_case("feng-ared", red("feng-ared", feng.clone())),
        qdisc_case(
            "red-tail",
            json!({ "kind": "red-tail", "limit": "100pkt", "red": { "kind": "ared" }, "min_th1": 5, "max_th1": "15pkt",
                    "c1_min": 0.1, "c1_max": 0.5, "queue1_classes": ["realtime"] }),
        ),
        qdisc_case(
            "blue",
            json!({ "kind": "blue", "limit": "100pkt", "d1": 0.02, "d2": 0.002, "freeze_time": "100ms",
                    "l_threshold": "40pkt", "ecn": true }),
        ),
        qdisc_case(
            "sfb",
            json!({ "kind": "sfb", "limit": "100pkt", "target": "20pkt", "max": "25pkt", "increment": 0.0005,
                    "decrement": 0.0001, "penalty_rate": "10pps", "penalty_burst": "20pkt", "rehash_interval": "600s",
                    "warmup": "60s", "ecn": true }),
        ),
        qdisc_case("ted", ted.clone()),
        qdisc_case(
            "codel",
            json!({ "kind": "codel", "limit": "100pkt", "target": "5ms", "interval": "100ms", "ecn": true,
                    "ce_threshold": "1ms" }),
        ),
        qdisc_case(
            "pie",
            json!({ "kind": "pie", "limit": "100pkt", "qdelay_ref": "15ms", "t_update": "15ms", "alpha": 0.125,
                    "beta": 1.25, "max_burst": "150ms", "delay_estimator": "dequeue_rate", "dq_threshold": "16384B",
                    "dq_rate_weight": 0.25, "mean_pktsize": "1000B", "derandomize": true,
                    "cap_drop_adjustment": false, "ecn": true, "mark_ecn_threshold": 0.1, "byte_mode": true,
                    "idle_decay_factor": 0.98 }),
        ),
        qdisc_case(
            "dualpi2",
            json!({ "kind": "dualpi2", "limit": "1000pkt", "target": "15ms", "t_update": "16ms", "alpha": 0.16,
                    "beta": 3.2, "coupling_factor": 2, "step_thresh": "1ms", "min_qlen_step": 0,
                    "c_protection": 10, "drop_overload": true, "qdelay_of": "classic" }),
        ),
        qdisc_case(
            "fq_codel",
            json!({ "kind": "fq_codel", "limit": "100pkt", "flows": 64, "quantum": "1514B", "target": "5ms",
                    "interval": "100ms", "ecn": true, "ce_threshold": "1ms", "drop_batch": 32 }),
        ),
        qdisc_case(
            "fq_pie",
            json!({ "kind": "fq_pie", "limit": "100pkt", "flows": 64, "quantum": "1514B", "target": "15ms",
                    "t_update": "15ms", "alpha": 0.125, "beta": 1.25, "max_burst": "150ms", "ecn": true,
                    "ecn_prob": 0.1, "byte_mode": true, "derandomize": false }),
        ),
        qdisc_case(
            "cobalt",
            json!({ "kind": "cobalt", "limit": "100pkt", "target": "5ms", "interval": "100ms", "ecn": true,
                    "increment": 0.00390625, "decrement": 0.000244140625, "blue_threshold": "none" }),
        ),
        qdisc_case(
            "fq_cobalt",
            json!({ "kind": "fq_cobalt", "limit": "100pkt", "flows": 64, "quantum": "1514B", "drop_batch": 1,
                    "target": "5ms", "interval": "100ms", "ecn": true, "increment": 0.00390625,
                    "decrement": 0.000244140625, "blue_threshold": "400ms" }),
        ),
        Case::new(
            "feng-ared's dynamic_thresholds",
            Decl::Table(&DYNAMIC_THRESHOLDS),
            scenario(red("feng-ared", feng), cbr()),
            "/topology/qdisc/dynamic_thresholds",
            "topology.qdisc.dynamic_thresholds",
        ),
        Case::new(
            "ted's deadlines",
            Decl::Table(&TED_DEADLINES),
            scenario(ted, cbr()),
            "/topology/qdisc/deadlines",
            "topology.qdisc.deadlines",
        ),
    ];
    // Queue 2 of red-tail: a RED table without a limit (the reader inserts
    // red-tail's, so `limit` is allowed there and then refused).
    for (label, kind) in [
        ("red-tail's red", "red"),
        ("red-tail's ared", "ared"),
        ("red-tail's feng-ared", "feng-ared"),
    ] {
        let mut inner = match kind {
            "ared" => red(
                "ared",
                json!({ "interval": "500ms", "alpha": 0.01, "beta": 0.9, "top": 0.5, "bottom": 0.01,
                                          "update": "arrival", "gentle_slope": "initial" }),
            ),
            "feng-ared" => red(
                "feng-ared",
                json!({ "a": 3.0, "b": 2.0, "bottom": 0.001, "dynamic_thresholds": true }),
            ),
            _ => red("red", json!({})),
        };
        inner.as_object_mut().unwrap().remove("limit");
        let mut c = Case::new(
            label,
            Decl::Tagged(&RED_QUEUE2),
            scenario(json!({ "kind": "red-tail", "limit": "100pkt", "red": inner }), cbr()),
            "/topology/qdisc/red",
            "topology.qdisc.red",
        );
        c.also_allowed = &["limit"];
        c.refused = &["limit"];
        cases.push(c);
    }
    cases
}

fn traffic_cases() -> Vec<Case> {
    let tcp_app = json!({ "packet_size": "1000B", "tcp": { "variant": "newreno" } });
    let on_off = json!({ "on": { "dist": "exponential", "mean": "500ms" }, "off": "1s" });
    let mut cases = vec![
        traffic_case(
            "ftp",
            group("f", "ftp", merged(json!({ "size": "1MB" }), tcp_app.clone())),
        ),
        traffic_case(
            "file",
            group(
                "f",
                "file",
                merged(json!({ "size": "100KB", "gap": "1s" }), tcp_app.clone()),
            ),
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
        ),
        traffic_case(
            "http11",
            group(
                "h",
                "http11",
                merged(json!({ "response_size": "20KB", "think": "1s" }), tcp_app.clone()),
            ),
        ),
        traffic_case(
            "cbr",
            group(
                "c",
                "cbr",
                json!({ "rate": "1Mbps", "size": "1000B", "jitter": true, "ecn": "ect1" }),
            ),
        ),
        traffic_case(
            "poisson",
            group(
                "p",
                "poisson",
                json!({ "rate": "1Mbps", "size": { "dist": "exponential", "mean": "500B" }, "ecn": "ect0" }),
            ),
        ),
        traffic_case(
            "onoff (udp)",
            group(
                "o",
                "onoff",
                merged(
                    json!({ "transport": "udp", "rate": "64kbps", "size": "210B", "ecn": "not-ect" }),
                    on_off.clone(),
                ),
            ),
        ),
        traffic_case(
            "onoff (tcp)",
            group(
                "o",
                "onoff",
                merged(merged(json!({ "transport": "tcp", "rate": "1Mbps" }), on_off), tcp_app),
            ),
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
                merged(json!({ "batch": 3, "size": "500B", "ecn": "ect1" }), timing),
            ),
        );
        c.also_allowed = if label.contains("rate") { &["gap"] } else { &["rate"] };
        c.either = &["rate", "gap"];
        cases.push(c);
    }
    // Each TCP family reads only its own keys: the other's are allowed in
    // the table (the reader names them) but not with this variant.
    for (label, table, other) in [
        ("tcp table (ns-2)", full_tcp(), &["pacing", "rack", "tlp", "prr", "timestamps"][..]),
        (
            "tcp table (Linux-style)",
            full_linux_tcp(),
            &["rto", "tick", "limited_transmit", "slow_start_restart", "ecn_negotiate", "ecn_at_cwnd1", "max_burst"][..],
        ),
    ] {
        let mut tcp = traffic_case(label, group("f", "ftp", json!({ "tcp": table })));
        tcp.decl = Decl::Table(&TCP);
        tcp.pointer = "/traffic/0/tcp";
        tcp.path = "traffic[0].tcp";
        tcp.also_allowed = other;
        cases.push(tcp);
    }
    cases
}

/// Every distribution, as the size of a Poisson source's packets.
fn dist_cases() -> Vec<Case> {
    let cases: [(&'static str, Value, &'static [&'static str], &'static [&'static str]); 8] = [
        ("constant", json!({ "dist": "constant", "value": "500B" }), &[], &[]),
        (
            "exponential",
            json!({ "dist": "exponential", "mean": "500B" }),
            &[],
            &[],
        ),
        (
            "pareto (scale)",
            json!({ "dist": "pareto", "shape": 1.5, "scale": "200B" }),
            &["mean"],
            &["scale", "mean"],
        ),
        (
            "pareto (mean)",
            json!({ "dist": "pareto", "shape": 1.5, "mean": "600B" }),
            &["scale"],
            &["scale", "mean"],
        ),
        (
            "pareto2",
            json!({ "dist": "pareto2", "shape": 1.5, "mean": "600B" }),
            &["scale"],
            &["scale", "mean"],
        ),
        (
            "uniform",
            json!({ "dist": "uniform", "min": "40B", "max": "1500B" }),
            &[],
            &[],
        ),
        (
            "lognormal (mu)",
            json!({ "dist": "lognormal", "sigma": 0.5, "mu": 6.0 }),
            &["mean"],
            &["mu", "mean"],
        ),
        (
            "lognormal (mean)",
            json!({ "dist": "lognormal", "sigma": 0.5, "mean": "500B" }),
            &["mu"],
            &["mu", "mean"],
        ),
    ];
    cases
        .into_iter()
        .map(|(label, size, also_allowed, either)| {
            let group = json!({ "name": "p", "kind": "poisson", "rate": "1Mbps", "size": size });
            let mut c = Case::new(
                label,
                Decl::Tagged(&DIST),
                scenario(droptail(), group),
                "/traffic/0/size",
                "traffic[0].size",
            );
            c.also_allowed = also_allowed;
            c.either = either;
            c
        })
        .collect()
}

/// The scenario root, the trace and every topology table.
fn scenario_cases() -> Vec<Case> {
    let ftp = json!({ "name": "f", "kind": "ftp", "src": "s0", "dst": "d0" });
    let root = json!({
        "name": "all", "duration": "10s", "warmup": "1s", "seed": 7,
        "topology": { "kind": "dumbbell", "senders": 1, "access_rate": "100Mbps", "access_delay": "5ms",
                      "bottleneck": { "rate": "10Mbps", "delay": "20ms" }, "qdisc": droptail() },
        "trace": { "interval": "100ms" },
        "traffic": [ftp],
    });
    let mut traced = root.clone();
    traced["trace"] = json!({ "interval": "100ms", "queues": ["bottleneck"], "flows": ["f[0]"], "groups": ["f"] });
    let dumbbell = json!({
        "duration": "10s",
        "topology": {
            "kind": "dumbbell",
            "senders": [ { "rate": "100Mbps", "delay": { "dist": "uniform", "min": "1ms", "max": "5ms" } } ],
            "receivers": 1, "access_rate": "50Mbps", "access_delay": "5ms",
            "bottleneck": { "rate": "10Mbps", "delay": "20ms", "mtu": "1500B", "name": "b" },
            "qdisc": droptail(), "reverse_qdisc": droptail(), "access_qdisc": droptail(),
            "receiver_rate": "1Gbps", "receiver_delay": "1ms",
        },
        "traffic": [cbr()],
    });
    let full_link = json!({ "rate": "10Mbps", "delay": "10ms", "mtu": "1500B", "qdisc": droptail(),
                            "reverse_qdisc": droptail(), "duplex": true, "reverse_name": "back" });
    let chain = json!({
        "duration": "10s",
        "topology": {
            "kind": "chain", "routers": 3,
            "links": [
                { "rate": "10Mbps", "delay": "10ms" },
                merged(full_link.clone(), json!({ "name": "fwd" })),
            ],
            "hosts": [
                merged(full_link.clone(), json!({ "name": "h", "router": 0, "reverse_name": "h-back" })),
                { "name": "a", "router": 0, "rate": "100Mbps", "delay": "1ms" },
                { "name": "b", "router": 1, "rate": "100Mbps", "delay": "1ms" },
            ],
        },
        "traffic": [ { "name": "c", "kind": "cbr", "rate": "1Mbps", "size": "1000B", "src": "a", "dst": "b" } ],
    });
    let graph = json!({
        "duration": "10s",
        "topology": {
            "kind": "graph", "nodes": ["a", "b", "c"],
            "links": [
                merged(full_link, json!({ "from": "a", "to": "c", "name": "a-c" })),
                { "from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms" },
            ],
        },
        "traffic": [ { "name": "c", "kind": "cbr", "rate": "1Mbps", "size": "1000B", "src": "a", "dst": "b" } ],
    });
    vec![
        Case::new("scenario", Decl::Table(&SCENARIO), root.clone(), "", ""),
        Case::new("trace", Decl::Table(&TRACE), traced, "/trace", "trace"),
        Case::new(
            "dumbbell",
            Decl::Tagged(&TOPOLOGY),
            dumbbell.clone(),
            "/topology",
            "topology",
        ),
        Case::new(
            "bottleneck",
            Decl::Table(&BOTTLENECK),
            dumbbell.clone(),
            "/topology/bottleneck",
            "topology.bottleneck",
        ),
        Case::new(
            "dumbbell host",
            Decl::Table(&HOST),
            dumbbell,
            "/topology/senders/0",
            "topology.senders[0]",
        ),
        Case::new("chain", Decl::Tagged(&TOPOLOGY), chain.clone(), "/topology", "topology"),
        // The link off the path of the traffic, so that a broken one leaves it a route.
        Case::new(
            "chain link",
            Decl::Table(&CHAIN_LINK),
            chain.clone(),
            "/topology/links/1",
            "topology.links[1]",
        ),
        Case::new(
            "chain host",
            Decl::Table(&CHAIN_HOST),
            chain,
            "/topology/hosts/0",
            "topology.hosts[0]",
        ),
        Case::new("graph", Decl::Tagged(&TOPOLOGY), graph.clone(), "/topology", "topology"),
        Case::new(
            "graph link",
            Decl::Table(&GRAPH_LINK),
            graph,
            "/topology/links/0",
            "topology.links[0]",
        ),
    ]
}

fn all_cases() -> Vec<Case> {
    let mut cases = qdisc_cases();
    cases.extend(traffic_cases());
    cases.extend(dist_cases());
    cases.extend(scenario_cases());
    cases
}

/// `id` of every table and `id:variant` of every tagged alternative that a
/// scenario can hold.
fn declared_tables() -> BTreeSet<String> {
    fn walk(ty: &Ty, out: &mut BTreeSet<String>) {
        match *ty {
            Ty::Table(t) if out.insert(t.id.to_string()) => t.keys().for_each(|k| walk(&k.ty, out)),
            Ty::Tagged(t) if out.insert(t.id.to_string()) => {
                for v in t.variants {
                    let when = v.when.map(|(_, val)| format!("({val})")).unwrap_or_default();
                    out.insert(format!("{}:{}{when}", t.id, v.name));
                    v.keys().for_each(|k| walk(&k.ty, out));
                }
                t.common.iter().for_each(|k| walk(&k.ty, out));
            }
            Ty::Dist(_) => walk(&Ty::Tagged(&DIST), out),
            Ty::List(item) | Ty::NonEmptyList(item) => walk(item, out),
            Ty::AnyOf(tys) => tys.iter().for_each(|t| walk(t, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    walk(&Ty::Table(&SCENARIO), &mut out);
    out
}

// Tests

#[test]
fn test_every_declared_table_has_a_case() {
    let covered: BTreeSet<String> = all_cases().iter().map(|c| c.decl.label(c.table())).collect();
    let mut expected = declared_tables();
    // Tagged tables themselves are covered through their variants.
    for id in ["qdisc", "red-queue2", "traffic", "dist", "topology"] {
        expected.remove(id);
    }
    // `rto = { fixed = "40ms" }` is one value, read whole by `parse_rto`.
    expected.remove(RTO_FIXED.id);
    assert_eq!(covered, expected);
}

#[test]
fn test_kind_lists_name_every_variant() {
    // The readers look a kind's keys up by the name they accepted.
    assert_eq!(QDISC.names(), QDISC_KINDS);
    assert_eq!(TRAFFIC.names(), TRAFFIC_KINDS);
    assert_eq!(TOPOLOGY.names(), aqmlab_sim::scenario::TOPOLOGY_KINDS);
    assert_eq!(DIST.names(), aqmlab_sim::config::dist::DIST_NAMES);
    let ted_classes: Vec<&str> = TED_DEADLINES.keys().map(|k| k.name).collect();
    assert_eq!(ted_classes, aqmlab_sim::scenario::CLASSES);
}

#[test]
fn test_each_case_sets_every_declared_key_and_validates() {
    for c in all_cases() {
        assert_eq!(
            c.allowed(),
            c.declared(),
            "{}: the case's keys differ from the declaration",
            c.label
        );
        assert_eq!(errors(&c.scenario), vec![], "{}", c.label);
    }
}

#[test]
fn test_reader_asks_for_no_undeclared_key() {
    // With every key set nothing stops the reader early: it asks for every
    // key it knows (one it asks for undeclared is an error of its own), and
    // the "allowed here" list shows the declared keys.
    for c in all_cases() {
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
    for c in all_cases() {
        for key in c.allowed() {
            let v = c.with(|t| {
                t.insert(key.clone(), json!([[]]));
            });
            let es = errors(&v);
            let at = c.key_path(&key);
            assert!(
                es.iter()
                    .any(|(p, _)| *p == at || p.starts_with(&format!("{at}.")) || p.starts_with(&format!("{at}["))),
                "{}: an invalid {key} is not reported at {at}: {es:?}",
                c.label
            );
        }
    }
}

#[test]
fn test_missing_required_key_is_the_only_error() {
    for c in all_cases() {
        for key in c.required() {
            let v = c.with(|t| {
                t.remove(key);
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
    for c in all_cases() {
        let required = c.required();
        for key in c.table().keys() {
            if required.contains(&key.as_str()) || c.either.contains(&key.as_str()) || key == "transport" {
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
fn test_declared_defaults_are_the_readers() {
    // A key set to its declared default (where that is a value, not words)
    // reads as the key left out.
    let read = |v: &Value| {
        Scenario::from_value(v)
            .map(|s| format!("{s:?}"))
            .map_err(|e| format!("{e:?}"))
    };
    let mut checked = 0;
    for c in all_cases() {
        for k in c.decl.keys(c.table()) {
            let Ok(default) = serde_json::from_str::<Value>(k.default) else {
                continue;
            };
            // Without `transport` an onoff group is UDP, another set of keys;
            // a key the table cannot set with the others has no default here.
            if k.name == "transport" || c.also_allowed.contains(&k.name) {
                continue;
            }
            let without = read(&c.with(|t| {
                t.remove(k.name);
            }));
            let with = read(&c.with(|t| {
                t.insert(k.name.into(), default.clone());
            }));
            assert_eq!(with, without, "{}: {} = {}", c.label, k.name, k.default);
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn test_values_beyond_a_declared_range_are_refused() {
    // The schema's minimum and maximum must never refuse what the engine
    // accepts: just beyond each declared bound, the engine refuses too.
    fn beyond(ty: &Ty, out: &mut Vec<Value>) {
        match *ty {
            Ty::Number(r) => {
                if r.min.is_finite() {
                    out.push(json!(if r.min_open { r.min } else { r.min - 1e-9 }));
                }
                if r.max.is_finite() {
                    out.push(json!(if r.max_open { r.max } else { r.max + 1e-9 }));
                }
            }
            Ty::Whole { min, max } => {
                if min > 0 {
                    out.push(json!(min - 1));
                }
                if max != u64::MAX {
                    out.push(json!(max + 1));
                }
            }
            Ty::AnyOf(tys) => tys.iter().for_each(|t| beyond(t, out)),
            _ => {}
        }
    }
    let mut checked = 0;
    for c in all_cases() {
        for k in c.decl.keys(c.table()) {
            let mut values = Vec::new();
            beyond(&k.ty, &mut values);
            for value in values {
                let v = c.with(|t| {
                    t.insert(k.name.into(), value.clone());
                });
                assert!(!errors(&v).is_empty(), "{}: {} = {value} is accepted", c.label, k.name);
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "{checked}");
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
    for c in all_cases() {
        for key in c.required().into_iter().filter(|k| !TAGS.contains(k)) {
            let v = c.with(|t| {
                t.remove(key);
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
