//! Topologies: the dumbbell, the chain and the general graph, compiled into
//! nodes, links and routes.

use super::*;

// ---------------------------------------------------------------------------
// Topologies

pub(super) struct NetBuilder {
    net: NetSpec,
}

impl NetBuilder {
    fn new() -> NetBuilder {
        NetBuilder {
            net: NetSpec {
                nodes: Vec::new(),
                links: Vec::new(),
                next_hop: Vec::new(),
                default_src: Vec::new(),
                default_dst: Vec::new(),
            },
        }
    }

    fn node(&mut self, name: String) -> u32 {
        self.net.nodes.push(NodeSpec { name });
        (self.net.nodes.len() - 1) as u32
    }

    #[allow(clippy::too_many_arguments)]
    fn link(
        &mut self,
        name: String,
        from: u32,
        to: u32,
        info: LinkInfo,
        delay: DelaySpec,
        (qdisc, qdisc_path): (QdiscSpec, String),
        report: Report,
    ) {
        self.net.links.push(LinkSpec {
            name,
            from,
            to,
            rate_bps: info.rate_bps,
            mtu_bytes: info.mtu_bytes,
            delay,
            qdisc,
            qdisc_path,
            report,
        });
    }

    fn finish(mut self, cx: &mut Cx, path: &str) -> Option<NetSpec> {
        if self.net.nodes.len() > MAX_NODES {
            cx.err(
                path,
                format!(
                    "has {} nodes; at most {MAX_NODES} are supported (routes are a table per pair of nodes)",
                    self.net.nodes.len()
                ),
            );
            return None;
        }
        let mut names: Vec<&str> = self.net.links.iter().map(|l| l.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            cx.err(
                path,
                format!("two queues are named \"{}\"; queue names must be unique", w[0]),
            );
            return None;
        }
        let mut nodes: Vec<&str> = self.net.nodes.iter().map(|n| n.name.as_str()).collect();
        nodes.sort_unstable();
        if let Some(w) = nodes.windows(2).find(|w| w[0] == w[1]) {
            cx.err(
                path,
                format!("two nodes are named \"{}\"; node names must be unique", w[0]),
            );
            return None;
        }
        self.net.compute_routes();
        Some(self.net)
    }
}

pub const TOPOLOGY_KINDS: &[&str] = &["dumbbell", "chain", "graph"];

/// The most nodes a topology may have (the route table has one entry per
/// pair of nodes), and the most flows a traffic group may have.
pub const MAX_NODES: usize = 5000;
pub const MAX_FLOWS: u64 = 1_000_000;

/// Every topology, by `kind` (see `schema`).
pub const TOPOLOGY: Tagged = Tagged {
    id: "topology",
    title: "topology",
    tag: &[Key::req("kind", Ty::Choice(TOPOLOGY_KINDS), "the topology")],
    common: &[],
    variants: &[
        Variant {
            name: "dumbbell",
            help: "hosts s0.. -> R1 -> bottleneck -> R2 -> hosts d0..",
            when: None,
            parts: &[DUMBBELL],
        },
        Variant {
            name: "chain",
            help: "routers R0..R(k-1) in a line, with hosts attached",
            when: None,
            parts: &[&[
                Key::req(
                    "routers",
                    Ty::Whole {
                        min: 2,
                        max: MAX_NODES as u64,
                    },
                    "the number of routers R0..Rk in the line",
                ),
                Key::req(
                    "links",
                    Ty::List(&Ty::Table(&CHAIN_LINK)),
                    "a list of { rate, delay, qdisc } tables, one per pair of neighbouring routers",
                ),
                Key::req(
                    "hosts",
                    Ty::List(&Ty::Table(&CHAIN_HOST)),
                    "a list of { name, router, rate, delay } tables",
                ),
            ]],
        },
        Variant {
            name: "graph",
            help: "any nodes and links",
            when: None,
            parts: &[&[
                Key::req("nodes", Ty::List(&Ty::Text), "a list of node names"),
                Key::req(
                    "links",
                    Ty::List(&Ty::Table(&GRAPH_LINK)),
                    "a list of { from, to, rate, delay, qdisc } tables",
                ),
            ]],
        },
    ],
};

