//! Deterministic sharding: `--shard K/N` keeps the bundles whose key hashes to K modulo N.
//!
//! The key is the bundle's path relative to its scan root, with `/` separators, so the split
//! is the same on every machine, whatever the mount point of the archive. The hash is fixed
//! (64-bit FNV-1a followed by the MurmurHash3 finalizer), never the standard library's
//! randomized hasher. The finalizer matters: FNV-1a alone leaves the low bits of the hash
//! depending only on the low bits of each byte, so `node-1` and `node-5` would always land in
//! the same shard when N is a power of two.

use std::fmt;
use std::str::FromStr;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = FNV_OFFSET;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// The MurmurHash3 64-bit finalizer: spreads every input bit over every output bit.
pub fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    h
}

/// The stable hash of a shard key.
pub fn key_hash(key: &str) -> u64 {
    fmix64(fnv1a64(key.as_bytes()))
}

/// One worker's part of a scan: shard `index` of `count` (0-based, `0 <= index < count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This worker's index, from 0.
    pub index: u64,
    /// The number of workers.
    pub count: u64,
}

impl Shard {
    /// The whole archive: shard 0 of 1.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// The shard a key belongs to.
    pub fn of(key: &str, count: u64) -> u64 {
        key_hash(key) % count.max(1)
    }

    /// True when the bundle with this key is this worker's.
    pub fn owns(&self, key: &str) -> bool {
        Shard::of(key, self.count) == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why a `K/N` text is not a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not of the form `K/N` with two integers.
    #[error("expected K/N with 0 <= K < N, e.g. 0/4 (got `{0}`)")]
    Syntax(String),
    /// N is zero.
    #[error("the shard count N must be at least 1")]
    ZeroCount,
    /// K is N or more.
    #[error("shard index {index} is out of range for {count} shards: K counts from 0 to N-1 (Slurm: --array=0-{last}; Kubernetes: $JOB_COMPLETION_INDEX)", last = .count - 1)]
    OutOfRange {
        /// K.
        index: u64,
        /// N.
        count: u64,
    },
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let (k, n) = s
            .trim()
            .split_once('/')
            .ok_or_else(|| ShardError::Syntax(s.to_string()))?;
        let parse = |x: &str| {
            x.trim()
                .parse::<u64>()
                .map_err(|_| ShardError::Syntax(s.to_string()))
        };
        let (index, count) = (parse(k)?, parse(n)?);
        if count == 0 {
            return Err(ShardError::ZeroCount);
        }
        if index >= count {
            return Err(ShardError::OutOfRange { index, count });
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn parses_and_rejects() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(" 0/1 ".parse::<Shard>(), Ok(Shard::ALL));
        assert_eq!(
            "4/4".parse::<Shard>(),
            Err(ShardError::OutOfRange { index: 4, count: 4 })
        );
        assert_eq!("0/0".parse::<Shard>(), Err(ShardError::ZeroCount));
        assert!(matches!("x/4".parse::<Shard>(), Err(ShardError::Syntax(_))));
        assert!(matches!("3".parse::<Shard>(), Err(ShardError::Syntax(_))));
    }

    #[test]
    fn every_key_has_exactly_one_owner_and_shards_are_balanced() {
        let n = 4;
        let mut sizes = [0usize; 4];
        for i in 0..4000 {
            let key = format!("node-{i:04}");
            let owners: Vec<u64> = (0..n)
                .filter(|&k| Shard { index: k, count: n }.owns(&key))
                .collect();
            assert_eq!(owners.len(), 1, "{key}");
            sizes[owners[0] as usize] += 1;
        }
        // keys that differ only in high bits of a byte still spread (the finalizer's job)
        for s in sizes {
            assert!((900..1100).contains(&s), "unbalanced shards: {sizes:?}");
        }
    }
}
