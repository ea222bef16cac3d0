//! Hand-computed traces of the Linux-style sender under Reno: the opening,
//! slow start, RACK's loss detection, PRR, the tail loss probe, the RTO
//! and the ECN response. Times are whole milliseconds; the path's round
//! trip is 100 ms.

use super::*;
use crate::transport::linux::cc::INFINITE_SSTHRESH as INFINITE;
use crate::transport::linux::rcvwnd::ts_clock_ms;
use crate::transport::linux::reno::Reno;

fn ms(x: u64) -> Time {
    Time::from_millis(x)
}

fn sender(params: LinuxParams) -> LinuxSender {
    LinuxSender::new(params, Cc::Reno(Reno)).unwrap()
}

fn ack(a: u32) -> AckInfo {
    AckInfo::cumulative(Some(a))
}

fn sack(a: u32, blocks: &[(u32, u32)]) -> AckInfo {
    let mut info = ack(a);
    for (i, b) in blocks.iter().enumerate() {
        info.sack[i] = *b;
    }
    info.n_sack = blocks.len() as u8;
    info
}

fn seqs(out: &[Segment]) -> Vec<u32> {
    out.iter().map(|s| s.seq).collect()
}

/// A sender with `params` and 10 packets of data whose SYN (sent at 0) was
/// acknowledged at 100 ms: 1..=10 left at 100 ms, srtt = 100 ms.
fn ten_packets(params: LinuxParams) -> LinuxSender {
    let mut s = sender(params);
    let mut out = vec![];
    s.app_data(Some(10), ms(0), &mut out);
    s.start(ms(0), &mut out);
    s.on_ack(&ack(0), ms(100), &mut out);
    assert_eq!(seqs(&out), (0..=10).collect::<Vec<_>>());
    s
}

/// A sender with unlimited data whose SYN (sent at 0) was acknowledged at
/// 100 ms, so srtt = min_rtt = 100 ms, and the first flight 1..=10 left at
/// 100 ms.
fn established(params: LinuxParams) -> LinuxSender {
    let mut s = sender(params);
    let mut out = vec![];
    s.app_data(None, ms(0), &mut out);
    s.start(ms(0), &mut out);
    assert_eq!(seqs(&out), vec![0]);
    assert!(out[0].syn);
    out.clear();
    s.on_ack(&ack(0), ms(100), &mut out);
    assert_eq!(seqs(&out), (1..=10).collect::<Vec<_>>());
    s
}

/// [`established`] without tail loss probes, so that the timer the tests
/// of RTOs and reordering see is the RTO or RACK's.
fn established_without_tlp() -> LinuxSender {
    established(LinuxParams {
        tlp: false,
        ..LinuxParams::default()
    })
}

#[test]
fn test_the_syn_is_sent_alone_then_an_initial_window_of_ten() {
    let s = established(LinuxParams::default());
    assert_eq!(s.cwnd(), 10.0);
    assert_eq!(s.in_flight(), 10);
    assert_eq!(s.srtt(), Duration::from_millis(100));
    // RTO = srtt + max(4 mdev, rto_min) = 100 + max(200, 200) ms.
    assert_eq!(s.rto(), Duration::from_millis(300));
}

#[test]
fn test_slow_start_sends_two_packets_per_packet_acknowledged() {
    let mut s = established(LinuxParams::default());
    let mut out = vec![];
    for k in 1..=10 {
        out.clear();
        s.on_ack(&ack(k), ms(200 + u64::from(k)), &mut out);
        // cwnd + 1, one packet fewer in flight: two new packets.
        assert_eq!(seqs(&out), vec![9 + 2 * k, 10 + 2 * k], "ACK of {k}");
    }
    assert_eq!(s.cwnd(), 20.0);
    assert_eq!(s.in_flight(), 20);
    assert_eq!(s.ca_state(), CaState::Open);
}