pub(super) const HOSTS: Ty = Ty::AnyOf(&[
    Ty::Whole {
        min: 1,
        max: MAX_NODES as u64,
    },
    Ty::NonEmptyList(&Ty::Table(&HOST)),
]);
pub(super) const DUMBBELL: &[Key] = &[
    Key::req(
        "senders",
        HOSTS,
        "the number of hosts or a list of { rate, delay } tables",
    ),
    Key::opt(
        "receivers",
        HOSTS,
        "as many as senders",
        "the receiving hosts, as senders",
    ),
    Key::opt(
        "access_rate",
        Ty::Rate,
        "",
        "the senders' access link rate, for hosts that do not give one",
    ),
    Key::opt(
        "access_delay",
        Ty::Dist(Quantity::Time),
        "",
        "the senders' access link delay, for hosts that do not give one; a distribution is drawn per host",
    ),
    Key::req(
        "bottleneck",
        Ty::Table(&BOTTLENECK),
        "the bottleneck link as { rate = \"10Mbps\", delay = \"50ms\" }",
    ),
    Key::req(
        "qdisc",
        Ty::Tagged(&QDISC),
        "the bottleneck queue discipline as a [topology.qdisc] table with kind and limit",
    ),
    Key::opt(
        "reverse_qdisc",
        Ty::Tagged(&QDISC),
        "droptail, limit \"inf\"",
        "the queue from R2 back to R1",
    ),
    Key::opt(
        "access_qdisc",
        Ty::Tagged(&QDISC),
        "droptail, limit \"inf\"",
        "the queue of every access link, both ways",
    ),
    Key::opt(
        "receiver_rate",
        Ty::Rate,
        "10 x the bottleneck rate",
        "the receivers' access link rate",
    ),
    Key::opt(
        "receiver_delay",
        Ty::Dist(Quantity::Time),
        "\"0.1ms\"",
        "the receivers' access link delay",
    ),
];

/// One dumbbell host in a list of `senders` or `receivers`.
pub const HOST: TableDecl = TableDecl {
    id: "host",
    title: "dumbbell host",
    parts: &[&[
        Key::opt(
            "rate",
            Ty::Rate,
            "access_rate (receivers: receiver_rate)",
            "the host's access link rate",
        ),
        Key::opt(
            "delay",
            Ty::Dist(Quantity::Time),
            "access_delay (receivers: receiver_delay)",
            "the host's access link delay",
        ),
    ]],
};

pub const BOTTLENECK: TableDecl = TableDecl {
    id: "bottleneck",
    title: "dumbbell bottleneck",
    parts: &[
        RATE_DELAY,
        &[Key::opt(
            "name",
            Ty::Text,
            "\"bottleneck\"",
            "the queue's name (the reverse one adds _rev)",
        )],
    ],
};

/// Every link's rate, delay and MTU (see [`read_rate_delay`]).
pub(super) const RATE_DELAY: &[Key] = &[
    Key::req("rate", Ty::Rate, "the link rate, e.g. \"10Mbps\""),
    Key::req("delay", Ty::Time, "the one-way propagation delay, e.g. \"20ms\""),
    Key::opt(
        "mtu",
        Ty::Size,
        "\"1500B\"",
        "the largest packet; CoDel and FQ-CoDel use it",
    ),
];
/// The queues and names of a duplex link of a chain or graph (see [`read_duplex`]).
pub(super) const DUPLEX: &[Key] = &[
    Key::opt(
        "qdisc",
        Ty::Tagged(&QDISC),
        "droptail, limit \"inf\"",
        "the queue at the link's start",
    ),
    Key::opt(
        "reverse_qdisc",
        Ty::Tagged(&QDISC),
        "droptail, limit \"inf\"",
        "the queue of the reverse direction",
    ),
    Key::opt("duplex", Ty::Bool, "true", "add the reverse direction"),
    Key::opt(
        "reverse_name",
        Ty::Text,
        "its ends, e.g. \"R1->R0\"",
        "the reverse queue's name",
    ),
];
pub(super) const LINK_NAME: &[Key] = &[Key::opt(
    "name",
    Ty::Text,
    "its ends, e.g. \"R0->R1\"",
    "the queue's name",
)];

pub const CHAIN_LINK: TableDecl = TableDecl {
    id: "chain-link",
    title: "chain link",
    parts: &[RATE_DELAY, DUPLEX, LINK_NAME],
};

/// A chain host: its `name` also names its link's queue.
pub const CHAIN_HOST: TableDecl = TableDecl {
    id: "chain-host",
    title: "chain host",
    parts: &[
        &[
            Key::req("name", Ty::Text, "the host's name"),
            Key::req(
                "router",
                Ty::Whole {
                    min: 0,
                    max: MAX_NODES as u64,
                },
                "the index of the router it attaches to (0 for R0)",
            ),
        ],
        RATE_DELAY,
        DUPLEX,
    ],
};

