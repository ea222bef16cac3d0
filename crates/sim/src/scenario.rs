//! The scenario schema: reading and validating a scenario, and compiling its
//! topology into nodes, links and routes.
//!
//! A [`Scenario`] that exists is valid: every key was known, every value in
//! range, every name resolved and every flow routable. Random choices (an
//! access delay drawn from a distribution) are left for the run, because they
//! depend on the seed.

use aqmlab_qdisc::{Duration, LinkInfo};
use serde_json::Value;

pub use crate::config::ConfigError;
use crate::config::{
    self, join, parse_bool, parse_choice, parse_count, parse_duration, parse_rate, parse_str, Cx, Table,
};
use crate::dist::{Dist, Quantity};
pub use crate::qdiscs::QdiscSpec;
use crate::qdiscs::QDISC;
use crate::schema::{Key, TableDecl, Tagged, Ty, Variant};
use crate::tcp::config::TCP;
use crate::tcp::{RtoConfig, TcpConfig};

#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub duration: Duration,
    pub warmup: Duration,
    pub seed: u64,
    pub trace: Option<TraceSpec>,
    pub net: NetSpec,
    pub groups: Vec<GroupSpec>,
    /// Traffic class labels, indexed by `Packet::class`.
    pub classes: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct TraceSpec {
    pub interval: Duration,
    /// Indices of the links whose queues are sampled.
    pub links: Vec<u32>,
    /// TCP flows whose cwnd, ssthresh, srtt and RTO are sampled, as
    /// (global flow index, name `group[j]`).
    pub flows: Vec<(u32, String)>,
}

#[derive(Clone, Debug)]
pub struct NodeSpec {
    pub name: String,
}

/// A link's propagation delay: fixed, or drawn once per run from a stream.
#[derive(Clone, Debug)]
pub enum DelaySpec {
    Fixed(Duration),
    /// Drawn from `dist` with the stream `stream`; links that share a stream
    /// name (the two directions of one access link) get the same delay.
    Drawn {
        dist: Dist,
        stream: String,
    },
}

/// Whether a queue appears in the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    Always,
    /// Access links: reported only if they dropped something, so that no
    /// drop is ever hidden.
    IfDropped,
}

#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub mtu_bytes: u32,
    pub delay: DelaySpec,
    pub qdisc: QdiscSpec,
    /// The key path of the table that configured `qdisc` (e.g.
    /// `topology.links[2].reverse_qdisc`), for messages about it after
    /// validation (such as what an ns-2 export cannot express).
    pub qdisc_path: String,
    pub report: Report,
}

impl LinkSpec {
    pub fn info(&self) -> LinkInfo {
        LinkInfo {
            rate_bps: self.rate_bps,
            mtu_bytes: self.mtu_bytes,
        }
    }
}

#[derive(Clone, Debug)]
pub struct NetSpec {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// `next_hop[node * nodes.len() + dst]`: the link a packet at `node`
    /// addressed to `dst` leaves on, or `NO_ROUTE`.
    pub next_hop: Vec<u32>,
    /// Where traffic groups send from and to when they do not say: the
    /// dumbbell's sender and receiver hosts; empty for other topologies.
    pub default_src: Vec<u32>,
    pub default_dst: Vec<u32>,
}

pub const NO_ROUTE: u32 = u32::MAX;

impl NetSpec {
    pub fn route(&self, node: u32, dst: u32) -> u32 {
        self.next_hop[node as usize * self.nodes.len() + dst as usize]
    }

    /// The links a packet from `src` to `dst` crosses, in order.
    pub fn path(&self, src: u32, dst: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut at = src;
        while at != dst {
            let l = self.route(at, dst);
            out.push(l);
            at = self.links[l as usize].to;
        }
        out
    }

    fn node_index(&self, name: &str) -> Option<u32> {
        self.nodes.iter().position(|n| n.name == name).map(|i| i as u32)
    }

    /// Static shortest paths by hop count; among equal next hops the lower
    /// node index wins, then the lower link index. One breadth-first search
    /// per destination over the reversed links: O(N (N + L)).
    fn compute_routes(&mut self) {
        let n = self.nodes.len();
        let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut outgoing: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, l) in self.links.iter().enumerate() {
            incoming[l.to as usize].push(i);
            outgoing[l.from as usize].push(i);
        }
        let mut next_hop = vec![NO_ROUTE; n * n];
        let mut dist = vec![usize::MAX; n];
        for dst in 0..n {
            dist.fill(usize::MAX);
            dist[dst] = 0;
            let mut frontier = vec![dst];
            while !frontier.is_empty() {
                let mut next = Vec::new();
                for &v in &frontier {
                    for &l in &incoming[v] {
                        let u = self.links[l].from as usize;
                        if dist[u] == usize::MAX {
                            dist[u] = dist[v] + 1;
                            next.push(u);
                        }
                    }
                }
                frontier = next;
            }
            for u in 0..n {
                if u == dst || dist[u] == usize::MAX {
                    continue;
                }
                let best = outgoing[u]
                    .iter()
                    .filter(|&&l| dist[self.links[l].to as usize] == dist[u] - 1)
                    .min_by_key(|&&l| (self.links[l].to, l));
                next_hop[u * n + dst] = best.map_or(NO_ROUTE, |&l| l as u32);
            }
        }
        self.next_hop = next_hop;
    }
}

// ---------------------------------------------------------------------------
// Traffic

