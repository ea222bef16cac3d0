//! The receive window of a Linux receiver, as Linux 6.18 computes it
//! (`net/ipv4/tcp_input.c`, `tcp_output.c`, `tcp_minisocks.c`): the
//! window it offers at the SYN, how that window opens as data arrives
//! (`tcp_grow_window`), how the receive buffer grows with what the
//! application reads in a round trip and with what waits out of order
//! (`tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`), what every ACK advertises
//! (`tcp_select_window`), and the quick-ACK counter these drive. It is a
//! pure state machine: the sink hands it each arriving segment, asks it
//! for the window of each ACK, and tells it when the application has read.
//!
//! Heads up: read Linux's `tcp_select_initial_window`,
//! `tcp_init_buffer_space`, `tcp_measure_rcv_mss`, `tcp_grow_window`,
//! `tcp_rcv_rtt_update`, `tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`,
//! `__tcp_select_window` and `tcp_select_window` before changing this file.
//!
//! # What is modelled
//!
//! Windows and buffers are in bytes, every segment counted as `advmss`
//! payload bytes (the sink numbers segments, not bytes), with Linux's
//! defaults: `tcp_rmem` 131072 B to start and 32 MiB at most, window scale
//! 10 (from the 32 MiB), timestamps on.
//!
//! * **Buffer and window.** Linux charges each queued segment its
//!   `truesize` (payload, headroom and the socket buffer's own struct) and
//!   turns buffer space into window with the ratio len/truesize it
//!   measures on the first full-sized segment (`scaling_ratio`, in 256ths;
//!   128 until then). `TRUESIZE_BYTES` is what Linux measures on the
//!   emulation's veth path: its window plateau of 80896 B = 131072 B x
//!   158/256 gives a truesize of 2332 to 2346 B per 1448-byte segment.
//! * **At the SYN** (`tcp_select_initial_window`): the window is the
//!   default buffer's 65536 B rounded down to whole segments (65160 B, 45
//!   segments of 1448 B), unscaled. When the first data arrives (the
//!   handshake's end, `tcp_init_buffer_space`): `window_clamp` = 65536 -
//!   advmss, `rcv_ssthresh` = min(65160, window_clamp), and the buffer
//!   measurement starts from 10 segments (`rcvq_space.space`).
//! * **Growth** (`tcp_grow_window`): every arriving segment, in order or
//!   not, raises `rcv_ssthresh` by 2 advmss, up to the smaller of
//!   `window_clamp` and the free space, and asks for an immediate ACK.
//! * **The buffer** grows (never shrinks) two ways (`tcp_rcvbuf_grow`).
//!   Once per receiver round trip, when the application read more than in
//!   the last (`copied` > `space`): the window is 2 copied, plus twice
//!   that scaled by the growth (copied - space) / space, plus the span up
//!   to the highest out-of-order byte; the buffer is that window turned
//!   into truesize space, at most 32 MiB; `window_clamp` follows. And at
//!   every out-of-order arrival, with `space` unchanged: 2 space plus the
//!   out-of-order span.
//! * **The receiver's RTT** (`tcp_rcv_rtt_update`), which times the round
//!   trip: from timestamps (now minus the echoed TSval, in whole
//!   milliseconds, 0 ms giving no sample), smoothed by 1/8 upwards and
//!   taken at once downwards; and once per window of data (the time for
//!   rcv_nxt to pass rcv_nxt + rcv_wnd), which can only lower it.
//! * **Each ACK's window** (`tcp_select_window`): the free space (buffer
//!   less the truesize of the out-of-order and unread segments, as
//!   window), at most `rcv_ssthresh`, rounded up to the scale's 1024 B;
//!   below half the buffer it is rounded down instead, and 0 if under a
//!   segment or 1/16 of the buffer. The right edge never moves back
//!   (`tcp_shrink_window` 0).
//! * **Quick ACKs** (`icsk_ack.quick`): 16 at the first data (the window
//!   over two segments, at most 16), 16 again after data below rcv_nxt or
//!   after a silence longer than the receiver's RTO, and at least one
//!   whenever the window grows (`quick |= 1`); each ACK sent spends one,
//!   and none are left while held data take half the buffer.
//! * **The delayed-ACK timeout** (`icsk_ack.ato`): 40 ms (`TCP_ATO_MIN`,
//!   the sink's `delack_interval`) at the first data; halved plus the
//!   gap at each in-order arrival closer than it (plus half the minimum
//!   for arrivals within that), doubled whenever the timer fires, at most
//!   the RTO; the wait is that, bounded by the receiver's srtt and 500 ms
//!   once above the minimum, and by 196 ms (`tcp_delack_max` at HZ 250).
//! * **The read** (`tcp_recvmsg`): the application reads what an arrival
//!   put in order, measuring the round trip's reading after the first
//!   segment's copy (the rest still queued); if the window it frees is
//!   twice the one last offered, an ACK says so (`__tcp_cleanup_rbuf`).
//!
//! # Not modelled
//!
//! Memory pressure and pruning (the window keeps the data inside the
//! buffer), `SO_RCVBUF` and `TCP_WINDOW_CLAMP`, pingpong (interactive)
//! mode, jiffies (times are exact), the quick ACKs after a CE mark, SACK compression, and segments of varied sizes
//! (every one counts as `advmss`, the group's first payload size). The receiver's RTO, which only
//! decides when a silence restarts the quick ACKs, is Linux's after its
//! one sample, the handshake: rtt + max(2 rtt, 200 ms).

