//! The run's summary as types: what `aqmlab run --json` prints under
//! `"summary"` and `docs/metrics.md` defines, key by key.
//!
//! Each part is built by what measures it: a queue's measures by its
//! [`QueueMonitor`](super::QueueMonitor), a flow's counts by its
//! [`FlowStats`](super::FlowStats), times by [`TimesSummary::of`]; the run
//! (`crate::sim`) adds what only it knows (names, the discipline's
//! parameters, TCP counters) and assembles them into a [`RunSummary`].
//!
//! The JSON is the contract, so the types follow it exactly: fields are
//! serialised in declaration order, which is the order of the keys in the
//! output; a part marked `flatten` adds its keys to the object around it; an
//! `Option` part that is `None` adds none. A float that is not finite (a
//! mean over no samples, a rate over nothing) is written as `null`, which is
//! what serde_json does with NaN; an `Option<f64>` is `null` when there is
//! no value at all (a percentile of no samples).

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use super::{ratio, DelayHistogram, FlowStats};

/// Entries by name, in the order they were added, written as a JSON object
/// (queues by link name, traffic groups, classes).
#[derive(Clone, Debug, PartialEq)]
pub struct Named<T>(pub Vec<(String, T)>);

impl<T> Default for Named<T> {
    fn default() -> Self {
        Named(Vec::new())
    }
}

impl<T> Named<T> {
    pub fn push(&mut self, name: impl Into<String>, value: T) {
        self.0.push((name.into(), value));
    }

    /// The entry called `name`, if any.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }
}

impl<T> FromIterator<(String, T)> for Named<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(iter: I) -> Self {
        Named(iter.into_iter().collect())
    }
}

impl<T: Serialize> Serialize for Named<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// One run: the top level of the summary.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunSummary {
    pub scenario: String,
    pub seed: u64,
    pub engine_version: &'static str,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// Events the loop handled.
    pub events: u64,
    /// Wall-clock time of the run (the only field that is not a function of
    /// scenario and seed).
    pub wall_s: f64,
    /// The reported queues, by link name, in the scenario's link order.
    pub queues: Named<QueueSummary>,
    /// The traffic groups, by name, in the scenario's order.
    pub traffic: Named<GroupSummary>,
    /// One row per flow, group by group.
    pub flows: Vec<FlowRow>,
    /// Among the bulk TCP flows that sent in the window; absent if none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fairness: Option<Fairness>,
}

/// A reported queue: what its monitor measured, then the discipline, the
/// link and the whole-run counters.
#[derive(Clone, Debug, serde::Serialize)]
pub struct QueueSummary {
    #[serde(flatten)]
    pub measured: QueueMeasures,
    /// The discipline's effective parameters (`crate::net::qdisc::describe`),
    /// its keys depending on the kind.
    pub qdisc: Value,
    pub link: LinkSummary,
    pub run_totals: RunTotals,
}

/// What a [`QueueMonitor`](super::QueueMonitor) measured in the window.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct QueueMeasures {
    pub arrivals: u64,
    pub departures: u64,
    pub drops: u64,
    /// Drops by [`DropReason`](aqmlab_qdisc::DropReason), in the order of
    /// `DropReason::ALL`, named `drops_` + `as_str()`.
    pub drops_overflow: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    pub drops_expired: u64,
    pub drops_head: u64,
    pub drops_penalty: u64,
    pub marks: u64,
    pub loss_rate: f64,
    pub qdelay_mean_s: f64,
    pub qdelay_std_s: f64,
    pub qdelay_max_s: f64,
    /// Percentiles of the sojourn time, to within 0.8%
    /// ([`DelayHistogram`](super::DelayHistogram)); null without departures.
    pub qdelay_p50_s: Option<f64>,
    pub qdelay_p95_s: Option<f64>,
    pub qdelay_p99_s: Option<f64>,
    /// Time average of the backlog and its variance (packets).
    pub qlen_mean_pkts: f64,
    pub qlen_var_pkts: f64,
    pub utilization: f64,
    pub consecutive_loss: LossRunSummary,
    /// Classes that had an arrival or a drop, in class order.
    pub by_class: Named<ClassSummary>,
}

/// Loss runs at a queue: mean and variance of the length, and how many runs
/// of each length (the lengths that occurred, shortest first, as strings).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LossRunSummary {
    pub mean: f64,
    pub var: f64,
    pub hist: Named<u64>,
}

/// One class at a queue.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ClassSummary {
    pub arrivals: u64,
    pub drops: u64,
    pub loss_rate: f64,
    pub qdelay_mean_s: f64,
    pub qdelay_std_s: f64,
    pub qdelay_max_s: f64,
}

