//! Queue disciplines in scenario files: reading each kind's table, building
//! the discipline for a link, and describing its effective parameters.
//!
//! Every kind is read by its own function below. A table is checked by
//! building the discipline once, so a scenario that validates cannot fail
//! to build; automatic values (which depend on the link) are resolved at
//! that point and reported by [`describe`].

use aqmlab_qdisc::{
    Adapt, AnyQdisc, AredParams, AredUpdate, AvgOf, Bernoulli, BernoulliParams, Blue, BlueParams, Codel, CodelParams,
    DelayEstimator, DropSpacing, DropTail, DropTailParams, DropWhere, Duration, DynThresholds, EcnAboveMaxTh,
    FengParams, FqCodel, FqCodelParams, Gentle, GentleSlope, IdleDecay, Limit, LinkInfo, ParamError, Pie, PieParams,
    QueueUnit, Red, RedParams, RedTail, RedTailParams, Sfb, SfbParams, Ted, TedCheck, TedMode, TedParams, Threshold,
    Weight,
};
use serde_json::{json, Map, Value};

use crate::config::schema::{Key, Range, TableDecl, Tagged, Ty, Variant};
use crate::config::{self, join, parse_bool, parse_choice, parse_duration, Cx, Table};
use crate::net::CLASSES;

pub const QDISC_KINDS: &[&str] = &[
    "droptail",
    "bernoulli",
    "red",
    "ared",
    "feng-ared",
    "red-tail",
    "blue",
    "sfb",
    "ted",
    "codel",
    "pie",
    "fq_codel",
];

// ---------------------------------------------------------------------------
// The keys of each kind (see `schema`): each `parse_*` function below reads
// exactly its kind's keys.

const fn limit(default: &'static str) -> Key {
    Key::opt("limit", Ty::Limit, default, "the buffer limit")
}
const LIMIT: &[Key] = &[Key::req(
    "limit",
    Ty::Limit,
    "a buffer limit such as \"300pkt\", \"450000B\" or \"inf\"",
)];
const ECN_OFF: &[Key] = &[Key::opt(
    "ecn",
    Ty::Bool,
    "false",
    "mark ECN-capable packets instead of dropping them",
)];
const ECN_ON: &[Key] = &[Key::opt(
    "ecn",
    Ty::Bool,
    "true",
    "mark ECN-capable packets instead of dropping them",
)];

