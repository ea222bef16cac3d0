//! A scenario's network made real: its links built from their specs with
//! this run's disciplines, monitors and drawn delays, and its queues'
//! report. The simulator and the emulator both build their network here,
//! so a queue is the same code and reports the same keys in either.

use aqmlab_qdisc::{rng, AnyQdisc, Duration, Limit, QueueDisc};

use super::link::{Link, Network};
use super::qdisc::describe;
use super::topology::{DelaySpec, NetSpec, Report, NO_ROUTE};
use crate::monitor::{LinkSummary, Named, QueueMonitor, QueueSummary, Window};

impl Network {
    /// The network `spec` describes, for a run with `seed` measured over
    /// `window`; `classes` are the scenario's traffic classes.
    pub fn build(spec: &NetSpec, classes: &[String], seed: u64, window: Window) -> Network {
        let links = spec
            .links
            .iter()
            .map(|l| {
                let qdisc = l.qdisc.build(
                    l.info(),
                    rng::stream_seed(seed, &format!("queue[{}].qdisc", l.name)),
                    classes,
                );
                // A queue reported only if it drops, and that cannot drop.
                let mon = if l.report == Report::IfDropped
                    && matches!(&qdisc, AnyQdisc::DropTail(d) if d.params().limit == Limit::Unlimited)
                {
                    QueueMonitor::totals_only(window)
                } else {
                    QueueMonitor::new(window, classes.len())
                };
                let delay = match &l.delay {
                    DelaySpec::Fixed(d) => *d,
                    DelaySpec::Drawn { dist, stream } => {
                        Duration::from_secs_f64(dist.sample(&mut rng::stream(seed, stream)))
                    }
                };
                Link::new(l.to, l.rate_bps, delay, qdisc, mon)
            })
            .collect();
        Network::new(links, spec.next_hop.clone(), spec.nodes.len())
    }

    /// The propagation delay from `src` to `dst` (with the delays as this
    /// run drew them), or `None` without a route.
    pub fn path_delay(&self, spec: &NetSpec, src: u32, dst: u32) -> Option<Duration> {
        let mut d = Duration::ZERO;
        let mut at = src;
        while at != dst {
            let l = spec.route(at, dst);
            if l == NO_ROUTE {
                return None;
            }
            d = d + self.links[l as usize].delay;
            at = self.links[l as usize].to;
        }
        Some(d)
    }

    /// The reported queues: each monitor's measures (closed with
    /// `QueueMonitor::finish` first), with the discipline, the link and the
    /// whole-run counters.
    pub fn queue_summaries(&self, spec: &NetSpec, classes: &[String]) -> Named<QueueSummary> {
        let mut queues = Named::default();
        for (l, ls) in self.links.iter().zip(&spec.links) {
            if ls.report == Report::IfDropped && l.mon.totals.drops == 0 {
                continue;
            }
            let q = QueueSummary {
                measured: l.mon.summary(classes),
                qdisc: describe(&l.qdisc, classes),
                link: LinkSummary {
                    from: spec.nodes[ls.from as usize].name.clone(),
                    to: spec.nodes[ls.to as usize].name.clone(),
                    rate_bps: ls.rate_bps,
                    delay_s: l.delay.as_secs_f64(),
                },
                run_totals: l.mon.run_totals(l.qdisc.backlog().pkts),
            };
            queues.push(ls.name.clone(), q);
        }
        queues
    }
}