use aqmlab_qdisc::{Duration, Time};

/// Bytes Linux charges for one full-sized segment on the emulation's veth
/// path (see the module doc).
pub const TRUESIZE_BYTES: u32 = 2340;
/// `tcp_rmem[1]`: the receive buffer a socket starts with.
pub const RMEM_DEFAULT_BYTES: u32 = 131_072;
/// `tcp_rmem[2]`: the most autotuning grows it to (Linux 6.16 and later).
pub const RMEM_MAX_BYTES: u32 = 32 << 20;
/// `TCP_DEFAULT_SCALING_RATIO`: half the buffer is window, until measured.
const DEFAULT_SCALING_RATIO: u64 = 128;
/// `TCP_MAX_QUICKACKS`.
const MAX_QUICKACKS: u32 = 16;
/// `initial rcv_mss` (`tcp_initialize_rcv_mss`: at most 536 B).
const INITIAL_RCV_MSS: u64 = 536;
/// `TCP_INIT_CWND`: the first round trip's measure counts 10 segments.
const INIT_CWND: u64 = 10;
/// Linux's smallest RTO, for the receiver's own.
const RTO_MIN: Duration = Duration::from_millis(200);
/// The longest a delayed ACK waits unless an RTT bounds it (`HZ / 2`).
const ATO_MAX: Duration = Duration::from_millis(500);
/// `tcp_delack_max`: `rto_min` less one jiffy, 196 ms at the emulation
/// kernel's HZ of 250.
const DELACK_MAX: Duration = Duration::from_millis(196);

/// What a receiver is configured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcvParams {
    /// Payload bytes per segment (`advmss`).
    pub advmss: u32,
    /// Buffer bytes charged per segment.
    pub truesize: u32,
    pub rmem_default: u32,
    pub rmem_max: u32,
    /// The delayed-ACK timeout's floor (`TCP_ATO_MIN`, 40 ms).
    pub ato_min: Duration,
}

impl RcvParams {
    /// Linux's defaults for segments of `advmss` payload bytes.
    pub fn linux(advmss: u32) -> RcvParams {
        RcvParams {
            advmss: advmss.max(1),
            truesize: TRUESIZE_BYTES.max(advmss),
            rmem_default: RMEM_DEFAULT_BYTES,
            rmem_max: RMEM_MAX_BYTES,
            ato_min: Duration::from_millis(40),
        }
    }

    /// `rcv_wscale`: enough to express the largest buffer's window.
    fn wscale(&self) -> u32 {
        let space = u64::from(self.rmem_max.max(self.rmem_default));
        (space.ilog2().saturating_sub(15)).min(14)
    }
}

/// One arrival, as the sink saw it, in segments (the sink's numbering from
/// the first data segment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub tsecr_ms: u32,
    pub kind: ArrivalKind,
    /// Segments received in order after the arrival (`rcv_nxt`).
    pub rcv_nxt: u64,
    /// Segments held out of order after it.
    pub ofo_segs: u64,
    /// One past the highest segment held out of order (`rcv_nxt` if none).
    pub ofo_end: u64,
    /// Out of order, it extended the highest run held (Linux coalesces it
    /// into that run's buffer, charging it before the window grows).
    pub extends_last: bool,
}

/// What an arriving segment was to the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrivalKind {
    /// It advanced `rcv_nxt` (and took with it what followed it).
    InOrder,
    /// New, held above a hole.
    OutOfOrder,
    /// Below `rcv_nxt`: a retransmission of what had arrived.
    Old,
    /// Already held out of order.
    Duplicate,
}