/// The link a queue feeds.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LinkSummary {
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_s: f64,
}

/// Whole-run counters of a queue, from time zero, and its backlog at the
/// end: arrivals = departures + drops + backlog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RunTotals {
    pub arrivals: u64,
    pub departures: u64,
    pub drops: u64,
    pub backlog_pkts: u32,
}

/// What a flow's [`FlowStats`](super::FlowStats) counted, as rates over the
/// window.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FlowMeasures {
    pub sent: u64,
    pub delivered: u64,
    pub drops: u64,
    pub goodput_bps: f64,
    pub throughput_bps: f64,
    pub loss_rate: f64,
    pub delay_mean_s: f64,
    pub delay_std_s: f64,
    pub delay_min_s: f64,
    pub delay_max_s: f64,
}

/// One flow's row.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FlowRow {
    pub group: String,
    /// The flow's index in its group.
    pub id: u32,
    pub src: String,
    pub dst: String,
    /// Round-trip propagation delay; null without a route both ways.
    pub rtt_prop_s: f64,
    #[serde(flatten)]
    pub measured: FlowMeasures,
    /// A TCP flow's connection counters.
    #[serde(flatten)]
    pub tcp: Option<TcpFlowSummary>,
}

/// Retransmits, timeouts, fast retransmits and ECN window reductions inside
/// the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TcpCounts {
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub ecn_reductions: u64,
}

impl From<[u64; 4]> for TcpCounts {
    /// From the counters in the order of the field declarations.
    fn from(c: [u64; 4]) -> Self {
        TcpCounts {
            retransmits: c[0],
            timeouts: c[1],
            fast_retransmits: c[2],
            ecn_reductions: c[3],
        }
    }
}

impl TcpCounts {
    pub fn add(&mut self, o: TcpCounts) {
        self.retransmits += o.retransmits;
        self.timeouts += o.timeouts;
        self.fast_retransmits += o.fast_retransmits;
        self.ecn_reductions += o.ecn_reductions;
    }
}

/// A TCP flow's part of its row.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TcpFlowSummary {
    #[serde(flatten)]
    pub counts: TcpCounts,
    pub delivered_bytes: u64,
    /// Payload delivered in order over the run, all connections.
    pub transfer_bytes: u64,
    /// Transfers that ended inside the window.
    pub transfers: usize,
    /// Completion time of a single finite transfer; null otherwise.
    pub completion_s: Option<f64>,
    pub rtt_mean_s: f64,
    pub rto_mean_s: f64,
    /// The sender's state at the end (packets).
    pub cwnd: f64,
    pub ssthresh: u32,
}

/// A traffic group: its flows' counts pooled, then what its kind adds.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GroupSummary {
    pub kind: &'static str,
    pub class: String,
    pub flows: u32,
    pub sent: u64,
    pub delivered: u64,
    pub drops: u64,
    pub goodput_bps: f64,
    pub throughput_bps: f64,
    pub loss_rate: f64,
    pub delay_mean_s: f64,
    pub delay_std_s: f64,
    /// Percentiles of the one-way delay, to within 0.8%
    /// ([`DelayHistogram`](super::DelayHistogram)); null without deliveries.
    pub delay_p50_s: Option<f64>,
    pub delay_p95_s: Option<f64>,
    pub delay_p99_s: Option<f64>,
    /// Percentiles of the time the same packets waited in queues on their
    /// path (the sum of their sojourn times: the one-way delay less
    /// propagation and transmission); null without deliveries or where it
    /// is not measured (emulation).
    pub queueing_p50_s: Option<f64>,
    pub queueing_p95_s: Option<f64>,
    pub queueing_p99_s: Option<f64>,
    /// The one-way delays' and the queueing times' distributions, if the
    /// group asks for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_histogram: Option<HistogramSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queueing_histogram: Option<HistogramSummary>,
    /// TCP groups (`ftp`, `file`, `onoff` over TCP, `web`, `http11`).
    #[serde(flatten)]
    pub tcp: Option<TcpGroupSummary>,
    /// Web and HTTP/1.1 groups: the requests' goodput, client to server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_goodput_bps: Option<f64>,
    #[serde(flatten)]
    pub http11: Option<Http11Summary>,
    #[serde(flatten)]
    pub web: Option<WebSummary>,
}

/// A histogram's bins that hold samples, as parallel lists (seconds, and
/// counts of samples in [lower, upper)), shortest delays first.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct HistogramSummary {
    pub lower_s: Vec<f64>,
    pub upper_s: Vec<f64>,
    pub counts: Vec<u64>,
}