#[derive(Clone, Debug)]
pub enum SourceSpec {
    /// Constant bit rate; `jitter` adds a uniform +-50% of the interval to
    /// each gap, as ns-2's `random_`.
    Cbr {
        rate_bps: f64,
        size_bytes: u32,
        jitter: bool,
    },
    /// Poisson packet arrivals at a mean bit rate.
    Poisson { rate_bps: f64, size: Dist },
    /// Batches of `batch` packets separated by `gap`.
    Batch { gap: Dist, batch: Dist, size: Dist },
    /// ns-2's Pareto/Exponential ON/OFF source: bursts sent at `rate_bps`.
    OnOff {
        rate_bps: f64,
        size_bytes: u32,
        on: Dist,
        off: Dist,
    },
    /// Bulk TCP: unlimited data, or `size_bytes` then done. Each data packet
    /// carries a payload drawn from `payload` (bytes) plus the TCP header.
    Ftp {
        size_bytes: Option<u64>,
        payload: Dist,
        tcp: TcpConfig,
        /// ON/OFF over TCP (the BLUE study's sources): see [`TcpOnOff`].
        on_off: Option<TcpOnOff>,
        /// Repeated transfers (`file`): each of a size drawn from the first
        /// distribution (bytes), on a new connection, the next one starting
        /// a gap drawn from the second (seconds) after the previous one is
        /// delivered.
        repeat: Option<(Dist, Dist)>,
    },
    /// HTTP/1.0 web sessions (ns-2's PagePool/WebTraf): `count` sessions,
    /// each object a request (client -> server) and a response of
    /// `object_size` packets of `payload_bytes` (server -> client). Servers
    /// are the group's `src` hosts, clients its `dst` hosts. `response`
    /// says how the two travel.
    Web {
        params: crate::web::WebParams,
        payload_bytes: u32,
        tcp: TcpConfig,
        response: crate::web::WebResponse,
    },
    /// Persistent HTTP/1.1 clients: flow j is a client at `dst[j]` with one
    /// connection to its server at `src[j]`, repeating a request, a
    /// response and a think time.
    Http11 {
        params: crate::web::Http11Params,
        payload_bytes: u32,
        tcp: TcpConfig,
    },
}

/// The application of an `onoff` group over TCP.
///
/// Without `rate_bps`, the application has unlimited data during ON periods
/// (drawn from `on`) and none during OFF periods (from `off`); it starts ON.
///
/// With `rate_bps`, it is ns-2.35's `Application/Traffic/Pareto` (or
/// `/Exponential`) attached to a TCP agent: the application generates
/// packets on the schedule of the UDP `onoff` source (bursts of
/// round(on / interval) packets, at least 1, `interval` = payload x 8 /
/// rate apart, each burst's first packet an OFF period plus an interval
/// after the previous burst's last one, the first burst one OFF period plus
/// an interval after the start), and hands each packet to the TCP sender,
/// which sends it when its window allows (ns-2's `sendmsg`: the send limit
/// grows by one packet). What the window holds back waits in the sender,
/// so a burst may leave later and stretch over a longer time than the
/// application took to make it, but the schedule never waits for TCP: the
/// OFF period runs from the last packet generated, not from the last one
/// sent. The connection opens (SYN) with the first packet generated, as
/// ns-2's agent sends nothing before it has data. The application's packets
/// are the TCP payload (`packet_size`, one size), so the rate counts
/// payload bits, as ns-2's `rate_` with the application's `packetSize_`
/// equal to the agent's.
#[derive(Clone, Debug)]
pub struct TcpOnOff {
    pub on: Dist,
    pub off: Dist,
    pub rate_bps: Option<f64>,
}

/// Traffic classes: the RED+Tail classifier and per-class metrics use them.
pub const CLASSES: &[&str] = &["bulk", "realtime"];

/// The payload of a TCP data packet when a group does not say (spec:
/// 1460 B plus the 40 B header).
pub const DEFAULT_TCP_PAYLOAD_BYTES: f64 = 1460.0;

/// The largest TCP payload (an IPv4 datagram's 65535 B less 40 B of
/// headers). Drawn payloads are capped at it.
pub const MAX_TCP_PAYLOAD_BYTES: u32 = 65_495;

/// The most data packets a finite TCP transfer may have.
pub const MAX_TRANSFER_PKTS: f64 = 1e8;

pub const TRAFFIC_KINDS: &[&str] = &[
    "ftp",
    "file",
    "web",
    "http11",
    "cbr",
    "poisson",
    "batch-poisson",
    "onoff",
];

/// Every traffic group, by `kind` (see `schema`): [`read_group`] reads
/// the common keys, [`read_source`] exactly its kind's.
pub const TRAFFIC: Tagged = Tagged {
    id: "traffic",
    title: "traffic group",
    tag: &[Key::req("kind", Ty::Choice(TRAFFIC_KINDS), "the traffic model")],
    common: GROUP,
    variants: &[
        Variant {
            name: "ftp",
            help: "bulk TCP",
            when: None,
            parts: &[&[Key::opt("size", Ty::Size, "unlimited", "a finite transfer of this many bytes")], TCP_APP],
        },
        Variant {
            name: "file",
            help: "repeated TCP transfers, each on a new connection",
            when: None,
            parts: &[
                &[
                    Key::req(
                        "size",
                        Ty::Dist(Quantity::Bytes),
                        "the size of each transfer, e.g. \"100KB\", or a size distribution",
                    ),
                    Key::req(
                        "gap",
                        Ty::Dist(Quantity::Time),
                        "the time from one transfer's end to the next one's start, e.g. \"1s\"",
                    ),
                ],
                TCP_APP,
            ],
        },
        Variant { name: "web", help: "HTTP/1.0 web sessions as ns-2's PagePool/WebTraf", when: None, parts: &[WEB, TCP_APP] },
        Variant {
            name: "http11",
            help: "persistent HTTP/1.1 clients",
            when: None,
            parts: &[
                &[
                    Key::opt(
                        "response_size",
                        Ty::Dist(Quantity::Bytes),
                        "Pareto, scale 2.3KB, shape 1.3",
                        "the size of each response",
                    ),
                    Key::opt("think", Ty::Dist(Quantity::Time), "exponential, mean 50s", "the think time after a response"),
                ],
                TCP_APP,
            ],
        },
        Variant {
            name: "cbr",
            help: "constant bit rate over UDP",
            when: None,
            parts: &[&[
                Key::req("rate", Ty::Rate, "the sending rate, e.g. \"1Mbps\""),
                Key::req("size", Ty::Size, "the packet size, e.g. \"1000B\""),
                Key::opt("jitter", Ty::Bool, "false", "each gap is the interval +-50% uniform, as ns-2's random_"),
            ]],
        },
        Variant {
            name: "poisson",
            help: "Poisson packet arrivals over UDP",
            when: None,
            parts: &[&[Key::req("rate", Ty::Rate, "the mean sending rate, e.g. \"9Mbps\"")], PACKET_SIZES],
        },
        Variant {
            name: "batch-poisson",
            help: "batches of packets arriving at once; give rate or gap",
            when: None,
            parts: &[
                &[Key::req(
                    "batch",
                    Ty::Dist(Quantity::Count),
                    "the number of packets per batch, e.g. 3, or a count distribution",
                )],
                PACKET_SIZES,
                &[
                    Key::opt("rate", Ty::Rate, "", "the mean bit rate, for Poisson batch times"),
                    Key::opt("gap", Ty::Dist(Quantity::Time), "", "the time between batches, instead of rate"),
                ],
            ],
        },
        Variant {
            name: "onoff",
            help: "TCP with data only during ON periods",
            when: Some(("transport", "tcp")),
            parts: &[
                ON_OFF,
                &[Key::opt(
                    "rate",
                    Ty::Rate,
                    "",
                    "the application's rate during ON periods (ns-2's Application/Traffic on TCP); without it, unlimited data",
                )],
                TCP_APP,
            ],
        },
        Variant {
            name: "onoff",
            help: "ON/OFF packets over UDP (transport \"udp\" or absent)",
            when: None,
            parts: &[
                ON_OFF,
                &[
                    Key::req("rate", Ty::Rate, "the sending rate during ON periods, e.g. \"64kbps\""),
                    Key::req("size", Ty::Size, "the packet size, e.g. \"210B\""),
                ],
            ],
        },
    ],
};

