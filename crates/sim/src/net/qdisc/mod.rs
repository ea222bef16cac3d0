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

mod blue;
mod codel;
mod pie;
mod red;
mod ted;

use crate::config::{self, join, parse_bool, parse_choice, parse_duration, Cx, Table};
use crate::net::CLASSES;
use blue::*;
use codel::*;
use pie::*;
use red::*;
pub use red::{RedTailSpec, DYNAMIC_THRESHOLDS, RED_QUEUE2};
use ted::*;
pub use ted::{TedSpec, TED_DEADLINES};

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

pub(super) const fn limit(default: &'static str) -> Key {
    Key::opt("limit", Ty::Limit, default, "the buffer limit")
}

pub(super) const LIMIT: &[Key] = &[Key::req(
    "limit",
    Ty::Limit,
    "a buffer limit such as \"300pkt\", \"450000B\" or \"inf\"",
)];

pub(super) const ECN_OFF: &[Key] = &[Key::opt(
    "ecn",
    Ty::Bool,
    "false",
    "mark ECN-capable packets instead of dropping them",
)];

pub(super) const ECN_ON: &[Key] = &[Key::opt(
    "ecn",
    Ty::Bool,
    "true",
    "mark ECN-capable packets instead of dropping them",
)];

pub(super) const DROPTAIL: &[Key] = &[Key::opt(
    "drop",
    Ty::Choice(&["tail", "front"]),
    "\"tail\"",
    "which packet a full queue drops: the arrival, or from the head until the arrival fits",
)];

pub(super) const BERNOULLI: &[Key] = &[Key::req(
    "p",
    Ty::Number(Range::PROBABILITY),
    "the drop probability, a number in [0, 1]",
)];

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

pub(super) const LIMIT_1000: &[Key] = &[limit("\"1000pkt\"")];

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
pub(super) fn default_limit(kind: &str) -> Option<Limit> {
    match kind {
        "pie" => Some(PieParams::default().limit),
        "codel" => Some(CodelParams::default().limit),
        "fq_codel" => Some(FqCodelParams::default().limit),
        _ => None,
    }
}

/// Overwrites `field` with the value of `key`, if the table has it.
pub(super) fn set<T>(
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
pub(super) fn real(v: &Value) -> Result<f64, String> {
    config::parse_real_in(v, f64::MIN, f64::MAX)
}

pub(super) fn whole_bytes(v: &Value) -> Result<u32, String> {
    config::parse_packet_size(v)
}

pub(super) fn parse_droptail(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let drop = match t.opt(cx, "drop", |v| parse_choice(v, &["tail", "front"])) {
        Some("front") => DropWhere::Front,
        _ => DropWhere::Tail,
    };
    Some(QdiscSpec::DropTail(DropTailParams { limit: limit?, drop }))
}

pub(super) fn parse_bernoulli(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let p = t.req(cx, "p", |v| config::parse_real_in(v, 0.0, 1.0));
    let ecn = t.opt(cx, "ecn", parse_bool).unwrap_or(false);
    Some(QdiscSpec::Bernoulli(BernoulliParams {
        limit: limit?,
        p: p?,
        ecn,
    }))
}

pub(super) fn limit_value(l: Limit) -> Value {
    match l {
        Limit::Packets(n) => json!(format!("{n}pkt")),
        Limit::Bytes(b) => json!(format!("{b}B")),
        Limit::Unlimited => json!("inf"),
    }
}

pub(super) fn secs(d: Duration) -> Value {
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