/// Packets 1..=10 sent at 100 ms; 3 is lost. ACKs of 1 and 2 at 200 ms
/// (each sending two packets: 11..=14), then duplicate ACKs of 2 at 201 ms
/// SACKing 4, 4-5, 4-6. Returns what the third sent.
fn lose_packet_3(params: LinuxParams) -> (LinuxSender, Vec<Segment>) {
    let mut s = established(params);
    let mut out = vec![];
    s.on_ack(&ack(1), ms(200), &mut out);
    s.on_ack(&ack(2), ms(200), &mut out);
    assert_eq!(seqs(&out), vec![11, 12, 13, 14]);
    out.clear();
    // The first SACK: cwnd is still 12 and one packet fewer is in flight,
    // so 15 goes out (Disorder sends new data). One packet SACKed is below
    // the reordering threshold of 3: RACK waits min_rtt / 4 = 25 ms for
    // packet 3 (sent with 4 at 100 ms): until 100 + 101 (RACK's RTT, of
    // packet 4) + 25 ms, with the timer 2 ms later.
    s.on_ack(&sack(2, &[(4, 5)]), ms(201), &mut out);
    assert_eq!(seqs(&out), vec![15]);
    assert_eq!(s.ca_state(), CaState::Disorder);
    if s.params.rack {
        assert_eq!(s.timer_deadline(), Some(ms(228)));
    }
    out.clear();
    s.on_ack(&sack(2, &[(4, 6)]), ms(201), &mut out);
    assert_eq!(seqs(&out), vec![16]);
    out.clear();
    // The third: 3 SACKed packets reach the threshold, RACK's window is
    // 0 (RFC 6675's rule is met too), and 3 is lost at once.
    s.on_ack(&sack(2, &[(4, 7)]), ms(201), &mut out);
    (s, out)
}

#[test]
fn test_rack_finds_the_loss_on_the_third_sack_and_recovery_retransmits_it() {
    let (s, out) = lose_packet_3(LinuxParams::default());
    assert_eq!(s.ca_state(), CaState::Recovery);
    assert_eq!(s.stats().fast_retransmits, 1);
    assert_eq!(s.linux_stats().marked_lost, 1);
    // Reno: ssthresh = cwnd / 2 = 12 / 2.
    assert_eq!(s.ssthresh(), 6);
    // PRR: in flight is 3..=16 less 3 SACKed and 1 lost = 10 > ssthresh,
    // so sndcnt = ceil(6 x 1 delivered / 12) - 0 = 1: the retransmission
    // of 3, cwnd = 10 + 1.
    assert_eq!(seqs(&out), vec![3]);
    assert!(out[0].retransmit);
    assert_eq!(s.cwnd(), 11.0);
}

#[test]
fn test_prr_sends_half_a_packet_per_delivery_until_in_flight_reaches_ssthresh() {
    let (mut s, _) = lose_packet_3(LinuxParams::default());
    let mut sent = vec![];
    // More SACKs, one new packet each (7, 8, ... SACKed at 202 ms on).
    for (i, top) in (8..=14).enumerate() {
        let mut out = vec![];
        s.on_ack(&sack(2, &[(4, top)]), ms(202 + i as u64), &mut out);
        sent.push(out.len());
    }
    // prr_delivered 2..8, ssthresh 6, prior_cwnd 12: the target
    // ceil(6 d / 12) is 1, 2, 2, 3, 3, 4, 4 while in flight stays above 6,
    // against 1, 1, 2, 2, 3, 3, 4 sent before each: 0, 1, 0, 1, 0, 1, 0.
    assert_eq!(sent, vec![0, 1, 0, 1, 0, 1, 0]);
}

#[test]
fn test_without_prr_cwnd_drops_to_ssthresh_at_once() {
    let params = LinuxParams {
        prr: false,
        ..LinuxParams::default()
    };
    let (s, out) = lose_packet_3(params);
    assert_eq!(s.cwnd(), 6.0);
    // In flight is 10, above cwnd 6: the retransmission waits.
    assert!(out.is_empty());
}

#[test]
fn test_recovery_ends_with_cwnd_at_ssthresh_when_the_retransmission_is_acknowledged() {
    let (mut s, _) = lose_packet_3(LinuxParams::default());
    let mut out = vec![];
    // Everything up to 16 arrives: the recovery point (snd_nxt at entry,
    // 17) is reached.
    s.on_ack(&ack(15), ms(300), &mut out);
    assert_eq!(s.ca_state(), CaState::Recovery);
    s.on_ack(&ack(16), ms(300), &mut out);
    assert_eq!(s.ca_state(), CaState::Open);
    assert_eq!(s.ssthresh(), 6);
    // cwnd = ssthresh at the end, then Reno's additive increase for the
    // one packet this ACK delivered (cwnd_cnt 1 of 6).
    assert_eq!(s.cwnd(), 6.0);
}

#[test]
fn test_without_rack_rfc6675_marks_the_loss_on_the_third_sack_too() {
    let (s, out) = lose_packet_3(LinuxParams {
        rack: false,
        ..LinuxParams::default()
    });
    assert_eq!(s.ca_state(), CaState::Recovery);
    assert_eq!(seqs(&out), vec![3]);
    // No reordering timer without RACK: retransmitting the head (3) arms
    // the RTO from now.
    assert_eq!(s.timer_deadline(), Some(ms(201) + s.rto()));
}