/// The receiver's state, bytes unless named otherwise (Linux's names).
#[derive(Clone, Debug)]
struct RcvState {
    established: bool,
    rcvbuf: u64,
    scaling_ratio: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    rcv_wnd: u64,
    rcv_wup: u64,
    rcv_mss: u64,
    rcv_nxt: u64,
    /// Segments charged to the buffer: held out of order, and in order
    /// but not yet read; and the bytes up to the highest held.
    ofo_segs: u64,
    unread_segs: u64,
    ofo_span: u64,
    /// The end of the last in-order arrival's own segment: what the
    /// application's first copy of the read that follows reaches.
    first_end: u64,
    /// `rcvq_space`: bytes read in the last measured round trip, and where
    /// and when the current one started.
    space: u64,
    space_seq: u64,
    space_at: Time,
    /// `rcv_rtt_est.rtt_us`: 8 times the receiver's RTT in microseconds
    /// (0: none yet), and the window measure's mark.
    rtt_us8: u64,
    last_tsecr: Option<u32>,
    rtt_mark: Option<(u64, Time)>,
    quick: u32,
    /// The last in-order data arrival (`lrcvtime`), the receiver's RTO
    /// and its smoothed RTT (the handshake's sample, its only one).
    last_rcv: Option<Time>,
    rto: Duration,
    srtt: Option<Duration>,
    /// The delayed-ACK timeout's estimate (`icsk_ack.ato`), from
    /// `ato_min` (`TCP_ATO_MIN`, the sink's `delack_interval`).
    ato: Duration,
    ato_min: Duration,
}

/// A Linux receiver's window.
#[derive(Clone, Debug)]
pub struct RcvWindow {
    params: RcvParams,
    /// The window scale's unit, 2^`rcv_wscale` bytes (fixed at the SYN).
    scale: u64,
    s: RcvState,
}

impl RcvWindow {
    /// The window as the SYN leaves it (`tcp_select_initial_window` on a
    /// new socket's buffer).
    pub fn new(params: RcvParams) -> RcvWindow {
        let rcvbuf = u64::from(params.rmem_default);
        let mss = u64::from(params.advmss);
        let full = win_from_space(DEFAULT_SCALING_RATIO, rcvbuf as i64).max(0) as u64;
        let space = if full > mss { full / mss * mss } else { full };
        let rcv_wnd = space.min(u64::from(u16::MAX));
        RcvWindow {
            params,
            scale: 1 << params.wscale(),
            s: RcvState {
                established: false,
                rcvbuf,
                scaling_ratio: DEFAULT_SCALING_RATIO,
                window_clamp: u64::from(u16::MAX) << params.wscale(),
                rcv_ssthresh: rcv_wnd,
                rcv_wnd,
                rcv_wup: 0,
                rcv_mss: INITIAL_RCV_MSS.min(mss),
                rcv_nxt: 0,
                ofo_segs: 0,
                unread_segs: 0,
                ofo_span: 0,
                first_end: 0,
                space: 0,
                space_seq: 0,
                space_at: Time::ZERO,
                rtt_us8: 0,
                last_tsecr: None,
                rtt_mark: None,
                quick: 0,
                last_rcv: None,
                rto: Duration::from_secs(1),
                srtt: None,
                ato: Duration::ZERO,
                ato_min: params.ato_min,
            },
        }
    }

    /// The window the SYN's answer carries (not scaled).
    pub fn syn_window(&self) -> u32 {
        self.s.rcv_wnd as u32
    }

    /// ACKs still to be sent at once.
    pub fn quick(&self) -> u32 {
        self.s.quick
    }

    /// How long a delayed ACK waits now (`tcp_send_delayed_ack`): the
    /// estimate, above `ato_min` bounded by the RTT and 500 ms, and by
    /// `tcp_delack_max`.
    pub fn delack_timeout(&self) -> Duration {
        let mut ato = self.s.ato.max(self.s.ato_min);
        if ato > self.s.ato_min {
            let mut max_ato = ATO_MAX;
            if let Some(srtt) = self.s.srtt {
                max_ato = max_ato.min(srtt.max(self.s.ato_min));
            }
            ato = ato.min(max_ato);
        }
        ato.min(DELACK_MAX)
    }

    /// The delayed-ACK timer fired with an ACK owed: the next wait is
    /// longer (`tcp_delack_timer_handler`).
    pub fn on_delack_timer(&mut self) {
        self.s.ato = Duration::from_nanos(self.s.ato.nanos().saturating_mul(2)).min(self.s.rto);
    }

    /// The buffer's size now (`sk_rcvbuf`).
    pub fn rcvbuf(&self) -> u64 {
        self.s.rcvbuf
    }

    /// The most the window may grow to now (`window_clamp`).
    pub fn window_clamp(&self) -> u64 {
        self.s.window_clamp
    }

    /// Where the window is opening towards (`rcv_ssthresh`).
    pub fn rcv_ssthresh(&self) -> u64 {
        self.s.rcv_ssthresh
    }

