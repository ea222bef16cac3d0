//! The network as nodes, links and static routes.

use aqmlab_qdisc::{Duration, LinkInfo};

use crate::config::dist::Dist;
use crate::net::qdisc::QdiscSpec;

#[derive(Clone, Debug)]
pub struct NodeSpec {
    pub name: String,
}

/// A link's propagation delay: fixed, or drawn once per run from a stream.
#[derive(Clone, Debug)]
pub enum DelaySpec {
    Fixed(Duration),
    /// Drawn from `dist` with the stream `stream`; links that share a stream
    /// name (the two directions of one access link) get the same delay.
    Drawn {
        dist: Dist,
        stream: String,
    },
}

/// Whether a queue appears in the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    Always,
    /// Access links: reported only if they dropped something, so that no
    /// drop is ever hidden.
    IfDropped,
}

#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub mtu_bytes: u32,
    pub delay: DelaySpec,
    pub qdisc: QdiscSpec,
    /// The key path of the table that configured `qdisc` (e.g.
    /// `topology.links[2].reverse_qdisc`), for messages about it after
    /// validation (such as what an ns-2 export cannot express).
    pub qdisc_path: String,
    pub report: Report,
}

impl LinkSpec {
    pub fn info(&self) -> LinkInfo {
        LinkInfo {
            rate_bps: self.rate_bps,
            mtu_bytes: self.mtu_bytes,
        }
    }
}

#[derive(Clone, Debug)]
pub struct NetSpec {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// `next_hop[node * nodes.len() + dst]`: the link a packet at `node`
    /// addressed to `dst` leaves on, or `NO_ROUTE`.
    pub next_hop: Vec<u32>,
    /// Where traffic groups send from and to when they do not say: the
    /// dumbbell's sender and receiver hosts; empty for other topologies.
    pub default_src: Vec<u32>,
    pub default_dst: Vec<u32>,
}

pub const NO_ROUTE: u32 = u32::MAX;

impl NetSpec {
    pub fn route(&self, node: u32, dst: u32) -> u32 {
        self.next_hop[node as usize * self.nodes.len() + dst as usize]
    }

    /// The links a packet from `src` to `dst` crosses, in order.
    pub fn path(&self, src: u32, dst: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut at = src;
        while at != dst {
            let l = self.route(at, dst);
            out.push(l);
            at = self.links[l as usize].to;
        }
        out
    }

    pub(crate) fn node_index(&self, name: &str) -> Option<u32> {
        self.nodes.iter().position(|n| n.name == name).map(|i| i as u32)
    }

    /// Static shortest paths by hop count; among equal next hops the lower
    /// node index wins, then the lower link index. One breadth-first search
    /// per destination over the reversed links: O(N (N + L)).
    pub(crate) fn compute_routes(&mut self) {
        let n = self.nodes.len();
        let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut outgoing: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, l) in self.links.iter().enumerate() {
            incoming[l.to as usize].push(i);
            outgoing[l.from as usize].push(i);
        }
        let mut next_hop = vec![NO_ROUTE; n * n];
        let mut dist = vec![usize::MAX; n];
        for dst in 0..n {
            dist.fill(usize::MAX);
            dist[dst] = 0;
            let mut frontier = vec![dst];
            while !frontier.is_empty() {
                let mut next = Vec::new();
                for &v in &frontier {
                    for &l in &incoming[v] {
                        let u = self.links[l].from as usize;
                        if dist[u] == usize::MAX {
                            dist[u] = dist[v] + 1;
                            next.push(u);
                        }
                    }
                }
                frontier = next;
            }
            for u in 0..n {
                if u == dst || dist[u] == usize::MAX {
                    continue;
                }
                let best = outgoing[u]
                    .iter()
                    .filter(|&&l| dist[self.links[l].to as usize] == dist[u] - 1)
                    .min_by_key(|&&l| (self.links[l].to, l));
                next_hop[u * n + dst] = best.map_or(NO_ROUTE, |&l| l as u32);
            }
        }
        self.next_hop = next_hop;
    }
}
impl NetSpec {
    /// `Some(())` if `dst` is reachable from `src`.
    pub(crate) fn path_exists(&self, src: u32, dst: u32) -> Option<()> {
        (src == dst || self.route(src, dst) != NO_ROUTE).then_some(())
    }
}