#[test]
fn test_a_tail_loss_probe_fires_two_round_trips_after_the_last_send() {
    // Data for the first flight only: no new packet can be the probe.
    let mut s = sender(LinuxParams::default());
    let mut out = vec![];
    s.app_data(Some(10), ms(0), &mut out);
    s.start(ms(0), &mut out);
    s.on_ack(&ack(0), ms(100), &mut out);
    assert_eq!(out.len(), 11);
    // PTO = 2 srtt + 2 ms = 202 ms after the flight left at 100 ms, before
    // the RTO (100 + 300 ms).
    assert_eq!(s.timer_deadline(), Some(ms(302)));
    out.clear();
    s.on_timer(ms(302), &mut out);
    // The last packet again.
    assert_eq!(seqs(&out), vec![10]);
    assert!(out[0].retransmit);
    assert_eq!(s.linux_stats().loss_probes, 1);
    // Then the RTO, from now.
    assert_eq!(s.timer_deadline(), Some(ms(602)));
}

#[test]
fn test_a_probe_that_resends_leaves_the_packets_in_flight_as_they_were() {
    // 1..=10 (all the data) at 100 ms, nothing answered: the probe resends
    // 10 at 302 ms.
    let mut s = ten_packets(LinuxParams::default());
    let mut out = vec![];
    out.clear();
    s.on_timer(ms(302), &mut out);
    assert_eq!(seqs(&out), vec![10]);
    // `__tcp_retransmit_skb` alone: 10 is not counted in retrans_out, so
    // 10 packets are in flight, not 11.
    assert_eq!(s.retrans_out, 0);
    assert_eq!(s.in_flight(), 10);
    // The ACK of 1..=5 at 400 ms: nothing is lost or retransmitted below
    // the head (6), so the state stays Open (`tcp_try_keep_open`), and a
    // probe is scheduled again, 2 srtt + 2 ms ahead: srtt = 100 + (300 -
    // 100) / 8 = 125 ms, the probe at 400 + 252 ms.
    s.on_ack(&ack(5), ms(400), &mut out);
    assert_eq!(s.ca_state(), CaState::Open);
    assert_eq!(s.in_flight(), 5);
    assert_eq!(s.srtt(), Duration::from_millis(125));
    assert_eq!(s.timer_deadline(), Some(ms(652)));
}

#[test]
fn test_a_probe_that_cannot_be_sent_rearms_the_rto_from_the_heads_send_time() {
    // As above: the probe resends 10 at 302 ms, the ACK of 1..=5 at 400 ms
    // schedules another probe at 652 ms.
    let mut s = ten_packets(LinuxParams::default());
    let mut out = vec![];
    s.on_timer(ms(302), &mut out);
    s.on_ack(&ack(5), ms(400), &mut out);
    assert_eq!(s.timer_deadline(), Some(ms(652)));
    out.clear();
    // The first probe is still unanswered (`tlp_high_seq`): none is sent,
    // and `tcp_rearm_rto` (the probe timer still pending) sets the RTO an
    // RTO after the head's (6) send time at 100 ms, long past: it fires at
    // once (after the smallest delay), not an RTO from now.
    s.on_timer(ms(652), &mut out);
    assert!(out.is_empty());
    assert!(ms(100) + s.rto() < ms(652));
    assert_eq!(s.timer_deadline(), Some(ms(652) + Duration::from_nanos(1)));
}

#[test]
fn test_a_probe_that_repaired_a_loss_reduces_cwnd_once() {
    let mut s = ten_packets(LinuxParams::default());
    let mut out = vec![];
    // 1..=9 arrive, 10 is lost; the probe resends it.
    s.on_ack(&ack(9), ms(200), &mut out);
    out.clear();
    s.on_timer(s.timer_deadline().unwrap(), &mut out);
    assert_eq!(seqs(&out), vec![10]);
    // More data (11..=15), then the ACK of the probe: it reaches the
    // probe's snd_nxt (11) but not beyond, so Linux cannot yet tell a
    // repair from a probe that crossed the original: no reduction.
    s.app_data(Some(5), ms(550), &mut out);
    s.on_ack(&ack(10), ms(600), &mut out);
    assert_eq!(s.ssthresh(), INFINITE);
    // An ACK beyond it: the probe repaired a loss, and cwnd is cut once,
    // at once, to ssthresh = cwnd / 2.
    let cwnd = s.cwnd() as u32;
    s.on_ack(&ack(11), ms(650), &mut out);
    assert_eq!(s.ssthresh(), cwnd / 2);
    assert_eq!(s.cwnd(), f64::from(cwnd / 2));
    s.on_ack(&ack(12), ms(651), &mut out);
    assert_eq!(s.ssthresh(), cwnd / 2);
}

