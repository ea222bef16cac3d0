//! The SACK sender's scoreboard, as ns-2.35's `Agent/TCP/Sack1` keeps it
//! (`tcp/scoreboard-rq.cc`, used by `tcp/tcp-sack1.cc`):
//! the union of the SACKed packet ranges above the cumulative ACK, and a
//! pointer `h_seqno` to the next hole to consider. It only answers "which
//! hole next"; when to retransmit and the pipe counter are the sender's.
//!
//! Heads up: this is ns-2's Sack1, not RFC 6675. Any un-SACKed packet below
//! the highest SACKed one is a hole to retransmit (no DupThresh test per
//! hole, no rescue retransmission), and each hole is retransmitted at most
//! once per recovery because marking a retransmission moves `h_seqno` past
//! it.

/// SACKed ranges above the cumulative ACK and the retransmission pointer.
#[derive(Clone, Debug)]
pub(crate) struct Scoreboard {
    /// Half-open ranges `[left, right)`, sorted, disjoint and not adjacent.
    blocks: Vec<(i64, i64)>,
    /// Packets in `blocks`.
    total: i64,
    /// Next packet to consider for retransmission (-1: none yet).
    h_seqno: i64,
    /// One past the highest cumulative ACK the scoreboard has seen.
    sack_min: i64,
}

impl Scoreboard {
    pub(crate) fn new() -> Scoreboard {
        Scoreboard {
            blocks: Vec::new(),
            total: 0,
            h_seqno: -1,
            sack_min: -1,
        }
    }

    /// The block buffer, only to hand it between connections
    /// ([`crate::transport::tcp::conn::Spare`]).
    pub(crate) fn buffer(&mut self) -> &mut Vec<(i64, i64)> {
        &mut self.blocks
    }

    /// Forgets every SACKed range (on a new ACK outside recovery, on exit
    /// from recovery and on a timeout).
    pub(crate) fn clear(&mut self) {
        self.blocks.clear();
        self.total = 0;
        self.h_seqno = -1;
    }

    /// Takes in an ACK whose cumulative point is `highest_ack` and its SACK
    /// blocks. Returns whether the scoreboard changed (ns-2 `CheckUpdate`):
    /// a dup ACK counts only if it did.
    pub(crate) fn update(&mut self, highest_ack: i64, sacks: &[(u32, u32)]) -> bool {
        let old_total = self.total;
        let mut changed = false;
        if self.sack_min <= highest_ack {
            self.sack_min = highest_ack + 1;
            if !self.blocks.is_empty() {
                self.trim_below(self.sack_min);
                changed = true;
            }
        }
        for &(left, right) in sacks {
            let left = i64::from(left).max(self.sack_min);
            let right = i64::from(right);
            if right > left {
                self.add(left, right);
            }
        }
        changed || old_total != self.total
    }

    /// The lowest un-SACKed packet at or above `h_seqno` (and above the
    /// cumulative ACK) that lies below some SACKed block, if any (ns-2
    /// `GetNextRetran`). Moves `h_seqno` up to it.
    pub(crate) fn next_retransmission(&mut self) -> Option<i64> {
        if self.h_seqno < self.sack_min {
            self.h_seqno = self.sack_min;
        }
        let seq = self.h_seqno;
        let mut hole = None;
        for (k, &(left, right)) in self.blocks.iter().enumerate() {
            if left > seq {
                hole = Some(seq);
                break;
            }
            if seq <= right {
                // Inside (or just after) this block: the hole is its right
                // edge, provided some block lies above it.
                if k + 1 < self.blocks.len() {
                    hole = Some(right);
                }
                break;
            }
        }
        let hole = hole?;
        if hole > self.h_seqno {
            self.h_seqno = hole;
        }
        Some(hole)
    }

    /// `seq` was retransmitted: never offer it again in this recovery.
    pub(crate) fn mark_retransmitted(&mut self, seq: i64) {
        if seq >= self.h_seqno {
            self.h_seqno = seq + 1;
        }
    }

    fn trim_below(&mut self, min: i64) {
        let mut drop = 0;
        for b in self.blocks.iter_mut() {
            if b.1 <= min {
                self.total -= b.1 - b.0;
                drop += 1;
            } else {
                if b.0 < min {
                    self.total -= min - b.0;
                    b.0 = min;
                }
                break;
            }
        }
        self.blocks.drain(..drop);
    }

    fn add(&mut self, left: i64, right: i64) {
        // First block that overlaps or touches [left, right) or lies above it.
        let i = self.blocks.partition_point(|b| b.1 < left);
        let (mut l, mut r) = (left, right);
        let mut j = i;
        while j < self.blocks.len() && self.blocks[j].0 <= right {
            let b = self.blocks[j];
            l = l.min(b.0);
            r = r.max(b.1);
            self.total -= b.1 - b.0;
            j += 1;
        }
        self.blocks.drain(i..j);
        self.blocks.insert(i, (l, r));
        self.total += r - l;
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_empty_update_with_blocks_changes_and_merges() {
        let mut sb = Scoreboard::new();
        assert!(sb.update(4, &[(6, 8)]));
        assert!(sb.update(4, &[(8, 9), (11, 12)]));
        assert_eq!(sb.blocks, vec![(6, 9), (11, 12)]);
        // The same information again is no change.
        assert!(!sb.update(4, &[(6, 9), (11, 12)]));
    }

    #[test]
    fn test_holes_offered_lowest_first_each_once() {
        // Cumulative ACK 4, SACKed [6,9) and [11,12): holes 5, 9, 10; 12 is not
        // below any SACKed block.
        let mut sb = Scoreboard::new();
        sb.update(4, &[(6, 9), (11, 12)]);
        let mut got = vec![];
        while let Some(h) = sb.next_retransmission() {
            got.push(h);
            sb.mark_retransmitted(h);
        }
        assert_eq!(got, vec![5, 9, 10]);
    }

    #[test]
    fn test_cumulative_advance_trims_and_counts_as_change() {
        let mut sb = Scoreboard::new();
        sb.update(4, &[(6, 9), (11, 12)]);
        assert!(sb.update(7, &[]));
        assert_eq!(sb.blocks, vec![(8, 9), (11, 12)]);
        assert_eq!(sb.next_retransmission(), Some(9));
    }
}
