//! The web kinds: `web` (HTTP/1.0 sessions as ns-2's PagePool/WebTraf) and
//! `http11` (persistent HTTP/1.1 clients). Their applications:
//! `crates/sim/src/app/web.rs`.

use super::*;

pub(super) const WEB: TrafficKind = TrafficKind {
    variant: Variant {
        name: "web",
        help: "HTTP/1.0 web sessions as ns-2's PagePool/WebTraf",
        when: None,
        parts: &[WEB_KEYS, TCP_APP],
    },
    read: read_web,
};

pub(super) const HTTP11: TrafficKind = TrafficKind {
    variant: Variant {
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
                Key::opt(
                    "think",
                    Ty::Dist(Quantity::Time),
                    "exponential, mean 50s",
                    "the think time after a response",
                ),
            ],
            TCP_APP,
        ],
    },
    read: read_http11,
};

const WEB_KEYS: &[Key] = &[
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
        Ty::Choice(crate::app::web::WebResponse::NAMES),
        "\"new-connection\"",
        "whether a response travels on a connection of its own or on the request's",
    ),
];

fn read_web(cx: &mut Cx, t: &mut Table) -> Option<SourceSpec> {
    let mut p = crate::app::web::WebParams::default();
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
    let response = match t.opt(cx, "response", |v| parse_choice(v, crate::app::web::WebResponse::NAMES)) {
        Some("same-connection") => crate::app::web::WebResponse::SameConnection,
        _ => crate::app::web::WebResponse::NewConnection,
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
    Some(SourceSpec::Web {
        params: p,
        payload_bytes,
        tcp: tcp?,
        response,
    })
}

fn read_http11(cx: &mut Cx, t: &mut Table) -> Option<SourceSpec> {
    let mut p = crate::app::http11::Http11Params::default();
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
    Some(SourceSpec::Http11 {
        params: p,
        payload_bytes,
        tcp: tcp?,
    })
}