#[test]
fn test_the_rto_marks_everything_lost_and_restarts_at_one_packet() {
    let mut s = established_without_tlp();
    assert_eq!(s.timer_deadline(), Some(ms(400)));
    let mut out = vec![];
    s.on_timer(ms(400), &mut out);
    assert_eq!(seqs(&out), vec![1]);
    assert_eq!(s.ca_state(), CaState::Loss);
    assert_eq!(s.stats().timeouts, 1);
    assert_eq!(s.ssthresh(), 5);
    assert_eq!(s.cwnd(), 1.0);
    // The RTO doubles: 600 ms.
    assert_eq!(s.timer_deadline(), Some(ms(1000)));
    // Its ACK: slow start from 1, retransmitting 2 and 3 (marked lost).
    out.clear();
    s.on_ack(&ack(1), ms(500), &mut out);
    assert_eq!(seqs(&out), vec![2, 3]);
    assert!(out.iter().all(|o| o.retransmit));
}

/// Packets 1..=10 (all the data) sent at 100 ms, 1..=5 acknowledged at
/// 200 ms (cwnd 15, RACK's RTT 100 ms, the RTO re-armed to 200 + 300 ms),
/// three more packets (11..=13) written and sent at 450 ms; the RTO fires
/// at 500 ms.
fn rto_with_recent_packets(rack: bool) -> (LinuxSender, Vec<Segment>) {
    let mut s = ten_packets(LinuxParams {
        tlp: false,
        rack,
        ..LinuxParams::default()
    });
    let mut out = vec![];
    for k in 1..=5 {
        s.on_ack(&ack(k), ms(200), &mut out);
    }
    assert_eq!(s.cwnd(), 15.0);
    out.clear();
    s.app_data(Some(3), ms(450), &mut out);
    assert_eq!(seqs(&out), vec![11, 12, 13]);
    assert_eq!(s.timer_deadline(), Some(ms(500)));
    out.clear();
    s.on_timer(ms(500), &mut out);
    (s, out)
}

#[test]
fn test_the_rto_leaves_packets_sent_within_racks_rtt_in_flight() {
    // `tcp_timeout_mark_lost`: the head (6) and 7..=10, sent 400 ms ago,
    // are lost; 11..=13, sent 50 ms ago (less than RACK's RTT, 100 ms),
    // stay in flight. cwnd = 3 in flight + 1 = 4; the head's retransmission
    // fills it.
    let (s, out) = rto_with_recent_packets(true);
    assert_eq!(s.ca_state(), CaState::Loss);
    assert_eq!(s.ssthresh(), 7);
    assert_eq!(s.cwnd(), 4.0);
    assert_eq!(seqs(&out), vec![6]);
    assert_eq!(s.in_flight(), 4);
    assert_eq!(s.linux_stats().marked_lost, 5);
    // Without RACK every packet not SACKed is lost: cwnd 0 + 1.
    let (s, out) = rto_with_recent_packets(false);
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(seqs(&out), vec![6]);
    assert_eq!(s.in_flight(), 1);
    assert_eq!(s.linux_stats().marked_lost, 8);
}

#[test]
fn test_a_retransmission_lost_again_in_loss_starts_a_recovery() {
    let mut s = established_without_tlp();
    let mut out = vec![];
    // The RTO at 400 ms: 1..=10 lost, 1 resent, ssthresh 5, cwnd 1.
    s.on_timer(ms(400), &mut out);
    assert_eq!(seqs(&out), vec![1]);
    out.clear();
    // Its ACK: cwnd 2 (slow start), 2 and 3 resent at 500 ms.
    s.on_ack(&ack(1), ms(500), &mut out);
    assert_eq!(seqs(&out), vec![2, 3]);
    assert_eq!(s.ca_state(), CaState::Loss);
    out.clear();
    // 3's retransmission arrives, 2's does not: RACK (RTT 100 ms, no
    // reordering window in Loss) finds 2's retransmission lost again, and
    // Linux moves to Recovery (`FLAG_LOST_RETRANS`): ssthresh = Reno's of
    // cwnd 2 = 2, prior_cwnd 2; PRR with 0 in flight (9 out, 1 SACKed,
    // 8 lost): sndcnt = min(ssthresh - 0, max(1 - 0, 1)) = 1, cwnd 1, and
    // 2 is resent alone.
    s.on_ack(&sack(1, &[(3, 4)]), ms(600), &mut out);
    assert_eq!(s.linux_stats().lost_retransmits, 1);
    assert_eq!(s.ca_state(), CaState::Recovery);
    assert_eq!(s.stats().fast_retransmits, 1);
    assert_eq!(s.ssthresh(), 2);
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(seqs(&out), vec![2]);
}

