//! Per-packet cost of every queue discipline: one enqueue and one dequeue on
//! a queue kept at about 50 packets, through the `AnyQdisc` enum the engine
//! uses (and directly for drop-tail, to show the enum's cost). Packets
//! belong to 64 flows and alternate between the two traffic classes, so
//! FQ-CoDel, SFB and RED+Tail spread them. An iteration whose arrival is
//! dropped does not dequeue, so the backlog stays put and the figure is per
//! offered packet. Time advances 1 us per packet: sojourns stay far below
//! CoDel's and PIE's targets, so this is the cost of the common path, not of
//! the drop logic.

use std::hint::black_box;
use std::time::Duration as StdDuration;

use aqmlab_qdisc::{
    AnyQdisc, Bernoulli, BernoulliParams, Blue, BlueParams, Codel, CodelParams, DropTail, DropTailParams, DropWhere,
    DualPi2, DualPi2Params, Duration, Effects, FqCodel, FqCodelParams, Limit, LinkInfo, Packet, Pie, PieParams,
    QueueDisc, Red, RedParams, RedTail, RedTailParams, Sfb, SfbParams, Ted, TedCheck, TedMode, TedParams, Threshold,
    Time, Verdict, Weight,
};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};

const BACKLOG_PKTS: u64 = 50;
const LIMIT: Limit = Limit::Packets(200);
const SEED: u64 = 1;
const LINK: LinkInfo = LinkInfo {
    rate_bps: 10_000_000,
    mtu_bytes: 1500,
};

fn droptail() -> DropTail {
    DropTail::new(DropTailParams {
        limit: LIMIT,
        drop: DropWhere::Tail,
    })
    .expect("valid parameters")
}

fn red_params() -> RedParams {
    RedParams::red(
        LIMIT,
        Threshold::Packets(30.0),
        Threshold::Packets(90.0),
        0.1,
        Weight::Value(0.002),
    )
}

/// Every discipline with typical parameters.
fn disciplines() -> Vec<(&'static str, AnyQdisc)> {
    vec![
        ("droptail", AnyQdisc::DropTail(droptail())),
        (
            "bernoulli",
            AnyQdisc::Bernoulli(
                Bernoulli::new(
                    BernoulliParams {
                        limit: LIMIT,
                        p: 0.01,
                        ecn: false,
                    },
                    SEED,
                )
                .unwrap(),
            ),
        ),
        ("red", AnyQdisc::Red(Red::new(red_params(), LINK, SEED).unwrap())),
        (
            "ared",
            AnyQdisc::Red(Red::new(RedParams::ared(LIMIT), LINK, SEED).unwrap()),
        ),
        ("blue", AnyQdisc::Blue(Blue::new(BlueParams::new(LIMIT), SEED).unwrap())),
        (
            "ted",
            AnyQdisc::Ted(
                Ted::new(
                    TedParams {
                        limit: LIMIT,
                        mode: TedMode::Lbd,
                        check: TedCheck::Head,
                        class_deadlines: vec![Some(Duration::from_millis(100)); 2],
                        default_deadline: None,
                    },
                    LINK,
                )
                .unwrap(),
            ),
        ),
        (
            "sfb",
            AnyQdisc::Sfb(Box::new(Sfb::new(SfbParams::new(LIMIT), SEED).unwrap())),
        ),
        (
            "codel",
            AnyQdisc::Codel(Codel::new(CodelParams::default(), LINK).unwrap()),
        ),
        ("pie", AnyQdisc::Pie(Pie::new(PieParams::default(), SEED).unwrap())),
        (
            "dualpi2",
            AnyQdisc::DualPi2(DualPi2::new(DualPi2Params::default(), LINK, SEED).unwrap()),
        ),
        (
            "fq_codel",
            AnyQdisc::FqCodel(FqCodel::new(FqCodelParams::default(), LINK, SEED).unwrap()),
        ),
        (
            "red-tail",
            AnyQdisc::RedTail(Box::new(
                RedTail::new(
                    RedTailParams {
                        limit: LIMIT,
                        min_th1_pkts: RedTailParams::DEFAULT_MIN_TH1_PKTS,
                        max_th1_pkts: RedTailParams::DEFAULT_MAX_TH1_PKTS,
                        c1_min: RedTailParams::DEFAULT_C1_MIN,
                        c1_max: RedTailParams::DEFAULT_C1_MAX,
                        queue1_classes: vec![0],
                        red: red_params(),
                    },
                    LINK,
                    SEED,
                )
                .unwrap(),
            )),
        ),
    ]
}

fn pkt(id: u64) -> Packet {
    Packet {
        id,
        flow: (id % 64) as u32,
        class: (id % 2) as u8,
        size_bytes: 64 + (id & 1023) as u32,
        sent_at: Time(id * 1000),
        enqueued_at: Time(id * 1000),
        ..Packet::default()
    }
}

/// Fills `q` to the working backlog, then measures one offer (and one
/// dequeue unless the offer was dropped) per iteration.
fn bench_queue<Q: QueueDisc>(group: &mut BenchmarkGroup<WallTime>, name: &str, mut q: Q) {
    let mut fx = Effects::default();
    let mut id = 0;
    while (q.backlog().pkts as u64) < BACKLOG_PKTS {
        q.enqueue(pkt(id), Time(id * 1000), &mut fx);
        id += 1;
    }
    group.bench_function(name, |b| {
        b.iter(|| {
            let now = Time(id * 1000);
            let verdict = q.enqueue(black_box(pkt(id)), now, &mut fx);
            id += 1;
            if !matches!(verdict, Verdict::Dropped(_)) {
                black_box(q.dequeue(now, &mut fx));
            }
            fx.clear();
            verdict
        })
    });
}

fn enqueue_dequeue(c: &mut Criterion) {
    let mut group = c.benchmark_group("enqueue_dequeue");
    group.throughput(Throughput::Elements(1));
    bench_queue(&mut group, "direct/droptail", droptail());
    for (name, q) in disciplines() {
        bench_queue(&mut group, name, q);
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(StdDuration::from_secs(1)).measurement_time(StdDuration::from_secs(2));
    targets = enqueue_dequeue
}
criterion_main!(benches);
