//! Reno as Linux's built-in `tcp_reno` (`net/ipv4/tcp_cong.c`): slow start,
//! one packet per window of acknowledged packets, ssthresh = cwnd / 2 (at
//! least 2). The Linux-style family's baseline, to compare its other
//! congestion controls with under the same loss recovery.

use super::cc::{reno_cong_avoid, reno_ssthresh, CongestionControl, Tcp};

#[derive(Clone, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn ssthresh(&mut self, tcp: &Tcp) -> u32 {
        reno_ssthresh(tcp)
    }

    fn cong_avoid(&mut self, tcp: &mut Tcp, acked: u32) {
        reno_cong_avoid(tcp, acked);
    }
}