#[test]
fn test_the_reordering_timer_rearms_the_rto_from_the_heads_send_time() {
    let mut s = established_without_tlp();
    let mut out = vec![];
    // 1..=9 arrive (ACKs at 200 ms, two new packets each: 11..=28, cwnd 19).
    for k in 1..=9 {
        s.on_ack(&ack(k), ms(200), &mut out);
    }
    assert_eq!(seqs(&out), (11..=28).collect::<Vec<_>>());
    out.clear();
    // 10 (sent at 100 ms) and 11 (at 200 ms) are lost; 12's SACK at
    // 300 ms: RACK's RTT 100 ms, window min_rtt / 4 = 25 ms. 10 is lost at
    // once: Recovery, PRR lets one packet go, 10 again. 11 waits until
    // 200 + 125 ms: the reordering timer at 327 ms, which stays armed (the
    // head's retransmission does not arm the RTO under it).
    s.on_ack(&sack(9, &[(12, 13)]), ms(300), &mut out);
    assert_eq!(seqs(&out), vec![10]);
    assert_eq!(s.ca_state(), CaState::Recovery);
    assert_eq!(s.timer_deadline(), Some(ms(327)));
    out.clear();
    // The timer: 11 is lost (no window in Recovery) and resent. Linux
    // (`tcp_rack_reo_timeout`, `tcp_rearm_rto`) does not arm the
    // reordering timer again and sets the RTO to fire an RTO (300 ms)
    // after the head's retransmission at 300 ms: at 600 ms, not 627.
    s.on_timer(ms(327), &mut out);
    assert_eq!(seqs(&out), vec![11]);
    assert_eq!(s.rto(), Duration::from_millis(300));
    assert_eq!(s.timer_deadline(), Some(ms(600)));
    out.clear();
    s.on_timer(ms(600), &mut out);
    assert_eq!(s.stats().timeouts, 1);
}

#[test]
fn test_an_rto_after_snd_una_advanced_in_loss_lowers_ssthresh_again() {
    let mut s = established_without_tlp();
    let mut out = vec![];
    // The RTO at 400 ms: ssthresh 10 / 2 = 5, cwnd 1, 1 resent, RTO 600 ms.
    s.on_timer(ms(400), &mut out);
    assert_eq!(s.ssthresh(), 5);
    // Its ACK at 500 ms gives no RTT sample (1 was resent), so the backoff
    // stays (RTO 600 ms, the timer at 1100 ms), but snd_una advanced:
    // Linux's icsk_retransmits is 0 again. cwnd 2: 2 and 3 resent.
    s.on_ack(&ack(1), ms(500), &mut out);
    assert_eq!(s.rto(), Duration::from_millis(600));
    assert_eq!(s.timer_deadline(), Some(ms(1100)));
    // The next RTO, still in Loss (high_seq 11 > snd_una 2), is the first
    // of a new series: `tcp_enter_loss` lowers ssthresh again, to Reno's
    // of cwnd 2 = 2 (the backoff alone would have kept 5).
    s.on_timer(ms(1100), &mut out);
    assert_eq!(s.ca_state(), CaState::Loss);
    assert_eq!(s.ssthresh(), 2);
    assert_eq!(s.rto(), Duration::from_millis(1200));
}

#[test]
fn test_an_ack_that_covers_a_retransmission_gives_no_rtt_sample() {
    let mut s = established_without_tlp();
    let mut out = vec![];
    // The RTO at 400 ms: 1 resent, the RTO backed off to 600 ms.
    s.on_timer(ms(400), &mut out);
    // The originals were only late: the ACK of 1..=5 at 450 ms. It covers
    // the resent 1, so Karn's rule takes no sample from 2..=5 either
    // (`FLAG_RETRANS_DATA_ACKED`): srtt stays 100 ms (not 100 + (350 -
    // 100) / 8), and the backoff stays.
    s.on_ack(&ack(5), ms(450), &mut out);
    assert_eq!(s.srtt(), Duration::from_millis(100));
    assert_eq!(s.rto(), Duration::from_millis(600));
}