    /// A data segment arrived; `syn_at` is when the SYN did, if there was
    /// one (the handshake's round trip ends with the first data).
    pub fn on_data(&mut self, a: &Arrival, now: Time, syn_at: Option<Time>) {
        let mss = u64::from(self.params.advmss);
        if !self.s.established {
            self.establish(now, syn_at);
        }
        // `tcp_rcv_rtt_measure_ts`, before the segment is queued: the
        // application has read everything, so a larger sample counts too.
        // A zero echo is none (the sender had heard nothing yet), as
        // Linux's sender takes it.
        if self.s.last_tsecr != Some(a.tsecr_ms) && a.tsecr_ms != 0 {
            self.s.last_tsecr = Some(a.tsecr_ms);
            if mss >= self.s.rcv_mss {
                let delta_ms = ts_clock_ms(now).wrapping_sub(a.tsecr_ms);
                if delta_ms > 0 && delta_ms < i32::MAX as u32 / 1000 {
                    self.rtt_update(u64::from(delta_ms) * 1000, false);
                }
            }
        }
        let old_nxt = self.s.rcv_nxt;
        debug_assert!(a.rcv_nxt * mss >= old_nxt && a.ofo_end >= a.rcv_nxt);
        match a.kind {
            ArrivalKind::InOrder => {
                // `tcp_event_data_recv` runs before the held data follow
                // (`tcp_ofo_queue`): rcv_nxt is the segment's own end for
                // the window's RTT measure, and all of it is charged.
                self.s.first_end = old_nxt + mss;
                self.s.rcv_nxt = self.s.first_end;
                self.s.unread_segs = a.rcv_nxt - old_nxt / mss;
                self.s.ofo_segs = a.ofo_segs;
                self.measure_rcv_mss();
                self.rtt_measure_window(now);
                // 16 quick ACKs at the first data and after a silence
                // longer than the RTO.
                // and the delayed-ACK timeout follows the arrivals' spacing.
                let ato_min = self.s.ato_min;
                match self.s.last_rcv {
                    None => {
                        self.incr_quickack(MAX_QUICKACKS);
                        self.s.ato = ato_min;
                    }
                    Some(t) => {
                        let m = now - t;
                        if m.nanos() <= ato_min.nanos() / 2 {
                            self.s.ato = Duration::from_nanos(self.s.ato.nanos() / 2 + ato_min.nanos() / 2);
                        } else if m < self.s.ato {
                            self.s.ato = (Duration::from_nanos(self.s.ato.nanos() / 2) + m).min(self.s.rto);
                        } else if m > self.s.rto {
                            self.incr_quickack(MAX_QUICKACKS);
                        }
                    }
                }
                self.s.last_rcv = Some(now);
                // Linux grows the window for segments of 128 B or more.
                if mss >= 128 {
                    self.grow_window();
                }
                self.s.rcv_nxt = a.rcv_nxt * mss;
                self.s.ofo_span = (a.ofo_end - a.rcv_nxt) * mss;
            }
            ArrivalKind::OutOfOrder => {
                // `tcp_data_queue_ofo`: measured and grown before the
                // segment is charged, unless it joined the highest run
                // (`tcp_ooo_try_coalesce` charges it first), then the
                // buffer provisioned for the span.
                self.s.ofo_segs = a.ofo_segs - u64::from(!a.extends_last);
                self.measure_rcv_mss();
                self.grow_window();
                self.s.ofo_segs = a.ofo_segs;
                self.s.ofo_span = (a.ofo_end - a.rcv_nxt) * mss;
                self.rcvbuf_grow(self.s.space);
            }
            ArrivalKind::Old => {
                // `tcp_enter_quickack_mode`.
                self.incr_quickack(MAX_QUICKACKS);
            }
            ArrivalKind::Duplicate => {}
        }
    }

    /// The window an ACK sent now advertises, bytes (`tcp_select_window`).
    pub fn select_window(&mut self) -> u32 {
        let cur = self.receive_window();
        let mut new = self.window_now();
        if new < cur {
            new = cur.div_ceil(self.scale) * self.scale;
        }
        self.s.rcv_wnd = new;
        self.s.rcv_wup = self.s.rcv_nxt;
        self.s.quick = self.s.quick.saturating_sub(1);
        new.min(u64::from(u16::MAX) * self.scale) as u32
    }