const DROPTAIL: &[Key] = &[Key::opt(
    "drop",
    Ty::Choice(&["tail", "front"]),
    "\"tail\"",
    "which packet a full queue drops: the arrival, or from the head until the arrival fits",
)];
const BERNOULLI: &[Key] = &[Key::req(
    "p",
    Ty::Number(Range::PROBABILITY),
    "the drop probability, a number in [0, 1]",
)];
/// The drop curve: `red` and `feng-ared` need thresholds, `max_p` and `w_q`.
const RED_SHAPE: &[Key] = &[
    Key::req("min_th", Ty::Threshold, "the lower threshold, e.g. \"45pkt\" or \"auto\""),
    Key::req("max_th", Ty::Threshold, "the upper threshold, e.g. \"195pkt\" or \"auto\""),
    Key::req("max_p", Ty::Number(Range::UNIT_POSITIVE), "the drop probability at max_th, e.g. 0.1"),
    Key::req("w_q", W_Q, "the averaging weight, e.g. 0.002, or \"auto\""),
    Key::opt(
        "gentle",
        GENTLE,
        "false",
        "above max_th, raise p_b to 1 at 2 max_th (true) or at the limit (\"to_limit\") instead of dropping every arrival",
    ),
];
/// `ared` defaults what `red` requires, and is gentle.
const ARED_SHAPE: &[Key] = &[
    Key::opt("min_th", Ty::Threshold, "\"auto\"", "the lower threshold"),
    Key::opt("max_th", Ty::Threshold, "\"auto\"", "the upper threshold"),
    Key::opt(
        "max_p",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.1",
        "the initial drop probability at max_th",
    ),
    Key::opt("w_q", W_Q, "\"auto\"", "the averaging weight"),
    Key::opt(
        "gentle",
        GENTLE,
        "true",
        "above max_th, raise p_b to 1 at 2 max_th (true) or at the limit (\"to_limit\")",
    ),
];
const W_Q: Ty = Ty::AnyOf(&[Ty::Number(Range::UNIT_POSITIVE), Ty::Choice(&["auto"])]);
const GENTLE: Ty = Ty::AnyOf(&[Ty::Bool, Ty::Choice(&["to_limit"])]);
const RED_OPTIONS: &[Key] = &[
    Key::opt("wait", Ty::Bool, "false", "space early drops out (ns-2's wait_)"),
    Key::opt(
        "byte_mode",
        Ty::Bool,
        "false",
        "scale the drop probability by packet size / mean_pktsize",
    ),
    Key::opt(
        "mean_pktsize",
        Ty::Size,
        "\"500B\"",
        "the mean packet size, for byte mode and the idle decay",
    ),
    Key::opt(
        "ecn",
        Ty::Bool,
        "false",
        "mark ECN-capable packets instead of dropping them early",
    ),
    Key::opt(
        "ecn_above_max_th",
        Ty::Choice(&["drop", "mark"]),
        "\"drop\"",
        "what ECN does above max_th",
    ),
    Key::opt(
        "drop_spacing",
        Ty::Choice(&["count", "none"]),
        "\"count\"",
        "p_a = p_b / (1 - count p_b) (\"count\") or p_a = p_b",
    ),
    Key::opt(
        "idle_decay",
        Ty::Choice(&["ns2", "paper", "none"]),
        "\"ns2\"",
        "how avg decays while the link is idle",
    ),
    Key::opt(
        "exempt_first",
        Ty::Bool,
        "true",
        "no early drop for the first arrival after avg crosses min_th",
    ),
    Key::opt(
        "avg_of",
        Ty::Choice(&["average", "instantaneous"]),
        "\"average\"",
        "compare the thresholds with the average or the instantaneous queue",
    ),
    Key::opt(
        "target_delay",
        Ty::Time,
        "\"5ms\"",
        "the queueing delay the \"auto\" thresholds aim at",
    ),
];
const ARED: &[Key] = &[
    Key::opt("interval", Ty::Time, "\"500ms\"", "how often max_p is adapted"),
    Key::opt(
        "alpha",
        Ty::Number(Range::POSITIVE),
        "0.01",
        "the additive increase of max_p",
    ),
    Key::opt(
        "beta",
        Ty::Number(Range::UNIT_OPEN),
        "0.9",
        "the multiplicative decrease of max_p",
    ),
    Key::opt(
        "top",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.5",
        "the upper bound of max_p",
    ),
    Key::opt(
        "bottom",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.01",
        "the lower bound of max_p",
    ),
    Key::opt(
        "update",
        Ty::Choice(&["timer", "arrival"]),
        "\"timer\"",
        "adapt on a timer or at the first arrival after each interval",
    ),
    Key::opt(
        "gentle_slope",
        Ty::Choice(&["current", "initial"]),
        "\"current\"",
        "the gentle line starts at the current or the initial max_p",
    ),
];
const FENG: &[Key] = &[
    Key::opt("a", Ty::Number(Range::new(1.0, true, f64::INFINITY, false)), "3", "max_p /= a when avg falls below min_th"),
    Key::opt("b", Ty::Number(Range::new(1.0, true, f64::INFINITY, false)), "2", "max_p *= b when avg rises above max_th"),
    Key::opt("bottom", Ty::Number(Range::UNIT_POSITIVE), "0.0001", "the lower bound of max_p"),
    Key::opt(
        "dynamic_thresholds",
        Ty::AnyOf(&[Ty::Bool, Ty::Table(&DYNAMIC_THRESHOLDS)]),
        "false",
        "move min_th to hold the averaged drop probability in [p_low, p_high] (Jou, Tan, Baras); true takes the defaults",
    ),
];
pub const DYNAMIC_THRESHOLDS: TableDecl = TableDecl {
    id: "dynamic-thresholds",
    title: "feng-ared's dynamic_thresholds",
    parts: &[&[
        Key::opt(
            "p_low",
            Ty::Number(Range::PROBABILITY),
            "0.01",
            "the lower end of the target band of P_d",
        ),
        Key::opt(
            "p_high",
            Ty::Number(Range::PROBABILITY),
            "0.02",
            "the upper end of the target band of P_d",
        ),
        Key::opt(
            "w_p",
            Ty::Number(Range::UNIT_POSITIVE),
            "0.002",
            "the averaging weight of P_d",
        ),
        Key::opt("interval", Ty::Time, "\"500ms\"", "how often min_th moves"),
        Key::opt(
            "gamma",
            Ty::Number(Range::UNIT_OPEN),
            "0.05",
            "the relative step of min_th",
        ),
    ]],
};
const RED_TAIL: &[Key] = &[
    Key::req(
        "red",
        Ty::Tagged(&RED_QUEUE2),
        "queue 2's RED as a table, e.g. red = { kind = \"ared\" }",
    ),
    Key::opt(
        "min_th1",
        Ty::Pkts,
        "\"5pkt\"",
        "queue 1's length below which it gets c1_min of the link",
    ),
    Key::opt(
        "max_th1",
        Ty::Pkts,
        "\"50pkt\"",
        "queue 1's length at which its share reaches c1_max",
    ),
    Key::opt(
        "c1_min",
        Ty::Number(Range::UNIT_OPEN),
        "0.2",
        "queue 1's smallest share of the link",
    ),
    Key::opt(
        "c1_max",
        Ty::Number(Range::UNIT_OPEN),
        "0.8",
        "queue 1's largest share of the link",
    ),
    Key::opt(
        "queue1_classes",
        Ty::List(&Ty::Choice(CLASSES)),
        "[\"realtime\"]",
        "the traffic classes queue 1 takes",
    ),
];
const BLUE: &[Key] = &[
    Key::opt(
        "d1",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.02",
        "the increment of p_m on overflow",
    ),
    Key::opt(
        "d2",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.002",
        "the decrement of p_m when the link goes idle",
    ),
    Key::opt(
        "freeze_time",
        Ty::Time,
        "\"100ms\"",
        "the least time between two changes of p_m",
    ),
    Key::opt(
        "l_threshold",
        Ty::Limit,
        "the limit",
        "a queue longer than this counts as overflow",
    ),
];
const SFB: &[Key] = &[
    Key::opt("target", Ty::Pkts, "20", "the bin length that raises p_mark"),
    Key::opt("max", Ty::Pkts, "25", "the bin length at which arrivals are dropped"),
    Key::opt(
        "increment",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.0005",
        "the increment of a bin's p_mark",
    ),
    Key::opt(
        "decrement",
        Ty::Number(Range::PROBABILITY),
        "0.00005",
        "the decrement of a bin's p_mark",
    ),
    Key::opt(
        "penalty_rate",
        Ty::PacketRate,
        "\"10pps\"",
        "the rate of the penalty box's token bucket",
    ),
    Key::opt(
        "penalty_burst",
        Ty::Pkts,
        "20",
        "the depth of the penalty box's token bucket",
    ),
    Key::opt(
        "rehash_interval",
        Ty::Time,
        "\"600s\"",
        "how often the flow hash changes",
    ),
    Key::opt(
        "warmup",
        Ty::Time,
        "\"60s\"",
        "how long the next hash learns before it takes over",
    ),
];
const TED: &[Key] = &[
    Key::opt(
        "mode",
        Ty::Choice(&["lbd", "ebd"]),
        "\"lbd\"",
        "bound the sojourn at each queue (lbd) or spend an end-to-end budget (ebd)",
    ),
    Key::opt(
        "check",
        Ty::Choice(&["head", "departure", "arrival"]),
        "\"head\"",
        "where a packet's deadline is checked",
    ),
    Key::opt(
        "deadlines",
        Ty::Table(&TED_DEADLINES),
        "",
        "the deadline of each traffic class",
    ),
    Key::opt(
        "default_deadline",
        Ty::Time,
        "",
        "the deadline of packets whose class has none",
    ),
];
/// One key per traffic class (`scenario::CLASSES`).
pub const TED_DEADLINES: TableDecl = TableDecl {
    id: "ted-deadlines",
    title: "TED deadlines by class",
    parts: &[&[
        Key::opt("bulk", Ty::Time, "", "the deadline of class bulk"),
        Key::opt("realtime", Ty::Time, "", "the deadline of class realtime"),
    ]],
};
const CODEL_LAW: &[Key] = &[
    Key::opt("target", Ty::Time, "\"5ms\"", "the acceptable standing queue delay"),
    Key::opt(
        "interval",
        Ty::Time,
        "\"100ms\"",
        "the sliding window over which the minimum delay is taken",
    ),
    Key::opt(
        "ce_threshold",
        Ty::Time,
        "",
        "mark ECN-capable packets whose sojourn exceeds this (needs ecn)",
    ),
];
const PIE: &[Key] = &[
    Key::opt("qdelay_ref", Ty::Time, "\"15ms\"", "the target queueing delay"),
    Key::opt("t_update", Ty::Time, "\"15ms\"", "how often drop_prob is updated"),
    Key::opt(
        "alpha",
        Ty::Number(Range::NON_NEGATIVE),
        "0.125",
        "the gain on the delay's distance from qdelay_ref",
    ),
    Key::opt(
        "beta",
        Ty::Number(Range::NON_NEGATIVE),
        "1.25",
        "the gain on the delay's change",
    ),
    Key::opt("max_burst", Ty::Time, "\"150ms\"", "the burst allowance"),
    Key::opt(
        "delay_estimator",
        Ty::Choice(&["timestamp", "dequeue_rate"]),
        "\"timestamp\"",
        "measure the delay by timestamps or from the dequeue rate",
    ),
    Key::opt(
        "dq_threshold",
        Ty::Size,
        "\"16384B\"",
        "the bytes a dequeue-rate measurement spans",
    ),
    Key::opt(
        "dq_rate_weight",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.25",
        "the averaging weight of the dequeue rate",
    ),
    Key::opt(
        "mean_pktsize",
        Ty::Size,
        "\"1000B\"",
        "the mean packet size, for byte mode",
    ),
    Key::opt(
        "derandomize",
        Ty::Bool,
        "false",
        "the derandomized drop of RFC 8033's appendix",
    ),
    Key::opt(
        "cap_drop_adjustment",
        Ty::Bool,
        "true",
        "cap the change of drop_prob while it is small",
    ),
    Key::opt(
        "mark_ecn_threshold",
        Ty::Number(Range::PROBABILITY),
        "0.1",
        "drop rather than mark above this drop_prob",
    ),
    Key::opt(
        "byte_mode",
        Ty::Bool,
        "false",
        "scale the drop probability by packet size / mean_pktsize",
    ),
    Key::opt(
        "idle_decay_factor",
        Ty::Number(Range::PROBABILITY),
        "0.98",
        "drop_prob's decay per t_update while idle",
    ),
];
const FQ_CODEL: &[Key] = &[
    Key::opt(
        "flows",
        Ty::Whole {
            min: 1,
            max: aqmlab_qdisc::fq_codel::MAX_FLOWS as u64,
        },
        "1024",
        "the number of flow queues",
    ),
    Key::opt(
        "quantum",
        Ty::Size,
        "the link's mtu",
        "the bytes a flow may send per round",
    ),
    Key::opt(
        "drop_batch",
        Ty::Whole { min: 1, max: u64::MAX },
        "64",
        "the most packets dropped per overflow",
    ),
];

