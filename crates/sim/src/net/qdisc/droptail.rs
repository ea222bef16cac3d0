//! `droptail` and `bernoulli` in scenario files. The disciplines:
//! `crates/qdisc/src/droptail.rs` and `crates/qdisc/src/bernoulli.rs`.

use super::*;

pub(super) const DROPTAIL: Kind = Kind {
    variant: Variant {
        name: "droptail",
        help: "FIFO with tail or front drop",
        when: None,
        parts: &[LIMIT, DROPTAIL_KEYS],
    },
    read: parse_droptail,
    default_limit: None,
};

pub(super) const BERNOULLI: Kind = Kind {
    variant: Variant {
        name: "bernoulli",
        help: "drops each arrival with probability p, then FIFO",
        when: None,
        parts: &[LIMIT, BERNOULLI_KEYS, ECN_OFF],
    },
    read: parse_bernoulli,
    default_limit: None,
};

pub(super) const DROPTAIL_KEYS: &[Key] = &[Key::opt(
    "drop",
    Ty::Choice(&["tail", "front"]),
    "\"tail\"",
    "which packet a full queue drops: the arrival, or from the head until the arrival fits",
)];

pub(super) const BERNOULLI_KEYS: &[Key] = &[Key::req(
    "p",
    Ty::Number(Range::PROBABILITY),
    "the drop probability, a number in [0, 1]",
)];

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

pub(super) fn describe_droptail(q: &DropTail) -> Value {
    let p = q.params();
    json!({ "kind": "droptail", "limit": limit_value(p.limit), "drop": if p.drop == DropWhere::Front { "front" } else { "tail" } })
}

pub(super) fn describe_bernoulli(q: &Bernoulli) -> Value {
    let p = q.params();
    json!({ "kind": "bernoulli", "limit": limit_value(p.limit), "p": p.p, "ecn": p.ecn })
}