impl From<&DelayHistogram> for HistogramSummary {
    fn from(h: &DelayHistogram) -> Self {
        let mut out = HistogramSummary::default();
        for b in h.bins() {
            out.lower_s.push(b.lower_s);
            out.upper_s.push(b.upper_s);
            out.counts.push(b.count);
        }
        out
    }
}

impl GroupSummary {
    /// A group of `flows` flows whose counts together are `total` and whose
    /// one-way delays are `delays`, over a window of `window_s` seconds,
    /// without the parts of its kind.
    pub fn pooled(
        kind: &'static str,
        class: String,
        flows: u32,
        total: &FlowStats,
        delays: &DelayHistogram,
        window_s: f64,
    ) -> GroupSummary {
        let (goodput_bps, throughput_bps) = total.rates_bps(window_s);
        GroupSummary {
            kind,
            class,
            flows,
            sent: total.sent_pkts,
            delivered: total.delivered_pkts,
            drops: total.drops,
            goodput_bps,
            throughput_bps,
            loss_rate: ratio(total.drops as f64, total.sent_pkts as f64),
            delay_mean_s: total.delay.mean(),
            delay_std_s: total.delay.std(),
            delay_p50_s: delays.percentile(0.5),
            delay_p95_s: delays.percentile(0.95),
            delay_p99_s: delays.percentile(0.99),
            queueing_p50_s: None,
            queueing_p95_s: None,
            queueing_p99_s: None,
            delay_histogram: None,
            queueing_histogram: None,
            tcp: None,
            request_goodput_bps: None,
            http11: None,
            web: None,
        }
    }
}

/// A TCP group's connection counters and transfer times.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TcpGroupSummary {
    #[serde(flatten)]
    pub counts: TcpCounts,
    pub transfers: TimesSummary,
}

/// An HTTP/1.1 group's response times, pooled and by response size.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Http11Summary {
    pub responses: TimesSummary,
    pub responses_by_size: Vec<SizeRow>,
}

/// A web group's object and page times, and its open connections.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WebSummary {
    pub objects: TimesSummary,
    pub pages: TimesSummary,
    /// Time average of the group's open connections in the window.
    pub active_connections_mean: f64,
}

/// Jain's index over the bulk TCP flows' goodputs.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Fairness {
    pub jain: f64,
    pub flows: usize,
}

/// Count, mean, standard deviation and percentiles of times (s).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TimesSummary {
    pub count: usize,
    pub mean_s: f64,
    pub std_s: f64,
    pub p50_s: Option<f64>,
    pub p95_s: Option<f64>,
    pub p99_s: Option<f64>,
}

impl TimesSummary {
    /// Of `xs`, which it sorts. The standard deviation is over n; the p-th
    /// percentile is the ceil(n p)-th smallest sample (nearest rank).
    pub fn of(xs: &mut [f64]) -> TimesSummary {
        xs.sort_unstable_by(f64::total_cmp);
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let std = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt();
        let pct = |p: f64| xs.get(((n * p).ceil() as usize).saturating_sub(1)).copied();
        TimesSummary {
            count: xs.len(),
            mean_s: mean,
            std_s: std,
            p50_s: pct(0.5),
            p95_s: pct(0.95),
            p99_s: pct(0.99),
        }
    }
}

/// Response times of one response size (packets).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SizeRow {
    pub pkts: u32,
    pub count: usize,
    pub mean_s: f64,
    pub std_s: f64,
}

