//! `dualpi2` in scenario files. The discipline: `crates/qdisc/src/dualpi2.rs`.

use super::*;

pub(super) const DUALPI2_KEYS: &[Key] = &[
    limit("\"10000pkt\""),
    Key::opt(
        "target",
        Ty::Time,
        "\"15ms\"",
        "the queueing delay the base PI controller holds",
    ),
    Key::opt(
        "t_update",
        Ty::Time,
        "\"16ms\"",
        "how often the base probability p' is updated",
    ),
    Key::opt(
        "alpha",
        Ty::Number(Range::NON_NEGATIVE),
        "0.16",
        "the gain on the delay's distance from target",
    ),
    Key::opt(
        "beta",
        Ty::Number(Range::NON_NEGATIVE),
        "3.2",
        "the gain on the delay's change",
    ),
    Key::opt(
        "coupling_factor",
        Ty::Number(Range::new(1.0, false, f64::INFINITY, false)),
        "2",
        "k: the L queue's coupled probability is k p', the C queue's p'^2",
    ),
    Key::opt(
        "step_thresh",
        Ty::AnyOf(&[Ty::Time, Ty::Pkts]),
        "\"1ms\"",
        "mark L packets whose sojourn (or the L queue they leave, in packets) exceeds this",
    ),
    Key::opt(
        "min_qlen_step",
        Ty::Pkts,
        "0",
        "the step spares L packets that found fewer packets than this in the L queue",
    ),
    Key::opt(
        "c_protection",
        Ty::Whole { min: 0, max: 100 },
        "10",
        "the C queue's weight in percent in the scheduler between the queues",
    ),
    Key::opt(
        "drop_overload",
        Ty::Bool,
        "true",
        "drop (not only mark) when the coupled L probability saturates",
    ),
    Key::opt(
        "qdelay_of",
        Ty::Choice(&["max", "classic"]),
        "\"max\"",
        "the delay the PI controller acts on: the larger of both queues' or the C queue's",
    ),
];

fn parse_step_thresh(v: &Value) -> Result<StepThresh, String> {
    match (parse_duration(v), config::parse_pkts(v)) {
        (Ok(t), _) => Ok(StepThresh::Time(t)),
        (_, Ok(n)) => Ok(StepThresh::Packets(n)),
        (Err(e), Err(_)) => Err(format!("{e}, or a whole number of packets such as \"5pkt\"")),
    }
}

pub(super) fn parse_dualpi2(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = DualPi2Params {
        limit: limit?,
        ..DualPi2Params::default()
    };
    set(cx, t, "target", &mut p.target, parse_duration);
    set(cx, t, "t_update", &mut p.t_update, parse_duration);
    set(cx, t, "alpha", &mut p.alpha, real);
    set(cx, t, "beta", &mut p.beta, real);
    set(cx, t, "coupling_factor", &mut p.coupling_factor, real);
    set(cx, t, "step_thresh", &mut p.step_thresh, parse_step_thresh);
    set(cx, t, "min_qlen_step", &mut p.min_qlen_step, config::parse_pkts);
    set(cx, t, "c_protection", &mut p.c_protection, |v| {
        config::parse_count(v, 0).and_then(|n| u8::try_from(n).map_err(|_| format!("{n} is more than 100")))
    });
    set(cx, t, "drop_overload", &mut p.drop_overload, parse_bool);
    set(cx, t, "qdelay_of", &mut p.qdelay_of, |v| {
        Ok(match parse_choice(v, &["max", "classic"])? {
            "classic" => QdelayOf::Classic,
            _ => QdelayOf::Max,
        })
    });
    Some(QdiscSpec::DualPi2(p))
}

pub(super) const DUALPI2: Kind = Kind {
    variant: Variant {
        name: "dualpi2",
        help: "DualPI2, the DualQ Coupled AQM (RFC 9332)",
        when: None,
        parts: &[DUALPI2_KEYS],
    },
    read: parse_dualpi2,
    default_limit: Some(|| DualPi2Params::default().limit),
};

pub(super) fn describe_dualpi2(q: &DualPi2) -> Value {
    let p = q.effective();
    let step = match p.step_thresh {
        StepThresh::Time(t) => json!({ "step_thresh_s": t.as_secs_f64() }),
        StepThresh::Packets(n) => json!({ "step_thresh_pkts": n }),
    };
    let mut v = json!({
        "kind": "dualpi2", "limit": limit_value(p.limit), "target_s": secs(p.target),
        "t_update_s": secs(p.t_update), "alpha": p.alpha, "beta": p.beta, "coupling_factor": p.coupling_factor,
        "min_qlen_step": p.min_qlen_step, "c_protection": p.c_protection, "drop_overload": p.drop_overload,
        "qdelay_of": if p.qdelay_of == QdelayOf::Classic { "classic" } else { "max" },
    });
    v.as_object_mut()
        .expect("an object")
        .extend(step.as_object().expect("an object").clone());
    v
}
