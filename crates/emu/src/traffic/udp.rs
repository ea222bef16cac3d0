//! The open-loop UDP sources on kernel sockets, on the simulator's own
//! schedules (`aqmlab_sim::transport::udp::UdpSource`, same draws). Each
//! datagram carries its sequence number and the sender's CLOCK_REALTIME
//! stamp; the receiver takes the kernel's receive stamp, so the one-way
//! delay does not include this thread's wake-ups. How late each send was
//! against its schedule is kept too. A group's `ecn` codepoint is set on
//! the sending socket (IP_TOS), so its packets reach the router as ECT(0)
//! or ECT(1).

use std::os::fd::AsRawFd;

use aqmlab_qdisc::Time;

use super::*;
use crate::sys::realtime_ns;

impl Traffic {
    /// Emits flow `f`'s packets due at `at`; returns when it sends next.
    pub(super) fn send_udp(&mut self, f: usize, at: Time) -> Option<Time> {
        if self.flows[f].sender.is_none() {
            let (src, dst) = (self.flows[f].plan.src_host, self.flows[f].plan.dst_host);
            self.enter(src).ok()?;
            let s = socket(libc::SOCK_DGRAM).ok()?;
            setopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, &(4i32 << 20), "SO_SNDBUF").ok()?;
            // The group's ECN codepoint (`ecn`), in the low bits of the TOS.
            setopt(s.as_raw_fd(), libc::IPPROTO_IP, libc::IP_TOS, &(self.flows[f].plan.ecn.bits() as i32), "IP_TOS").ok()?;
            let sa = sockaddr(lab::host_ip(dst), FLOW_PORT_BASE + f as u16);
            // SAFETY: `sa` is live for the call.
            unsafe { libc::connect(s.as_raw_fd(), &sa as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32) };
            self.flows[f].sender = Some(s);
        }
        let fl = &mut self.flows[f];
        let FlowApp::Udp(src) = &mut fl.plan.app else { return None };
        let (n, next) = src.fire(at);
        let late = mono_ns().saturating_sub(self.t0).saturating_sub(at.0);
        if self.window.contains(at) && fl.stats.send_late_ns.len() < MAX_DELAY_SAMPLES {
            fl.stats.send_late_ns.push(late);
        }
        for _ in 0..n {
            let size = src.packet_size().max(UDP_HEADERS + 16);
            let len = (size - UDP_HEADERS) as usize;
            let len = len.min(self.buf.len());
            fl.udp_seq += 1;
            self.buf[0..8].copy_from_slice(&fl.udp_seq.to_le_bytes());
            self.buf[8..16].copy_from_slice(&realtime_ns().to_le_bytes());
            let s = fl.sender.as_ref().expect("opened above");
            // SAFETY: `buf` is live for the call.
            let r = unsafe { libc::send(s.as_raw_fd(), self.buf.as_ptr() as *const libc::c_void, len, 0) };
            if r < 0 {
                fl.stats.send_errors += 1;
            }
        }
        next
    }

    pub(super) fn read_udp(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        let Some(s) = &fl.sink else { return };
        let mut control = [0u64; 16];
        loop {
            let mut iov = libc::iovec {
                iov_base: self.buf.as_mut_ptr() as *mut libc::c_void,
                iov_len: self.buf.len(),
            };
            // SAFETY: a zeroed msghdr is valid; its buffers are set to live
            // arrays below.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
            msg.msg_controllen = std::mem::size_of_val(&control);
            // SAFETY: `msg` points to live buffers for the call.
            let n = unsafe { libc::recvmsg(s.as_raw_fd(), &mut msg, 0) };
            if n < 16 {
                return;
            }
            let arrived = rx_stamp(&msg).unwrap_or_else(realtime_ns);
            // Inside the window by the kernel's arrival stamp (on the
            // emulation's clock), not by when this thread got to it, so a
            // late wake-up near the window's end loses nothing.
            let (mono, real) = (mono_ns(), realtime_ns());
            let at = Time(mono.saturating_sub(real.saturating_sub(arrived)).saturating_sub(self.t0));
            let seq = u64::from_le_bytes(self.buf[0..8].try_into().expect("8 bytes"));
            fl.stats.udp_received_run += 1;
            fl.stats.udp_highest_seq = fl.stats.udp_highest_seq.max(seq);
            let sent = u64::from_le_bytes(self.buf[8..16].try_into().expect("8 bytes"));
            if self.window.contains(at) {
                let d = arrived.saturating_sub(sent);
                fl.stats.delivered_pkts += 1;
                fl.stats.delivered_bytes += n as u64 + UDP_HEADERS as u64;
                fl.stats.delay.push(aqmlab_qdisc::Duration(d));
                if fl.stats.delays_ns.len() < MAX_DELAY_SAMPLES {
                    fl.stats.delays_ns.push(d);
                }
            }
        }
    }
}

/// The kernel's receive stamp (SCM_TIMESTAMPNS) of a received message.
fn rx_stamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: walks the control messages the kernel wrote into `msg`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}
