//! Seeded random streams, one per component.
//!
//! A run has one seed. Every component that draws random numbers derives its
//! own stream from (run seed, the component's stable name), e.g.
//! `"traffic[2].flow[17].gap"`, so adding a flow or changing the queue
//! discipline shifts no other component's draws: comparisons between
//! disciplines use common random numbers.
//!
//! The derivation is FNV-1a (64 bit) over the name, mixed with the seed by
//! SplitMix64's finaliser; the generator is xoshiro256++ seeded from that
//! value. Both are fixed here, so a (seed, name) gives the same stream on
//! every machine and in every release that does not change this file.

use rand::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator every component uses.
pub type Rng = Xoshiro256PlusPlus;

fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of the stream named `name` in a run seeded with `run_seed`.
pub fn stream_seed(run_seed: u64, name: &str) -> u64 {
    splitmix64(splitmix64(run_seed) ^ fnv1a64(name.as_bytes()))
}

/// A generator for the stream named `name` in a run seeded with `run_seed`.
pub fn stream(run_seed: u64, name: &str) -> Rng {
    Rng::seed_from_u64(stream_seed(run_seed, name))
}

/// A uniform draw in (0, 1]: never zero, so `-ln(u)` and `u^(-1/a)` are finite.
#[inline]
pub fn uniform_open0(rng: &mut Rng) -> f64 {
    1.0 - rng.random::<f64>()
}

/// A uniform draw in [0, 1).
#[inline]
pub fn uniform(rng: &mut Rng) -> f64 {
    rng.random::<f64>()
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_fnv1a64_known_values() {
        // Published FNV-1a 64-bit test values.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn test_splitmix64_reference_sequence() {
        // SplitMix64 from state 0 yields 0xe220a8397b1dcdaf first (Vigna's reference).
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn test_streams_differ_by_name_and_seed() {
        assert_ne!(stream_seed(1, "a"), stream_seed(1, "b"));
        assert_ne!(stream_seed(1, "a"), stream_seed(2, "a"));
        assert_eq!(
            stream_seed(7, "traffic[0].flow[3].gap"),
            stream_seed(7, "traffic[0].flow[3].gap")
        );
    }
}
