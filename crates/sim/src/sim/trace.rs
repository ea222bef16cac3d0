//! Time series: each traced queue's backlog and discipline state, each
//! traced TCP flow's window and round-trip estimates (and, in the
//! Linux-style family, its pacing rate and its congestion control's own
//! state), sampled at a fixed interval, and each traced group's one-way
//! delays over the interval.

use super::*;

/// Time series, one column per traced quantity.
pub(super) struct Tracer {
    pub(super) interval: Duration,
    pub(super) next_at: Time,
    pub(super) links: Vec<u32>,
    pub(super) flows: Vec<(u32, String)>,
    /// Per group: its column name and, if traced, the delays since the
    /// last sample (count, sum and largest in ns), from time zero.
    pub(super) groups: Vec<Option<(String, u64, u128, u64)>>,
    pub(super) time_s: Vec<f64>,
    pub(super) columns: Vec<(String, Vec<f64>)>,
}

impl Tracer {
    /// A packet of group `g` delivered after `d`.
    #[inline]
    pub(super) fn delivered(&mut self, g: u16, d: Duration) {
        if let Some(Some((_, n, sum, max))) = self.groups.get_mut(g as usize) {
            *n += 1;
            *sum += d.0 as u128;
            *max = (*max).max(d.0);
        }
    }
}

impl<'s> Sim<'s> {
    pub(super) fn sample(&mut self) {
        let Some(tr) = self.tracer.as_mut() else {
            return;
        };
        tr.time_s.push(self.now.as_secs_f64());
        let mut i = 0;
        for &l in &tr.links {
            let link = &self.net.links[l as usize];
            let name = &self.sc.net.links[l as usize].name;
            let mut push = |key: &str, v: f64| {
                if tr.columns.len() <= i {
                    tr.columns.push((format!("{name}.{key}"), Vec::new()));
                }
                tr.columns[i].1.push(v);
                i += 1;
            };
            link.trace(&mut push);
        }
        for (f, name) in &tr.flows {
            let sender = &self.ends[*f as usize]
                .tcp()
                .expect("traced flows are TCP flows")
                .conn
                .sender;
            let mut values = vec![
                ("cwnd", sender.cwnd()),
                ("ssthresh", sender.ssthresh() as f64),
                ("srtt_s", sender.srtt().as_secs_f64()),
                ("rto_s", sender.rto().as_secs_f64()),
            ];
            sender.trace(&mut |key, v| values.push((key, v)));
            for (key, v) in values {
                if tr.columns.len() <= i {
                    tr.columns.push((format!("{name}.{key}"), Vec::new()));
                }
                tr.columns[i].1.push(v);
                i += 1;
            }
        }
        for (name, n, sum, max) in tr.groups.iter_mut().flatten() {
            // The interval's mean and largest delay; NaN (null) if nothing
            // of the group arrived in it.
            let (mean, largest) = match *n {
                0 => (f64::NAN, f64::NAN),
                n => (*sum as f64 / n as f64 * 1e-9, *max as f64 * 1e-9),
            };
            for (key, v) in [("delay_mean_s", mean), ("delay_max_s", largest)] {
                if tr.columns.len() <= i {
                    tr.columns.push((format!("{name}.{key}"), Vec::new()));
                }
                tr.columns[i].1.push(v);
                i += 1;
            }
            (*n, *sum, *max) = (0, 0, 0);
        }
        if !self.web.is_empty() {
            if tr.columns.len() <= i {
                tr.columns.push(("web.active_connections".to_string(), Vec::new()));
            }
            tr.columns[i]
                .1
                .push(self.active.iter().map(|a| a.0).sum::<u64>() as f64);
        }
        tr.next_at = self.now + tr.interval;
        if tr.next_at <= self.window.end {
            self.events.schedule(tr.next_at, Event::Sample);
        }
    }
}