pub const GRAPH_LINK: TableDecl = TableDecl {
    id: "graph-link",
    title: "graph link",
    parts: &[
        &[
            Key::req("from", Ty::Text, "a node name"),
            Key::req("to", Ty::Text, "a node name"),
        ],
        RATE_DELAY,
        DUPLEX,
        LINK_NAME,
    ],
};

pub(super) fn read_topology(cx: &mut Cx, v: &Value, path: &str) -> Option<NetSpec> {
    let mut t = Table::new(cx, v, path)?;
    t.declare(TOPOLOGY.tag);
    let kind = t.req(cx, "kind", |v| parse_choice(v, TOPOLOGY_KINDS));
    if let Some(kind) = kind {
        t.declare_parts(TOPOLOGY.variant(kind, |_, _| false).parts);
    }
    let net = match kind {
        Some("dumbbell") => read_dumbbell(cx, &mut t),
        Some("chain") => read_chain(cx, &mut t),
        Some("graph") => read_graph(cx, &mut t),
        Some(_) => unreachable!("parse_choice admits only TOPOLOGY_KINDS"),
        None => None,
    };
    t.finish_if_kind(cx, kind.is_some());
    net
}

/// A link's rate, delay and MTU as `{ rate = ..., delay = ..., mtu = ... }`.
pub(super) struct RateDelay {
    rate_bps: f64,
    delay: Duration,
    mtu_bytes: u32,
}

impl RateDelay {
    fn info(&self) -> LinkInfo {
        LinkInfo {
            rate_bps: self.rate_bps as u64,
            mtu_bytes: self.mtu_bytes,
        }
    }
}

/// The MTU of links that do not set one.
pub const DEFAULT_MTU_BYTES: u32 = 1500;

pub(super) fn read_rate_delay(cx: &mut Cx, t: &mut Table) -> Option<RateDelay> {
    let rate = t.req(cx, "rate", parse_link_rate);
    let delay = t.req(cx, "delay", parse_duration);
    let mtu = t.opt(cx, "mtu", config::parse_packet_size).unwrap_or(DEFAULT_MTU_BYTES);
    Some(RateDelay {
        rate_bps: rate?,
        delay: delay?,
        mtu_bytes: mtu,
    })
}

/// A link rate: a whole number of bits per second, at least 1.
pub(super) fn parse_link_rate(v: &Value) -> Result<f64, String> {
    let r = parse_rate(v)?;
    if r < 1.0 || r.fract() != 0.0 {
        return Err(format!(
            "{} is not a whole number of bits per second; link rates are at least 1bps",
            config::show(v)
        ));
    }
    Ok(r)
}

/// Reads an optional qdisc table; absent, the queue is unlimited drop-tail.
/// `link` is `None` when the link itself is invalid (already reported).
pub(super) fn opt_qdisc(cx: &mut Cx, t: &mut Table, key: &'static str, link: Option<LinkInfo>) -> Option<QdiscSpec> {
    match t.raw(key) {
        Some(q) => QdiscSpec::parse(cx, q, &t.key_path(key), link),
        None => Some(QdiscSpec::unlimited()),
    }
}

/// One end host of a dumbbell: its access link's rate and delay.
pub(super) struct Access {
    rate_bps: f64,
    delay: DelaySpec,
}

/// What a dumbbell's hosts get when they do not say, and the keys of the
/// topology table those values come from.
pub(super) struct HostDefaults {
    count: Option<u64>,
    rate: Option<f64>,
    delay: Option<Dist>,
    rate_key: &'static str,
    delay_key: &'static str,
}