/// The keys of a `[[traffic]]` group of any kind, besides `kind`.
const GROUP: &[Key] = &[
    Key::req("name", Ty::Text, "a unique name for the group"),
    Key::opt(
        "count",
        Ty::Whole { min: 1, max: MAX_FLOWS },
        "1",
        "the number of flows (web: sessions)",
    ),
    Key::opt(
        "src",
        ENDPOINTS,
        "the dumbbell's senders",
        "the node or nodes flows send from, used round-robin",
    ),
    Key::opt(
        "dst",
        ENDPOINTS,
        "the dumbbell's receivers",
        "the node or nodes flows send to, used round-robin",
    ),
    Key::opt(
        "start",
        Ty::Dist(Quantity::Time),
        "uniform on [0, 1s]",
        "when each flow starts",
    ),
    Key::opt("stop", Ty::Time, "", "when the flows stop (not for TCP groups)"),
    Key::opt(
        "ted_deadline",
        Ty::Time,
        "",
        "the deadline of the group's packets at TED queues",
    ),
    Key::opt(
        "class",
        Ty::Choice(CLASSES),
        "\"bulk\" for TCP ftp, file and onoff, else \"realtime\"",
        "the traffic class, for per-class metrics and red-tail",
    ),
];
const ENDPOINTS: Ty = Ty::AnyOf(&[Ty::Text, Ty::NonEmptyList(&Ty::Text)]);

/// The keys every TCP application has (see [`read_tcp_app`]).
const TCP_APP: &[Key] = &[
    Key::opt(
        "packet_size",
        Ty::Dist(Quantity::Bytes),
        "\"1460B\"",
        "the payload of each data packet, at most 65495B (web, http11 and onoff with rate: one size)",
    ),
    Key::opt(
        "tcp",
        Ty::Table(&TCP),
        "ns-2.35's, rwnd 10000pkt",
        "the TCP sender's and sink's parameters",
    ),
];
const PACKET_SIZES: &[Key] = &[Key::req(
    "size",
    Ty::Dist(Quantity::Bytes),
    "the packet size, e.g. \"1000B\" or a size distribution",
)];
const ON_OFF: &[Key] = &[
    Key::opt(
        "transport",
        Ty::Choice(&["udp", "tcp"]),
        "\"udp\"",
        "what carries the packets",
    ),
    Key::req(
        "on",
        Ty::Dist(Quantity::Time),
        "the ON period length distribution, e.g. { dist = \"pareto\", shape = 1.5, mean = \"500ms\" }",
    ),
    Key::req(
        "off",
        Ty::Dist(Quantity::Time),
        "the OFF period length distribution, e.g. { dist = \"pareto\", shape = 1.5, mean = \"500ms\" }",
    ),
];
const WEB: &[Key] = &[
    Key::opt(
        "pages_per_session",
        Ty::Dist(Quantity::Count),
        "250",
        "pages per session",
    ),
    Key::opt(
        "inter_page",
        Ty::Dist(Quantity::Time),
        "exponential, mean 15s",
        "from a page's end to the next page",
    ),
    Key::opt("objects_per_page", Ty::Dist(Quantity::Count), "1", "objects per page"),
    Key::opt(
        "inter_object",
        Ty::Dist(Quantity::Time),
        "exponential, mean 10ms",
        "between a page's object launches",
    ),
    Key::opt(
        "object_size",
        Ty::Dist(Quantity::Count),
        "pareto2, mean 12, shape 1.2",
        "the response size in packets",
    ),
    Key::opt(
        "replace",
        Ty::Bool,
        "true",
        "a finished session is replaced, so that count stay active",
    ),
    Key::opt(
        "response",
        Ty::Choice(crate::web::WebResponse::NAMES),
        "\"new-connection\"",
        "whether a response travels on a connection of its own or on the request's",
    ),
];

impl SourceSpec {
    pub fn kind(&self) -> &'static str {
        match self {
            SourceSpec::Cbr { .. } => "cbr",
            SourceSpec::Poisson { .. } => "poisson",
            SourceSpec::Batch { .. } => "batch-poisson",
            SourceSpec::OnOff { .. } => "onoff",
            SourceSpec::Ftp { on_off: Some(_), .. } => "onoff",
            SourceSpec::Ftp { repeat: Some(_), .. } => "file",
            SourceSpec::Ftp { .. } => "ftp",
            SourceSpec::Web { .. } => "web",
            SourceSpec::Http11 { .. } => "http11",
        }
    }

    pub fn is_tcp(&self) -> bool {
        matches!(
            self,
            SourceSpec::Ftp { .. } | SourceSpec::Web { .. } | SourceSpec::Http11 { .. }
        )
    }
}

#[derive(Clone, Debug)]
pub struct GroupSpec {
    pub name: String,
    pub source: SourceSpec,
    pub count: u32,
    /// Flow j sends from `src[j % src.len()]` to `dst[j % dst.len()]`.
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub start: Dist,
    pub stop: Option<Duration>,
    pub class: u8,
    /// Deadline for time-driven early discard queues on the path.
    pub ted_deadline: Option<Duration>,
}

impl GroupSpec {
    pub fn endpoints(&self, j: u32) -> (u32, u32) {
        (
            self.src[j as usize % self.src.len()],
            self.dst[j as usize % self.dst.len()],
        )
    }
}

// ---------------------------------------------------------------------------
// Reading a scenario

