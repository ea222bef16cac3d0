//! Queue disciplines in scenario files: reading each kind's table, building
//! the discipline for a link, and describing its effective parameters.
//!
//! Every kind is declared, read and described in its own file of this
//! folder and registered once, in [`KINDS`]. A table is checked by
//! building the discipline once, so a scenario that validates cannot fail
//! to build; automatic values (which depend on the link) are resolved at
//! that point and reported by [`describe`].

use aqmlab_qdisc::{
    Adapt, AnyQdisc, AredParams, AredUpdate, AvgOf, Bernoulli, BernoulliParams, Blue, BlueParams, Cobalt, CobaltParams,
    Codel, CodelParams, DelayEstimator, DropSpacing, DropTail, DropTailParams, DropWhere, DualPi2, DualPi2Params, Duration,
    DynThresholds, EcnAboveMaxTh, FengParams, FqCobalt, FqCobaltParams, FqCodel, FqCodelParams, FqPie, FqPieParams, Gentle,
    GentleSlope, IdleDecay, Limit, LinkInfo, ParamError, Pie, PieParams, QdelayOf, QueueUnit, Red, RedParams, RedTail,
    RedTailParams, Sfb, SfbParams, StepThresh, Ted, TedCheck, TedMode, TedParams, Threshold, Weight,
};
use serde_json::{json, Map, Value};

use crate::config::schema::{Key, Range, TableDecl, Tagged, Ty, Variant};

mod blue;
mod cobalt;
mod codel;
mod droptail;
mod dualpi2;
mod pie;
mod red;
mod ted;

use crate::config::{self, join, parse_bool, parse_choice, parse_duration, Cx, Table};
use crate::net::CLASSES;
use blue::*;
use cobalt::*;
use codel::*;
use droptail::*;
use dualpi2::*;
use pie::*;
use red::*;
pub use red::{RedTailSpec, DYNAMIC_THRESHOLDS, RED_QUEUE2};
use ted::*;
pub use ted::{TedSpec, TED_DEADLINES};

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

/// A queue discipline kind as scenario files name it: its keys (with the
/// help line the schema and README show), how its table is read, and the
/// limit it has when a scenario gives none.
pub struct Kind {
    pub variant: Variant,
    /// Reads the kind's own keys (`kind` and `limit` are read already).
    pub read: fn(&mut Cx, &mut Table, Option<Limit>) -> Option<QdiscSpec>,
    /// The standard limit (RFC 8289, 8033, 8290 and Linux), for the kinds
    /// that have one; the others require `limit`.
    pub default_limit: Option<fn() -> Limit>,
}

/// Every discipline, registered once. Each file of this folder declares
/// its kinds; a new discipline adds its file, its line here, its
/// [`QdiscSpec`] variant, and the two match arms the compiler then asks
/// for (building it, describing it).
const KINDS: [Kind; 16] = [
    droptail::DROPTAIL,
    droptail::BERNOULLI,
    red::RED,
    red::ARED,
    red::FENG_ARED,
    red::RED_TAIL,
    blue::BLUE,
    blue::SFB,
    ted::TED,
    codel::CODEL,
    pie::PIE,
    dualpi2::DUALPI2,
    codel::FQ_CODEL,
    pie::FQ_PIE,
    cobalt::COBALT,
    cobalt::FQ_COBALT,
];

const fn names<const N: usize>(kinds: &[Kind; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = kinds[i].variant.name;
        i += 1;
    }
    out
}

const fn variants<const N: usize>(kinds: &[Kind; N]) -> [Variant; N] {
    let mut out = [kinds[0].variant; N];
    let mut i = 0;
    while i < N {
        out[i] = kinds[i].variant;
        i += 1;
    }
    out
}

/// The `kind` of every discipline.
pub const QDISC_KINDS: &[&str] = &names(&KINDS);

/// Every queue discipline, by `kind`.
pub const QDISC: Tagged = Tagged {
    id: "qdisc",
    title: "queue discipline",
    tag: &[Key::req("kind", Ty::Choice(QDISC_KINDS), "the queue discipline")],
    common: &[],
    variants: &variants(&KINDS),
};

pub(super) const LIMIT_1000: &[Key] = &[limit("\"1000pkt\"")];

/// A queue discipline as a scenario configures it.
#[derive(Clone, Debug, PartialEq)]
pub enum QdiscSpec {
    DropTail(DropTailParams),
    Bernoulli(BernoulliParams),
    Ted(TedSpec),
    Pie(PieParams),
    DualPi2(DualPi2Params),
    Codel(CodelParams),
    FqCodel(FqCodelParams),
    FqPie(FqPieParams),
    Cobalt(CobaltParams),
    FqCobalt(FqCobaltParams),
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
        let kind = kind.map(|name| KINDS.iter().find(|k| k.variant.name == name).expect("a kind of KINDS"));
        // Disciplines with a standard default limit (CoDel, PIE, COBALT and
        // the FQ kinds) take it when none is given; the others need one.
        let limit = match kind.and_then(|k| k.default_limit) {
            Some(default) => t.opt(cx, "limit", config::parse_limit).or(Some(default())),
            None => t.req(cx, "limit", config::parse_limit),
        };
        let spec = kind.and_then(|k| (k.read)(cx, &mut t, limit));
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
            QdiscSpec::DualPi2(p) => AnyQdisc::DualPi2(DualPi2::new(*p, link, seed)?),
            QdiscSpec::Codel(p) => AnyQdisc::Codel(Codel::new(*p, link)?),
            QdiscSpec::FqCodel(p) => AnyQdisc::FqCodel(FqCodel::new(*p, link, seed)?),
            QdiscSpec::FqPie(p) => AnyQdisc::FqPie(FqPie::new(*p, link, seed)?),
            QdiscSpec::Cobalt(p) => AnyQdisc::Cobalt(Cobalt::new(*p, seed)?),
            QdiscSpec::FqCobalt(p) => AnyQdisc::FqCobalt(FqCobalt::new(*p, link, seed)?),
            QdiscSpec::Blue(p) => AnyQdisc::Blue(Blue::new(*p, seed)?),
            QdiscSpec::Red(p) => AnyQdisc::Red(Red::new(*p, link, seed)?),
            QdiscSpec::RedTail(s) => build_red_tail(s, link, seed, classes)?,
            QdiscSpec::Sfb(p) => AnyQdisc::Sfb(Box::new(Sfb::new(*p, seed)?)),
            QdiscSpec::Ted(s) => build_ted(s, link, classes)?,
        })
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
        AnyQdisc::DropTail(q) => describe_droptail(q),
        AnyQdisc::Bernoulli(q) => describe_bernoulli(q),
        AnyQdisc::Red(q) => describe_red(&q.effective()),
        AnyQdisc::RedTail(q) => describe_red_tail(q, classes),
        AnyQdisc::Blue(q) => describe_blue(q),
        AnyQdisc::Sfb(q) => describe_sfb(q),
        AnyQdisc::Ted(q) => describe_ted(q, classes),
        AnyQdisc::Codel(q) => describe_codel(q),
        AnyQdisc::Pie(q) => describe_pie(q),
        AnyQdisc::DualPi2(q) => describe_dualpi2(q),
        AnyQdisc::FqCodel(q) => describe_fq_codel(q),
        AnyQdisc::FqPie(q) => describe_fq_pie(q),
        AnyQdisc::Cobalt(q) => describe_cobalt(q),
        AnyQdisc::FqCobalt(q) => describe_fq_cobalt(q),
    }
}