    /// The application has read the in-order data an arrival delivered
    /// (`tcp_recvmsg`). Returns whether Linux would then send a window
    /// update (`__tcp_cleanup_rbuf`: the window the read frees is at least
    /// twice the one last advertised).
    pub fn on_read(&mut self, now: Time) -> bool {
        if self.s.unread_segs == 0 || !self.s.established {
            return false;
        }
        self.s.unread_segs = 0;
        // `tcp_rcv_space_adjust` after the first segment's copy, with the
        // rest of what the arrival released still queued (`inq`); later
        // copies of the same read fall inside the round trip it starts.
        let elapsed_us = (now - self.s.space_at).0 / 1000;
        if self.s.rtt_us8 != 0 && elapsed_us >= self.s.rtt_us8 >> 3 {
            let inq = self.s.rcv_nxt - self.s.first_end;
            let copied = (self.s.first_end - self.s.space_seq).saturating_sub(inq);
            if copied > self.s.space {
                self.rcvbuf_grow(copied);
            }
            self.s.space_seq = self.s.first_end;
            self.s.space_at = now;
        }
        let cur = self.receive_window();
        if 2 * cur > self.s.window_clamp {
            return false;
        }
        let new = self.window_now();
        new != 0 && new >= 2 * cur
    }

    /// `tcp_init_buffer_space`, when the handshake ends.
    fn establish(&mut self, now: Time, syn_at: Option<Time>) {
        let mss = u64::from(self.params.advmss);
        self.s.established = true;
        let maxwin = self.full_space();
        if self.s.window_clamp >= maxwin {
            self.s.window_clamp = maxwin;
        }
        if self.s.window_clamp > 2 * mss && self.s.window_clamp + mss > maxwin {
            self.s.window_clamp = (2 * mss).max(maxwin - mss);
        }
        self.s.rcv_ssthresh = self.s.rcv_ssthresh.min(self.s.window_clamp);
        self.s.space = self.s.rcv_ssthresh.min(self.s.rcv_wnd).min(INIT_CWND * mss);
        self.s.space_at = now;
        // The passive side's one RTT sample is the handshake's: srtt = m,
        // rttvar = max(2 m, rto_min). Without a handshake Linux's initial
        // RTO stays.
        if let Some(at) = syn_at {
            let m = now - at;
            self.s.rto = m + (m + m).max(RTO_MIN);
            self.s.srtt = Some(m);
        }
    }

    /// `tcp_measure_rcv_mss` for a full-sized segment.
    fn measure_rcv_mss(&mut self) {
        let mss = u64::from(self.params.advmss);
        if mss != self.s.rcv_mss {
            let ratio = ((mss << 8) / u64::from(self.params.truesize)).max(1);
            if ratio != self.s.scaling_ratio {
                self.s.scaling_ratio = ratio;
                self.set_window_clamp(self.full_space());
                self.s.space = self.s.space.min(self.s.window_clamp);
            }
            self.s.rcv_mss = mss;
        }
    }

    /// `tcp_set_window_clamp`.
    fn set_window_clamp(&mut self, val: u64) {
        let old = self.s.window_clamp;
        if val == old {
            return;
        }
        self.s.window_clamp = val;
        if val < old {
            self.s.rcv_ssthresh = self.s.rcv_ssthresh.min(val);
        } else {
            self.s.rcv_ssthresh = self.s.rcv_ssthresh.max(self.s.rcv_wnd.min(val));
        }
    }

    /// `tcp_grow_window` for a full segment: 2 advmss more, up to the room.
    fn grow_window(&mut self) {
        let room = (self.s.window_clamp as i64).min(self.space_now()) - self.s.rcv_ssthresh as i64;
        if room <= 0 {
            return;
        }
        let incr = 2 * u64::from(self.params.advmss);
        self.s.rcv_ssthresh += incr.min(room as u64);
        self.s.quick |= 1;
    }

    /// `tcp_rcvbuf_grow`.
    fn rcvbuf_grow(&mut self, newval: u64) {
        let old = self.s.space;
        self.s.space = newval;
        let mut rcvwin = 2 * newval;
        if old > 0 && newval > old {
            rcvwin += 2 * (rcvwin * (newval - old) / old);
        }
        rcvwin += self.s.ofo_span;
        let rcvbuf = ((rcvwin << 8) / self.s.scaling_ratio).min(u64::from(self.params.rmem_max));
        if rcvbuf > self.s.rcvbuf {
            self.s.rcvbuf = rcvbuf;
            self.s.window_clamp = self.full_space();
        }
    }