impl Scenario {
    /// Reads and validates a scenario from its JSON form (the TOML file as a
    /// JSON tree). Returns every problem found, not only the first.
    pub fn from_json(text: &str) -> Result<Scenario, Vec<ConfigError>> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            vec![ConfigError {
                path: String::new(),
                message: format!("not a valid scenario document: {e}"),
            }]
        })?;
        Scenario::from_value(&v)
    }

    pub fn from_value(v: &Value) -> Result<Scenario, Vec<ConfigError>> {
        let mut cx = Cx::default();
        let sc = read_scenario(&mut cx, v);
        match sc {
            Some(sc) if cx.errors.is_empty() => Ok(sc),
            _ => {
                if cx.errors.is_empty() {
                    cx.err("", "invalid scenario");
                }
                Err(cx.errors)
            }
        }
    }

    /// Length of the measurement window [warmup, duration].
    pub fn window(&self) -> Duration {
        Duration(self.duration.0 - self.warmup.0)
    }
}

/// The keys of a scenario file's top level (see `schema`).
pub const SCENARIO: TableDecl = TableDecl {
    id: "scenario",
    title: "scenario",
    parts: &[&[
        Key::opt("name", Ty::Text, "\"scenario\"", "the scenario's name, for reports"),
        Key::req("duration", Ty::Time, "the simulated time, e.g. \"100s\""),
        Key::opt("warmup", Ty::Time, "\"0s\"", "measurements cover [warmup, duration]"),
        Key::opt(
            "seed",
            Ty::Whole { min: 0, max: u64::MAX },
            "1",
            "the run's seed; --seed overrides it",
        ),
        Key::req(
            "topology",
            Ty::Tagged(&TOPOLOGY),
            "a [topology] table with kind = \"dumbbell\", \"chain\" or \"graph\"",
        ),
        Key::opt("trace", Ty::Table(&TRACE), "", "time series to sample"),
        Key::req(
            "traffic",
            Ty::NonEmptyList(&Ty::Tagged(&TRAFFIC)),
            "at least one [[traffic]] group is needed",
        ),
    ]],
};

pub const TRACE: TableDecl = TableDecl {
    id: "trace",
    title: "trace",
    parts: &[&[
        Key::req("interval", Ty::Time, "the sampling interval, e.g. \"100ms\""),
        Key::opt(
            "queues",
            Ty::List(&Ty::Text),
            "every queue the result reports",
            "the queues whose backlog and discipline state are sampled",
        ),
        Key::opt(
            "flows",
            Ty::List(&Ty::Text),
            "",
            "TCP flows whose cwnd, ssthresh, srtt and RTO are sampled, e.g. [\"ftp[0]\"]",
        ),
    ]],
};

fn read_scenario(cx: &mut Cx, v: &Value) -> Option<Scenario> {
    let mut t = Table::new(cx, v, "")?;
    t.declare_parts(SCENARIO.parts);
    let name = t.opt(cx, "name", parse_str).unwrap_or_else(|| "scenario".to_string());
    let duration = t.req(cx, "duration", parse_duration);
    let warmup = t.opt(cx, "warmup", parse_duration).unwrap_or(Duration::ZERO);
    let seed = t.opt(cx, "seed", |v| parse_count(v, 0)).unwrap_or(1);
    let net = match t.raw("topology") {
        Some(tv) => read_topology(cx, tv, "topology"),
        None => {
            t.report_missing(cx, "topology");
            None
        }
    };
    let trace_v = t.raw("trace");
    let traffic_v = t.raw("traffic");
    if traffic_v.is_none() {
        t.report_missing(cx, "traffic");
    }
    t.finish(cx);

    let duration = duration?;
    if duration == Duration::ZERO {
        cx.err("duration", "must be longer than 0s");
    }
    // A zero duration is reported above; the warmup is judged against a real one.
    if duration > Duration::ZERO && warmup >= duration {
        cx.err(
            "warmup",
            format!(
                "must be shorter than duration ({}s), got {}s",
                duration.as_secs_f64(),
                warmup.as_secs_f64()
            ),
        );
    }
    let mut classes: Vec<String> = Vec::new();
    let groups = match traffic_v {
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut groups = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let name = item.get("name").and_then(Value::as_str);
                if let Some(n) = name.filter(|n| {
                    items[..i]
                        .iter()
                        .any(|o| o.get("name").and_then(Value::as_str) == Some(n))
                }) {
                    cx.err(
                        &format!("traffic[{i}].name"),
                        format!("\"{n}\" is used by another traffic group; names must be unique"),
                    );
                }
                if let Some(g) = read_group(cx, item, &format!("traffic[{i}]"), net.as_ref(), &mut classes) {
                    groups.push(g);
                }
            }
            groups
        }
        None => Vec::new(),
        Some(Value::Array(_)) => {
            cx.err("traffic", "is empty; at least one [[traffic]] group is needed");
            Vec::new()
        }
        Some(other) => {
            cx.err(
                "traffic",
                format!("expected a list of [[traffic]] tables, got {}", config::show(other)),
            );
            Vec::new()
        }
    };
    // Traffic is read even when the topology is broken, so that its problems
    // are reported too; with no network there is nothing more to check.
    let net = net?;
    let trace = trace_v.and_then(|tv| read_trace(cx, tv, &net, &groups));
    Some(Scenario {
        name,
        duration,
        warmup,
        seed,
        trace,
        net,
        groups,
        classes,
    })
}

