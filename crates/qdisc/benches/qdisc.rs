//! Per-packet cost of the queue disciplines: one enqueue and one dequeue on
//! a queue kept at about 50 packets (limit 100), called directly and through
//! the `AnyQdisc` enum the engine uses. Bernoulli drops 1% of arrivals
//! early; an iteration whose arrival is dropped does not dequeue, so the
//! backlog stays put and the figure is per offered packet.

use std::hint::black_box;
use std::time::Duration;

use aqmlab_qdisc::{
    AnyQdisc, Bernoulli, BernoulliParams, DropTail, DropTailParams, DropWhere, Effects, Limit, Packet, QueueDisc, Time,
    Verdict,
};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};

const BACKLOG_PKTS: u64 = 50;
const LIMIT: Limit = Limit::Packets(100);
const SEED: u64 = 1;

fn droptail() -> DropTail {
    DropTail::new(DropTailParams {
        limit: LIMIT,
        drop: DropWhere::Tail,
    })
    .expect("valid parameters")
}

fn bernoulli() -> Bernoulli {
    Bernoulli::new(
        BernoulliParams {
            limit: LIMIT,
            p: 0.01,
            ecn: false,
        },
        SEED,
    )
    .expect("valid parameters")
}

fn pkt(id: u64) -> Packet {
    Packet {
        id,
        size_bytes: 64 + (id & 1023) as u32,
        sent_at: Time(id),
        enqueued_at: Time(id),
        ..Packet::default()
    }
}

/// Fills `q` to the working backlog, then measures one offer (and one
/// dequeue unless the offer was dropped) per iteration.
fn bench_queue<Q: QueueDisc>(group: &mut BenchmarkGroup<WallTime>, name: &str, mut q: Q) {
    let mut fx = Effects::default();
    for id in 0..BACKLOG_PKTS {
        q.enqueue(pkt(id), Time(id), &mut fx);
    }
    assert_eq!(q.backlog().pkts as u64, BACKLOG_PKTS, "{name}: the fill must not drop");
    let mut id = BACKLOG_PKTS;
    group.bench_function(name, |b| {
        b.iter(|| {
            let now = Time(id);
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
    bench_queue(&mut group, "droptail", droptail());
    bench_queue(&mut group, "bernoulli", bernoulli());
    bench_queue(&mut group, "any/droptail", AnyQdisc::DropTail(droptail()));
    bench_queue(&mut group, "any/bernoulli", AnyQdisc::Bernoulli(bernoulli()));
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = enqueue_dequeue
}
criterion_main!(benches);