    /// `tcp_rcv_rtt_update`; `sample_us` in microseconds.
    fn rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let old = self.s.rtt_us8;
        let m = sample_us << 3;
        if old == 0 || m < old {
            self.s.rtt_us8 = m;
        } else if !win_dep {
            self.s.rtt_us8 = old - (old >> 3) + sample_us;
        }
    }

    /// `tcp_rcv_rtt_measure`: the time to receive one window.
    fn rtt_measure_window(&mut self, now: Time) {
        match self.s.rtt_mark {
            Some((seq, _)) if self.s.rcv_nxt < seq => return,
            Some((_, at)) => self.rtt_update(((now - at).0 / 1000).max(1), true),
            None => {}
        }
        self.s.rtt_mark = Some((self.s.rcv_nxt + self.s.rcv_wnd, now));
    }

    /// `tcp_incr_quickack`.
    fn incr_quickack(&mut self, max: u32) {
        let q = (self.s.rcv_wnd / (2 * self.s.rcv_mss)) as u32;
        let q = if q == 0 { 2 } else { q };
        self.s.quick = self.s.quick.max(q.min(max));
    }

    /// `__tcp_select_window` with window scaling.
    fn window_now(&mut self) -> u64 {
        let scale = self.scale;
        let allowed = self.full_space();
        let full = self.s.window_clamp.min(allowed);
        let mss = self.s.rcv_mss.min(full);
        let mut free = self.space_now();
        if free < (full / 2) as i64 {
            self.s.quick = 0;
            free = free.div_euclid(scale as i64) * scale as i64;
            if free < (allowed / 16) as i64 || free < mss as i64 {
                return 0;
            }
        }
        let free = (free as u64).min(self.s.rcv_ssthresh);
        free.div_ceil(scale) * scale
    }

    /// `tcp_receive_window`: what is left of the window last advertised.
    fn receive_window(&self) -> u64 {
        (self.s.rcv_wup + self.s.rcv_wnd).saturating_sub(self.s.rcv_nxt)
    }

    /// `tcp_full_space`: the whole buffer as window.
    fn full_space(&self) -> u64 {
        win_from_space(self.s.scaling_ratio, self.s.rcvbuf as i64).max(0) as u64
    }

    /// `tcp_space`: the free buffer as window (negative when overdrawn).
    fn space_now(&self) -> i64 {
        let used = (self.s.ofo_segs + self.s.unread_segs) * u64::from(self.params.truesize);
        win_from_space(self.s.scaling_ratio, self.s.rcvbuf as i64 - used as i64)
    }
}

/// The TCP timestamp clock (TSval) at `t`: milliseconds, wrapping as the
/// option's 32 bits do, started at 1 because a zero echo means none (Linux
/// starts each connection's clock at a random offset).
pub fn ts_clock_ms(t: Time) -> u32 {
    ((t.0 / 1_000_000) as u32).wrapping_add(1)
}

/// `tcp_win_from_space`: buffer bytes as window bytes.
fn win_from_space(ratio: u64, space: i64) -> i64 {
    (space * ratio as i64) >> 8
}

#[cfg(test)]
mod test {
    use super::*;

    const MS: u64 = 1_000_000;
    /// The SYN at 0, the first data at 100 ms (the handshake's round trip).
    const SYN_AT: Option<Time> = Some(Time::ZERO);

    fn rx() -> RcvWindow {
        RcvWindow::new(RcvParams::linux(1448))
    }

    /// Segment `n - 1` in order, echoing the TSval of an ACK sent at
    /// `echo_ms`.
    fn in_order(n: u64, echo_ms: u64) -> Arrival {
        Arrival {
            tsecr_ms: ts_clock_ms(Time(echo_ms * MS)),
            kind: ArrivalKind::InOrder,
            rcv_nxt: n,
            ofo_segs: 0,
            ofo_end: n,
            extends_last: false,
        }
    }

    /// Segment `n - 1` arrives in order at `at_ms`, is ACKed with the
    /// window and read; returns whether the read sent a window update.
    fn arrive_and_read(r: &mut RcvWindow, n: u64, at_ms: u64) -> bool {
        r.on_data(&in_order(n, 0), Time(at_ms * MS), SYN_AT);
        r.select_window();
        r.on_read(Time(at_ms * MS))
    }

    #[test]
    fn test_the_syn_offers_the_default_buffers_half_in_whole_segments() {
        // 131072 B x 128/256 = 65536 B, rounded down to 45 segments of
        // 1448 B; window scale ilog2(32 MiB) - 15 = 10.
        let r = rx();
        assert_eq!(r.syn_window(), 65160);
        assert_eq!(r.scale, 1 << 10);
    }