fn read_trace(cx: &mut Cx, v: &Value, net: &NetSpec, groups: &[GroupSpec]) -> Option<TraceSpec> {
    let mut t = Table::new(cx, v, "trace")?;
    t.declare_parts(TRACE.parts);
    let interval = t.req(cx, "interval", parse_duration);
    let queues = t.opt(cx, "queues", |v| {
        let names = v
            .as_array()
            .ok_or_else(|| format!("expected a list of queue names, got {}", config::show(v)))?;
        names.iter().map(parse_str).collect::<Result<Vec<_>, _>>()
    });
    let flow_names = t.opt(cx, "flows", |v| {
        let names = v.as_array().ok_or_else(|| {
            format!(
                "expected a list of TCP flows such as [\"ftp[0]\"], got {}",
                config::show(v)
            )
        })?;
        names.iter().map(parse_str).collect::<Result<Vec<_>, _>>()
    });
    t.finish(cx);
    let mut flows = Vec::new();
    for (i, name) in flow_names.unwrap_or_default().into_iter().enumerate() {
        let found = name
            .strip_suffix(']')
            .and_then(|n| n.split_once('['))
            .and_then(|(g, j)| {
                let j: u32 = j.parse().ok()?;
                let mut first = 0;
                for group in groups {
                    if group.name == g {
                        return (j < group.count && group.source.is_tcp()).then_some(first + j);
                    }
                    first += group.count;
                }
                None
            });
        match found {
            Some(f) => flows.push((f, name)),
            None => cx.err(
                &format!("trace.flows[{i}]"),
                format!("\"{name}\" is not a TCP flow; write \"<group>[<j>]\" with j below the group's count"),
            ),
        }
    }
    let interval = interval?;
    if interval == Duration::ZERO {
        cx.err("trace.interval", "must be longer than 0s");
        return None;
    }
    let links = match queues {
        None => (0..net.links.len() as u32)
            .filter(|&l| net.links[l as usize].report == Report::Always)
            .collect(),
        Some(names) => {
            let mut links = Vec::new();
            for (i, n) in names.iter().enumerate() {
                match net.links.iter().position(|l| &l.name == n) {
                    Some(l) => links.push(l as u32),
                    None => {
                        let all: Vec<&str> = net.links.iter().map(|l| l.name.as_str()).collect();
                        cx.err(
                            &format!("trace.queues[{i}]"),
                            format!("no queue is named \"{n}\"; queues: {}", config::quoted(&all)),
                        );
                    }
                }
            }
            links
        }
    };
    Some(TraceSpec { interval, links, flows })
}

// ---------------------------------------------------------------------------
// Topologies