/// Reads `senders` or `receivers`: a count, or a list of `{ rate, delay }`.
pub(super) fn read_hosts(cx: &mut Cx, t: &mut Table, key: &'static str, defaults: HostDefaults) -> Option<Vec<Access>> {
    let HostDefaults {
        count: default_count,
        rate,
        delay,
        rate_key,
        delay_key,
    } = defaults;
    // A global value that is present but invalid has been reported already.
    let (rate_given, delay_given) = (t.has(rate_key), t.has(delay_key));
    let path = t.key_path(key);
    let delay_for = |i: usize, d: &Dist| match d {
        Dist::Constant(s) => DelaySpec::Fixed(Duration::from_secs_f64(*s)),
        other => DelaySpec::Drawn {
            dist: other.clone(),
            stream: format!("topology.{key}[{i}].delay"),
        },
    };
    let missing = |cx: &mut Cx, p: &str, what: &str, global: &str| {
        cx.err(p, format!("missing {what}; give it here or as topology.{global}"))
    };
    match t.raw(key) {
        None | Some(Value::Number(_)) => {
            let n = match t.raw(key) {
                Some(v) => parse_count(v, 1)
                    .and_then(|n| {
                        if n as usize <= MAX_NODES {
                            Ok(n)
                        } else {
                            Err(format!(
                                "{n} hosts is too many; a topology has at most {MAX_NODES} nodes"
                            ))
                        }
                    })
                    .map_err(|m| cx.err(&path, m))
                    .ok()?,
                None => match default_count {
                    Some(n) => n,
                    None => {
                        // Through the table, so that a misspelling of the key replaces this error.
                        t.report_missing(cx, key);
                        return None;
                    }
                },
            };
            let (Some(rate), Some(delay)) = (rate, delay.as_ref()) else {
                if rate.is_none() && !rate_given {
                    missing(cx, &path, "the access rate", rate_key);
                }
                if delay.is_none() && !delay_given {
                    missing(cx, &path, "the access delay", delay_key);
                }
                return None;
            };
            Some(
                (0..n as usize)
                    .map(|i| Access {
                        rate_bps: rate,
                        delay: delay_for(i, delay),
                    })
                    .collect(),
            )
        }
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let p = format!("{path}[{i}]");
                let Some(mut h) = Table::new(cx, item, &p) else {
                    continue;
                };
                h.declare_parts(HOST.parts);
                let r = h.opt(cx, "rate", parse_link_rate).or(rate);
                let d = match h.raw("delay") {
                    Some(dv) => Dist::parse(cx, dv, &h.key_path("delay"), Quantity::Time),
                    None => delay.clone(),
                };
                h.finish(cx);
                match (r, d) {
                    (Some(r), Some(d)) => out.push(Access {
                        rate_bps: r,
                        delay: delay_for(i, &d),
                    }),
                    (r, d) => {
                        if r.is_none() && item.get("rate").is_none() && !rate_given {
                            missing(cx, &format!("{p}.rate"), "the access rate", rate_key);
                        }
                        if d.is_none() && item.get("delay").is_none() && !delay_given {
                            missing(cx, &format!("{p}.delay"), "the access delay", delay_key);
                        }
                    }
                }
            }
            (out.len() == items.len()).then_some(out)
        }
        Some(other) => {
            cx.err(
                &path,
                format!(
                    "expected a number of hosts or a non-empty list of {{ rate, delay }} tables, got {}",
                    config::show(other)
                ),
            );
            None
        }
    }
}