    #[test]
    fn test_the_first_segment_measures_the_ratio_and_opens_the_window_by_two_segments() {
        let mut r = rx();
        r.on_data(&in_order(1, 0), Time(100 * MS), SYN_AT);
        // Established: clamp 65536 - 1448 = 64088. The segment measures
        // 1448 x 256 / 2340 = 158 (of 256): clamp 131072 x 158 / 256 =
        // 80896, rcv_ssthresh max(64088, min(65160, 80896)) = 65160.
        // Growth: room = min(80896, (131072 - 2340) x 158 / 256 = 79451)
        // - 65160, so 2 x 1448 more: 68056.
        assert_eq!(r.window_clamp(), 80896);
        assert_eq!(r.rcv_ssthresh(), 68056);
        // 16 quick ACKs (65160 / (2 x 1448) = 22, at most 16), one more
        // for the growth: 16 | 1.
        assert_eq!(r.quick(), 17);
        // The ACK: min(79451, 68056) rounded up to 1024 B, 67 x 1024.
        assert_eq!(r.select_window(), 68608);
        assert_eq!(r.quick(), 16);
    }

    #[test]
    fn test_the_window_stops_at_the_buffer_less_what_is_unread() {
        let mut r = rx();
        for n in 1..=40 {
            arrive_and_read(&mut r, n, 100 + n);
        }
        // rcv_ssthresh grew 2 segments at a time to the free space with
        // one unread segment, 79451 B; the clamp is 80896.
        assert_eq!(r.rcv_ssthresh(), 79451);
        // With nothing unread (a delayed ACK's timer) the window is the
        // rcv_ssthresh rounded up, 78 x 1024 = 79872 B: 55 segments.
        assert_eq!(r.select_window(), 79872);
    }

    #[test]
    fn test_a_round_trip_reading_twice_the_last_grows_the_buffer_for_slow_start() {
        let mut r = rx();
        // The first data at 100 ms echoes the SYN's answer (0 ms): a
        // timestamp RTT of 100 ms.
        r.on_data(&in_order(1, 0), Time(100 * MS), SYN_AT);
        r.on_read(Time(100 * MS));
        assert_eq!(r.s.rtt_us8, 800_000);
        // 20 more segments by 171 ms, and one at 200 ms, echoing the same
        // TSval (no new sample). Reads before 200 ms fall inside the round
        // trip the measure started with the first data, at 100 ms.
        for n in 2..=21 {
            arrive_and_read(&mut r, n, 150 + n);
            assert_eq!(r.rcvbuf(), 131_072);
        }
        r.on_data(&in_order(22, 0), Time(200 * MS), SYN_AT);
        r.on_read(Time(200 * MS));
        // copied = 22 segments, 31856 B, more than the 14480 the measure
        // started from: rcvwin = 2 x 31856 = 63712, plus twice 63712 x
        // (31856 - 14480) / 14480 = 76454 (integer), so 216620; the buffer
        // 216620 x 256 / 158 = 350979 B and the clamp 350979 x 158 / 256 =
        // 216619.
        assert_eq!(r.s.space, 31856);
        assert_eq!(r.rcvbuf(), 350_979);
        assert_eq!(r.window_clamp(), 216_619);
    }

    #[test]
    fn test_data_held_out_of_order_provisions_the_buffer_and_never_pulls_the_edge_back() {
        let mut r = rx();
        r.on_data(&in_order(1, 0), Time(100 * MS), SYN_AT);
        let mut edge = 1448 + u64::from(r.select_window());
        r.on_read(Time(100 * MS));
        // Segment 1 is lost; 2, 3, ... arrive and wait above the hole.
        for m in 1..=36u64 {
            let a = Arrival {
                tsecr_ms: ts_clock_ms(Time::ZERO),
                kind: ArrivalKind::OutOfOrder,
                rcv_nxt: 1,
                ofo_segs: m,
                ofo_end: m + 2,
                // The first starts the run above the hole; the rest join it.
                extends_last: m > 1,
            };
            r.on_data(&a, Time((100 + m) * MS), SYN_AT);
            let new_edge = 1448 + u64::from(r.select_window());
            assert!(
                new_edge >= edge,
                "the edge moved back after {m} held: {new_edge} < {edge}"
            );
            edge = new_edge;
            r.on_read(Time((100 + m) * MS));
            // Each arrival asks for 2 x 14480 plus the span to the highest
            // held byte, (m + 1) x 1448: more than the buffer's 80896 B of
            // window from m + 1 = 36 segments on. At 37, 28960 + 53576 =
            // 82536, which needs 82536 x 256 / 158 = 133729 B of buffer.
            if m < 35 {
                assert_eq!(r.rcvbuf(), 131_072, "after {m} held");
            }
        }
        assert_eq!(r.rcvbuf(), 133_729);
        assert_eq!(r.window_clamp(), 133_729 * 158 / 256);
        // Held data take more than half the buffer: no quick ACKs (the
        // window's selection clears them).
        assert_eq!(r.quick(), 0);
        // Segment 1 fills the hole: 38 in order, the 37 after segment 0
        // unread when the ACK leaves, which offers what is left, (133729 -
        // 37 x 2340) x 158 / 256 = 29099, below half the buffer so rounded
        // down, to 28672 B; the read that follows frees the buffer, and a
        // window of twice that or more is worth an ACK of its own
        // (`__tcp_cleanup_rbuf`).
        let fill = Arrival {
            kind: ArrivalKind::InOrder,
            ..in_order(38, 0)
        };
        r.on_data(&fill, Time(140 * MS), SYN_AT);
        assert_eq!(r.select_window(), 28672);
        assert!(r.on_read(Time(140 * MS)));
        // An ordinary arrival's read does not.
        assert!(!arrive_and_read(&mut r, 39, 141));
    }