/// Every queue discipline, by `kind`.
pub const QDISC: Tagged = Tagged {
    id: "qdisc",
    title: "queue discipline",
    tag: &[Key::req("kind", Ty::Choice(QDISC_KINDS), "the queue discipline")],
    common: &[],
    variants: &[
        Variant {
            name: "droptail",
            help: "FIFO with tail or front drop",
            when: None,
            parts: &[LIMIT, DROPTAIL],
        },
        Variant {
            name: "bernoulli",
            help: "drops each arrival with probability p, then FIFO",
            when: None,
            parts: &[LIMIT, BERNOULLI, ECN_OFF],
        },
        Variant {
            name: "red",
            help: "RED (Floyd and Jacobson 1993)",
            when: None,
            parts: &[LIMIT, RED_SHAPE, RED_OPTIONS],
        },
        Variant {
            name: "ared",
            help: "Adaptive RED (Floyd, Gummadi, Shenker 2001)",
            when: None,
            parts: &[LIMIT, ARED_SHAPE, RED_OPTIONS, ARED],
        },
        Variant {
            name: "feng-ared",
            help: "self-configuring RED (Feng et al. 1999)",
            when: None,
            parts: &[LIMIT, RED_SHAPE, RED_OPTIONS, FENG],
        },
        Variant {
            name: "red-tail",
            help: "RED+Tail: a drop-tail queue 1 for some classes beside a RED queue 2, one buffer",
            when: None,
            parts: &[LIMIT, RED_TAIL],
        },
        Variant {
            name: "blue",
            help: "BLUE (Feng et al.)",
            when: None,
            parts: &[LIMIT, BLUE, ECN_OFF],
        },
        Variant {
            name: "sfb",
            help: "Stochastic Fair BLUE as Linux's sch_sfb",
            when: None,
            parts: &[LIMIT, SFB, ECN_ON],
        },
        Variant {
            name: "ted",
            help: "time-driven early discard (Baldi and Vesco)",
            when: None,
            parts: &[LIMIT, TED],
        },
        Variant {
            name: "codel",
            help: "CoDel (RFC 8289)",
            when: None,
            parts: &[LIMIT_1000, CODEL_LAW, ECN_OFF],
        },
        Variant {
            name: "pie",
            help: "PIE (RFC 8033)",
            when: None,
            parts: &[LIMIT_1000, PIE, ECN_OFF],
        },
        Variant {
            name: "fq_codel",
            help: "FQ-CoDel (RFC 8290)",
            when: None,
            parts: &[&[limit("\"10240pkt\"")], FQ_CODEL, CODEL_LAW, ECN_ON],
        },
    ],
};
const LIMIT_1000: &[Key] = &[limit("\"1000pkt\"")];