pub(super) fn read_dumbbell(cx: &mut Cx, t: &mut Table) -> Option<NetSpec> {
    let access_rate = t.opt(cx, "access_rate", parse_link_rate);
    let access_delay = t
        .raw("access_delay")
        .and_then(|v| Dist::parse(cx, v, &t.key_path("access_delay"), Quantity::Time));
    let bottleneck = match t.raw("bottleneck") {
        Some(bv) => (|| {
            let mut b = Table::new(cx, bv, &t.key_path("bottleneck"))?;
            b.declare_parts(BOTTLENECK.parts);
            let rd = read_rate_delay(cx, &mut b);
            let name = b.opt(cx, "name", parse_str).unwrap_or_else(|| "bottleneck".to_string());
            b.finish(cx);
            Some((rd?, name))
        })(),
        None => {
            t.report_missing(cx, "bottleneck");
            None
        }
    };
    let bottleneck_info = bottleneck.as_ref().map(|(rd, _)| rd.info());
    let access_info = access_rate.map(|r| LinkInfo {
        rate_bps: r as u64,
        mtu_bytes: DEFAULT_MTU_BYTES,
    });
    let qdisc = match t.raw("qdisc") {
        Some(q) => QdiscSpec::parse(cx, q, &t.key_path("qdisc"), bottleneck_info),
        None => {
            t.report_missing(cx, "qdisc");
            None
        }
    };
    let reverse_qdisc = opt_qdisc(cx, t, "reverse_qdisc", bottleneck_info);
    let access_qdisc = opt_qdisc(cx, t, "access_qdisc", access_info);
    let senders = read_hosts(
        cx,
        t,
        "senders",
        HostDefaults {
            count: None,
            rate: access_rate,
            delay: access_delay,
            rate_key: "access_rate",
            delay_key: "access_delay",
        },
    );
    let (bottleneck, bname) = bottleneck?;
    let receiver_rate = t
        .opt(cx, "receiver_rate", parse_link_rate)
        .unwrap_or(bottleneck.rate_bps * 10.0);
    let receiver_delay = t
        .raw("receiver_delay")
        .and_then(|v| Dist::parse(cx, v, &t.key_path("receiver_delay"), Quantity::Time))
        .unwrap_or(Dist::Constant(1e-4));
    let senders = senders?;
    let receivers = read_hosts(
        cx,
        t,
        "receivers",
        HostDefaults {
            count: Some(senders.len() as u64),
            rate: Some(receiver_rate),
            delay: Some(receiver_delay),
            rate_key: "receiver_rate",
            delay_key: "receiver_delay",
        },
    )?;
    let (qdisc, reverse_qdisc, access_qdisc) = (qdisc?, reverse_qdisc?, access_qdisc?);

    let access_path = t.key_path("access_qdisc");
    let mut b = NetBuilder::new();
    let r1 = b.node("R1".to_string());
    let r2 = b.node("R2".to_string());
    b.link(
        bname.clone(),
        r1,
        r2,
        bottleneck.info(),
        DelaySpec::Fixed(bottleneck.delay),
        (qdisc, t.key_path("qdisc")),
        Report::Always,
    );
    b.link(
        format!("{bname}_rev"),
        r2,
        r1,
        bottleneck.info(),
        DelaySpec::Fixed(bottleneck.delay),
        (reverse_qdisc, t.key_path("reverse_qdisc")),
        Report::Always,
    );
    // Each host's access link: the same rate, delay and queue both ways.
    let access = |b: &mut NetBuilder, host: String, router: u32, rate_bps: f64, delay: &DelaySpec, inbound: bool| {
        let h = b.node(host.clone());
        let rname = b.net.nodes[router as usize].name.clone();
        let info = LinkInfo {
            rate_bps: rate_bps as u64,
            mtu_bytes: DEFAULT_MTU_BYTES,
        };
        let (up, down) = (
            (format!("{host}->{rname}"), h, router),
            (format!("{rname}->{host}"), router, h),
        );
        let (first, second) = if inbound { (down, up) } else { (up, down) };
        for (name, from, to) in [first, second] {
            b.link(
                name,
                from,
                to,
                info,
                delay.clone(),
                (access_qdisc.clone(), access_path.clone()),
                Report::IfDropped,
            );
        }
        h
    };
    for (i, s) in senders.iter().enumerate() {
        let h = access(&mut b, format!("s{i}"), r1, s.rate_bps, &s.delay, false);
        b.net.default_src.push(h);
    }
    for (i, d) in receivers.iter().enumerate() {
        let h = access(&mut b, format!("d{i}"), r2, d.rate_bps, &d.delay, true);
        b.net.default_dst.push(h);
    }
    b.finish(cx, &t.path)
}

