//! The sending half of ns-2's one-way TCP (`Agent/TCP/Reno`,
//! `Agent/TCP/Newreno`, `Agent/TCP/Sack1`) as a pure state machine: it is
//! handed `now`, the application's data, ACKs and timer expiries, and
//! answers with the packets to send (pushed onto a caller's buffer) and
//! the deadline of its retransmission timer. It knows nothing of packet
//! sizes, links or the event queue.
//!
//! Heads up: this is ns-2.35's `tcp/tcp.cc` (the base agent: state,
//! sending, ACK processing, the timer, ECN), `tcp/tcp-reno.cc`,
//! `tcp/tcp-newreno.cc` and `tcp/tcp-sack1.cc`, with the defaults of
//! `tcl/lib/ns-default.tcl`; read the parts the comments below name before
//! changing this file. The RTO arithmetic is in [`super::rtt`], the SACK
//! scoreboard in `scoreboard.rs`.
//!
//! # What is implemented
//!
//! * State, reset and start-up (`tcp.cc`): cwnd 1 for the SYN, then
//!   `initial_window` set on the first new ACK that acknowledges exactly
//!   packet 0 (after the normal increase); `initial_window` drops to 1 if
//!   the first packet times out (`bugfix_ss_`); ssthresh starts at
//!   `initial_ssthresh_pkts`.
//! * Sending (`tcp.cc`): `window()`, `send_much` with `max_burst`, `output`
//!   (ECT, CWR, RTT timing of one new packet at a time, timer re-armed when
//!   none pending or nothing was outstanding).
//! * ACK processing (`tcp.cc`) with per-ACK `opencwnd` and the single
//!   `slowdown` routine (fractional halving, ns-2 `precisionReduce_`).
//! * Reno (`tcp-reno.cc`: dupwnd inflation, exit on any new ACK, one fast
//!   retransmit per window), NewReno (`tcp-newreno.cc`: partial window
//!   deflation, "impatient" timer reset on the first partial ACK only, bursts
//!   of at most 2 while dup ACKs are counted), Sack1 (`tcp-sack1.cc`:
//!   scoreboard of up to 3 blocks per ACK, `h_seqno`, counter pipe).
//! * The retransmission timer (`tcp.cc`: `timeout`): go-back-N from the
//!   cumulative ACK, backoff, Karn's rule, the idle timeout and
//!   `slow_start_restart`.
//! * ECN (`tcp.cc`, RFC 3168): halve at most once per window of data, ECE
//!   ACKs do not open cwnd, CWR on the next packet, and the cwnd = 1 rule
//!   (`ecn_at_cwnd1`).
//!
//! # ns-2 (the default) against the RFCs, and the options
//!
//! | Topic | Here (ns-2.35) | RFC | Option |
//! | --- | --- | --- | --- |
//! | Units, growth | packets; +1 per ACK in slow start, +1/cwnd per ACK in CA, whatever the ACK covers | bytes, RFC 3465 ABC | none |
//! | IW | `initial_window` after the SYN's ACK (1 after a SYN timeout) | 5681/3390 | `initial_window`, `syn` |
//! | Initial ssthresh | `initial_ssthresh_pkts` | "arbitrarily high" | `initial_ssthresh_pkts` |
//! | Cut basis | W = min(cwnd + dupwnd, rwnd); ssthresh = max(2, int(W/2)), cwnd = W/2 | FlightSize/2 (5681 eq. 4) | none |
//! | FR entry | cwnd = W/2, usable window int(cwnd) + dupwnd with dupwnd = `dupack_threshold` | cwnd = ssthresh + 3 | `dupack_threshold` |
//! | Reno exit | first new ACK, cwnd stays W/2 | cwnd = ssthresh | none |
//! | NewReno partial ACK | W' = W - k + 1, retransmit, timer reset on the first only | same (6582) | none |
//! | NewReno full ACK | cwnd left as is (`exit_recovery_fix_` 0) | cwnd = ssthresh or min(ssthresh, FlightSize + 1) | none |
//! | Multiple FR per window | only if highest_ack > recover (or highest_ack = 0) | "careful" (6582) | none |
//! | Limited transmit | on dup ACKs below the threshold if t_seqno <= highest_ack + cwnd + dupacks | 3042 | `limited_transmit` |
//! | SACK | Sack1: any hole below a SACKed block, pipe counter | 6675 IsLost, SetPipe | none |
//! | RTO | see [`super::rtt`] | 6298 | `rto` |
//! | Idle restart | cwnd = 1 when the timer fires with nothing outstanding | RW = min(IW, cwnd) | `slow_start_restart` |
//! | ECT on retransmissions | yes | must not (3168 6.1.5) | none |
//! | ECE at cwnd 1 | cwnd 0.5, wait for the RTO, backoff doubles while marks continue | same (3168 6.1.2) | `ecn_at_cwnd1 = Ignore`: cwnd stays >= 1 |
//!
//! # Finer points of ns-2, and departures from it
//!
//! * Finer points of ns-2's sources, followed: Reno also allows a fast
//!   retransmit while its last action is still DUPACK
//!   (`allow_fast_retransmit`); a dup ACK whose cumulative point is
//!   `highest_ack == 0` may trigger fast retransmit whatever `recover` says
//!   (`bugfix_ss_`); Sack1 ignores dup ACKs after a timeout until the next
//!   new ACK (`timeout_`), does not open cwnd on the ACK that ends
//!   recovery, and counts a dup ACK only if it changed the scoreboard; the
//!   ACK timer is re-armed after the RTT sample (`timerfix_`).
//! * Sack1, an ACK that moves the cumulative point outside recovery (with a
//!   delayed-ACK sink, the ACK of the held packet often carries the first
//!   SACK block after a loss): it is an ordinary new ACK. cwnd opens, the
//!   dup ACK count goes back to 0, its SACK blocks are thrown away with the
//!   rest of the scoreboard, and the window alone says what is sent (one
//!   packet in congestion avoidance when it covers one packet). Only the
//!   dup ACKs after it fill the scoreboard and count towards the threshold;
//!   the one that reaches it sends the retransmission of the first
//!   unacknowledged packet and nothing else (ns-2's `recv` skips
//!   `send_much` while the dup ACK count is not 0).
//! * ECN negotiation as ns-2: packet 0 is sent not-ECT (it carries the
//!   negotiation), the sink echoes ECE on its ACK, and the sender becomes
//!   ECN-capable on the first ACK with ECE. As in ns-2 that echo goes
//!   through the congestion response first; it only acts when the SYN
//!   timed out (last action TIMEOUT), where it costs nothing ssthresh had
//!   not already lost (a SYN timeout sets ssthresh to 2) but is counted as
//!   an ECN reduction and arms `ecn_backoff`.
//! * `cwr` is reported only when `ecn` is on (ns-2 sets the bit after every
//!   cut, with or without ECN; nothing reads it then).
//! * ns-2 re-arms the timer after an idle timeout, so an idle connection
//!   expires every RTO; each later expiry repeats the first (cwnd already 1)
//!   and the next packet sent re-arms the timer anyway, so here the timer
//!   stays off after an idle expiry that sends nothing.
//! * A fast retransmit never sends past the application's data: ns-2
//!   resends `last_ack + 1` even when dup ACKs arrive after everything was
//!   acknowledged.
//! * Not modelled: Tahoe, F-RTO, Quick-Start, timestamps, `overhead_`,
//!   `maxcwnd_`, `windowInitOption_ 2`, `numdupacksFrac_`, D-SACK, integer
//!   halving (`precisionReduce_ false`), `decrease_num_` other than 0.5.
//!
//! # Counters
//!
//! `packets_sent` counts every packet handed out (SYN and retransmissions
//! included); `retransmits` those sent before; `timeouts` retransmission
//! timer expiries with data outstanding (idle expiries excluded);
//! `fast_retransmits` entries into fast retransmit (including the no-cut
//! entry in a window already cut by ECN); `ecn_reductions` ECN responses.

use aqmlab_qdisc::{Duration, Time};

use super::config::{EcnAtCwnd1, TcpConfig, Variant};
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::wire::{AckInfo, Segment};

mod recovery;

/// The send limit of an application with unlimited data (ns-2 sets
/// `curseq_` to `TCP_MAXSEQ`); keeps every sequence number within `u32`.
const UNLIMITED: i64 = u32::MAX as i64;