/// Queue 2 of `red-tail`: a RED table without a limit (it shares the
/// red-tail buffer).
pub const RED_QUEUE2: Tagged = Tagged {
    id: "red-queue2",
    title: "red-tail's queue 2",
    tag: &[Key::req(
        "kind",
        Ty::Choice(&["red", "ared", "feng-ared"]),
        "queue 2's RED",
    )],
    common: &[],
    variants: &[
        Variant {
            name: "red",
            help: "RED",
            when: None,
            parts: &[RED_SHAPE, RED_OPTIONS],
        },
        Variant {
            name: "ared",
            help: "Adaptive RED",
            when: None,
            parts: &[ARED_SHAPE, RED_OPTIONS, ARED],
        },
        Variant {
            name: "feng-ared",
            help: "self-configuring RED",
            when: None,
            parts: &[RED_SHAPE, RED_OPTIONS, FENG],
        },
    ],
};

/// A queue discipline as a scenario configures it.
#[derive(Clone, Debug, PartialEq)]
pub enum QdiscSpec {
    DropTail(DropTailParams),
    Bernoulli(BernoulliParams),
    Ted(TedSpec),
    Pie(PieParams),
    Codel(CodelParams),
    FqCodel(FqCodelParams),
    Blue(BlueParams),
    Sfb(SfbParams),
    Red(RedParams),
    RedTail(RedTailSpec),
}

/// RED+Tail with queue 1's classes by name (indices are known only once
/// every traffic group has been read).
#[derive(Clone, Debug, PartialEq)]
pub struct RedTailSpec {
    pub params: RedTailParams,
    pub queue1_classes: Vec<String>,
}

/// TED's parameters with deadlines by class name: class indices are only
/// known once every traffic group has been read.
#[derive(Clone, Debug, PartialEq)]
pub struct TedSpec {
    pub limit: Limit,
    pub mode: TedMode,
    pub check: TedCheck,
    pub deadlines: Vec<(String, Duration)>,
    pub default_deadline: Option<Duration>,
}

impl QdiscSpec {
    /// The unlimited drop-tail queue used where nothing is configured.
    pub fn unlimited() -> QdiscSpec {
        QdiscSpec::DropTail(DropTailParams {
            limit: Limit::Unlimited,
            drop: DropWhere::Tail,
        })
    }

    /// Reads a `qdisc` table for a link described by `link` (`None` when
    /// the link itself is invalid: then only the table is checked).
    pub fn parse(cx: &mut Cx, v: &Value, path: &str, link: Option<LinkInfo>) -> Option<QdiscSpec> {
        let mut t = Table::new(cx, v, path)?;
        t.declare(QDISC.tag);
        let kind = t.req(cx, "kind", |v| parse_choice(v, QDISC_KINDS));
        if let Some(kind) = kind {
            t.declare_parts(QDISC.variant(kind, |_, _| false).parts);
        }
        // Disciplines with a standard default limit (CoDel, PIE, FQ-CoDel)
        // take it when none is given; the others need one.
        let limit = match kind.and_then(default_limit) {
            Some(default) => t.opt(cx, "limit", config::parse_limit).or(Some(default)),
            None => t.req(cx, "limit", config::parse_limit),
        };
        let spec = match kind {
            Some("droptail") => parse_droptail(cx, &mut t, limit),
            Some("bernoulli") => parse_bernoulli(cx, &mut t, limit),
            Some("ted") => parse_ted(cx, &mut t, limit),
            Some("pie") => parse_pie(cx, &mut t, limit),
            Some("codel") => parse_codel(cx, &mut t, limit),
            Some("fq_codel") => parse_fq_codel(cx, &mut t, limit),
            Some("blue") => parse_blue(cx, &mut t, limit),
            Some("sfb") => parse_sfb(cx, &mut t, limit),
            Some(kind @ ("red" | "ared" | "feng-ared")) => parse_red(cx, &mut t, kind, limit),
            Some("red-tail") => parse_red_tail(cx, &mut t, limit),
            Some(other) => unreachable!("parse_choice admitted {other}"),
            None => None,
        };
        t.finish_if_kind(cx, kind.is_some());
        let spec = spec?;
        // An object that exists is valid: build it once to check.
        if let Some(link) = link {
            if let Err(e) = spec.try_build(link, 0, &[]) {
                cx.err(&join(path, e.param), e.message);
                return None;
            }
        }
        Some(spec)
    }

    /// The discipline for a link, its random stream seeded with `seed`;
    /// `classes` maps `Packet::class` indices to class names.
    pub fn build(&self, link: LinkInfo, seed: u64, classes: &[String]) -> AnyQdisc {
        self.try_build(link, seed, classes).expect("a parsed qdisc spec builds")
    }

    fn try_build(&self, link: LinkInfo, seed: u64, classes: &[String]) -> Result<AnyQdisc, ParamError> {
        Ok(match self {
            QdiscSpec::DropTail(p) => AnyQdisc::DropTail(DropTail::new(*p)?),
            QdiscSpec::Bernoulli(p) => AnyQdisc::Bernoulli(Bernoulli::new(*p, seed)?),
            QdiscSpec::Pie(p) => AnyQdisc::Pie(Pie::new(*p, seed)?),
            QdiscSpec::Codel(p) => AnyQdisc::Codel(Codel::new(*p, link)?),
            QdiscSpec::FqCodel(p) => AnyQdisc::FqCodel(FqCodel::new(*p, link, seed)?),
            QdiscSpec::Blue(p) => AnyQdisc::Blue(Blue::new(*p, seed)?),
            QdiscSpec::Red(p) => AnyQdisc::Red(Red::new(*p, link, seed)?),
            QdiscSpec::RedTail(s) => {
                let mut p = s.params.clone();
                p.queue1_classes = (0..classes.len() as u8)
                    .filter(|&i| s.queue1_classes.contains(&classes[i as usize]))
                    .collect();
                AnyQdisc::RedTail(Box::new(RedTail::new(p, link, seed)?))
            }
            QdiscSpec::Sfb(p) => AnyQdisc::Sfb(Box::new(Sfb::new(*p, seed)?)),
            QdiscSpec::Ted(s) => AnyQdisc::Ted(Ted::new(
                TedParams {
                    limit: s.limit,
                    mode: s.mode,
                    check: s.check,
                    class_deadlines: classes
                        .iter()
                        .map(|c| s.deadlines.iter().find(|(n, _)| n == c).map(|(_, d)| *d))
                        .collect(),
                    default_deadline: s.default_deadline,
                },
                link,
            )?),
        })
    }
}