#[test]
fn test_an_ack_of_a_retransmission_is_timed_by_its_timestamp_echo() {
    let mut s = established_without_tlp();
    let mut out = vec![];
    s.on_timer(ms(400), &mut out);
    // The same ACK as above, echoing the TSval of the original 1 (sent at
    // 100 ms): `tcp_rtt_tsopt_us` times it, 350 ms. srtt = 100 + (350 -
    // 100) / 8 = 131.25 ms; mdev (4 x 50 ms after the first sample) grows
    // by 250 - 50 to 400 ms, above its maximum, so rttvar = 400 ms; RTO =
    // 131.25 + 400 ms, its backoff gone.
    let echo = AckInfo {
        tsecr_ms: ts_clock_ms(ms(100)),
        ..ack(5)
    };
    s.on_ack(&echo, ms(450), &mut out);
    assert_eq!(s.srtt(), Duration::from_micros(131_250));
    assert_eq!(s.rto(), Duration::from_micros(531_250));
    // With timestamps off the echo is not read: Karn's rule alone.
    let mut s = established(LinuxParams {
        tlp: false,
        timestamps: false,
        ..LinuxParams::default()
    });
    s.on_timer(ms(400), &mut out);
    s.on_ack(&echo, ms(450), &mut out);
    assert_eq!(s.srtt(), Duration::from_millis(100));
    assert_eq!(s.rto(), Duration::from_millis(600));
}

#[test]
fn test_the_reordering_degree_is_the_distance_to_the_highest_sack() {
    let mut s = established(LinuxParams::default());
    let mut out = vec![];
    // 1 is late: 2 and 3 SACKed at 200 ms (RACK waits), then 1 arrives
    // and the ACK covers 1..=3. Nothing is SACKed after it, so the highest
    // SACK is snd_una, 4 (`tcp_highest_sack_seq`): the distance 4 - 1 = 3
    // is not above 3, and the degree stays 3 (reordering was seen).
    s.on_ack(&sack(0, &[(2, 4)]), ms(200), &mut out);
    s.on_ack(&ack(3), ms(201), &mut out);
    assert!(s.rack.reord);
    assert_eq!(s.reordering, 3);
    // 4 and 5 are late: 6..=8 SACKed at 202 ms, then the ACK of 4 and 5
    // with 6..=8 still SACKed: the distance from 4 to 9 is 5.
    s.on_ack(&sack(3, &[(6, 9)]), ms(202), &mut out);
    s.on_ack(&sack(5, &[(6, 9)]), ms(203), &mut out);
    assert_eq!(s.reordering, 5);
    assert_eq!(s.linux_stats().marked_lost, 0);
}

#[test]
fn test_an_rto_in_disorder_with_enough_sacked_resets_the_reordering_degree() {
    let mut s = established_without_tlp();
    let mut out = vec![];
    // As above: the degree raised to 5, then 6..=8 still SACKed (Disorder).
    s.on_ack(&sack(0, &[(2, 4)]), ms(200), &mut out);
    s.on_ack(&ack(3), ms(201), &mut out);
    s.on_ack(&sack(3, &[(6, 9)]), ms(202), &mut out);
    s.on_ack(&sack(5, &[(6, 9)]), ms(203), &mut out);
    assert_eq!(s.reordering, 5);
    assert_eq!(s.ca_state(), CaState::Disorder);
    // An RTO in Disorder with 3 (>= dupack_threshold) packets SACKed:
    // `tcp_enter_loss` takes the degree back down to 3.
    s.on_timer(s.timer_deadline().unwrap(), &mut out);
    assert_eq!(s.stats().timeouts, 1);
    assert_eq!(s.reordering, 3);
}

#[test]
fn test_a_rate_sample_shorter_than_min_rtt_keeps_its_delivered_count() {
    use super::ack::Gathered;
    let mut s = established(LinuxParams::default());
    // A sample of 2 packets whose send phase took 10 ms and ACK phase
    // 50 ms (from 200 to 250 ms): 50 ms is below min_rtt (100 ms), so
    // `tcp_rate_gen` discards the interval, but keeps delivered = 2.
    let mut g = Gathered::default();
    g.prior_delivered = Some(s.tcp.delivered);
    g.prior_at = ms(200);
    g.send_interval = Duration::from_millis(10);
    s.tcp.delivered += 2;
    let rs = s.rate_gen(&g, 2, 0, 10, None, ms(250));
    assert_eq!(rs.interval, None);
    assert_eq!(rs.delivered, 2);
    assert_eq!(rs.rate_pps(), None);
}