/// ns-2's `last_cwnd_action_`: the last thing that changed cwnd, which
/// decides whether a new signal may cut it again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndAction {
    /// Nothing yet.
    None,
    /// Fast retransmit (recovery under way for Reno/NewReno).
    DupAck,
    /// Retransmission timeout.
    Timeout,
    /// ECN response.
    Ecn,
    /// Left Reno/NewReno fast recovery.
    Exited,
}

/// The ways ns-2's `slowdown()` is called here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    /// `CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF`: fast retransmit, ECN.
    Halve,
    /// `CLOSE_SSTHRESH_HALF | CLOSE_CWND_RESTART`: retransmission timeout.
    Restart,
    /// `CLOSE_CWND_ONE`: idle restart, or a timeout in a window already cut
    /// by ECN; ssthresh kept.
    One,
}

/// What the sender was configured with, resolved once.
#[derive(Clone, Copy, Debug)]
struct SenderParams {
    variant: Variant,
    /// `window_`: the receiver window, in packets.
    wnd: i64,
    /// `numdupacks_`.
    numdupacks: i64,
    /// `singledup_`: limited transmit.
    singledup: bool,
    slow_start_restart: bool,
    ecn: bool,
    ecn_negotiate: bool,
    ecn_at_cwnd1: EcnAtCwnd1,
    /// `maxburst_`, 0 = unlimited.
    max_burst: u32,
    /// `syn_` and `delay_growth_`.
    syn: bool,
}

/// Counters of one sender (see the module doc for their definitions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSenderStats {
    pub packets_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub ecn_reductions: u64,
}

/// One TCP sender. Sequence numbers are `i64` inside so that ns-2's `-1`
/// ("nothing yet") needs no special case; they fit `u32` outside.
#[derive(Clone, Debug)]
pub struct TcpSender {
    params: SenderParams,
    rtt: RttEstimator,
    scoreboard: Scoreboard,
    stats: TcpSenderStats,

    // State (ns-2's `Agent/TCP` variables, `tcp/tcp.cc`).
    /// Congestion window, packets (real).
    cwnd: f64,
    /// Slow-start threshold, packets (integer).
    ssthresh: i64,
    /// `wnd_init_`: the initial window still in force (1 after a SYN timeout).
    initial_window: f64,
    /// Reno/NewReno window inflation during fast recovery.
    dupwnd: i64,
    dupacks: i64,
    /// Next packet to send.
    t_seqno: i64,
    /// Highest packet sent.
    maxseq: i64,
    /// Highest cumulative ACK acted on (Sack1 does not move it inside
    /// recovery).
    last_ack: i64,
    /// Highest cumulative ACK seen.
    highest_ack: i64,
    /// Packets `0..curseq` may be sent (the SYN included).
    curseq: i64,
    unlimited: bool,
    started: bool,
    /// `maxseq` at the last window cut.
    recover: i64,
    last_action: CwndAction,
    /// One packet at a time is timed: `rtt_seq`, sent at `rtt_ts`.
    rtt_active: bool,
    rtt_seq: i64,
    rtt_ts: Time,
    /// ECN negotiated (`ect_`).
    ect: bool,
    /// An ECE arrived at cwnd <= 1: the next one at cwnd <= 1 backs off.
    ecn_backoff: bool,
    /// A cut happened: the next packet carries CWR (`cong_action_`).
    cong_action: bool,
    /// NewReno and Sack1: a partial ACK has been seen in this recovery.
    firstpartial: bool,
    /// Sack1: in fast recovery.
    fastrecov: bool,
    /// Sack1: packets believed in flight during recovery (a counter).
    pipe: i64,
    /// Sack1 `timeout_`: dup ACKs are ignored until the next new ACK.
    after_timeout: bool,
    /// The retransmission timer.
    rtx_deadline: Option<Time>,
}

impl TcpSender {
    /// A sender as ns-2's `reset()` leaves it. `boot_offset` is the phase
    /// of ns-2's emulated tick clock, in `[0, tick)` (drawn by the engine;
    /// ignored unless `rto` is `Ns2`). Fails on a parameter out of range
    /// and on an unresolved `rto = Ted`.
    /// The SACK scoreboard's buffer, only to hand it between connections
    /// ([`crate::transport::tcp::conn::Spare`]).
    pub(crate) fn buffer(&mut self) -> &mut Vec<(i64, i64)> {
        self.scoreboard.buffer()
    }

    pub fn new(cfg: &TcpConfig, boot_offset: Duration) -> Result<TcpSender, String> {
        if cfg.initial_window == 0 {
            return Err("initial_window must be at least 1 (got 0)".to_string());
        }
        if cfg.rwnd_pkts == 0 {
            return Err("rwnd must be at least 1 packet (got 0)".to_string());
        }
        if cfg.dupack_threshold == 0 {
            return Err("dupack_threshold must be at least 1 (got 0)".to_string());
        }
        if cfg.syn && !cfg.ecn_negotiate {
            return Err("ecn_negotiate = false needs syn = false: a SYN is never ECN-capable (RFC 3168)".to_string());
        }
        let rtt = RttEstimator::new(&cfg.rto, boot_offset)?;
        let initial_window = f64::from(cfg.initial_window);
        Ok(TcpSender {
            params: SenderParams {
                variant: cfg.variant,
                wnd: i64::from(cfg.rwnd_pkts),
                numdupacks: i64::from(cfg.dupack_threshold),
                singledup: cfg.limited_transmit,
                slow_start_restart: cfg.slow_start_restart,
                ecn: cfg.ecn,
                ecn_negotiate: cfg.ecn_negotiate,
                ecn_at_cwnd1: cfg.ecn_at_cwnd1,
                max_burst: cfg.max_burst,
                syn: cfg.syn,
            },
            rtt,
            scoreboard: Scoreboard::new(),
            stats: TcpSenderStats::default(),
            cwnd: if cfg.syn { 1.0 } else { initial_window },
            ssthresh: i64::from(cfg.initial_ssthresh_pkts),
            initial_window,
            dupwnd: 0,
            dupacks: 0,
            t_seqno: 0,
            maxseq: -1,
            last_ack: -1,
            highest_ack: -1,
            curseq: 0,
            unlimited: false,
            started: false,
            recover: 0,
            last_action: CwndAction::None,
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: Time::ZERO,
            // Without negotiation ECN is on from the start.
            ect: cfg.ecn && !cfg.ecn_negotiate,
            ecn_backoff: false,
            cong_action: false,
            firstpartial: false,
            fastrecov: false,
            pipe: -1,
            after_timeout: false,
            rtx_deadline: None,
        })
    }

    // The application's interface (`tcp/tcp.cc`).

    /// The application starts: with `syn`, packet 0 (the SYN) is added to
    /// the send limit and sent; then whatever data the application already
    /// gave goes out as the window allows. A second call does nothing.
    pub fn start(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.started {
            return;
        }
        self.started = true;
        if self.params.syn {
            // ns-2 bumps curseq_ when it sends the first SYN.
            self.curseq = (self.curseq + 1).min(UNLIMITED);
        }
        self.send_much(self.params.max_burst, now, out);
    }

    /// The application has more to send: `Some(n)` adds `n` packets to the
    /// send limit (`advanceby`), `None` makes it unlimited (FTP). Sends if
    /// started.
    pub fn app_data(&mut self, npkts: Option<u64>, now: Time, out: &mut Vec<Segment>) {
        match npkts {
            None => {
                self.unlimited = true;
                self.curseq = UNLIMITED;
            }
            Some(n) => {
                let n = i64::try_from(n).unwrap_or(UNLIMITED);
                self.curseq = self.curseq.saturating_add(n).min(UNLIMITED);
            }
        }
        if self.started {
            self.send_much(self.params.max_burst, now, out);
        }
    }

    /// The application has no more data for now (an ON/OFF source going
    /// OFF): nothing beyond what was already sent will be sent, but what
    /// was sent can still be retransmitted. `app_data` resumes.
    pub fn app_pause(&mut self) {
        self.unlimited = false;
        self.curseq = self.curseq.min(self.t_seqno.max(self.maxseq + 1));
    }

    // Events.

    /// An ACK arrived.
    pub fn on_ack(&mut self, ack: &AckInfo, now: Time, out: &mut Vec<Segment>) {
        if !self.started {
            return;
        }
        let a = ack.ack.map_or(-1, i64::from);
        // As ns-2: the ECN response comes before the ACK moves anything.
        if ack.ece && self.params.ecn {
            self.ecn_response(a);
        }
        match self.params.variant {
            Variant::Reno => self.reno_ack(a, ack.ece, now, out),
            Variant::NewReno => self.newreno_ack(a, ack.ece, now, out),
            Variant::Sack => self.sack_ack(a, ack, now, out),
            _ => unreachable!("the Linux-style variants have their own sender (transport::linux)"),
        }
    }

