//! Traffic groups: what each `[[traffic]]` table says, and reading the keys
//! every group has.

use super::*;
use crate::transport::udp::Schedule;
use aqmlab_qdisc::Ecn;

// ---------------------------------------------------------------------------
// Traffic

#[derive(Clone, Debug)]
pub enum SourceSpec {
    /// An open-loop UDP source (`cbr`, `poisson`, `batch-poisson`, `onoff`)
    /// and when it sends.
    Udp(Schedule),
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
        params: crate::app::web::WebParams,
        payload_bytes: u32,
        tcp: TcpConfig,
        response: crate::app::web::WebResponse,
    },
    /// Persistent HTTP/1.1 clients: flow j is a client at `dst[j]` with one
    /// connection to its server at `src[j]`, repeating a request, a
    /// response and a think time.
    Http11 {
        params: crate::app::http11::Http11Params,
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

/// The payload of a TCP data packet when a group does not say (spec:
/// 1460 B plus the 40 B header).
pub const DEFAULT_TCP_PAYLOAD_BYTES: f64 = 1460.0;

/// The most data packets a finite TCP transfer may have.
pub const MAX_TRANSFER_PKTS: f64 = 1e8;

/// The keys of a `[[traffic]]` group of any kind, besides `kind`.
pub(super) const GROUP: &[Key] = &[
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
        "delay_histogram",
        Ty::Bool,
        "false",
        "report the distribution of the group's one-way delays (`delay_histogram` in its summary)",
    ),
    Key::opt(
        "class",
        Ty::Choice(CLASSES),
        "\"bulk\" for TCP ftp, file and onoff, else \"realtime\"",
        "the traffic class, for per-class metrics and red-tail",
    ),
];
pub(super) const ENDPOINTS: Ty = Ty::AnyOf(&[Ty::Text, Ty::NonEmptyList(&Ty::Text)]);

impl SourceSpec {
    pub fn kind(&self) -> &'static str {
        match self {
            SourceSpec::Udp(s) => s.kind(),
            SourceSpec::Ftp { on_off: Some(_), .. } => "onoff",
            SourceSpec::Ftp { repeat: Some(_), .. } => "file",
            SourceSpec::Ftp { .. } => "ftp",
            SourceSpec::Web { .. } => "web",
            SourceSpec::Http11 { .. } => "http11",
        }
    }

    /// The open-loop schedule of a UDP group, or of the application of a
    /// rate-limited TCP ON/OFF group (which hands its packets to TCP);
    /// `None` for other TCP groups.
    pub fn schedule(&self) -> Option<Schedule> {
        Some(match self {
            SourceSpec::Ftp {
                on_off:
                    Some(TcpOnOff {
                        on,
                        off,
                        rate_bps: Some(rate_bps),
                    }),
                payload,
                ..
            } => {
                let Dist::Constant(bytes) = *payload else {
                    unreachable!("validated: a rate comes with one payload size")
                };
                Schedule::OnOff {
                    rate_bps: *rate_bps,
                    size_bytes: bytes as u32,
                    on: on.clone(),
                    off: off.clone(),
                }
            }
            SourceSpec::Ftp { .. } | SourceSpec::Web { .. } | SourceSpec::Http11 { .. } => return None,
            SourceSpec::Udp(s) => s.clone(),
        })
    }

    /// The TCP parameters of a TCP group; `None` for UDP.
    pub fn tcp(&self) -> Option<&TcpConfig> {
        match self {
            SourceSpec::Ftp { tcp, .. } | SourceSpec::Web { tcp, .. } | SourceSpec::Http11 { tcp, .. } => Some(tcp),
            SourceSpec::Udp(_) => None,
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
    /// The ECN codepoint an open-loop UDP group's packets carry (`ecn`);
    /// Not-ECT for the others (TCP sets its own).
    pub ecn: Ecn,
    /// Whether the summary reports the distribution of the one-way delays.
    pub delay_histogram: bool,
}

impl GroupSpec {
    /// The name of flow `j` (`traffic[NAME].flow[j]`), from which the
    /// names of its random streams are made.
    pub fn flow_name(&self, j: u32) -> String {
        format!("traffic[{}].flow[{j}]", self.name)
    }

    /// When flow `j` starts in the run with `seed` (its `start` draw).
    pub fn start_of(&self, seed: u64, j: u32) -> aqmlab_qdisc::Time {
        let name = self.flow_name(j);
        let s = self
            .start
            .sample(&mut aqmlab_qdisc::rng::stream(seed, &format!("{name}.start")));
        aqmlab_qdisc::Time::ZERO + Duration::from_secs_f64(s)
    }

    pub fn endpoints(&self, j: u32) -> (u32, u32) {
        (
            self.src[j as usize % self.src.len()],
            self.dst[j as usize % self.dst.len()],
        )
    }
}

// ---------------------------------------------------------------------------
// Reading a scenario

// ---------------------------------------------------------------------------
// Traffic groups

pub(super) fn read_endpoints(
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

pub(super) fn read_group(
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
    let delay_histogram = t.opt(cx, "delay_histogram", parse_bool).unwrap_or(false);
    // The source is read apart so that the table is finished (unknown keys
    // reported) whatever goes wrong in it.
    let source = kind.and_then(|kind| read_source(cx, &mut t, kind));
    // Only the UDP kinds declare `ecn`.
    let ecn = match t.declared_key("ecn") {
        Some(_) => t.opt(cx, "ecn", parse_udp_ecn),
        None => None,
    };
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
        ecn: ecn.unwrap_or(Ecn::NotEct),
        delay_histogram,
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

pub(super) fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

pub(super) fn class_index(classes: &mut Vec<String>, class: &str) -> u8 {
    match classes.iter().position(|c| c == class) {
        Some(i) => i as u8,
        None => {
            classes.push(class.to_string());
            (classes.len() - 1) as u8
        }
    }
}