#[test]
fn test_the_echo_on_the_syns_ack_is_negotiation_not_congestion() {
    let mut s = sender(LinuxParams {
        ecn: true,
        ..LinuxParams::default()
    });
    let mut out = vec![];
    s.app_data(None, ms(0), &mut out);
    s.start(ms(0), &mut out);
    assert!(!out[0].ect, "the SYN is not ECN-capable");
    let mut a = ack(0);
    a.ece = true;
    s.on_ack(&a, ms(100), &mut out);
    assert_eq!(s.ca_state(), CaState::Open);
    assert_eq!(s.cwnd(), 10.0);
    assert!(out[1..].iter().all(|o| o.ect && !o.ect1));
}

#[test]
fn test_an_ecn_echo_reduces_once_per_window_and_flags_cwr() {
    let mut s = established(LinuxParams {
        ecn: true,
        ..LinuxParams::default()
    });
    let mut out = vec![];
    // ECE on the ACK of 1: CWR, ssthresh 5; PRR with in flight 9 > 5:
    // ceil(5 x 1 / 10) = 1 packet, which carries CWR.
    let mut a = ack(1);
    a.ece = true;
    s.on_ack(&a, ms(200), &mut out);
    assert_eq!(s.ca_state(), CaState::Cwr);
    assert_eq!(s.stats().ecn_reductions, 1);
    assert_eq!(s.ssthresh(), 5);
    assert_eq!(seqs(&out), vec![11]);
    assert!(out[0].cwr && out[0].ect);
    // A second echo within the window does not cut again.
    let mut a = ack(2);
    a.ece = true;
    s.on_ack(&a, ms(201), &mut out);
    assert_eq!(s.stats().ecn_reductions, 1);
    assert_eq!(s.ssthresh(), 5);
}

#[test]
fn test_pacing_spaces_packets_after_the_first_ten() {
    let mut s = established(LinuxParams {
        pacing: true,
        ..LinuxParams::default()
    });
    let mut out = vec![];
    // The first ACK sets the rate: slow start (cwnd 11 < ssthresh / 2),
    // 200% x 1500 B x 11 / 100 ms = 330 kB/s, one packet per 1500 /
    // 330000 s = 4.545 ms. Ten packets went unpaced; the next two leave
    // one gap apart: the first now, the second waits.
    s.on_ack(&ack(1), ms(200), &mut out);
    assert_eq!(seqs(&out), vec![11]);
    let gap = 1500.0 / (2.0 * 1500.0 * 11.0 / 0.1);
    let want = ms(200) + Duration::from_secs_f64(gap);
    assert_eq!(s.timer_deadline(), Some(want));
    out.clear();
    s.on_timer(want, &mut out);
    assert_eq!(seqs(&out), vec![12]);
}

#[test]
fn test_bbr_enters_recovery_with_cwnd_in_flight_after_the_losses_plus_acked() {
    // BBR's packet conservation (`bbr_set_cwnd_to_recover_or_restore`):
    // on entering Recovery cwnd = tcp_packets_in_flight() + acked, where
    // Linux counts in flight live, after `tcp_fastretrans_alert` has marked
    // this ACK's losses. The flight: 1..=10 at 100 ms; 3 lost; the ACKs of
    // 1 and 2, then SACKs of 4, 4-5, 4-6 at 201 ms.
    let mut s = LinuxSender::new(
        LinuxParams::default(),
        Cc::new(crate::transport::tcp::Variant::Bbr, 1).unwrap(),
    )
    .unwrap();
    let mut out = vec![];
    s.app_data(None, ms(0), &mut out);
    s.start(ms(0), &mut out);
    s.on_ack(&ack(0), ms(100), &mut out);
    s.on_ack(&ack(1), ms(200), &mut out);
    s.on_ack(&ack(2), ms(200), &mut out);
    s.on_ack(&sack(2, &[(4, 5)]), ms(201), &mut out);
    s.on_ack(&sack(2, &[(4, 6)]), ms(201), &mut out);
    // 0..=11 sent (the SYN, the first flight, 11 after the ACKs); 3..=11
    // outstanding, 4 and 5 SACKed: 7 in flight.
    assert_eq!(seqs(&out).last(), Some(&11));
    assert_eq!((s.packets_out(), s.in_flight()), (9, 7));
    out.clear();
    // The third SACK: 6 SACKed too, RACK marks 3 lost, Recovery. In flight
    // 9 - 3 SACKed - 1 lost = 5, one packet acked: cwnd 6 (counting 3 as
    // still in flight gave 7).
    s.on_ack(&sack(2, &[(4, 7)]), ms(201), &mut out);
    assert_eq!(s.ca_state(), CaState::Recovery);
    assert_eq!(s.linux_stats().marked_lost, 1);
    assert_eq!(s.cwnd(), 6.0);
}

