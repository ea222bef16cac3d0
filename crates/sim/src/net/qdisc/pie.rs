//! `pie` in scenario files. The discipline: `crates/qdisc/src/pie.rs`.

use super::*;

pub(super) const PIE_KEYS: &[Key] = &[
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

pub(super) fn parse_pie(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
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

pub(super) const PIE: Kind = Kind {
    variant: Variant {
        name: "pie",
        help: "PIE (RFC 8033)",
        when: None,
        parts: &[LIMIT_1000, PIE_KEYS, ECN_OFF],
    },
    read: parse_pie,
    default_limit: Some(|| PieParams::default().limit),
};

pub(super) fn describe_pie(q: &Pie) -> Value {
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

pub(super) const FQ_PIE_KEYS: &[Key] = &[
    Key::opt("target", Ty::Time, "\"15ms\"", "each flow's target queueing delay"),
    Key::opt(
        "t_update",
        Ty::Time,
        "\"15ms\"",
        "how often each flow's drop_prob is updated",
    ),
    Key::opt(
        "alpha",
        Ty::Number(Range::NON_NEGATIVE),
        "0.125",
        "the gain on the delay's distance from target",
    ),
    Key::opt(
        "beta",
        Ty::Number(Range::NON_NEGATIVE),
        "1.25",
        "the gain on the delay's change",
    ),
    Key::opt("max_burst", Ty::Time, "\"150ms\"", "each flow's burst allowance"),
    Key::opt(
        "ecn_prob",
        Ty::Number(Range::PROBABILITY),
        "0.1",
        "drop rather than mark above this drop_prob",
    ),
    Key::opt(
        "byte_mode",
        Ty::Bool,
        "false",
        "scale the drop probability by packet size / link mtu",
    ),
    Key::opt(
        "derandomize",
        Ty::Bool,
        "true",
        "the derandomized drop of RFC 8033's appendix (Linux)",
    ),
];

pub(super) fn parse_fq_pie(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = FqPieParams {
        limit: limit?,
        ..FqPieParams::default()
    };
    set(cx, t, "flows", &mut p.flows, whole_u32);
    set(cx, t, "quantum", &mut p.quantum_bytes, |v| whole_bytes(v).map(Some));
    set(cx, t, "target", &mut p.target, parse_duration);
    set(cx, t, "t_update", &mut p.t_update, parse_duration);
    set(cx, t, "alpha", &mut p.alpha, real);
    set(cx, t, "beta", &mut p.beta, real);
    set(cx, t, "max_burst", &mut p.max_burst, parse_duration);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    set(cx, t, "ecn_prob", &mut p.ecn_prob, real);
    set(cx, t, "byte_mode", &mut p.byte_mode, parse_bool);
    set(cx, t, "derandomize", &mut p.derandomize, parse_bool);
    Some(QdiscSpec::FqPie(p))
}

pub(super) const FQ_PIE: Kind = Kind {
    variant: Variant {
        name: "fq_pie",
        help: "FQ-PIE (Linux sch_fq_pie: RFC 8033 PIE per flow)",
        when: None,
        parts: &[&[limit("\"10240pkt\"")], FQ_KEYS, FQ_PIE_KEYS, ECN_OFF],
    },
    read: parse_fq_pie,
    default_limit: Some(|| FqPieParams::default().limit),
};

pub(super) fn describe_fq_pie(q: &FqPie) -> Value {
    let p = q.effective();
    json!({
        "kind": "fq_pie", "limit": limit_value(p.limit), "flows": p.flows, "quantum_bytes": p.quantum_bytes,
        "target_s": secs(p.target), "t_update_s": secs(p.t_update), "alpha": p.alpha, "beta": p.beta,
        "max_burst_s": secs(p.max_burst), "ecn": p.ecn, "ecn_prob": p.ecn_prob, "byte_mode": p.byte_mode,
        "derandomize": p.derandomize, "mean_pktsize_bytes": q.law().mean_pktsize_bytes,
        "idle_decay_factor": q.law().idle_decay_factor,
    })
}