/// The limit a kind has when a scenario gives none (RFC 8289, 8033, 8290
/// and Linux), or `None` where a limit is required.
fn default_limit(kind: &str) -> Option<Limit> {
    match kind {
        "pie" => Some(PieParams::default().limit),
        "codel" => Some(CodelParams::default().limit),
        "fq_codel" => Some(FqCodelParams::default().limit),
        _ => None,
    }
}

/// Overwrites `field` with the value of `key`, if the table has it.
fn set<T>(
    cx: &mut Cx,
    t: &mut Table,
    key: &'static str,
    field: &mut T,
    parse: impl FnOnce(&Value) -> Result<T, String>,
) {
    if let Some(v) = t.opt(cx, key, parse) {
        *field = v;
    }
}

/// Any finite real number; each discipline's `validate` checks its range.
fn real(v: &Value) -> Result<f64, String> {
    config::parse_real_in(v, f64::MIN, f64::MAX)
}

fn whole_bytes(v: &Value) -> Result<u32, String> {
    config::parse_packet_size(v)
}

fn parse_droptail(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let drop = match t.opt(cx, "drop", |v| parse_choice(v, &["tail", "front"])) {
        Some("front") => DropWhere::Front,
        _ => DropWhere::Tail,
    };
    Some(QdiscSpec::DropTail(DropTailParams { limit: limit?, drop }))
}

fn parse_bernoulli(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let p = t.req(cx, "p", |v| config::parse_real_in(v, 0.0, 1.0));
    let ecn = t.opt(cx, "ecn", parse_bool).unwrap_or(false);
    Some(QdiscSpec::Bernoulli(BernoulliParams {
        limit: limit?,
        p: p?,
        ecn,
    }))
}

fn parse_ted(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mode = match t.opt(cx, "mode", |v| parse_choice(v, &["lbd", "ebd"])) {
        Some("ebd") => TedMode::Ebd,
        _ => TedMode::Lbd,
    };
    let check = match t.opt(cx, "check", |v| parse_choice(v, &["head", "departure", "arrival"])) {
        Some("departure") => TedCheck::Departure,
        Some("arrival") => TedCheck::Arrival,
        _ => TedCheck::Head,
    };
    let deadlines = match t.raw("deadlines") {
        None => Vec::new(),
        Some(dv) => {
            let path = t.key_path("deadlines");
            let mut d = Table::new(cx, dv, &path)?;
            d.declare_parts(TED_DEADLINES.parts);
            let mut out = Vec::new();
            for key in TED_DEADLINES.keys() {
                if let Some(x) = d.opt(cx, key.name, parse_duration) {
                    out.push((key.name.to_string(), x));
                }
            }
            d.finish(cx);
            out
        }
    };
    let default_deadline = t.opt(cx, "default_deadline", parse_duration);
    Some(QdiscSpec::Ted(TedSpec {
        limit: limit?,
        mode,
        check,
        deadlines,
        default_deadline,
    }))
}

fn parse_pie(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = PieParams {
        limit: limit?,
        ..PieParams::default()
    };
    set(cx, t, "qdelay_ref", &mut p.qdelay_ref, parse_duration);
    set(cx, t, "t_update", &mut p.t_update, parse_duration);
    set(cx, t, "alpha", &mut p.alpha, real);
    set(cx, t, "beta", &mut p.beta, real);
    set(cx, t, "max_burst", &mut p.max_burst, parse_duration);
    set(cx, t, "delay_estimator", &mut p.delay_estimator, |v| {
        Ok(match parse_choice(v, &["timestamp", "dequeue_rate"])? {
            "dequeue_rate" => DelayEstimator::DequeueRate,
            _ => DelayEstimator::Timestamp,
        })
    });
    set(cx, t, "dq_threshold", &mut p.dq_threshold_bytes, |v| {
        whole_bytes(v).map(u64::from)
    });
    set(cx, t, "dq_rate_weight", &mut p.dq_rate_weight, real);
    set(cx, t, "mean_pktsize", &mut p.mean_pktsize_bytes, whole_bytes);
    set(cx, t, "derandomize", &mut p.derandomize, parse_bool);
    set(cx, t, "cap_drop_adjustment", &mut p.cap_drop_adjustment, parse_bool);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    set(cx, t, "mark_ecn_threshold", &mut p.mark_ecn_threshold, real);
    set(cx, t, "byte_mode", &mut p.byte_mode, parse_bool);
    set(cx, t, "idle_decay_factor", &mut p.idle_decay_factor, real);
    Some(QdiscSpec::Pie(p))
}

fn parse_codel(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = CodelParams {
        limit: limit?,
        ..CodelParams::default()
    };
    set(cx, t, "target", &mut p.target, parse_duration);
    set(cx, t, "interval", &mut p.interval, parse_duration);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    set(cx, t, "ce_threshold", &mut p.ce_threshold, |v| {
        parse_duration(v).map(Some)
    });
    Some(QdiscSpec::Codel(p))
}

fn parse_fq_codel(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = FqCodelParams {
        limit: limit?,
        ..FqCodelParams::default()
    };
    set(cx, t, "flows", &mut p.flows, |v| {
        config::parse_count(v, 0).map(|n| n.min(u32::MAX as u64) as u32)
    });
    set(cx, t, "quantum", &mut p.quantum_bytes, |v| whole_bytes(v).map(Some));
    set(cx, t, "target", &mut p.target, parse_duration);
    set(cx, t, "interval", &mut p.interval, parse_duration);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    set(cx, t, "ce_threshold", &mut p.ce_threshold, |v| {
        parse_duration(v).map(Some)
    });
    set(cx, t, "drop_batch", &mut p.drop_batch_pkts, |v| {
        config::parse_count(v, 0).map(|n| n.min(u32::MAX as u64) as u32)
    });
    Some(QdiscSpec::FqCodel(p))
}

fn parse_blue(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = BlueParams::new(limit?);
    set(cx, t, "d1", &mut p.d1, real);
    set(cx, t, "d2", &mut p.d2, real);
    set(cx, t, "freeze_time", &mut p.freeze_time, parse_duration);
    set(cx, t, "l_threshold", &mut p.l_threshold, |v| {
        config::parse_limit(v).map(Some)
    });
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    Some(QdiscSpec::Blue(p))
}