#[test]
fn test_the_advertised_window_holds_the_sender_to_whole_packets_and_never_narrows_on_a_duplicate() {
    // Packets of 1500 - 40 = 1460 payload bytes. The SYN's answer offers
    // 5 x 1460 + 1000 B: 5 whole packets, of the 10 cwnd allows.
    let mut s = sender(LinuxParams::default());
    let mut out = vec![];
    s.app_data(None, ms(0), &mut out);
    s.start(ms(0), &mut out);
    out.clear();
    let with_window = |a: AckInfo, w: u32| AckInfo {
        wnd_bytes: Some(w),
        ..a
    };
    s.on_ack(&with_window(ack(0), 5 * 1460 + 1000), ms(100), &mut out);
    assert_eq!(seqs(&out), vec![1, 2, 3, 4, 5]);
    // The ACK of 1 moves the window's edge by one packet: one new packet
    // (cwnd, 11 with 4 in flight, would allow seven).
    out.clear();
    s.on_ack(&with_window(ack(1), 5 * 1460), ms(200), &mut out);
    assert_eq!(seqs(&out), vec![6]);
    // A duplicate with a narrower window is not taken (tcp_may_update_window).
    out.clear();
    s.on_ack(&with_window(ack(1), 1460), ms(201), &mut out);
    assert!(out.is_empty());
    // One with a wider window is, and opens it.
    s.on_ack(&with_window(ack(1), 7 * 1460), ms(202), &mut out);
    assert_eq!(seqs(&out), vec![7, 8]);
    // The packets echo the TSval of the last ACK.
    out.clear();
    s.on_ack(
        &AckInfo {
            tsval_ms: 4242,
            ..with_window(ack(2), 7 * 1460)
        },
        ms(210),
        &mut out,
    );
    assert!(!out.is_empty() && out.iter().all(|p| p.tsecr_ms == 4242));
}

#[test]
fn test_a_closed_window_with_nothing_out_is_probed_at_the_rto_backed_off() {
    // Everything acknowledged at 200 ms with a window of no whole packet:
    // nothing may go out, so the zero-window probe is armed an RTO later.
    let mut s = established(LinuxParams::default());
    let mut out = vec![];
    let closed = AckInfo {
        wnd_bytes: Some(1024),
        ..ack(10)
    };
    s.on_ack(&closed, ms(200), &mut out);
    assert!(out.is_empty());
    let rto = s.rto();
    let first = ms(200) + rto;
    assert_eq!(s.timer_deadline(), Some(first));
    // The probe: a header with the last acknowledged sequence number, 10.
    s.on_timer(first, &mut out);
    assert_eq!(out.len(), 1);
    assert!(out[0].probe && out[0].seq == 10 && !out[0].syn);
    // Its answer still closed: the next probe two RTOs later.
    out.clear();
    assert_eq!(s.timer_deadline(), Some(first + rto + rto));
    // A window of three packets opens it: 11, 12, 13 go out at once.
    s.on_ack(
        &AckInfo {
            wnd_bytes: Some(3 * 1460),
            ..ack(10)
        },
        first + Duration::from_millis(1),
        &mut out,
    );
    assert_eq!(seqs(&out), vec![11, 12, 13]);
    assert!(out.iter().all(|p| !p.probe));
}

#[test]
fn test_in_recovery_sacks_of_packets_sent_before_the_retransmitted_head_push_its_rto_back() {
    // RFC 6675's marking, so that no reordering timer shares the timer.
    let (mut s, _) = lose_packet_3(LinuxParams {
        rack: false,
        ..LinuxParams::default()
    });
    assert_eq!(s.timer_deadline(), Some(ms(201) + s.rto()));
    // 7 and 8 left at 100 ms, before 3 went again at 201 ms: each SACK of
    // them arms the RTO an RTO from its arrival (`tcp_clean_rtx_queue`).
    let mut out = vec![];
    s.on_ack(&sack(2, &[(4, 8)]), ms(260), &mut out);
    assert_eq!(s.timer_deadline(), Some(ms(260) + s.rto()));
    s.on_ack(&sack(2, &[(4, 9)]), ms(261), &mut out);
    assert_eq!(s.timer_deadline(), Some(ms(261) + s.rto()));
    // PRR's new packet 17 left then, after the head: its SACK leaves the
    // RTO where it was, so a lost retransmission still times out.
    assert_eq!(seqs(&out), vec![17]);
    let armed = s.timer_deadline();
    s.on_ack(&sack(2, &[(4, 9), (17, 18)]), ms(361), &mut out);
    assert_eq!(s.ca_state(), CaState::Recovery);
    assert_eq!(s.timer_deadline(), armed);
}