struct NetBuilder {
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

const HOSTS: Ty = Ty::AnyOf(&[
    Ty::Whole {
        min: 1,
        max: MAX_NODES as u64,
    },
    Ty::NonEmptyList(&Ty::Table(&HOST)),
]);
const DUMBBELL: &[Key] = &[
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
const RATE_DELAY: &[Key] = &[
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
const DUPLEX: &[Key] = &[
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
    Key::opt("reverse_name", Ty::Text, "its ends, e.g. \"R1->R0\"", "the reverse queue's name"),
];
const LINK_NAME: &[Key] = &[Key::opt("name", Ty::Text, "its ends, e.g. \"R0->R1\"", "the queue's name")];

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

fn read_topology(cx: &mut Cx, v: &Value, path: &str) -> Option<NetSpec> {
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
struct RateDelay {
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

fn read_rate_delay(cx: &mut Cx, t: &mut Table) -> Option<RateDelay> {
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
fn parse_link_rate(v: &Value) -> Result<f64, String> {
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
fn opt_qdisc(cx: &mut Cx, t: &mut Table, key: &'static str, link: Option<LinkInfo>) -> Option<QdiscSpec> {
    match t.raw(key) {
        Some(q) => QdiscSpec::parse(cx, q, &t.key_path(key), link),
        None => Some(QdiscSpec::unlimited()),
    }
}

/// One end host of a dumbbell: its access link's rate and delay.
struct Access {
    rate_bps: f64,
    delay: DelaySpec,
}

/// What a dumbbell's hosts get when they do not say, and the keys of the
/// topology table those values come from.
struct HostDefaults {
    count: Option<u64>,
    rate: Option<f64>,
    delay: Option<Dist>,
    rate_key: &'static str,
    delay_key: &'static str,
}

/// Reads `senders` or `receivers`: a count, or a list of `{ rate, delay }`.
fn read_hosts(cx: &mut Cx, t: &mut Table, key: &'static str, defaults: HostDefaults) -> Option<Vec<Access>> {
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

fn read_dumbbell(cx: &mut Cx, t: &mut Table) -> Option<NetSpec> {
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
fn read_duplex(
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

fn node_ref(cx: &mut Cx, t: &mut Table, key: &'static str, b: &NetBuilder) -> Option<u32> {
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
fn read_list<'v>(cx: &mut Cx, t: &mut Table<'v>, key: &'static str) -> Option<&'v Vec<Value>> {
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

fn read_chain(cx: &mut Cx, t: &mut Table) -> Option<NetSpec> {
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

fn read_graph(cx: &mut Cx, t: &mut Table) -> Option<NetSpec> {
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

// ---------------------------------------------------------------------------
// Traffic groups

fn read_endpoints(
    cx: &mut Cx,
    t: &mut Table,
    key: &'static str,
    net: Option<&NetSpec>,
    default: Option<Vec<u32>>,
) -> Option<Vec<u32>> {
    let path = t.key_path(key);
    let names: Vec<String> = match t.raw(key) {
        // Without a valid topology there is no telling whether it has defaults.
        None if net.is_none() => return None,
        None => {
            return default.or_else(|| {
                cx.err(&path, "missing; a node name or a list of node names");
                None
            })
        }
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) if !items.is_empty() => {
            match items.iter().map(parse_str).collect::<Result<Vec<_>, _>>() {
                Ok(v) => v,
                Err(m) => {
                    cx.err(&path, m);
                    return None;
                }
            }
        }
        Some(other) => {
            cx.err(
                &path,
                format!(
                    "expected a node name or a non-empty list of node names, got {}",
                    config::show(other)
                ),
            );
            return None;
        }
    };
    let net = net?;
    let mut out = Vec::new();
    for n in &names {
        match net.node_index(n) {
            Some(i) => out.push(i),
            None => {
                let all: Vec<&str> = net.nodes.iter().map(|n| n.name.as_str()).collect();
                cx.err(
                    &path,
                    format!("no node is named \"{n}\"; nodes: {}", config::quoted(&all)),
                );
            }
        }
    }
    (out.len() == names.len()).then_some(out)
}

fn read_group(
    cx: &mut Cx,
    v: &Value,
    path: &str,
    net: Option<&NetSpec>,
    classes: &mut Vec<String>,
) -> Option<GroupSpec> {
    let mut t = Table::new(cx, v, path)?;
    t.declare(TRAFFIC.tag);
    t.declare(TRAFFIC.common);
    let name = t.req(cx, "name", parse_str);
    let kind = t.req(cx, "kind", |v| parse_choice(v, TRAFFIC_KINDS));
    let count = t
        .opt(cx, "count", |v| {
            parse_count(v, 1).and_then(|n| {
                if n <= MAX_FLOWS {
                    Ok(n)
                } else {
                    Err(format!("{n} flows is too many; at most {MAX_FLOWS}"))
                }
            })
        })
        .unwrap_or(1);
    let default = |hosts: Option<&Vec<u32>>| hosts.filter(|h| !h.is_empty()).cloned();
    let src = read_endpoints(cx, &mut t, "src", net, default(net.map(|n| &n.default_src)));
    let dst = read_endpoints(cx, &mut t, "dst", net, default(net.map(|n| &n.default_dst)));
    let start = match t.raw("start") {
        Some(sv) => Dist::parse(cx, sv, &t.key_path("start"), Quantity::Time),
        None => Some(Dist::Uniform { min: 0.0, max: 1.0 }),
    };
    let stop = t.opt(cx, "stop", parse_duration);
    let ted_deadline = t.opt(cx, "ted_deadline", parse_duration);
    let class = t.opt(cx, "class", |v| parse_choice(v, CLASSES));
    // The source is read apart so that the table is finished (unknown keys
    // reported) whatever goes wrong in it.
    let source = kind.and_then(|kind| read_source(cx, &mut t, kind));
    t.finish_if_kind(cx, kind.is_some());
    let net = net?;
    let (name, source, src, dst, start) = (name?, source?, src?, dst?, start?);
    // TCP is `bulk` unless it says otherwise; open-loop UDP `realtime`.
    let class = class.unwrap_or(if matches!(source, SourceSpec::Ftp { .. }) {
        "bulk"
    } else {
        "realtime"
    });
    if let Some(stop) = stop {
        if stop == Duration::ZERO {
            cx.err(&join(path, "stop"), "must be later than 0s");
        }
    }
    let count = count as u32;
    let group = GroupSpec {
        name,
        source,
        count,
        src,
        dst,
        start,
        stop,
        class: class_index(classes, class),
        ted_deadline,
    };
    // Endpoint pairs repeat every lcm(|src|, |dst|) flows.
    let (a, b) = (group.src.len() as u64, group.dst.len() as u64);
    let period = a / gcd(a, b) * b;
    // One problem per group is enough: the first flow that has it.
    let errors_before = cx.errors.len();
    for j in 0..(count as u64).min(period) as u32 {
        if cx.errors.len() > errors_before {
            break;
        }
        let (s, d) = group.endpoints(j);
        let (sn, dn) = (&net.nodes[s as usize].name, &net.nodes[d as usize].name);
        if s == d {
            cx.err(path, format!("flow {j} would send from \"{sn}\" to itself"));
        } else if net.path_exists(s, d).is_none() {
            cx.err(path, format!("no route from \"{sn}\" to \"{dn}\""));
        } else if group.source.is_tcp() && net.path_exists(d, s).is_none() {
            cx.err(
                path,
                format!("no route back from \"{dn}\" to \"{sn}\" for the TCP acknowledgements"),
            );
        } else if matches!(&group.source, SourceSpec::Ftp { tcp, .. } if tcp.rto == RtoConfig::Ted) {
            // A TED queue on the way there or back whose deadline applies
            // to this group (its own, or the queue's for its class or default).
            let class = &class;
            let ted = |from, to| {
                net.path(from, to).iter().any(|&l| match &net.links[l as usize].qdisc {
                    QdiscSpec::Ted(t) => {
                        group.ted_deadline.is_some()
                            || t.default_deadline.is_some()
                            || t.deadlines.iter().any(|(c, _)| c == class)
                    }
                    _ => false,
                })
            };
            if !ted(s, d) && !ted(d, s) {
                cx.err(
                    &join(path, "tcp.rto"),
                    format!("\"ted\" needs a TED queue with a deadline for this group on the path from \"{sn}\" to \"{dn}\" or back; there is none"),
                );
            }
        }
    }
    if group.source.is_tcp() && group.stop.is_some() {
        cx.err(
            &join(path, "stop"),
            "TCP groups run to the end of the run; give a finite transfer with `size` instead",
        );
    }
    Some(group)
}

fn read_source(cx: &mut Cx, t: &mut Table, kind: &str) -> Option<SourceSpec> {
    // `transport` chooses between the two `onoff` variants, so it is looked
    // at before their keys are declared.
    let transport = t.map_value("transport");
    let variant = TRAFFIC.variant(kind, |key, value| key == "transport" && transport == Some(value));
    t.declare_parts(variant.parts);
    if kind == "onoff" {
        t.opt(cx, "transport", |v| parse_choice(v, &["udp", "tcp"]));
    }
    let tcp_onoff = variant.when.is_some();
    let size_dist = |t: &mut Table, cx: &mut Cx| -> Option<Dist> {
        match t.raw("size") {
            Some(sv) => {
                let d = Dist::parse(cx, sv, &t.key_path("size"), Quantity::Bytes)?;
                if let Dist::Constant(b) = d {
                    if b < 1.0 || b.fract() != 0.0 {
                        cx.err(
                            &t.key_path("size"),
                            format!("{} must be a whole number of bytes, at least 1B", config::show(sv)),
                        );
                        return None;
                    }
                }
                if d.mean().is_none() {
                    cx.err(
                        &t.key_path("size"),
                        "the packet size distribution must have a finite mean",
                    );
                    return None;
                }
                Some(d)
            }
            None => {
                t.report_missing(cx, "size");
                None
            }
        }
    };
    let source = match kind {
        "ftp" => {
            let size = t.opt(cx, "size", |v| {
                let b = config::parse_bytes_f64(v)?;
                if b < 1.0 || b.fract() != 0.0 {
                    return Err(format!(
                        "{} must be a whole number of bytes, at least 1B",
                        config::show(v)
                    ));
                }
                Ok(b as u64)
            });
            let (payload, tcp) = read_tcp_app(cx, t);
            let payload = payload?;
            if let (Some(bytes), Some(mean)) = (size, payload.rounded_mean()) {
                if bytes as f64 / mean > MAX_TRANSFER_PKTS {
                    cx.err(
                        &t.key_path("size"),
                        format!(
                            "{bytes}B is about {:.1e} packets; a transfer has at most {MAX_TRANSFER_PKTS:.0e}",
                            bytes as f64 / mean
                        ),
                    );
                    return None;
                }
            }
            return Some(SourceSpec::Ftp {
                size_bytes: size,
                payload,
                tcp: tcp?,
                on_off: None,
                repeat: None,
            });
        }
        "cbr" => {
            let rate = t.req(cx, "rate", parse_rate);
            let size = t.req(cx, "size", config::parse_packet_size);
            let jitter = t.opt(cx, "jitter", parse_bool).unwrap_or(false);
            SourceSpec::Cbr {
                rate_bps: rate?,
                size_bytes: size?,
                jitter,
            }
        }
        "poisson" => {
            let rate = t.req(cx, "rate", parse_rate);
            let size = size_dist(t, cx);
            SourceSpec::Poisson {
                rate_bps: rate?,
                size: size?,
            }
        }
        "batch-poisson" => {
            let batch = match t.raw("batch") {
                Some(bv) => Dist::parse(cx, bv, &t.key_path("batch"), Quantity::Count),
                None => {
                    t.report_missing(cx, "batch");
                    None
                }
            };
            let size = size_dist(t, cx);
            let rate = t.opt(cx, "rate", parse_rate);
            let gap = t
                .raw("gap")
                .and_then(|gv| Dist::parse(cx, gv, &t.key_path("gap"), Quantity::Time));
            let (batch, size) = (batch?, size?);
            if let Dist::Constant(b) = batch {
                if b < 1.0 || b.fract() != 0.0 {
                    cx.err(
                        &t.key_path("batch"),
                        format!("expected a whole number of packets >= 1, got {b}"),
                    );
                    return None;
                }
            }
            let gap = match (rate, gap, t.has("rate"), t.has("gap")) {
                (Some(r), None, _, false) => {
                    // Drawn batch and packet sizes are rounded to whole
                    // numbers; the rate is met with the rounded means.
                    let Some(mean_batch) = batch.rounded_mean() else {
                        cx.err(&t.key_path("batch"), "a batch size distribution with an infinite mean cannot be given a rate; give \"gap\" instead");
                        return None;
                    };
                    Dist::Exponential {
                        mean: mean_batch * size.rounded_mean()? * 8.0 / r,
                    }
                }
                (None, Some(g), false, _) => g,
                (_, _, true, true) => {
                    cx.err(&t.path, "give either \"rate\" (Poisson batch arrivals) or \"gap\" (a distribution of times between batches), not both");
                    return None;
                }
                (_, _, false, false) => {
                    cx.err(&t.path, "missing \"rate\" (Poisson batch arrivals at a mean bit rate) or \"gap\" (a distribution of times between batches)");
                    return None;
                }
                _ => return None,
            };
            SourceSpec::Batch { gap, batch, size }
        }
        "web" => {
            let mut p = crate::web::WebParams::default();
            let dist = |t: &mut Table, cx: &mut Cx, key: &'static str, q: Quantity, field: &mut Dist| {
                if let Some(d) = t.raw(key).and_then(|v| Dist::parse(cx, v, &t.key_path(key), q)) {
                    if d.mean().is_none() {
                        cx.err(&t.key_path(key), "needs a finite mean");
                    } else {
                        *field = d;
                    }
                }
            };
            dist(t, cx, "pages_per_session", Quantity::Count, &mut p.pages_per_session);
            dist(t, cx, "inter_page", Quantity::Time, &mut p.inter_page);
            dist(t, cx, "objects_per_page", Quantity::Count, &mut p.objects_per_page);
            dist(t, cx, "inter_object", Quantity::Time, &mut p.inter_object);
            dist(t, cx, "object_size", Quantity::Count, &mut p.object_size);
            if let Some(b) = t.opt(cx, "replace", parse_bool) {
                p.replace_finished = b;
            }
            let response = match t.opt(cx, "response", |v| parse_choice(v, crate::web::WebResponse::NAMES)) {
                Some("same-connection") => crate::web::WebResponse::SameConnection,
                _ => crate::web::WebResponse::NewConnection,
            };
            let (payload, tcp) = read_tcp_app(cx, t);
            let payload_bytes = match payload? {
                Dist::Constant(b) => b as u32,
                _ => {
                    cx.err(
                        &t.key_path("packet_size"),
                        "web objects are counted in packets: give one packet size, e.g. \"1000B\"",
                    );
                    return None;
                }
            };
            if p.object_size.mean().is_some_and(|m| m > MAX_TRANSFER_PKTS) {
                cx.err(
                    &t.key_path("object_size"),
                    format!("objects may average at most {MAX_TRANSFER_PKTS:.0e} packets"),
                );
                return None;
            }
            return Some(SourceSpec::Web {
                params: p,
                payload_bytes,
                tcp: tcp?,
                response,
            });
        }
        "http11" => {
            let mut p = crate::web::Http11Params::default();
            if let Some(d) = t
                .raw("response_size")
                .and_then(|v| Dist::parse(cx, v, &t.key_path("response_size"), Quantity::Bytes))
            {
                p.response_size = d;
            }
            if let Some(d) = t
                .raw("think")
                .and_then(|v| Dist::parse(cx, v, &t.key_path("think"), Quantity::Time))
            {
                if d.mean().is_none_or(|m| m < 1e-3) {
                    cx.err(&t.key_path("think"), "think times must last 1ms or more on average");
                }
                p.think = d;
            }
            let (payload, tcp) = read_tcp_app(cx, t);
            let payload_bytes = match payload? {
                Dist::Constant(b) => b as u32,
                _ => {
                    cx.err(
                        &t.key_path("packet_size"),
                        "responses are cut into packets of one size: give one, e.g. \"1000B\"",
                    );
                    return None;
                }
            };
            if p.response_size
                .mean()
                .is_none_or(|m| m / payload_bytes as f64 > MAX_TRANSFER_PKTS)
            {
                cx.err(
                    &t.key_path("response_size"),
                    format!("responses must average a finite number of packets, at most {MAX_TRANSFER_PKTS:.0e}"),
                );
                return None;
            }
            return Some(SourceSpec::Http11 {
                params: p,
                payload_bytes,
                tcp: tcp?,
            });
        }
        "file" => {
            let size = match t.raw("size") {
                Some(v) => Dist::parse(cx, v, &t.key_path("size"), Quantity::Bytes),
                None => {
                    t.report_missing(cx, "size");
                    None
                }
            };
            let gap = match t.raw("gap") {
                Some(v) => Dist::parse(cx, v, &t.key_path("gap"), Quantity::Time),
                None => {
                    t.report_missing(cx, "gap");
                    None
                }
            };
            let (payload, tcp) = read_tcp_app(cx, t);
            let (size, gap, payload) = (size?, gap?, payload?);
            match (size.rounded_mean(), payload.rounded_mean()) {
                (Some(s), Some(p)) if s / p <= MAX_TRANSFER_PKTS => {}
                _ => {
                    cx.err(
                        &t.key_path("size"),
                        format!("transfers must have a finite mean of at most {MAX_TRANSFER_PKTS:.0e} packets"),
                    );
                    return None;
                }
            }
            return Some(SourceSpec::Ftp {
                size_bytes: None,
                payload,
                tcp: tcp?,
                on_off: None,
                repeat: Some((size, gap)),
            });
        }
        "onoff" if tcp_onoff => {
            // Without a rate, unlimited data while ON; with one, ns-2's
            // rate-limited application (see `TcpOnOff`).
            let rate = t.opt(cx, "rate", parse_rate);
            let paced = t.has("rate");
            let on = t.req(cx, "on", |_| Ok(()));
            let off = t.req(cx, "off", |_| Ok(()));
            let period = |cx: &mut Cx, t: &mut Table, key: &'static str| {
                let d = Dist::parse(cx, t.raw(key)?, &t.key_path(key), Quantity::Time)?;
                match d.mean() {
                    _ if paced => Some(d),
                    Some(m) if m >= 1e-3 => Some(d),
                    _ => {
                        cx.err(&t.key_path(key), "TCP ON/OFF periods must last 1ms or more on average");
                        None
                    }
                }
            };
            let on = on.and_then(|_| period(cx, t, "on"));
            let off = off.and_then(|_| period(cx, t, "off"));
            let (payload, tcp) = read_tcp_app(cx, t);
            let payload = payload?;
            if paced {
                // The application's packets are the TCP payload: one size.
                let Dist::Constant(bytes) = payload else {
                    cx.err(
                        &t.key_path("packet_size"),
                        "with \"rate\", the application sends packets of one size (ns-2's packetSize_); give one, e.g. \"1000B\"",
                    );
                    return None;
                };
                let gap_s = bytes * 8.0 / rate?;
                if gap_s < 1e-9 {
                    cx.err(&t.key_path("rate"), format!("sends {:.3e} packets per second; at most 1e9 per second can be simulated (the clock ticks in nanoseconds)", 1.0 / gap_s));
                    return None;
                }
            }
            return Some(SourceSpec::Ftp {
                size_bytes: None,
                payload,
                tcp: tcp?,
                on_off: Some(TcpOnOff {
                    on: on?,
                    off: off?,
                    rate_bps: rate,
                }),
                repeat: None,
            });
        }
        "onoff" => {
            let rate = t.req(cx, "rate", parse_rate);
            let size = t.req(cx, "size", config::parse_packet_size);
            let period = |t: &mut Table, cx: &mut Cx, key: &'static str| match t.raw(key) {
                Some(pv) => Dist::parse(cx, pv, &t.key_path(key), Quantity::Time),
                None => {
                    t.report_missing(cx, key);
                    None
                }
            };
            let on = period(t, cx, "on");
            let off = period(t, cx, "off");
            SourceSpec::OnOff {
                rate_bps: rate?,
                size_bytes: size?,
                on: on?,
                off: off?,
            }
        }
        _ => unreachable!("parse_choice admits only TRAFFIC_KINDS"),
    };
    // The clock ticks in nanoseconds: a source whose packets (or batches)
    // would come less than 1 ns apart on average cannot be simulated.
    let (gap_s, key) = match &source {
        SourceSpec::Ftp { .. } | SourceSpec::Web { .. } | SourceSpec::Http11 { .. } => {
            unreachable!("TCP kinds return above")
        }
        SourceSpec::Cbr {
            rate_bps, size_bytes, ..
        }
        | SourceSpec::OnOff {
            rate_bps, size_bytes, ..
        } => (*size_bytes as f64 * 8.0 / rate_bps, "rate"),
        SourceSpec::Poisson { rate_bps, size } => (size.rounded_mean()? * 8.0 / rate_bps, "rate"),
        SourceSpec::Batch { gap, .. } => (
            gap.mean().unwrap_or(f64::INFINITY),
            if t.has("gap") { "gap" } else { "rate" },
        ),
    };
    if gap_s < 1e-9 {
        cx.err(&t.key_path(key), format!("sends {:.3e} packets or batches per second; at most 1e9 per second can be simulated (the clock ticks in nanoseconds)", 1.0 / gap_s));
        return None;
    }
    Some(source)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The keys every TCP application has: the payload size of its packets and
/// its `tcp` table.
fn read_tcp_app(cx: &mut Cx, t: &mut Table) -> (Option<Dist>, Option<TcpConfig>) {
    let payload = match t.raw("packet_size") {
        None => Some(Dist::Constant(DEFAULT_TCP_PAYLOAD_BYTES)),
        Some(pv) => match Dist::parse(cx, pv, &t.key_path("packet_size"), Quantity::Bytes) {
            Some(Dist::Constant(b)) if b < 1.0 || b.fract() != 0.0 => {
                cx.err(
                    &t.key_path("packet_size"),
                    format!("{} must be a whole number of bytes, at least 1B", config::show(pv)),
                );
                None
            }
            Some(d) if d.mean().is_none() => {
                cx.err(
                    &t.key_path("packet_size"),
                    "the payload size distribution must have a finite mean",
                );
                None
            }
            Some(Dist::Constant(b) | Dist::Uniform { max: b, .. }) if b > MAX_TCP_PAYLOAD_BYTES as f64 => {
                cx.err(
                    &t.key_path("packet_size"),
                    format!(
                        "{} exceeds the largest payload, {MAX_TCP_PAYLOAD_BYTES}B",
                        config::show(pv)
                    ),
                );
                None
            }
            other => other,
        },
    };
    let tcp = match t.raw("tcp") {
        Some(tv) => TcpConfig::parse(cx, tv, &t.key_path("tcp")),
        None => Some(TcpConfig::default()),
    };
    (payload, tcp)
}

fn class_index(classes: &mut Vec<String>, class: &str) -> u8 {
    match classes.iter().position(|c| c == class) {
        Some(i) => i as u8,
        None => {
            classes.push(class.to_string());
            (classes.len() - 1) as u8
        }
    }
}

impl NetSpec {
    /// `Some(())` if `dst` is reachable from `src`.
    fn path_exists(&self, src: u32, dst: u32) -> Option<()> {
        (src == dst || self.route(src, dst) != NO_ROUTE).then_some(())
    }
}

#[cfg(test)]
mod test {
    use super::*;
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
        use crate::web::WebResponse::*;
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
        let SourceSpec::Batch {
            gap: Dist::Exponential { mean },
            ..
        } = &sc.groups[0].source
        else {
            panic!()
        };
        let rounded = 1.0 + (-0.5f64).exp() / (1.0 - (-1.0f64 / 3.0).exp());
        assert!((mean - rounded * 8000.0 / 1e6).abs() < 1e-12);
    }
}
