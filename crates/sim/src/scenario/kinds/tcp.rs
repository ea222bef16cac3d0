//! The TCP kinds: `ftp` (bulk, or one finite transfer), `file` (repeated
//! transfers on new connections) and `onoff` over TCP.

use super::udp::ON_OFF;
use super::*;

pub(super) const FTP: TrafficKind = TrafficKind {
    variant: Variant {
        name: "ftp",
        help: "bulk TCP",
        when: None,
        parts: &[
            &[Key::opt(
                "size",
                Ty::Size,
                "unlimited",
                "a finite transfer of this many bytes",
            )],
            TCP_APP,
        ],
    },
    read: read_ftp,
};

pub(super) const FILE: TrafficKind = TrafficKind {
    variant: Variant {
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
    read: read_file,
};

pub(super) const ONOFF_TCP: TrafficKind = TrafficKind {
    variant: Variant {
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
    read: read_onoff_tcp,
};

/// The keys every TCP application has (see [`read_tcp_app`]).
pub(in crate::scenario) const TCP_APP: &[Key] = &[
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

/// The keys every TCP application has: the payload size of its packets and
/// its `tcp` table.
pub(in crate::scenario) fn read_tcp_app(cx: &mut Cx, t: &mut Table) -> (Option<Dist>, Option<TcpConfig>) {
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

fn read_ftp(cx: &mut Cx, t: &mut Table) -> Option<SourceSpec> {
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
    Some(SourceSpec::Ftp {
        size_bytes: size,
        payload,
        tcp: tcp?,
        on_off: None,
        repeat: None,
    })
}

fn read_file(cx: &mut Cx, t: &mut Table) -> Option<SourceSpec> {
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
    Some(SourceSpec::Ftp {
        size_bytes: None,
        payload,
        tcp: tcp?,
        on_off: None,
        repeat: Some((size, gap)),
    })
}

fn read_onoff_tcp(cx: &mut Cx, t: &mut Table) -> Option<SourceSpec> {
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
    Some(SourceSpec::Ftp {
        size_bytes: None,
        payload,
        tcp: tcp?,
        on_off: Some(TcpOnOff {
            on: on?,
            off: off?,
            rate_bps: rate,
        }),
        repeat: None,
    })
}