fn parse_sfb(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = SfbParams::new(limit?);
    set(cx, t, "target", &mut p.target_pkts, config::parse_pkts);
    set(cx, t, "max", &mut p.max_pkts, config::parse_pkts);
    set(cx, t, "increment", &mut p.increment, real);
    set(cx, t, "decrement", &mut p.decrement, real);
    set(cx, t, "penalty_rate", &mut p.penalty_rate_pps, |v| {
        let r = config::parse_packet_rate(v)?;
        if r.fract() == 0.0 && r <= u32::MAX as f64 {
            Ok(r as u32)
        } else {
            Err(format!(
                "{} must be a whole number of packets per second",
                config::show(v)
            ))
        }
    });
    set(cx, t, "penalty_burst", &mut p.penalty_burst_pkts, config::parse_pkts);
    set(cx, t, "rehash_interval", &mut p.rehash_interval, parse_duration);
    set(cx, t, "warmup", &mut p.warmup, parse_duration);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    Some(QdiscSpec::Sfb(p))
}

/// A RED threshold: `"auto"`, packets (`"45pkt"`, fractions allowed) or a
/// size in bytes.
fn threshold(v: &Value) -> Result<Threshold, String> {
    const EXPECTED: &str = "\"auto\", a number of packets such as \"45pkt\", or a size such as \"45000B\"";
    let s = v
        .as_str()
        .ok_or_else(|| format!("expected {EXPECTED}, got {}", config::show(v)))?;
    if s.trim() == "auto" {
        return Ok(Threshold::Auto);
    }
    match config::split_number(s) {
        Some((x, "pkt" | "pkts")) if x.is_finite() && x >= 0.0 => Ok(Threshold::Packets(x)),
        _ => config::parse_bytes_f64(v)
            .map(Threshold::Bytes)
            .map_err(|_| format!("\"{s}\" is not {EXPECTED}")),
    }
}

/// RED's `w_q`: `"auto"` or a number.
fn weight(v: &Value) -> Result<Weight, String> {
    if v.as_str() == Some("auto") {
        return Ok(Weight::Auto);
    }
    real(v)
        .map(Weight::Value)
        .map_err(|_| format!("expected \"auto\" or a number in (0, 1], got {}", config::show(v)))
}

/// `red`, `ared` and `feng-ared`: one implementation, three sets of
/// defaults. `red` and `feng-ared` need thresholds, `max_p` and
/// `w_q`; `ared` defaults them to auto, auto and 0.1.
fn parse_red(cx: &mut Cx, t: &mut Table, kind: &str, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = if kind == "ared" {
        let mut p = RedParams::ared(Limit::Unlimited);
        set(cx, t, "min_th", &mut p.min_th, threshold);
        set(cx, t, "max_th", &mut p.max_th, threshold);
        set(cx, t, "max_p", &mut p.max_p, real);
        set(cx, t, "w_q", &mut p.w_q, weight);
        p
    } else {
        let min_th = t.req(cx, "min_th", threshold);
        let max_th = t.req(cx, "max_th", threshold);
        let max_p = t.req(cx, "max_p", real);
        let w_q = t.req(cx, "w_q", weight);
        let (min_th, max_th, max_p, w_q) = (min_th?, max_th?, max_p?, w_q?);
        if kind == "feng-ared" {
            RedParams::feng(Limit::Unlimited, min_th, max_th, max_p, w_q)
        } else {
            RedParams::red(Limit::Unlimited, min_th, max_th, max_p, w_q)
        }
    };
    set(cx, t, "gentle", &mut p.gentle, parse_gentle);
    set(cx, t, "wait", &mut p.wait, parse_bool);
    set(cx, t, "byte_mode", &mut p.byte_mode, parse_bool);
    set(cx, t, "mean_pktsize", &mut p.mean_pktsize_bytes, whole_bytes);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    set(cx, t, "ecn_above_max_th", &mut p.ecn_above_max_th, |v| {
        Ok(if parse_choice(v, &["drop", "mark"])? == "mark" {
            EcnAboveMaxTh::Mark
        } else {
            EcnAboveMaxTh::Drop
        })
    });
    set(cx, t, "drop_spacing", &mut p.drop_spacing, |v| {
        Ok(if parse_choice(v, &["count", "none"])? == "none" {
            DropSpacing::None
        } else {
            DropSpacing::Count
        })
    });
    set(cx, t, "idle_decay", &mut p.idle_decay, |v| {
        Ok(match parse_choice(v, &["ns2", "paper", "none"])? {
            "paper" => IdleDecay::Paper,
            "none" => IdleDecay::None,
            _ => IdleDecay::Ns2,
        })
    });
    set(cx, t, "exempt_first", &mut p.exempt_first, parse_bool);
    set(cx, t, "avg_of", &mut p.avg_of, |v| {
        Ok(match parse_choice(v, &["average", "instantaneous"])? {
            "instantaneous" => AvgOf::Instantaneous,
            _ => AvgOf::Average,
        })
    });
    set(cx, t, "target_delay", &mut p.target_delay, parse_duration);
    match &mut p.adapt {
        Adapt::Ared(a) => parse_ared(cx, t, a),
        Adapt::Feng(f) => parse_feng(cx, t, f),
        Adapt::None => {}
    }
    p.limit = limit?;
    Some(QdiscSpec::Red(p))
}

/// `gentle`: false, true (ns-2's line to 2 max_th) or "to_limit"
/// (Brandauer et al.'s GRED, the line to the limit).
fn parse_gentle(v: &Value) -> Result<Gentle, String> {
    match v {
        Value::Bool(false) => Ok(Gentle::Off),
        Value::Bool(true) => Ok(Gentle::TwiceMaxTh),
        Value::String(s) if s == "to_limit" => Ok(Gentle::ToLimit),
        _ => Err(format!(
            "expected false, true (the gentle line ends at 2 max_th, as ns-2) or \"to_limit\" (it ends at the limit), got {}",
            config::show(v)
        )),
    }
}

