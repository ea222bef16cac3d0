//! Each traffic kind's own keys.

use super::*;

pub(super) fn read_source(cx: &mut Cx, t: &mut Table, kind: &str) -> Option<SourceSpec> {
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
            return Some(SourceSpec::Web {
                params: p,
                payload_bytes,
                tcp: tcp?,
                response,
            });
        }
        "http11" => {
            let mut p = crate::app::web::Http11Params::default();
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
