use super::*;
use crate::transport::udp::Schedule;
use serde_json::json;

// Helpers

fn dumbbell() -> Value {
    json!({
        "duration": "10s",
        "topology": {
            "kind": "dumbbell", "senders": 2, "access_rate": "100Mbps", "access_delay": "5ms",
            "bottleneck": { "rate": "10Mbps", "delay": "20ms" },
            "qdisc": { "kind": "droptail", "limit": "50pkt" },
        },
        "traffic": [ { "name": "c", "kind": "cbr", "rate": "1Mbps", "size": "1000B", "count": 3 } ],
    })
}

#[track_caller]
fn errors(v: &Value) -> Vec<(String, String)> {
    Scenario::from_value(v)
        .expect_err("the scenario should be rejected")
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect()
}

#[track_caller]
fn error_paths(v: &Value) -> Vec<String> {
    errors(v).into_iter().map(|(p, _)| p).collect()
}

#[test]
fn test_host_link_rates_below_one_bps_are_rejected() {
    // Found by fuzzing (issue 19): "1e-308Mbps" passed as a positive rate,
    // became a 0 bit/s access link, and the run divided by zero.
    let mut v = dumbbell();
    v["topology"]["access_rate"] = json!("1e-308Mbps");
    v["topology"]["receiver_rate"] = json!("0.5bps");
    v["topology"]["senders"] = json!([{ "rate": "2.5bps" }, {}]);
    let found = errors(&v);
    assert_eq!(
        found.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
        [
            "topology.access_rate",
            "topology.senders[0].rate",
            "topology.receiver_rate"
        ]
    );
    for (_, m) in &found {
        assert!(m.contains("link rates are at least 1bps"), "{m}");
    }
}

#[test]
fn test_dumbbell_nodes_links_and_defaults() {
    let sc = Scenario::from_value(&dumbbell()).unwrap();
    let names: Vec<&str> = sc.net.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["R1", "R2", "s0", "s1", "d0", "d1"]);
    let links: Vec<&str> = sc.net.links.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        links,
        [
            "bottleneck",
            "bottleneck_rev",
            "s0->R1",
            "R1->s0",
            "s1->R1",
            "R1->s1",
            "R2->d0",
            "d0->R2",
            "R2->d1",
            "d1->R2"
        ]
    );
    // Receivers default to 10x the bottleneck rate and 0.1 ms.
    let r = &sc.net.links[6];
    assert_eq!(r.rate_bps, 100_000_000);
    assert!(matches!(r.delay, DelaySpec::Fixed(Duration(100_000))));
    // Flow j goes from s(j mod 2) to d(j mod 2).
    let g = &sc.groups[0];
    assert_eq!(
        (0..3).map(|j| g.endpoints(j)).collect::<Vec<_>>(),
        vec![(2, 4), (3, 5), (2, 4)]
    );
    assert_eq!(sc.net.path(2, 4), vec![2, 0, 6]);
    assert_eq!(sc.classes, vec!["realtime".to_string()]);
}

#[test]
fn test_graph_routes_by_hops_then_node_order() {
    // a -> b -> d and a -> c -> d are both two hops: b (index 1) wins.
    // a -> d directly is absent; e is unreachable.
    let v = json!({
        "duration": "1s",
        "topology": { "kind": "graph", "nodes": ["a", "b", "c", "d", "e"], "links": [
            { "from": "a", "to": "c", "rate": "1Mbps", "delay": "1ms" },
            { "from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms" },
            { "from": "b", "to": "d", "rate": "1Mbps", "delay": "1ms" },
            { "from": "c", "to": "d", "rate": "1Mbps", "delay": "1ms" },
        ] },
        "traffic": [ { "name": "x", "kind": "cbr", "rate": "1kbps", "size": "100B", "src": "a", "dst": "d" } ],
    });
    let sc = Scenario::from_value(&v).unwrap();
    let hops: Vec<&str> = sc
        .net
        .path(0, 3)
        .iter()
        .map(|&l| sc.net.links[l as usize].name.as_str())
        .collect();
    assert_eq!(hops, ["a->b", "b->d"]);
    assert_eq!(sc.net.route(0, 4), NO_ROUTE);
    let mut bad = v.clone();
    bad["traffic"][0]["dst"] = json!("e");
    assert_eq!(
        errors(&bad),
        vec![("traffic[0]".to_string(), "no route from \"a\" to \"e\"".to_string())]
    );
}