/// Reads one duplex link entry of a chain or graph and adds both directions.
pub(super) fn read_duplex(
    cx: &mut Cx,
    item: &Value,
    (path, decl): (&str, &'static TableDecl),
    b: &mut NetBuilder,
    ends: impl FnOnce(&mut Cx, &mut Table, &mut NetBuilder) -> Option<(u32, u32)>,
    report: Report,
) {
    let Some(mut l) = Table::new(cx, item, path) else {
        return;
    };
    l.declare_parts(decl.parts);
    let e = ends(cx, &mut l, b);
    let rd = read_rate_delay(cx, &mut l);
    let info = rd.as_ref().map(RateDelay::info);
    let qdisc = opt_qdisc(cx, &mut l, "qdisc", info);
    let reverse_qdisc = opt_qdisc(cx, &mut l, "reverse_qdisc", info);
    let duplex = l.opt(cx, "duplex", parse_bool).unwrap_or(true);
    let name = l.opt(cx, "name", parse_str);
    let reverse_name = l.opt(cx, "reverse_name", parse_str);
    l.finish(cx);
    let (Some((from, to)), Some(rd), Some(q), Some(rq)) = (e, rd, qdisc, reverse_qdisc) else {
        return;
    };
    let fname = b.net.nodes[from as usize].name.clone();
    let tname = b.net.nodes[to as usize].name.clone();
    let name = name.unwrap_or_else(|| format!("{fname}->{tname}"));
    let qpath = (q, format!("{path}.qdisc"));
    b.link(name, from, to, rd.info(), DelaySpec::Fixed(rd.delay), qpath, report);
    if duplex {
        let rname = reverse_name.unwrap_or_else(|| format!("{tname}->{fname}"));
        let rqpath = (rq, format!("{path}.reverse_qdisc"));
        b.link(rname, to, from, rd.info(), DelaySpec::Fixed(rd.delay), rqpath, report);
    }
}

pub(super) fn node_ref(cx: &mut Cx, t: &mut Table, key: &'static str, b: &NetBuilder) -> Option<u32> {
    let name = t.req(cx, key, parse_str)?;
    let idx = b.net.node_index(&name);
    if idx.is_none() {
        let all: Vec<&str> = b.net.nodes.iter().map(|n| n.name.as_str()).collect();
        cx.err(
            &t.key_path(key),
            format!("no node is named \"{name}\"; nodes: {}", config::quoted(&all)),
        );
    }
    idx
}

/// A required list; its declaration's help says what it is a list of.
pub(super) fn read_list<'v>(cx: &mut Cx, t: &mut Table<'v>, key: &'static str) -> Option<&'v Vec<Value>> {
    match t.raw(key) {
        Some(Value::Array(items)) => Some(items),
        Some(other) => {
            let what = t.declared_key(key).map_or("a list", |k| k.help);
            cx.err(
                &t.key_path(key),
                format!("expected {what}, got {}", config::show(other)),
            );
            None
        }
        None => {
            t.report_missing(cx, key);
            None
        }
    }
}

pub(super) fn read_chain(cx: &mut Cx, t: &mut Table) -> Option<NetSpec> {
    let routers = t.req(cx, "routers", |v| {
        parse_count(v, 2).and_then(|n| {
            if n as usize <= MAX_NODES {
                Ok(n)
            } else {
                Err(format!(
                    "{n} routers is too many; a topology has at most {MAX_NODES} nodes"
                ))
            }
        })
    })?;
    let links = read_list(cx, t, "links")?;
    let hosts = read_list(cx, t, "hosts")?;
    if links.len() as u64 != routers - 1 {
        cx.err(
            &t.key_path("links"),
            format!(
                "has {} entries; a chain of {routers} routers needs {}",
                links.len(),
                routers - 1
            ),
        );
        return None;
    }
    let mut b = NetBuilder::new();
    for r in 0..routers {
        b.node(format!("R{r}"));
    }
    for (i, item) in links.iter().enumerate() {
        read_duplex(
            cx,
            item,
            (&format!("{}[{i}]", t.key_path("links")), &CHAIN_LINK),
            &mut b,
            |_, _, _| Some((i as u32, i as u32 + 1)),
            Report::Always,
        );
    }
    for (i, item) in hosts.iter().enumerate() {
        let path = format!("{}[{i}]", t.key_path("hosts"));
        read_duplex(
            cx,
            item,
            (&path, &CHAIN_HOST),
            &mut b,
            |cx, h, b| {
                let name = h.req(cx, "name", parse_str);
                let router = h.req(cx, "router", |v| {
                    parse_count(v, 0).and_then(|r| {
                        if r < routers {
                            Ok(r as u32)
                        } else {
                            Err(format!("expected a router index in 0..{}, got {r}", routers - 1))
                        }
                    })
                });
                let name = name?;
                if b.net.node_index(&name).is_some() {
                    cx.err(&h.key_path("name"), format!("\"{name}\" is already a node's name"));
                    return None;
                }
                let router = router?;
                Some((b.node(name), router))
            },
            Report::IfDropped,
        );
    }
    b.finish(cx, &t.path)
}

pub(super) fn read_graph(cx: &mut Cx, t: &mut Table) -> Option<NetSpec> {
    let nodes = read_list(cx, t, "nodes")?;
    let links = read_list(cx, t, "links")?;
    let mut b = NetBuilder::new();
    for (i, n) in nodes.iter().enumerate() {
        match parse_str(n) {
            Ok(name) => {
                b.node(name);
            }
            Err(m) => cx.err(&format!("{}[{i}]", t.key_path("nodes")), m),
        }
    }
    for (i, item) in links.iter().enumerate() {
        read_duplex(
            cx,
            item,
            (&format!("{}[{i}]", t.key_path("links")), &GRAPH_LINK),
            &mut b,
            |cx, l, b| {
                let from = node_ref(cx, l, "from", b);
                let to = node_ref(cx, l, "to", b);
                let (from, to) = (from?, to?);
                if from == to {
                    cx.err(&l.key_path("to"), "a link must join two different nodes");
                    return None;
                }
                Some((from, to))
            },
            Report::Always,
        );
    }
    b.finish(cx, &t.path)
}