fn parse_ared(cx: &mut Cx, t: &mut Table, a: &mut AredParams) {
    set(cx, t, "interval", &mut a.interval, parse_duration);
    set(cx, t, "alpha", &mut a.alpha, real);
    set(cx, t, "beta", &mut a.beta, real);
    set(cx, t, "top", &mut a.top, real);
    set(cx, t, "bottom", &mut a.bottom, real);
    set(cx, t, "update", &mut a.update, |v| {
        Ok(if parse_choice(v, &["arrival", "timer"])? == "arrival" {
            AredUpdate::Arrival
        } else {
            AredUpdate::Timer
        })
    });
    set(cx, t, "gentle_slope", &mut a.gentle_slope, |v| {
        Ok(if parse_choice(v, &["current", "initial"])? == "initial" {
            GentleSlope::Initial
        } else {
            GentleSlope::Current
        })
    });
}

fn parse_feng(cx: &mut Cx, t: &mut Table, f: &mut FengParams) {
    set(cx, t, "a", &mut f.a, real);
    set(cx, t, "b", &mut f.b, real);
    set(cx, t, "bottom", &mut f.bottom, real);
    // `dynamic_thresholds = true` takes the defaults; a table sets them.
    let Some(v) = t.raw("dynamic_thresholds") else { return };
    let path = t.key_path("dynamic_thresholds");
    if let Value::Bool(on) = v {
        f.dynamic = on.then(DynThresholds::default);
        return;
    }
    let Some(mut d) = Table::new(cx, v, &path) else { return };
    d.declare_parts(DYNAMIC_THRESHOLDS.parts);
    let mut dynamic = DynThresholds::default();
    set(cx, &mut d, "p_low", &mut dynamic.p_low, real);
    set(cx, &mut d, "p_high", &mut dynamic.p_high, real);
    set(cx, &mut d, "w_p", &mut dynamic.w_p, real);
    set(cx, &mut d, "interval", &mut dynamic.interval, parse_duration);
    set(cx, &mut d, "gamma", &mut dynamic.gamma, real);
    d.finish(cx);
    f.dynamic = Some(dynamic);
}

/// `red-tail`: queue 1's thresholds and shares, the classes it takes, and
/// queue 2's RED as an inline `red` table without a limit (it shares the
/// red-tail buffer).
fn parse_red_tail(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let red = match t.raw("red") {
        Some(Value::Object(m)) if m.contains_key("limit") => {
            cx.err(
                &join(&t.key_path("red"), "limit"),
                "queue 2 shares the red-tail buffer; set `limit` on the red-tail table only",
            );
            None
        }
        Some(Value::Object(m)) => {
            let mut with_limit = m.clone();
            with_limit.insert("limit".into(), json!("inf"));
            match QdiscSpec::parse(cx, &Value::Object(with_limit), &t.key_path("red"), None) {
                Some(QdiscSpec::Red(p)) => Some(p),
                Some(_) => {
                    cx.err(
                        &join(&t.key_path("red"), "kind"),
                        "queue 2 must be \"red\", \"ared\" or \"feng-ared\"",
                    );
                    None
                }
                None => None,
            }
        }
        Some(other) => {
            cx.err(
                &t.key_path("red"),
                format!(
                    "expected a table such as {{ kind = \"ared\" }}, got {}",
                    config::show(other)
                ),
            );
            None
        }
        None => {
            t.report_missing(cx, "red");
            None
        }
    };
    let mut p = RedTailParams {
        limit: limit?,
        min_th1_pkts: RedTailParams::DEFAULT_MIN_TH1_PKTS,
        max_th1_pkts: RedTailParams::DEFAULT_MAX_TH1_PKTS,
        c1_min: RedTailParams::DEFAULT_C1_MIN,
        c1_max: RedTailParams::DEFAULT_C1_MAX,
        queue1_classes: Vec::new(),
        red: red?,
    };
    set(cx, t, "min_th1", &mut p.min_th1_pkts, config::parse_pkts);
    set(cx, t, "max_th1", &mut p.max_th1_pkts, config::parse_pkts);
    set(cx, t, "c1_min", &mut p.c1_min, real);
    set(cx, t, "c1_max", &mut p.c1_max, real);
    let mut queue1_classes = vec!["realtime".to_string()];
    set(cx, t, "queue1_classes", &mut queue1_classes, |v| {
        let items = v
            .as_array()
            .ok_or_else(|| format!("expected a list of classes, got {}", config::show(v)))?;
        items
            .iter()
            .map(|c| parse_choice(c, CLASSES).map(str::to_string))
            .collect()
    });
    Some(QdiscSpec::RedTail(RedTailSpec {
        params: p,
        queue1_classes,
    }))
}

fn limit_value(l: Limit) -> Value {
    match l {
        Limit::Packets(n) => json!(format!("{n}pkt")),
        Limit::Bytes(b) => json!(format!("{b}B")),
        Limit::Unlimited => json!("inf"),
    }
}

fn secs(d: Duration) -> Value {
    json!(d.as_secs_f64())
}