#[test]
fn test_every_problem_is_reported_with_its_path() {
    let mut v = dumbbell();
    v["warmup"] = json!("10s");
    v["topology"]["qdisc"]["limit"] = json!("0pkt");
    v["traffic"][0]["rate"] = json!("fast");
    v["traffic"][0]["colour"] = json!(1);
    v["traffic"].as_array_mut().unwrap().push(json!({ "name": "c", "kind": "poisson", "rate": "1Mbps", "size": { "dist": "pareto", "shape": 0.9, "scale": "100B" } }));
    let mut paths = error_paths(&v);
    paths.sort();
    assert_eq!(
        paths,
        [
            "topology.qdisc.limit",
            "traffic[0].colour",
            "traffic[0].rate",
            "traffic[1].name",
            "traffic[1].size",
            "warmup"
        ]
    );
    let msgs = errors(&v);
    let msg = |p: &str| msgs.iter().find(|(q, _)| q == p).unwrap().1.clone();
    assert!(
        msg("topology.qdisc.limit").contains("at least 1"),
        "{}",
        msg("topology.qdisc.limit")
    );
    assert!(msg("traffic[1].size").contains("finite mean"));
    assert!(msg("traffic[1].name").contains("unique"));
    assert!(msg("warmup").contains("shorter than duration"));
}

#[test]
fn test_web_response_key_defaults_to_new_connection() {
    let response = |extra: Value| {
        let mut v = dumbbell();
        v["traffic"] = json!([{ "name": "w", "kind": "web", "packet_size": "1000B" }]);
        for (k, x) in extra.as_object().unwrap() {
            v["traffic"][0][k] = x.clone();
        }
        Scenario::from_value(&v).map(|sc| match sc.groups[0].source {
            SourceSpec::Web { response, .. } => response,
            _ => unreachable!("a web group"),
        })
    };
    use crate::app::web::WebResponse::*;
    assert_eq!(response(json!({})).unwrap(), NewConnection);
    assert_eq!(
        response(json!({ "response": "new-connection" })).unwrap(),
        NewConnection
    );
    assert_eq!(
        response(json!({ "response": "same-connection" })).unwrap(),
        SameConnection
    );
    let e = response(json!({ "response": "same" })).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].path, "traffic[0].response");
    assert!(
        e[0].message.contains("\"same\" is not allowed")
            && e[0].message.contains("\"new-connection\", \"same-connection\""),
        "{}",
        e[0].message
    );
    // Only web groups have it.
    let mut v = dumbbell();
    v["traffic"][0]["response"] = json!("same-connection");
    assert_eq!(error_paths(&v), ["traffic[0].response"]);
}

#[test]
fn test_ted_check_defaults_to_head_and_names_the_allowed_values() {
    let check = |extra: Value| {
        let mut v = dumbbell();
        v["topology"]["qdisc"] = json!({ "kind": "ted", "limit": "inf", "default_deadline": "5ms" });
        for (k, x) in extra.as_object().unwrap() {
            v["topology"]["qdisc"][k] = x.clone();
        }
        Scenario::from_value(&v).map(|sc| match &sc.net.links[0].qdisc {
            QdiscSpec::Ted(t) => t.check,
            _ => unreachable!("a TED bottleneck"),
        })
    };
    use aqmlab_qdisc::TedCheck::*;
    assert_eq!(check(json!({})).unwrap(), Head);
    assert_eq!(check(json!({ "check": "head" })).unwrap(), Head);
    assert_eq!(check(json!({ "check": "departure" })).unwrap(), Departure);
    assert_eq!(check(json!({ "check": "arrival" })).unwrap(), Arrival);
    let e = check(json!({ "check": "dequeue" })).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].path, "topology.qdisc.check");
    assert!(
        e[0].message.contains("\"dequeue\" is not allowed")
            && e[0].message.contains("\"head\", \"departure\", \"arrival\""),
        "{}",
        e[0].message
    );
}

#[test]
fn test_red_gentle_takes_a_bool_or_to_limit_and_names_the_allowed_values() {
    let gentle = |limit: &str, g: Value| {
        let mut v = dumbbell();
        v["topology"]["qdisc"] = json!({ "kind": "red", "limit": limit, "min_th": "3pkt", "max_th": "13pkt",
                                         "max_p": 0.1, "w_q": 0.002, "gentle": g });
        Scenario::from_value(&v).map(|sc| match &sc.net.links[0].qdisc {
            QdiscSpec::Red(p) => p.gentle,
            _ => unreachable!("a RED bottleneck"),
        })
    };
    use aqmlab_qdisc::Gentle::*;
    assert_eq!(gentle("30pkt", json!(false)).unwrap(), Off);
    assert_eq!(gentle("30pkt", json!(true)).unwrap(), TwiceMaxTh);
    assert_eq!(gentle("20pkt", json!("to_limit")).unwrap(), ToLimit);
    for bad in [json!("yes"), json!(1)] {
        let e = gentle("20pkt", bad.clone()).unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].path, "topology.qdisc.gentle");
        assert!(
            e[0].message.contains(&format!("got {bad}")) && e[0].message.contains("\"to_limit\""),
            "{}",
            e[0].message
        );
    }
    // ns-2's line needs 2 max_th within the limit; GRED's ends at the limit.
    let e = gentle("20pkt", json!(true)).unwrap_err();
    assert_eq!(e[0].path, "topology.qdisc.max_th");
    let e = gentle("inf", json!("to_limit")).unwrap_err();
    assert_eq!(e[0].path, "topology.qdisc.gentle");
    assert!(e[0].message.contains("bounded limit"), "{}", e[0].message);
}