    #[test]
    fn test_the_receivers_rtt_follows_timestamps_down_at_once_and_up_by_an_eighth() {
        let mut r = rx();
        r.on_data(&in_order(1, 0), Time(100 * MS), SYN_AT);
        assert_eq!(r.s.rtt_us8, 8 * 100_000);
        // 40 ms: taken at once.
        r.on_data(&in_order(2, 100), Time(140 * MS), SYN_AT);
        assert_eq!(r.s.rtt_us8, 8 * 40_000);
        // 120 ms: 7/8 of the old plus the sample, 280000 + 120000.
        r.on_data(&in_order(3, 30), Time(150 * MS), SYN_AT);
        assert_eq!(r.s.rtt_us8, 400_000);
        // The same echo again gives no sample; nor does 0 ms.
        r.on_data(&in_order(4, 30), Time(190 * MS), SYN_AT);
        r.on_data(&in_order(5, 190), Time(190 * MS), SYN_AT);
        assert_eq!(r.s.rtt_us8, 400_000);
    }

    #[test]
    fn test_quick_acks_return_after_old_data_and_after_a_silence_longer_than_the_rto() {
        let mut r = rx();
        // The handshake took 100 ms: RTO 100 + max(200, 200) = 300 ms.
        r.on_data(&in_order(1, 0), Time(100 * MS), SYN_AT);
        while r.quick() > 0 {
            r.select_window();
        }
        r.on_data(&in_order(2, 0), Time(399 * MS), SYN_AT);
        assert!(r.quick() <= 1, "only the growth's one, not 16: {}", r.quick());
        while r.quick() > 0 {
            r.select_window();
        }
        r.on_data(&in_order(3, 0), Time(700 * MS), SYN_AT);
        assert!(r.quick() >= 16);
        while r.quick() > 0 {
            r.select_window();
        }
        let old = Arrival {
            kind: ArrivalKind::Old,
            ..in_order(3, 0)
        };
        r.on_data(&old, Time(701 * MS), SYN_AT);
        assert_eq!(r.quick(), 16);
    }

    #[test]
    fn test_the_delayed_ack_timeout_doubles_when_it_fires_and_follows_the_arrivals() {
        let mut r = rx();
        let ms = Duration::from_millis;
        // The first data at 100 ms: ato = TCP_ATO_MIN, 40 ms; the
        // handshake's 100 ms is the receiver's srtt, its RTO 300 ms.
        r.on_data(&in_order(1, 0), Time(100 * MS), SYN_AT);
        assert_eq!(r.delack_timeout(), ms(40));
        // Each expiry doubles it (at most the RTO); the wait is bounded by
        // the srtt: 80, then min(160, 100), then min(300, 100).
        r.on_delack_timer();
        assert_eq!(r.delack_timeout(), ms(80));
        r.on_delack_timer();
        assert_eq!(r.delack_timeout(), ms(100));
        r.on_delack_timer();
        assert_eq!(r.s.ato, ms(300));
        // An arrival 60 ms after the last: ato / 2 + 60 = 210 ms (the wait
        // still 100); then 10 ms later, at most half of ato_min apart: ato /
        // 2 + 20, so 125, then 82.5 and 61.25 ms.
        r.on_data(&in_order(2, 0), Time(160 * MS), SYN_AT);
        assert_eq!((r.s.ato, r.delack_timeout()), (ms(210), ms(100)));
        r.on_data(&in_order(3, 0), Time(170 * MS), SYN_AT);
        assert_eq!(r.s.ato, ms(125));
        r.on_data(&in_order(4, 0), Time(175 * MS), SYN_AT);
        assert_eq!(r.delack_timeout(), Duration::from_micros(82_500));
        r.on_data(&in_order(5, 0), Time(180 * MS), SYN_AT);
        assert_eq!(r.delack_timeout(), Duration::from_micros(61_250));
    }
}