impl SizeRow {
    /// One row per size that occurred, smallest first, with the count, mean
    /// and standard deviation (over n, as [`TimesSummary::of`]) of its
    /// times, so that a reader can pool any range of sizes exactly (e.g.
    /// the small files only). Sorts `xs`.
    pub fn by_size(xs: &mut [(u32, f64)]) -> Vec<SizeRow> {
        xs.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        xs.chunk_by(|a, b| a.0 == b.0)
            .map(|g| {
                let n = g.len() as f64;
                let mean = g.iter().map(|x| x.1).sum::<f64>() / n;
                let std = (g.iter().map(|x| (x.1 - mean) * (x.1 - mean)).sum::<f64>() / n).sqrt();
                SizeRow {
                    pkts: g[0].0,
                    count: g.len(),
                    mean_s: mean,
                    std_s: std,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use aqmlab_qdisc::DropReason;
    use serde_json::json;

    // Helpers

    fn measures() -> QueueMeasures {
        QueueMeasures {
            arrivals: 10,
            departures: 8,
            drops: 2,
            drops_overflow: 1,
            drops_early: 0,
            drops_forced: 0,
            drops_expired: 0,
            drops_head: 0,
            drops_penalty: 1,
            marks: 0,
            loss_rate: 0.2,
            qdelay_mean_s: f64::NAN,
            qdelay_std_s: f64::NAN,
            qdelay_max_s: f64::NAN,
            qdelay_p50_s: None,
            qdelay_p95_s: None,
            qdelay_p99_s: None,
            qlen_mean_pkts: 1.5,
            qlen_var_pkts: 0.0,
            utilization: 1.0,
            consecutive_loss: LossRunSummary {
                mean: 2.0,
                var: 0.0,
                hist: Named(vec![("2".into(), 1)]),
            },
            by_class: Named::default(),
        }
    }

    #[test]
    fn test_drop_fields_follow_drop_reasons() {
        let v = serde_json::to_value(measures()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let reasons: Vec<String> = DropReason::ALL
            .iter()
            .map(|r| format!("drops_{}", r.as_str()))
            .collect();
        assert_eq!(keys[3..9], reasons.iter().map(|s| s.as_str()).collect::<Vec<_>>()[..]);
    }

    #[test]
    fn test_not_finite_is_null_and_flatten_keeps_order() {
        let q = QueueSummary {
            measured: measures(),
            qdisc: json!({ "kind": "droptail" }),
            link: LinkSummary {
                from: "a".into(),
                to: "b".into(),
                rate_bps: 10,
                delay_s: 0.5,
            },
            run_totals: RunTotals {
                arrivals: 12,
                departures: 9,
                drops: 2,
                backlog_pkts: 1,
            },
        };
        let text = serde_json::to_string(&q).unwrap();
        assert!(text.starts_with(r#"{"arrivals":10,"departures":8,"drops":2,"drops_overflow":1,"#));
        assert!(text.contains(r#""qdelay_mean_s":null,"#));
        assert!(text.contains(r#""qlen_mean_pkts":1.5,"qlen_var_pkts":0.0,"utilization":1.0,"#));
        assert!(text.ends_with(
            r#""consecutive_loss":{"mean":2.0,"var":0.0,"hist":{"2":1}},"by_class":{},"qdisc":{"kind":"droptail"},"link":{"from":"a","to":"b","rate_bps":10,"delay_s":0.5},"run_totals":{"arrivals":12,"departures":9,"drops":2,"backlog_pkts":1}}"#
        ));
    }

    #[test]
    fn test_times_summary_nearest_rank_and_empty() {
        let t = TimesSummary::of(&mut [4.0, 1.0, 3.0, 2.0]);
        assert_eq!(
            (t.count, t.mean_s, t.p50_s, t.p95_s, t.p99_s),
            (4, 2.5, Some(2.0), Some(4.0), Some(4.0))
        );
        assert_eq!(t.std_s, 1.25_f64.sqrt());
        let none = TimesSummary::of(&mut []);
        assert_eq!(
            serde_json::to_string(&none).unwrap(),
            r#"{"count":0,"mean_s":null,"std_s":null,"p50_s":null,"p95_s":null,"p99_s":null}"#
        );
    }

    #[test]
    fn test_by_size_rows_smallest_first() {
        let rows = SizeRow::by_size(&mut [(3, 1.0), (1, 2.0), (3, 3.0)]);
        assert_eq!(
            rows,
            vec![
                SizeRow {
                    pkts: 1,
                    count: 1,
                    mean_s: 2.0,
                    std_s: 0.0
                },
                SizeRow {
                    pkts: 3,
                    count: 2,
                    mean_s: 2.0,
                    std_s: 1.0
                },
            ]
        );
    }

    #[test]
    fn test_absent_parts_add_no_keys() {
        let g = GroupSummary {
            kind: "cbr",
            class: "be".into(),
            flows: 1,
            sent: 0,
            delivered: 0,
            drops: 0,
            goodput_bps: 0.0,
            throughput_bps: 0.0,
            loss_rate: f64::NAN,
            delay_mean_s: f64::NAN,
            delay_std_s: f64::NAN,
            delay_p50_s: None,
            delay_p95_s: None,
            delay_p99_s: None,
            queueing_p50_s: None,
            queueing_p95_s: None,
            queueing_p99_s: None,
            delay_histogram: None,
            queueing_histogram: None,
            tcp: None,
            request_goodput_bps: None,
            http11: None,
            web: None,
        };
        assert_eq!(
            serde_json::to_string(&g).unwrap(),
            r#"{"kind":"cbr","class":"be","flows":1,"sent":0,"delivered":0,"drops":0,"goodput_bps":0.0,"throughput_bps":0.0,"loss_rate":null,"delay_mean_s":null,"delay_std_s":null,"delay_p50_s":null,"delay_p95_s":null,"delay_p99_s":null,"queueing_p50_s":null,"queueing_p95_s":null,"queueing_p99_s":null}"#
        );
    }
}