#[test]
fn test_endpoint_pairs_checked_over_their_whole_period() {
    // src [a, b] and dst [c, d, b] repeat every 6 flows; flow 5 is b -> b.
    let v = json!({
        "duration": "1s",
        "topology": { "kind": "graph", "nodes": ["a", "b", "c", "d"], "links": [
            { "from": "a", "to": "c", "rate": "1Mbps", "delay": "1ms" },
            { "from": "a", "to": "d", "rate": "1Mbps", "delay": "1ms" },
            { "from": "b", "to": "c", "rate": "1Mbps", "delay": "1ms" },
            { "from": "b", "to": "d", "rate": "1Mbps", "delay": "1ms" },
            { "from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms" },
        ] },
        "traffic": [ { "name": "x", "kind": "cbr", "rate": "1kbps", "size": "100B", "count": 6, "src": ["a", "b"], "dst": ["c", "d", "b"] } ],
    });
    assert_eq!(
        errors(&v),
        vec![(
            "traffic[0]".to_string(),
            "flow 5 would send from \"b\" to itself".to_string()
        )]
    );
}

#[test]
fn test_sources_that_would_stall_the_clock_are_rejected() {
    let with = |source: Value| {
        let mut v = dumbbell();
        v["traffic"][0] = source;
        error_paths(&v)
    };
    let batch = |extra: Value| {
        let mut g = json!({ "name": "b", "kind": "batch-poisson", "size": "100B", "batch": 3, "rate": "1Mbps" });
        for (k, val) in extra.as_object().unwrap() {
            g[k] = val.clone();
        }
        g
    };
    assert_eq!(with(batch(json!({ "batch": 0 }))), ["traffic[0].batch"]);
    assert_eq!(with(batch(json!({ "batch": 2.5 }))), ["traffic[0].batch"]);
    let mut zero_gap = batch(json!({ "gap": "0s" }));
    zero_gap.as_object_mut().unwrap().remove("rate");
    assert_eq!(with(zero_gap), ["traffic[0].gap"]);
    assert_eq!(
        with(json!({ "name": "c", "kind": "cbr", "rate": "1e5Gbps", "size": "1B" })),
        ["traffic[0].rate"]
    );
    assert_eq!(
        with(json!({ "name": "p", "kind": "poisson", "rate": "1Mbps", "size": "0B" })),
        ["traffic[0].size"]
    );
}

#[test]
fn test_tcp_onoff_rate_is_checked_with_the_keys_it_needs() {
    let tcp_onoff = |extra: Value| {
        let mut g = json!({ "name": "o", "kind": "onoff", "transport": "tcp", "on": "1s", "off": "1s" });
        for (k, val) in extra.as_object().unwrap() {
            g[k] = val.clone();
        }
        let mut v = dumbbell();
        v["traffic"][0] = g;
        v
    };
    // A rate gives ns-2's paced application; without one, none.
    let v = tcp_onoff(json!({ "rate": "200kbps", "packet_size": "1000B" }));
    let sc = Scenario::from_value(&v).unwrap();
    match &sc.groups[0].source {
        SourceSpec::Ftp { on_off: Some(o), .. } => assert_eq!(o.rate_bps, Some(200e3)),
        other => panic!("{other:?}"),
    }
    assert_eq!(sc.groups[0].source.kind(), "onoff");
    let sc = Scenario::from_value(&tcp_onoff(json!({}))).unwrap();
    assert!(matches!(
        &sc.groups[0].source,
        SourceSpec::Ftp {
            on_off: Some(TcpOnOff { rate_bps: None, .. }),
            ..
        }
    ));
    let msgs = errors(&tcp_onoff(json!({ "rate": "fast" })));
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0].0, "traffic[0].rate");
    assert!(msgs[0].1.contains("\"fast\""), "{}", msgs[0].1);
    assert_eq!(error_paths(&tcp_onoff(json!({ "rate": "0kbps" }))), ["traffic[0].rate"]);
    assert_eq!(
        error_paths(&tcp_onoff(json!({ "rate": "1e5Gbps", "packet_size": "1B" }))),
        ["traffic[0].rate"]
    );
    // The application's packets are of one size.
    let msgs = errors(&tcp_onoff(
        json!({ "rate": "200kbps", "packet_size": { "dist": "uniform", "min": "500B", "max": "1500B" } }),
    ));
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0].0, "traffic[0].packet_size");
    assert!(msgs[0].1.contains("one size"), "{}", msgs[0].1);
    // Short periods are fine with a rate (a burst is at least one
    // packet), not without.
    assert!(Scenario::from_value(&tcp_onoff(json!({ "rate": "200kbps", "on": "0s" }))).is_ok());
    assert_eq!(error_paths(&tcp_onoff(json!({ "on": "0s" }))), ["traffic[0].on"]);
}