    /// The retransmission timer may have expired; does nothing unless
    /// `now` has reached [`timer_deadline`](Self::timer_deadline).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Segment>) {
        match self.rtx_deadline {
            Some(d) if now >= d => {
                self.rtx_deadline = None;
                self.timeout(now, out);
            }
            _ => {}
        }
    }

    /// When the retransmission timer expires, if it is armed. Re-read after
    /// every call.
    pub fn timer_deadline(&self) -> Option<Time> {
        self.rtx_deadline
    }

    /// `start` has been called.
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// A finite transfer is fully acknowledged (ns-2's `done`). Never true
    /// for unlimited data or before `start`.
    pub fn is_done(&self) -> bool {
        self.started && !self.unlimited && self.highest_ack >= self.curseq - 1
    }

    // Accessors.

    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    pub fn ssthresh(&self) -> u32 {
        self.ssthresh.clamp(0, i64::from(u32::MAX)) as u32
    }

    /// The window `send_much` uses now: min(int(cwnd) + dupwnd, rwnd) for
    /// Reno and NewReno, min(int(cwnd), rwnd) for Sack (whose recovery is
    /// paced by the pipe instead).
    pub fn usable_window(&self) -> u32 {
        self.window().max(0) as u32
    }

    pub fn dupacks(&self) -> u32 {
        self.dupacks.max(0) as u32
    }

    /// Reno/NewReno window inflation (0 outside fast recovery).
    pub fn dupwnd(&self) -> u32 {
        self.dupwnd.max(0) as u32
    }

    /// Sack1's pipe counter while in fast recovery.
    pub fn pipe(&self) -> Option<i64> {
        self.fastrecov.then_some(self.pipe)
    }

    /// In fast recovery: Sack1's flag; Reno/NewReno while dupwnd > 0.
    pub fn in_recovery(&self) -> bool {
        match self.params.variant {
            Variant::Sack => self.fastrecov,
            Variant::Reno | Variant::NewReno => self.dupwnd > 0,
            _ => unreachable!("the Linux-style variants have their own sender (transport::linux)"),
        }
    }

    pub fn last_cwnd_action(&self) -> CwndAction {
        self.last_action
    }

    pub fn srtt(&self) -> Duration {
        self.rtt.srtt()
    }

    pub fn rttvar(&self) -> Duration {
        self.rtt.rttvar()
    }

    /// The value the retransmission timer is set to now (backoff included).
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }

    pub fn backoff(&self) -> u64 {
        self.rtt.backoff()
    }

    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Highest cumulative ACK seen.
    pub fn highest_ack(&self) -> Option<u32> {
        u32::try_from(self.highest_ack).ok()
    }

    /// Next packet `send_much` would send.
    pub fn next_seq(&self) -> u32 {
        self.t_seqno.clamp(0, UNLIMITED) as u32
    }

    /// Highest packet sent so far.
    pub fn max_seq_sent(&self) -> Option<u32> {
        u32::try_from(self.maxseq).ok()
    }

    pub fn stats(&self) -> &TcpSenderStats {
        &self.stats
    }

    // Sending (`tcp/tcp.cc`: `send_much`, `output`).

    fn window(&self) -> i64 {
        let w = match self.params.variant {
            Variant::Reno | Variant::NewReno => self.cwnd as i64 + self.dupwnd,
            Variant::Sack => self.cwnd as i64,
            _ => unreachable!("the Linux-style variants have their own sender (transport::linux)"),
        };
        w.min(self.params.wnd)
    }

    /// ns-2 `windowd()`: the real-valued window a cut halves.
    fn windowd(&self) -> f64 {
        let w = match self.params.variant {
            Variant::Reno | Variant::NewReno => self.cwnd + self.dupwnd as f64,
            Variant::Sack => self.cwnd,
            _ => unreachable!("the Linux-style variants have their own sender (transport::linux)"),
        };
        w.min(self.params.wnd as f64)
    }

    fn send_much(&mut self, max_burst: u32, now: Time, out: &mut Vec<Segment>) {
        if !self.started {
            return;
        }
        if self.params.variant == Variant::Sack {
            return self.sack_send_much(max_burst, now, out);
        }
        let mut win = self.window();
        let mut sent = 0;
        while self.t_seqno <= self.highest_ack + win && self.t_seqno < self.curseq {
            self.output(self.t_seqno, now, out);
            self.t_seqno += 1;
            sent += 1;
            win = self.window();
            if max_burst > 0 && sent == max_burst {
                break;
            }
        }
    }

    /// Sack1's `send_much`: holes first, then new data; in recovery as long
    /// as pipe < int(cwnd), new data then limited only by the receiver
    /// window.
    fn sack_send_much(&mut self, max_burst: u32, now: Time, out: &mut Vec<Segment>) {
        let mut win = self.window();
        let wnd = self.params.wnd;
        let mut sent = 0;
        let mut found = true;
        loop {
            let open = if self.fastrecov {
                self.pipe < self.cwnd as i64
            } else {
                self.t_seqno <= self.last_ack + win
            };
            if !(found && open && self.last_ack + 1 < self.curseq) {
                break;
            }
            found = false;
            let mut xmit = 0;
            match self.scoreboard.next_retransmission() {
                None => {
                    let room = if self.fastrecov {
                        self.t_seqno <= self.highest_ack + wnd
                    } else {
                        self.t_seqno <= self.highest_ack + win
                    };
                    if room && self.t_seqno < self.curseq {
                        found = true;
                        xmit = self.t_seqno;
                        self.t_seqno += 1;
                    }
                }
                Some(hole) => {
                    if self.recover > 0 && hole <= self.highest_ack + wnd {
                        found = true;
                        self.scoreboard.mark_retransmitted(hole);
                        win = self.window();
                        xmit = hole;
                    }
                }
            }
            if found {
                self.output(xmit, now, out);
                if self.t_seqno <= xmit {
                    self.t_seqno = xmit + 1;
                }
                sent += 1;
                self.pipe += 1;
            }
            if max_burst > 0 && sent == max_burst {
                break;
            }
        }
    }

    /// Limited transmit (RFC 3042, ns-2 `send_one`) on a dup ACK below the
    /// threshold.
    fn send_one(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.t_seqno <= self.highest_ack + self.params.wnd
            && self.t_seqno < self.curseq
            && (self.t_seqno - self.highest_ack) as f64 <= self.cwnd + self.dupacks as f64
        {
            self.output(self.t_seqno, now, out);
            self.t_seqno += 1;
        }
    }

    fn output(&mut self, seq: i64, now: Time, out: &mut Vec<Segment>) {
        let retransmit = seq <= self.maxseq;
        // SetCWRonRetransmit_: CWR rides on whatever goes next.
        let cwr = self.cong_action;
        self.cong_action = false;
        // Nothing outstanding before this packet: (re)arm the timer.
        let force = self.highest_ack == self.maxseq;
        if seq > self.maxseq {
            self.maxseq = seq;
            // Karn: only new data is timed, one packet at a time.
            if !self.rtt_active {
                self.rtt_active = true;
                self.rtt_seq = seq;
                self.rtt_ts = now;
            }
        } else {
            self.stats.retransmits += 1;
        }
        self.stats.packets_sent += 1;
        out.push(Segment {
            seq: seq as u32,
            syn: self.params.syn && seq == 0,
            retransmit,
            cwr: cwr && self.params.ecn,
            // Packet 0 negotiates ECN (it carries ECE, the sink echoes it),
            // so it is not ECN-capable, whether it is a SYN or, without
            // one, the first data packet: ns-2.35's `TcpAgent::output`
            // clears ECT on sequence number 0 whenever `ecn_` is on. Every
            // other packet, retransmissions included, is ECN-capable, and
            // so is packet 0 when ECN is taken as agreed.
            ect: self.params.ecn && (seq != 0 || !self.params.ecn_negotiate),
            ect1: false,
            tsecr_ms: 0,
            probe: false,
        });
        if self.rtx_deadline.is_none() || force {
            self.set_rtx_timer(now);
        }
    }

    // The window (`tcp/tcp.cc`: `opencwnd`, `slowdown`).

    fn opencwnd(&mut self) {
        if self.cwnd < self.ssthresh as f64 {
            // Slow start: +1 per ACK.
            self.cwnd += 1.0;
        } else {
            // Congestion avoidance: +1/cwnd per ACK (increase_num_ = 1).
            self.cwnd += 1.0 / self.cwnd;
        }
    }

    fn slowdown(&mut self, cut: Cut) {
        // precisionReduce_: halve the real window.
        let half = self.windowd() / 2.0;
        match cut {
            Cut::Halve => {
                self.ssthresh = half as i64;
                self.cwnd = half;
            }
            Cut::Restart => {
                self.ssthresh = half as i64;
                self.cwnd = 1.0;
            }
            Cut::One => self.cwnd = 1.0,
        }
        if self.ssthresh < 2 {
            self.ssthresh = 2;
        }
        self.cong_action = true;
    }

    /// ns-2 `ecn()`: at most once per window of data (or right after a
    /// timeout).
    fn ecn_response(&mut self, a: i64) {
        if !(a > self.recover || self.last_action == CwndAction::Timeout) {
            return;
        }
        self.recover = self.maxseq;
        self.last_action = CwndAction::Ecn;
        match self.params.ecn_at_cwnd1 {
            EcnAtCwnd1::Timeout => {
                if self.cwnd <= 1.0 {
                    // RFC 3168 6.1.2: successive marks at cwnd 1 back off.
                    if self.ecn_backoff {
                        self.rtt.back_off();
                    } else {
                        self.ecn_backoff = true;
                    }
                } else {
                    self.ecn_backoff = false;
                }
                self.slowdown(Cut::Halve);
            }
            EcnAtCwnd1::Ignore => {
                self.slowdown(Cut::Halve);
                if self.cwnd < 1.0 {
                    self.cwnd = 1.0;
                }
            }
        }
        self.stats.ecn_reductions += 1;
    }

    /// ns-2 `newack()`: the cumulative point moves to `a`.
    fn newack(&mut self, a: i64, ece: bool, now: Time) {
        self.dupacks = 0;
        self.last_ack = a;
        self.highest_ack = a;
        if self.t_seqno < a + 1 {
            self.t_seqno = a + 1;
        }
        if self.rtt_active && a >= self.rtt_seq {
            // Don't end the backoff while ECN echoes continue at cwnd 1.
            if !self.ect || !self.ecn_backoff || !ece {
                self.rtt.reset_backoff();
                self.ecn_backoff = false;
            }
            self.rtt_active = false;
            self.rtt.sample(self.rtt_ts, now);
        }
        // timerfix_: the timer is set after the sample.
        self.newtimer(a, now);
    }

    /// ns-2 `recv_newack_helper()`: newack, then open cwnd unless the ACK
    /// echoes congestion.
    fn recv_newack(&mut self, a: i64, ece: bool, now: Time) {
        self.newack(a, ece, now);
        if !self.ect || !ece {
            self.opencwnd();
        }
        if self.ect && !ece {
            self.ecn_backoff = false;
        }
        if self.params.ecn && !self.ect && ece {
            // The echo of packet 0's negotiation.
            self.ect = true;
        }
    }

    /// Start-up: the first data flight is IW, set on the ACK of packet 0.
    fn apply_initial_window(&mut self) {
        if self.last_ack == 0 && self.params.syn {
            self.cwnd = self.initial_window;
        }
    }

    fn set_rtx_timer(&mut self, now: Time) {
        self.rtx_deadline = Some(now + self.rtt.rto());
    }

    /// ns-2 `newtimer()` on a new ACK: keep the timer running while
    /// anything is outstanding or cwnd < 1 (the ECN wait); in practice
    /// always, since t_seqno > a by then.
    fn newtimer(&mut self, a: i64, now: Time) {
        if self.t_seqno > a || a < self.maxseq || self.cwnd < 1.0 {
            self.set_rtx_timer(now);
        } else {
            self.rtx_deadline = None;
        }
    }

    /// ns-2 `reset_rtx_timer(mild, backoff)`: optionally back off, restart
    /// the timer, go back to the cumulative ACK unless `mild`, stop timing.
    fn reset_rtx_timer(&mut self, mild: bool, backoff: bool, now: Time) {
        if backoff {
            self.rtt.back_off();
        }
        self.set_rtx_timer(now);
        if !mild {
            self.t_seqno = self.highest_ack + 1;
        }
        self.rtt_active = false;
    }

    fn timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        match self.params.variant {
            Variant::Reno | Variant::NewReno => {
                self.dupwnd = 0;
                self.dupacks = 0;
                self.recover = self.maxseq;
            }
            Variant::Sack => {
                self.dupacks = 0;
                self.fastrecov = false;
                self.after_timeout = true;
                if self.highest_ack > self.last_ack {
                    self.last_ack = self.highest_ack;
                }
                self.recover = self.maxseq;
                self.scoreboard.clear();
            }
            _ => unreachable!("the Linux-style variants have their own sender (transport::linux)"),
        }
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        let idle = self.highest_ack == self.maxseq;
        if !idle || self.params.slow_start_restart {
            self.recover = self.maxseq;
            if self.highest_ack == -1 && self.initial_window > 1.0 {
                // The first packet was lost: no larger initial window.
                self.initial_window = 1.0;
            }
            if idle {
                // restart_bugfix_: nothing outstanding, keep ssthresh.
                self.slowdown(Cut::One);
            } else if self.highest_ack < self.recover && self.last_action == CwndAction::Ecn {
                // Already cut for this window by ECN.
                self.stats.timeouts += 1;
                self.slowdown(Cut::One);
            } else {
                self.stats.timeouts += 1;
                self.last_action = CwndAction::Timeout;
                self.slowdown(Cut::Restart);
            }
        }
        // No backoff when nothing was outstanding.
        self.reset_rtx_timer(false, !idle, now);
        self.last_action = CwndAction::Timeout;
        self.send_much(self.params.max_burst, now, out);
        if idle && self.highest_ack == self.maxseq {
            // Nothing went out: further idle expiries would change nothing.
            self.rtx_deadline = None;
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::transport::tcp::config::RtoConfig;
    use crate::transport::tcp::sink::TcpSink;
    use crate::transport::tcp::wire::DataInfo;

    // Constants

    const MS: u64 = 1_000_000;
    /// The round-trip time every scripted exchange uses.
    const RTT: Duration = Duration::from_millis(100);

    // Helpers

    fn cfg(variant: Variant) -> TcpConfig {
        TcpConfig {
            variant,
            ..TcpConfig::default()
        }
    }

    /// A sender with a clock and the packets of its last call.
    struct Flow {
        snd: TcpSender,
        now: Time,
        out: Vec<Segment>,
    }

    impl Flow {
        /// Started at time 0 with unlimited data (the SYN goes out).
        fn new(cfg: &TcpConfig) -> Flow {
            Flow::with_data(cfg, None)
        }

        fn with_data(cfg: &TcpConfig, npkts: Option<u64>) -> Flow {
            let mut f = Flow {
                snd: TcpSender::new(cfg, Duration::ZERO).unwrap(),
                now: Time::ZERO,
                out: vec![],
            };
            f.snd.app_data(npkts, f.now, &mut f.out);
            f.snd.start(f.now, &mut f.out);
            f
        }

        fn at_ms(&mut self, ms: u64) -> &mut Flow {
            self.now = Time(ms * MS);
            self
        }

        /// Feeds an ACK; returns the sequence numbers sent in response.
        fn info(&mut self, info: AckInfo) -> Vec<u32> {
            self.out.clear();
            self.snd.on_ack(&info, self.now, &mut self.out);
            self.out.iter().map(|s| s.seq).collect()
        }

        fn ack(&mut self, a: u32) -> Vec<u32> {
            self.info(AckInfo::cumulative(Some(a)))
        }

        fn ece(&mut self, a: u32) -> Vec<u32> {
            self.info(AckInfo {
                ece: true,
                ..AckInfo::cumulative(Some(a))
            })
        }

        /// Moves the clock to the timer's deadline and fires it.
        #[track_caller]
        fn fire(&mut self) -> Vec<u32> {
            let t = self.snd.timer_deadline().expect("timer armed");
            self.now = t;
            self.out.clear();
            self.snd.on_timer(self.now, &mut self.out);
            self.out.iter().map(|s| s.seq).collect()
        }
    }

    fn sack(a: u32, blocks: &[(u32, u32)]) -> AckInfo {
        let mut info = AckInfo::cumulative(Some(a));
        info.sack[..blocks.len()].copy_from_slice(blocks);
        info.n_sack = blocks.len() as u8;
        info
    }

    /// The SYN (sent at 0) acknowledged at 100 ms (with the ECN negotiation
    /// echo when `ecn`): cwnd = IW = 2, packets 1 and 2 out. RTT sample 10
    /// ticks: srtt8 80, rttvar4 20, RTO 0.3 s.
    fn sender_established(cfg: &TcpConfig) -> Flow {
        let mut f = Flow::new(cfg);
        f.at_ms(100);
        let info = AckInfo {
            ece: cfg.ecn,
            ..AckInfo::cumulative(Some(0))
        };
        f.info(info);
        f
    }

    /// Slow start from `sender_established`, one ACK per packet, until
    /// cwnd = `w` (w >= 2): ACKs 1..=w-2, each +1 and two new packets. Ends
    /// with highest_ack w-2 and the full window w-1..=2w-2 outstanding.
    fn sender_with_window(cfg: &TcpConfig, w: u32) -> Flow {
        let mut f = sender_established(cfg);
        for a in 1..=w - 2 {
            f.ack(a);
        }
        assert_eq!(f.snd.cwnd(), f64::from(w));
        assert_eq!(f.snd.max_seq_sent(), Some(2 * w - 2));
        f
    }

    #[track_caller]
    fn assert_cwnd(f: &Flow, cwnd: f64, ssthresh: u32) {
        assert!((f.snd.cwnd() - cwnd).abs() < 1e-9, "cwnd {} != {cwnd}", f.snd.cwnd());
        assert_eq!(f.snd.ssthresh(), ssthresh, "ssthresh");
    }

    #[test]
    fn test_paused_app_sends_nothing_new_until_resumed() {
        // Window 4: packets 3..=6 outstanding. Paused, ACKs of 3 and 4 open
        // the window (cwnd 6, highest ACK 4) but no new packet goes out;
        // resumed, packets up to 4 + 6 = 10 follow at once: 7, 8, 9, 10.
        let mut f = sender_with_window(&cfg(Variant::NewReno), 4);
        f.snd.app_pause();
        assert_eq!(f.ack(3), Vec::<u32>::new());
        assert_eq!(f.ack(4), Vec::<u32>::new());
        f.out.clear();
        let now = f.now;
        f.snd.app_data(None, now, &mut f.out);
        let resumed: Vec<u32> = f.out.iter().map(|s| s.seq).collect();
        assert_eq!(resumed, vec![7, 8, 9, 10]);
    }

    /// A round-by-round network from `sender_with_window`: every packet in
    /// flight reaches a real sink one RTT later (unless its first
    /// transmission is listed in `drop`), and the ACKs reach the sender at
    /// the same instant, in order; what the sender sends meanwhile is the
    /// next round's flight. A round with nothing in flight fires the timer.
    struct Net {
        flow: Flow,
        sink: TcpSink,
        flight: Vec<Segment>,
        drop: Vec<u32>,
        /// Every packet the sender sent since the network took over.
        log: Vec<Segment>,
    }

    impl Net {
        fn new(cfg: &TcpConfig, w: u32, drop: &[u32]) -> Net {
            let flow = sender_with_window(cfg, w);
            let mut sink = TcpSink::new(cfg, 1000);
            let mut acks = vec![];
            for seq in 0..=w - 2 {
                let d = DataInfo {
                    seq,
                    syn: seq == 0,
                    ..DataInfo::default()
                };
                sink.on_data(&d, flow.now, &mut acks);
            }
            let flight = (w - 1..=2 * w - 2)
                .map(|seq| Segment {
                    seq,
                    ..Segment::default()
                })
                .collect();
            Net {
                flow,
                sink,
                flight,
                drop: drop.to_vec(),
                log: vec![],
            }
        }

        fn round(&mut self) {
            let f = &mut self.flow;
            let mut acks = vec![];
            if self.flight.is_empty() {
                f.fire();
            } else {
                f.now += RTT;
                for s in self.flight.drain(..) {
                    if let Some(i) = self.drop.iter().position(|&d| d == s.seq) {
                        self.drop.remove(i);
                        continue;
                    }
                    self.sink.on_data(&DataInfo::from_segment(&s, false), f.now, &mut acks);
                }
                f.out.clear();
                for a in &acks {
                    f.snd.on_ack(a, f.now, &mut f.out);
                }
            }
            self.flight.extend_from_slice(&f.out);
            self.log.extend_from_slice(&f.out);
        }

        fn rounds(&mut self, n: usize) {
            for _ in 0..n {
                self.round();
            }
        }

        fn retransmitted(&self) -> Vec<u32> {
            self.log.iter().filter(|s| s.retransmit).map(|s| s.seq).collect()
        }
    }

    // Start-up

    #[test]
    fn test_new_start_sends_syn_with_cwnd_1_and_3s_timer() {
        let f = Flow::new(&cfg(Variant::NewReno));
        assert_eq!(
            f.out,
            vec![Segment {
                seq: 0,
                syn: true,
                ..Segment::default()
            }]
        );
        assert_eq!(f.snd.cwnd(), 1.0);
        assert_eq!(f.snd.timer_deadline(), Some(Time::from_secs(3)));
    }

    #[test]
    fn test_syn_acked_cwnd_becomes_iw_and_first_flight_is_2() {
        let f = sender_established(&cfg(Variant::NewReno));
        // opencwnd gives 2, then cwnd := IW = 2.
        assert_eq!(f.out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(f.snd.cwnd(), 2.0);
        // First sample 10 ticks: RTO 0.3 s from 100 ms.
        assert_eq!(f.snd.rto(), Duration(300 * MS));
        assert_eq!(f.snd.timer_deadline(), Some(Time(400 * MS)));
    }

    #[test]
    fn test_syn_lost_timeout_forces_iw_1() {
        // RTO at 3 s: ssthresh max(2, int(1/2)) = 2, cwnd 1, IW 1, backoff 2.
        let mut f = Flow::new(&cfg(Variant::Reno));
        assert_eq!(f.fire(), vec![0]);
        assert!(f.out[0].syn && f.out[0].retransmit);
        assert_cwnd(&f, 1.0, 2);
        assert_eq!(f.snd.timer_deadline(), Some(Time::from_secs(9)));
        // ACK 0: no sample (retransmitted); opencwnd 1 -> 2, then IW = 1.
        f.at_ms(3100);
        assert_eq!(f.ack(0), vec![1]);
        assert_cwnd(&f, 1.0, 2);
        assert_eq!(f.snd.backoff(), 2);
    }

    #[test]
    fn test_no_syn_first_flight_is_iw_from_packet_0() {
        let f = Flow::new(&TcpConfig {
            syn: false,
            ..TcpConfig::default()
        });
        assert_eq!(f.out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![0, 1]);
        assert!(!f.out[0].syn);
    }

    #[test]
    fn test_ecn_marks_every_packet_but_packet_0() {
        let with_syn = Flow::new(&TcpConfig {
            ecn: true,
            ..TcpConfig::default()
        });
        assert!(with_syn.out[0].syn && !with_syn.out[0].ect);
        // Without a SYN, packet 0 is data and still negotiates ECN (ns-2.35
        // sends it with ECE and without ECT); packet 1 is ECN-capable.
        let no_syn = Flow::new(&TcpConfig {
            ecn: true,
            syn: false,
            ..TcpConfig::default()
        });
        let ect: Vec<(u32, bool)> = no_syn.out.iter().map(|s| (s.seq, s.ect)).collect();
        assert_eq!(ect, vec![(0, false), (1, true)]);
    }

    #[test]
    fn test_ecn_taken_as_agreed_makes_packet_0_ecn_capable() {
        let cfg = TcpConfig {
            ecn: true,
            syn: false,
            ecn_negotiate: false,
            ..TcpConfig::default()
        };
        let mut f = Flow::new(&cfg);
        assert!(f.snd.ect);
        assert!(f.out.iter().all(|s| s.ect));
        // A resent packet 0 is ECN-capable too.
        assert_eq!(f.fire(), vec![0]);
        assert!(f.out[0].ect);
        let with_syn = TcpConfig { syn: true, ..cfg };
        let err = TcpSender::new(&with_syn, Duration::ZERO)
            .err()
            .expect("a SYN cannot be ECN-capable");
        assert!(err.contains("ecn_negotiate = false needs syn = false"), "{err}");
    }

    #[test]
    fn test_ecn_without_syn_retransmitted_packet_0_stays_not_ect_and_its_echo_negotiates() {
        let cfg = TcpConfig {
            ecn: true,
            syn: false,
            ..TcpConfig::default()
        };
        // Packets 0 and 1 lost: the timer resends packet 0, still without
        // ECT (ns-2.35 clears ECT on every send of sequence number 0).
        let mut lost = Flow::new(&cfg);
        assert_eq!(lost.fire(), vec![0]);
        assert!(!lost.out[0].ect);
        // Delivered, packet 0's ACK carries the sink's negotiation echo: the
        // sender now knows ECN is on (ns-2's ect_), and the echo is not a
        // congestion signal (an ACK of 0 is not beyond recover = 0, so no
        // reduction; cwnd opens).
        let mut f = Flow::new(&cfg);
        assert!(!f.snd.ect);
        f.at_ms(100);
        let cwnd = f.snd.cwnd();
        f.ece(0);
        assert!(f.snd.ect);
        assert_eq!(f.snd.stats().ecn_reductions, 0);
        assert!(f.snd.cwnd() > cwnd, "cwnd {} after {}", f.snd.cwnd(), cwnd);
    }

    #[test]
    fn test_established_max_burst_2_limits_iw_4_flight() {
        let f = sender_established(&TcpConfig {
            initial_window: 4,
            max_burst: 2,
            ..TcpConfig::default()
        });
        assert_eq!(f.out.len(), 2);
        assert_eq!(f.snd.cwnd(), 4.0);
    }

    // Window growth

    #[test]
    fn test_established_slow_start_ack_every_packet_doubles_per_rtt() {
        // Each ACK adds 1 and releases 2 packets: 2, 4, ..., 512.
        let mut f = sender_established(&cfg(Variant::NewReno));
        let mut flight: Vec<u32> = f.out.iter().map(|s| s.seq).collect();
        let mut got = vec![f.snd.cwnd()];
        for _ in 0..8 {
            let mut next = vec![];
            for &seq in &flight {
                next.extend(f.ack(seq));
            }
            flight = next;
            got.push(f.snd.cwnd());
        }
        assert_eq!(got, vec![2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0]);
    }

    #[test]
    fn test_established_slow_start_ack_every_second_packet_grows_1_5x() {
        // One ACK per two packets (an odd one alone): w + ceil(w/2).
        let mut f = sender_established(&cfg(Variant::NewReno));
        let mut flight: Vec<u32> = f.out.iter().map(|s| s.seq).collect();
        let mut got = vec![f.snd.cwnd()];
        for _ in 0..8 {
            let mut next = vec![];
            for pair in flight.chunks(2) {
                next.extend(f.ack(*pair.last().unwrap()));
            }
            flight = next;
            got.push(f.snd.cwnd());
        }
        assert_eq!(got, vec![2.0, 3.0, 5.0, 8.0, 12.0, 18.0, 27.0, 41.0, 62.0]);
    }

    #[test]
    fn test_established_ns2_window_20_slow_start_then_linear() {
        // window_ = ssthresh = 20: 16 ACKs from 16 give +1 x4 then +1/cwnd x12.
        let mut f = sender_established(&TcpConfig {
            rwnd_pkts: 20,
            initial_ssthresh_pkts: 20,
            ..TcpConfig::default()
        });
        let mut flight: Vec<u32> = f.out.iter().map(|s| s.seq).collect();
        let mut got = vec![];
        for _ in 0..8 {
            let mut next = vec![];
            for &seq in &flight {
                next.extend(f.ack(seq));
            }
            flight = next;
            got.push((f.snd.cwnd() * 1000.0).round() / 1000.0);
        }
        assert_eq!(got, vec![4.0, 8.0, 16.0, 20.592, 21.542, 22.453, 23.327, 24.17]);
        assert_eq!(flight.len(), 20);
    }

    #[test]
    fn test_window10_congestion_avoidance_one_rtt_of_acks() {
        // ssthresh 10: cwnd reaches 10 in slow start, then +1/cwnd per ACK.
        // 10 ACKs: 10.95865; 5 ACKs (delayed ACKs): 10.49038.
        let c = TcpConfig {
            initial_ssthresh_pkts: 10,
            ..cfg(Variant::Reno)
        };
        let mut f = sender_with_window(&c, 10);
        for a in 9..=13 {
            f.ack(a);
        }
        assert_eq!((f.snd.cwnd() * 1e5).round() / 1e5, 10.49038);
        for a in 14..=18 {
            f.ack(a);
        }
        assert_eq!((f.snd.cwnd() * 1e5).round() / 1e5, 10.95865);
    }

    // Window cuts

    #[test]
    fn test_reno_window10_three_dupacks_halves_to_5_usable_8_then_inflates() {
        // W = 10: ssthresh 5, cwnd 5, dupwnd 3, usable 8; retransmit 9.
        let mut f = sender_with_window(&cfg(Variant::Reno), 10);
        f.ack(8);
        f.ack(8);
        assert_eq!(f.ack(8), vec![9]);
        assert!(f.out[0].retransmit);
        assert_cwnd(&f, 5.0, 5);
        assert_eq!(f.snd.usable_window(), 8);
        for usable in 9..=12 {
            f.ack(8);
            assert_eq!(f.snd.usable_window(), usable);
        }
        assert_eq!(f.snd.stats().fast_retransmits, 1);
    }

    #[test]
    fn test_reno_window15_three_dupacks_fractional_halving() {
        // W = 15: ssthresh int(7.5) = 7, cwnd 7.5, usable int(7.5) + 3 = 10.
        let mut f = sender_with_window(&cfg(Variant::Reno), 15);
        for _ in 0..3 {
            f.ack(13);
        }
        assert_cwnd(&f, 7.5, 7);
        assert_eq!(f.snd.usable_window(), 10);
    }

    #[test]
    fn test_window15_rto_cuts_ssthresh_7_cwnd_1_go_back_n() {
        let mut f = sender_with_window(&cfg(Variant::NewReno), 15);
        assert_eq!(f.fire(), vec![14]);
        assert_cwnd(&f, 1.0, 7);
        assert_eq!(f.snd.stats().timeouts, 1);
        assert_eq!(f.snd.backoff(), 2);
        assert_eq!(f.snd.last_cwnd_action(), CwndAction::Timeout);
    }

    #[test]
    fn test_ecn_window10_ece_halves_to_5_5_once_per_window() {
        let c = TcpConfig {
            ecn: true,
            ..cfg(Variant::NewReno)
        };
        let mut f = sender_with_window(&c, 10);
        assert!(f.out.iter().all(|s| s.ect));
        // ECE on ACK 9: ssthresh 5, cwnd 5, no increase on this ACK.
        assert_eq!(f.ece(9), Vec::<u32>::new());
        assert_cwnd(&f, 5.0, 5);
        // A second ECE in the same window (ACK <= recover = 18) is ignored.
        f.ece(10);
        assert_cwnd(&f, 5.0, 5);
        assert_eq!(f.snd.stats().ecn_reductions, 1);
        // ACKs 11..14 open cwnd (CA from 5): the first packet sent carries CWR.
        let mut sent = vec![];
        for a in 11..=14 {
            f.ack(a);
            sent.extend(f.out.iter().copied());
        }
        assert_eq!(sent[0].seq, 19);
        assert!(sent[0].cwr);
        assert!(sent[1..].iter().all(|s| !s.cwr));
    }

    /// ECN on, IW 1: after the SYN, packet 1 is the only one out.
    fn sender_ecn_cwnd1(at_cwnd1: EcnAtCwnd1) -> Flow {
        let c = TcpConfig {
            ecn: true,
            ecn_at_cwnd1: at_cwnd1,
            initial_window: 1,
            ..cfg(Variant::NewReno)
        };
        let f = sender_established(&c);
        assert_eq!(f.out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![1]);
        f
    }

    #[test]
    fn test_ecn_cwnd1_ece_timeout_mode_waits_for_rto_with_backoff() {
        let mut f = sender_ecn_cwnd1(EcnAtCwnd1::Timeout);
        // ACK 1 at 200 ms with ECE: cwnd 0.5, ssthresh 2, nothing sent.
        // Sample 10 ticks: srtt8 80, rttvar4 15 -> RTO 0.25 s, timer at 450 ms.
        f.at_ms(200);
        assert_eq!(f.ece(1), Vec::<u32>::new());
        assert_cwnd(&f, 0.5, 2);
        assert_eq!(f.snd.usable_window(), 0);
        assert_eq!(f.snd.timer_deadline(), Some(Time(450 * MS)));
        // The RTO: cwnd 1, nothing outstanding so no backoff; packet 2 with CWR.
        assert_eq!(f.fire(), vec![2]);
        assert!(f.out[0].cwr && f.out[0].ect);
        assert_cwnd(&f, 1.0, 2);
        assert_eq!(f.snd.stats().timeouts, 0);
        // ECE again on ACK 2 (at 550 ms): cwnd 0.5 and the backoff doubles and
        // is kept through the sample (10 ticks: srtt8 80, rttvar4 15 + 0 - 3 =
        // 12, (96 + 80) >> 3 = 22 ticks): timer at 550 + 2 x 220 = 990 ms.
        f.at_ms(550);
        assert_eq!(f.ece(2), Vec::<u32>::new());
        assert_cwnd(&f, 0.5, 2);
        assert_eq!(f.snd.backoff(), 2);
        assert_eq!(f.snd.timer_deadline(), Some(Time(990 * MS)));
        assert_eq!(f.fire(), vec![3]);
        // A clean ACK ends the backoff and opens cwnd (1 < ssthresh 2 -> 2).
        f.at_ms(1090);
        assert_eq!(f.ack(3), vec![4, 5]);
        assert_eq!(f.snd.backoff(), 1);
        assert_eq!(f.snd.stats().ecn_reductions, 2);
    }

    #[test]
    fn test_ecn_cwnd1_ece_ignore_mode_keeps_cwnd_1_and_sends() {
        let mut f = sender_ecn_cwnd1(EcnAtCwnd1::Ignore);
        f.at_ms(200);
        assert_eq!(f.ece(1), vec![2]);
        assert!(f.out[0].cwr);
        assert_cwnd(&f, 1.0, 2);
    }

    #[test]
    fn test_newreno_partial_ack_deflates_dupwnd_6_by_k_minus_1() {
        // FR at W = 10 (packets 9 and 12 lost), 3 more dups: cwnd 5, dupwnd 6.
        let mut f = sender_with_window(&cfg(Variant::NewReno), 10);
        for _ in 0..6 {
            f.ack(8);
        }
        assert_eq!((f.snd.cwnd(), f.snd.dupwnd()), (5.0, 6));
        // Partial ACK 11 (k = 3): dupwnd 6 - 2 = 4, usable 9, resend 12.
        assert_eq!(f.ack(11)[0], 12);
        assert!(f.out[0].retransmit);
        assert_eq!((f.snd.cwnd(), f.snd.dupwnd()), (5.0, 4));
        assert_eq!(f.snd.usable_window(), 9);
        assert!(f.snd.in_recovery());
    }

    #[test]
    fn test_newreno_partial_ack_beyond_dupwnd_deflates_cwnd() {
        // After FR (cwnd 5, dupwnd 3): partial ACK 10 (k = 2) -> dupwnd 2;
        // partial ACK 13 (k = 3 > dupwnd 2) -> cwnd 5 - 1 = 4, dupwnd 1.
        let mut f = sender_with_window(&cfg(Variant::NewReno), 10);
        for _ in 0..3 {
            f.ack(8);
        }
        f.ack(10);
        assert_eq!((f.snd.cwnd(), f.snd.dupwnd()), (5.0, 2));
        f.ack(13);
        assert_eq!((f.snd.cwnd(), f.snd.dupwnd()), (4.0, 1));
        // A full ACK (>= recover 20) leaves recovery with cwnd as it is; 4 is
        // below ssthresh 5, so this ACK is slow start: +1.
        f.ack(20);
        assert!(!f.snd.in_recovery());
        assert_cwnd(&f, 5.0, 5);
    }

    #[test]
    fn test_newreno_partial_ack_restarts_timer_only_the_first_time() {
        let mut f = sender_with_window(&cfg(Variant::NewReno), 10);
        f.at_ms(1000);
        for _ in 0..3 {
            f.ack(8);
        }
        // FR restarts the timer from 1 s; the first partial ACK from 1.1 s,
        // the second (1.2 s) leaves it.
        let rto = f.snd.rto();
        f.at_ms(1100).ack(10);
        assert_eq!(f.snd.timer_deadline(), Some(Time(1100 * MS) + rto));
        f.at_ms(1200).ack(12);
        assert_eq!(f.snd.timer_deadline(), Some(Time(1100 * MS) + rto));
    }

    // Fast retransmit variants

    #[test]
    fn test_window10_two_dupacks_limited_transmit_sends_one_new_each() {
        // t_seqno <= highest_ack + cwnd + dupacks: 19 <= 8 + 10 + 1, 20 <= 8 + 10 + 2.
        let mut f = sender_with_window(&cfg(Variant::Reno), 10);
        assert_eq!(f.ack(8), vec![19]);
        assert_eq!(f.ack(8), vec![20]);
        assert!(!f.out[0].retransmit);
    }

    #[test]
    fn test_window10_two_dupacks_without_limited_transmit_sends_nothing() {
        let c = TcpConfig {
            limited_transmit: false,
            ..cfg(Variant::Reno)
        };
        let mut f = sender_with_window(&c, 10);
        assert_eq!(f.ack(8), Vec::<u32>::new());
        assert_eq!(f.ack(8), Vec::<u32>::new());
    }

    #[test]
    fn test_window10_dupack_threshold_1_first_dup_retransmits() {
        // "1ACK": cwnd 5, dupwnd 1, usable 6.
        let c = TcpConfig {
            dupack_threshold: 1,
            ..cfg(Variant::Reno)
        };
        let mut f = sender_with_window(&c, 10);
        assert_eq!(f.ack(8), vec![9]);
        assert_cwnd(&f, 5.0, 5);
        assert_eq!(f.snd.usable_window(), 6);
    }

    #[test]
    fn test_sack_window10_dup_without_new_sack_info_is_not_counted() {
        let mut f = sender_with_window(&cfg(Variant::Sack), 10);
        f.info(sack(8, &[(10, 11)]));
        f.info(sack(8, &[(10, 11)]));
        assert_eq!(f.snd.dupacks(), 1);
    }

    #[test]
    fn test_sack_window10_new_ack_with_first_sack_block_is_a_plain_new_ack() {
        // Congestion avoidance at cwnd 10 (ssthresh 10), 9..=18 outstanding,
        // 10 lost. A delayed-ACK sink holds 9; 11 arrives: ACK 9 carrying
        // the block [11, 12). New ACK: cwnd 10.1, the window slides by one,
        // 19 alone; the block is dropped with the scoreboard (dupacks 0).
        // The dup ACKs after it count from 1: limited transmit 20 (20 <=
        // 9 + 10.1 + 1) and 21, then at the third the retransmission of 10
        // and nothing new (cwnd 5.05, pipe 21 - 9 - 3 = 9).
        let c = TcpConfig {
            initial_ssthresh_pkts: 10,
            ..cfg(Variant::Sack)
        };
        let mut f = sender_with_window(&c, 10);
        assert_eq!(f.info(sack(9, &[(11, 12)])), vec![19]);
        assert_eq!(f.snd.dupacks(), 0);
        assert_cwnd(&f, 10.1, 10);
        assert_eq!(f.info(sack(9, &[(11, 13)])), vec![20]);
        assert_eq!(f.info(sack(9, &[(11, 14)])), vec![21]);
        assert!(!f.snd.in_recovery());
        assert_eq!(f.info(sack(9, &[(11, 15)])), vec![10]);
        assert!(f.out[0].retransmit);
        assert!(f.snd.in_recovery());
        assert_eq!(f.snd.pipe(), Some(9));
        assert_cwnd(&f, 5.05, 5);
    }

    // Whole recoveries (round-by-round with a real sink)

    #[test]
    fn test_reno_one_loss_fast_retransmit_then_linear_growth() {
        // Round 1: 9 dups; LT 19, 20; FR 9 (cwnd 5, dupwnd 3); dups 8, 9
        // inflate to usable 13, 14: 21, 22. Round 2: dups 10, 11: 23, 24;
        // ACK 20 exits (cwnd 5 + 1/5 = 5.2), ACK 21, 22: 5.3923, 5.5778.
        let mut net = Net::new(&cfg(Variant::Reno), 10, &[9]);
        net.rounds(2);
        assert_eq!(net.retransmitted(), vec![9]);
        assert_eq!(net.flow.snd.stats().fast_retransmits, 1);
        assert_cwnd(&net.flow, 5.577_757_050_367_607, 5);
        assert_eq!(
            net.flight.iter().map(|s| s.seq).collect::<Vec<_>>(),
            vec![23, 24, 25, 26, 27]
        );
    }

    #[test]
    fn test_newreno_one_loss_fast_retransmit_then_linear_growth() {
        // As Reno: the full ACK 20 (= recover) exits with cwnd 5.2.
        let mut net = Net::new(&cfg(Variant::NewReno), 10, &[9]);
        net.rounds(2);
        assert_eq!(net.retransmitted(), vec![9]);
        assert_cwnd(&net.flow, 5.577_757_050_367_607, 5);
        assert_eq!(net.flow.snd.stats().timeouts, 0);
    }

    #[test]
    fn test_sack_one_loss_recovers_with_pipe_and_no_increase_on_exit() {
        // FR at the 3rd dup: pipe = 20 - 8 - 3 = 9, cwnd 5; pipe falls below 5
        // on dups 8 and 9: 21, 22; round 2: 23, 24; ACK 20 exits without an
        // increase; ACKs 21, 22: 5.2, 5.3923.
        let mut net = Net::new(&cfg(Variant::Sack), 10, &[9]);
        net.round();
        assert_eq!(net.flow.snd.pipe(), Some(5));
        net.round();
        assert_eq!(net.retransmitted(), vec![9]);
        assert_cwnd(&net.flow, 5.392_307_692_307_693, 5);
        assert_eq!(
            net.flight.iter().map(|s| s.seq).collect::<Vec<_>>(),
            vec![23, 24, 25, 26, 27]
        );
    }

    #[test]
    fn test_reno_two_losses_in_window_time_out() {
        // ACK 10 (partial) ends Reno's recovery (cwnd 5.2); the dups of 10 that
        // follow cannot trigger a second FR (highest_ack 10 <= recover 20), so
        // the RTO fires: ssthresh int(5.2/2) -> 2, cwnd 1, resend 11.
        let mut net = Net::new(&cfg(Variant::Reno), 10, &[9, 11]);
        net.rounds(3);
        assert!(net.flight.is_empty());
        assert_eq!(net.flow.snd.stats().timeouts, 0);
        net.round();
        assert_eq!(net.retransmitted(), vec![9, 11]);
        assert_eq!(net.flow.snd.stats().timeouts, 1);
        assert_cwnd(&net.flow, 1.0, 2);
    }

    #[test]
    fn test_newreno_two_losses_in_window_recover_without_timeout() {
        // Partial ACK 10 resends 11 (dupwnd 10 - 1 = 9); full ACK 23 exits
        // with cwnd 5 + 1/5, then ACKs 24, 25.
        let mut net = Net::new(&cfg(Variant::NewReno), 10, &[9, 11]);
        net.rounds(3);
        assert_eq!(net.retransmitted(), vec![9, 11]);
        assert_eq!(net.flow.snd.stats().timeouts, 0);
        assert_eq!(net.flow.snd.stats().fast_retransmits, 1);
        assert_cwnd(&net.flow, 5.577_757_050_367_607, 5);
    }

    #[test]
    fn test_sack_two_losses_in_window_recover_without_timeout() {
        // The hole 11 (below SACKed 12..) goes out in round 1 once pipe < 5.
        let mut net = Net::new(&cfg(Variant::Sack), 10, &[9, 11]);
        net.round();
        assert_eq!(net.retransmitted(), vec![9, 11]);
        net.rounds(2);
        assert_eq!(net.retransmitted(), vec![9, 11]);
        assert_eq!(net.flow.snd.stats().timeouts, 0);
        // ACKs 21..25 after the exit at 20: 5 + five 1/cwnd steps.
        assert_cwnd(&net.flow, 5.930_740_941_272_552, 5);
    }

    #[test]
    fn test_sack_three_losses_in_window_recover_without_timeout() {
        // Holes 11 and 13 go out in round 2 as pipe drops below 5.
        let mut net = Net::new(&cfg(Variant::Sack), 10, &[9, 11, 13]);
        net.rounds(3);
        assert_eq!(net.retransmitted(), vec![9, 11, 13]);
        assert_eq!(net.flow.snd.stats().timeouts, 0);
        assert!(!net.flow.snd.in_recovery());
        assert_cwnd(&net.flow, 5.392_307_692_307_693, 5);
    }

    // The retransmission timer

    #[test]
    fn test_established_rto_backs_off_and_karn_takes_no_sample_from_retransmission() {
        let mut f = sender_established(&cfg(Variant::NewReno));
        // Timer at 100 + 300 ms: resend 1; ssthresh max(2, 1) = 2, cwnd 1.
        assert_eq!(f.fire(), vec![1]);
        assert_eq!(f.now, Time(400 * MS));
        assert_cwnd(&f, 1.0, 2);
        // Backoff 2: 0.6 s; then 4: 1.2 s.
        assert_eq!(f.snd.timer_deadline(), Some(Time(1000 * MS)));
        assert_eq!(f.fire(), vec![1]);
        assert_eq!(f.snd.timer_deadline(), Some(Time(2200 * MS)));
        // ACK 1 at 2.3 s covers only retransmissions: no sample, backoff kept
        // (timer 2.3 + 4 x 0.3 s); cwnd 2: 2 (a retransmission) and 3 (timed).
        f.at_ms(2300);
        assert_eq!(f.ack(1), vec![2, 3]);
        assert!(f.out[0].retransmit && !f.out[1].retransmit);
        assert_eq!(f.snd.rtt_estimator().ns2_scaled(), Some((80, 20)));
        assert_eq!(f.snd.backoff(), 4);
        assert_eq!(f.snd.timer_deadline(), Some(Time(3500 * MS)));
        // ACK 3 at 2.4 s: a sample of new data: backoff 1, (80, 15), RTO 0.25 s.
        f.at_ms(2400);
        f.ack(3);
        assert_eq!(f.snd.backoff(), 1);
        assert_eq!(f.snd.rtt_estimator().ns2_scaled(), Some((80, 15)));
        assert_eq!(f.snd.timer_deadline(), Some(Time(2650 * MS)));
        assert_eq!(f.snd.stats().timeouts, 2);
    }

    #[test]
    fn test_finite_transfer_acked_idle_timeout_restarts_cwnd_keeps_ssthresh() {
        let c = cfg(Variant::NewReno);
        let mut f = Flow::with_data(&c, Some(2));
        f.at_ms(100).ack(0);
        f.at_ms(200).ack(2);
        assert!(f.snd.is_done());
        // The timer set by that ACK fires one RTO (0.25 s) later.
        assert_eq!(f.fire(), Vec::<u32>::new());
        assert_eq!(f.now, Time(450 * MS));
        assert_cwnd(&f, 1.0, 10_000);
        assert_eq!(f.snd.stats().timeouts, 0);
        assert_eq!(f.snd.timer_deadline(), None);
        // More data restarts from cwnd 1.
        f.at_ms(2000);
        f.out.clear();
        f.snd.app_data(Some(3), f.now, &mut f.out);
        assert_eq!(f.out.len(), 1);
        assert_eq!(f.snd.timer_deadline(), Some(Time(2250 * MS)));
    }

    #[test]
    fn test_finite_transfer_acked_idle_timeout_without_restart_keeps_cwnd() {
        let c = TcpConfig {
            slow_start_restart: false,
            ..cfg(Variant::NewReno)
        };
        let mut f = Flow::with_data(&c, Some(2));
        f.at_ms(100).ack(0);
        f.at_ms(200).ack(2);
        f.fire();
        // cwnd 2 + 1 from ACK 2.
        assert_cwnd(&f, 3.0, 10_000);
        f.out.clear();
        f.snd.app_data(Some(3), f.now, &mut f.out);
        assert_eq!(f.out.len(), 3);
    }

    #[test]
    fn test_finite_transfer_acked_dupacks_never_send_past_the_data() {
        // Both data packets ACKed; a dup ACK of 2 (threshold 1, highest_ack 2 >
        // recover 0) enters fast retransmit with nothing left to resend (ns-2
        // would send packet 3).
        let c = TcpConfig {
            dupack_threshold: 1,
            ..cfg(Variant::Reno)
        };
        let mut f = Flow::with_data(&c, Some(2));
        f.at_ms(100).ack(0);
        f.at_ms(200).ack(2);
        assert_eq!(f.ack(2), Vec::<u32>::new());
        assert_eq!(f.snd.stats().fast_retransmits, 1);
        assert_eq!(f.snd.max_seq_sent(), Some(2));
    }

    #[test]
    fn test_new_ted_rto_is_rejected() {
        let c = TcpConfig {
            rto: RtoConfig::Ted,
            ..TcpConfig::default()
        };
        assert!(TcpSender::new(&c, Duration::ZERO).is_err());
    }

    #[test]
    fn test_new_zero_dupack_threshold_is_rejected() {
        let c = TcpConfig {
            dupack_threshold: 0,
            ..TcpConfig::default()
        };
        assert!(TcpSender::new(&c, Duration::ZERO).is_err());
    }
}