/// The effective parameters of a built discipline, as the result reports
/// them: times in seconds (`_s`), sizes in bytes, after automatic values
/// are resolved.
pub fn describe(q: &AnyQdisc, classes: &[String]) -> Value {
    match q {
        AnyQdisc::DropTail(q) => {
            let p = q.params();
            json!({ "kind": "droptail", "limit": limit_value(p.limit), "drop": if p.drop == DropWhere::Front { "front" } else { "tail" } })
        }
        AnyQdisc::Bernoulli(q) => {
            let p = q.params();
            json!({ "kind": "bernoulli", "limit": limit_value(p.limit), "p": p.p, "ecn": p.ecn })
        }
        AnyQdisc::Pie(q) => {
            let p = q.effective();
            json!({
                "kind": "pie", "limit": limit_value(p.limit), "qdelay_ref_s": secs(p.qdelay_ref),
                "t_update_s": secs(p.t_update), "alpha": p.alpha, "beta": p.beta, "max_burst_s": secs(p.max_burst),
                "delay_estimator": if p.delay_estimator == DelayEstimator::DequeueRate { "dequeue_rate" } else { "timestamp" },
                "dq_threshold_bytes": p.dq_threshold_bytes, "dq_rate_weight": p.dq_rate_weight,
                "mean_pktsize_bytes": p.mean_pktsize_bytes, "derandomize": p.derandomize,
                "cap_drop_adjustment": p.cap_drop_adjustment, "ecn": p.ecn, "mark_ecn_threshold": p.mark_ecn_threshold,
                "byte_mode": p.byte_mode, "idle_decay_factor": p.idle_decay_factor,
            })
        }
        AnyQdisc::Codel(q) => {
            let p = q.effective();
            json!({
                "kind": "codel", "limit": limit_value(p.limit), "target_s": secs(p.target),
                "interval_s": secs(p.interval), "ecn": p.ecn, "ce_threshold_s": p.ce_threshold.map(secs),
                "maxpacket_bytes": q.law().maxpacket_bytes,
            })
        }
        AnyQdisc::FqCodel(q) => {
            let p = q.effective();
            json!({
                "kind": "fq_codel", "limit": limit_value(p.limit), "flows": p.flows,
                "quantum_bytes": p.quantum_bytes, "target_s": secs(p.target), "interval_s": secs(p.interval),
                "ecn": p.ecn, "ce_threshold_s": p.ce_threshold.map(secs), "drop_batch_pkts": p.drop_batch_pkts,
                "maxpacket_bytes": q.law().maxpacket_bytes,
            })
        }
        AnyQdisc::Blue(q) => {
            let p = q.effective();
            json!({
                "kind": "blue", "limit": limit_value(p.limit), "d1": p.d1, "d2": p.d2,
                "freeze_time_s": secs(p.freeze_time), "l_threshold": p.l_threshold.map(limit_value), "ecn": p.ecn,
            })
        }
        AnyQdisc::Sfb(q) => {
            let p = q.effective();
            json!({
                "kind": "sfb", "limit": limit_value(p.limit), "target_pkts": p.target_pkts, "max_pkts": p.max_pkts,
                "increment": p.increment, "decrement": p.decrement, "penalty_rate_pps": p.penalty_rate_pps,
                "penalty_burst_pkts": p.penalty_burst_pkts, "rehash_interval_s": secs(p.rehash_interval),
                "warmup_s": secs(p.warmup), "ecn": p.ecn,
            })
        }
        AnyQdisc::RedTail(q) => {
            let p = q.params();
            let names: Vec<&String> = p.queue1_classes.iter().map(|&i| &classes[i as usize]).collect();
            json!({
                "kind": "red-tail", "limit": limit_value(p.limit), "min_th1_pkts": p.min_th1_pkts,
                "max_th1_pkts": p.max_th1_pkts, "c1_min": p.c1_min, "c1_max": p.c1_max, "queue1_classes": names,
                "red": describe_red(q.red().effective()),
            })
        }
        AnyQdisc::Red(q) => describe_red(&q.effective()),
        AnyQdisc::Ted(q) => {
            let p = q.params();
            let deadlines: Map<String, Value> = classes
                .iter()
                .zip(&p.class_deadlines)
                .filter_map(|(c, d)| d.map(|d| (c.clone(), secs(d))))
                .collect();
            json!({
                "kind": "ted", "limit": limit_value(p.limit),
                "mode": if p.mode == TedMode::Ebd { "ebd" } else { "lbd" }, "check": p.check.as_str(),
                "deadlines_s": deadlines, "default_deadline_s": p.default_deadline.map(secs),
            })
        }
    }
}

/// The effective parameters of RED (queue 2 of red-tail too).
fn describe_red(p: &RedParams) -> Value {
    let kind = match p.adapt {
        Adapt::None => "red",
        Adapt::Ared(_) => "ared",
        Adapt::Feng(_) => "feng-ared",
    };
    let unit = if p.unit() == QueueUnit::Bytes { "bytes" } else { "pkts" };
    let th = |t: Threshold| match t {
        Threshold::Packets(x) | Threshold::Bytes(x) => json!(x),
        Threshold::Auto => Value::Null,
    };
    let w_q = match p.w_q {
        Weight::Value(w) => json!(w),
        Weight::Auto => Value::Null,
    };
    let mut m = json!({
        "kind": kind, "limit": limit_value(p.limit),
        format!("min_th_{unit}"): th(p.min_th), format!("max_th_{unit}"): th(p.max_th),
        "max_p": p.max_p, "w_q": w_q, "gentle": match p.gentle { Gentle::Off => json!(false), Gentle::TwiceMaxTh => json!(true), Gentle::ToLimit => json!("to_limit") },
        "wait": p.wait, "byte_mode": p.byte_mode,
        "mean_pktsize_bytes": p.mean_pktsize_bytes, "ecn": p.ecn,
        "ecn_above_max_th": if p.ecn_above_max_th == EcnAboveMaxTh::Mark { "mark" } else { "drop" },
        "drop_spacing": if p.drop_spacing == DropSpacing::None { "none" } else { "count" },
        "idle_decay": match p.idle_decay { IdleDecay::Ns2 => "ns2", IdleDecay::Paper => "paper", IdleDecay::None => "none" },
        "exempt_first": p.exempt_first,
        "avg_of": if p.avg_of == AvgOf::Instantaneous { "instantaneous" } else { "average" },
        "target_delay_s": secs(p.target_delay),
    });
    match p.adapt {
        Adapt::Ared(a) => {
            m["interval_s"] = secs(a.interval);
            m["alpha"] = json!(a.alpha);
            m["beta"] = json!(a.beta);
            m["top"] = json!(a.top);
            m["bottom"] = json!(a.bottom);
            m["update"] = json!(if a.update == AredUpdate::Arrival {
                "arrival"
            } else {
                "timer"
            });
            m["gentle_slope"] = json!(if a.gentle_slope == GentleSlope::Initial {
                "initial"
            } else {
                "current"
            });
        }
        Adapt::Feng(f) => {
            m["a"] = json!(f.a);
            m["b"] = json!(f.b);
            m["bottom"] = json!(f.bottom);
            m["dynamic_thresholds"] = match f.dynamic {
                Some(d) => json!({ "p_low": d.p_low, "p_high": d.p_high, "w_p": d.w_p,
                                   "interval_s": secs(d.interval), "gamma": d.gamma }),
                None => json!(false),
            };
        }
        Adapt::None => {}
    }
    m
}