#[test]
fn test_sizes_are_bounded_before_anything_is_built() {
    let mut v = dumbbell();
    v["topology"] = json!({ "kind": "chain", "routers": 1_000_000_000_000u64, "links": [], "hosts": [] });
    assert!(errors(&v)[0].1.contains("too many"));
    let mut v = dumbbell();
    v["topology"]["senders"] = json!(100_000);
    assert!(errors(&v)[0].1.contains("too many"));
    let mut v = dumbbell();
    v["traffic"][0]["count"] = json!(4_294_967_296u64);
    assert!(errors(&v)[0].1.contains("too many"));
}

#[test]
fn test_batch_rate_uses_rounded_means() {
    // Exponential batches of mean 3 become max(1, round(X)) packets, of
    // mean 3.1397: the gap is set from that, not from 3.
    let mut v = dumbbell();
    v["traffic"][0] = json!({ "name": "b", "kind": "batch-poisson", "size": "1000B", "rate": "1Mbps",
                              "batch": { "dist": "exponential", "mean": 3 } });
    let sc = Scenario::from_value(&v).unwrap();
    let SourceSpec::Udp(Schedule::Batch {
        gap: Dist::Exponential { mean },
        ..
    }) = &sc.groups[0].source
    else {
        panic!()
    };
    let rounded = 1.0 + (-0.5f64).exp() / (1.0 - (-1.0f64 / 3.0).exp());
    assert!((mean - rounded * 8000.0 / 1e6).abs() < 1e-12);
}

// The JSON Schema made from the declarations

#[test]
fn test_scenario_schema_defines_every_tagged_table_once() {
    let s = scenario_schema();
    let defs = s["$defs"].as_object().unwrap();
    for id in [
        "topology",
        "qdisc",
        "red-queue2",
        "traffic",
        "tcp",
        "trace",
        "dist-time",
        "dist-size",
        "dist-count",
    ] {
        assert!(defs.contains_key(id), "no $defs.{id}");
    }
    assert_eq!(s["title"], "aqmlab scenario");
    assert_eq!(s["required"], json!(["duration", "topology", "traffic"]));
    let kinds = defs["qdisc"]["allOf"].as_array().unwrap();
    assert_eq!(kinds.len(), crate::net::qdisc::QDISC_KINDS.len());
}

#[test]
fn test_onoff_variants_are_told_apart_by_transport() {
    let s = scenario_schema();
    let ifs: Vec<&Value> = s["$defs"]["traffic"]["allOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| &case["if"]["properties"])
        .filter(|cond| cond["kind"]["const"] == "onoff")
        .collect();
    assert_eq!(ifs.len(), 2);
    assert_eq!(ifs[0]["transport"], json!({ "const": "tcp" }));
    assert_eq!(ifs[1]["transport"], json!({ "not": { "const": "tcp" } }));
}

#[test]
fn test_markdown_lists_each_table_once_distributions_last() {
    let md = scenario_markdown();
    assert_eq!(md.matches("**queue discipline**").count(), 1);
    assert!(md.starts_with("**scenario**"));
    let last = md.rfind("\n**").unwrap();
    assert!(md[last..].starts_with("\n**distribution**"), "{}", &md[last..last + 40]);
}

#[test]
fn test_paced_tcp_application_has_the_udp_onoff_schedule() {
    // A rate-limited TCP ON/OFF application sends on the UDP `onoff`
    // schedule of the same rate, payload and periods; plain TCP groups
    // (unlimited data while ON included) have none.
    use crate::transport::udp::Schedule;
    let (on, off) = (Dist::Exponential { mean: 0.3 }, Dist::Pareto { shape: 1.5, scale: 0.2 });
    let tcp = |rate_bps| SourceSpec::Ftp {
        size_bytes: None,
        payload: Dist::Constant(1000.0),
        tcp: TcpConfig::default(),
        on_off: Some(TcpOnOff {
            on: on.clone(),
            off: off.clone(),
            rate_bps,
        }),
        repeat: None,
    };
    let udp = Schedule::OnOff {
        rate_bps: 200e3,
        size_bytes: 1000,
        on: on.clone(),
        off: off.clone(),
    };
    assert_eq!(tcp(Some(200e3)).schedule(), Some(udp));
    assert_eq!(tcp(None).schedule(), None);
}
