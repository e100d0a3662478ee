//! Tests of the in-place zstd decoder: exact text across fills, windows and frames; corrupt
//! blocks stop it.

use super::*;

/// Log-like lines that do not repeat nearby, the whole repeated with a change per round:
/// the matches of a round reach back a round (300 KiB), across the buffers of a fill.
fn text(n: usize, seed: u64) -> Vec<u8> {
    let mut round = Vec::with_capacity(320 << 10);
    let mut x = seed;
    while round.len() < 300 << 10 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        round.extend_from_slice(format!("node {} gpu {:x}\n", x >> 40, x).as_bytes());
    }
    let mut out = Vec::with_capacity(n + round.len());
    while out.len() < n {
        let i = (out.len() / 7) % round.len();
        round[i] = b'0' + (out.len() % 10) as u8;
        out.extend_from_slice(&round);
    }
    out.truncate(n);
    out
}

fn decoder(z: Vec<u8>) -> ZstdBlocks {
    ZstdBlocks::new(Box::new(io::Cursor::new(z))).unwrap()
}

/// Reads `head` bytes through Read, then fills buffers as the scan's cutter does, sealing
/// each; returns all the bytes.
fn fill_all(mut d: ZstdBlocks, head: usize, seg: usize) -> io::Result<Vec<u8>> {
    let mut out = vec![0u8; head];
    let mut n = 0;
    while n < head {
        let k = d.read(&mut out[n..])?;
        if k == 0 {
            break;
        }
        n += k;
    }
    out.truncate(n);
    let mut keep: Vec<Arc<Vec<u8>>> = Vec::new();
    loop {
        let carry = 1000.min(out.len());
        let mut buf = out[out.len() - carry..].to_vec();
        // `seg` until the frame goes in place, then the least it allows
        let want = carry
            + if d.min_segment() > 0 {
                d.min_segment()
            } else {
                seg
            };
        buf.resize(want + BLOCK_MAX, 0xAA);
        let end = d.fill(&mut buf, carry, want)?;
        out.extend_from_slice(&buf[carry..end]);
        keep.push(d.seal(buf));
        // the buffers of the scan come back: only the one held stays shared
        keep.retain(|b| Arc::strong_count(b) > 1);
        assert!(keep.len() <= 1);
        // short of `want`: the end, or an error the next fill tells
        if end == carry {
            return Ok(out);
        }
    }
}

#[test]
fn filled_and_read_give_the_stream() {
    let a = text(12 << 20, 1);
    let b = text(1 << 20, 2);
    let mut z = zstd::encode_all(&a[..], 3).unwrap();
    // most of it is matches a round back, past a block
    assert!(z.len() * 5 < a.len(), "{}", z.len());
    // a skippable frame between two frames, and a small frame at level 19 (8 MiB window)
    z.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 5, 0, 0, 0, 1, 2, 3, 4, 5]);
    z.extend_from_slice(&zstd::encode_all(&b[..], 19).unwrap());
    let mut want = a.clone();
    want.extend_from_slice(&b);
    for (head, seg) in [
        (0, 3 << 20),
        (512, 3 << 20),
        (100 << 10, 200 << 10),
        (2_400_000, 3 << 20),
        (3 << 20, 2_300_000),
        (13 << 20, 3 << 20),
    ] {
        assert!(
            fill_all(decoder(z.clone()), head, seg).unwrap() == want,
            "{head} {seg}"
        );
    }
    let mut all = Vec::new();
    decoder(z).read_to_end(&mut all).unwrap();
    assert!(all == want);
}

#[test]
fn a_long_window_goes_through_the_ring() {
    let a = text(12 << 20, 3);
    let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    e.long_distance_matching(true).unwrap();
    e.window_log(24).unwrap();
    e.write_all(&a).unwrap();
    let z = e.finish().unwrap();
    let d = decoder(z);
    assert!(fill_all(d, 100, 1 << 20).unwrap() == a);
}

#[test]
fn cut_and_corrupt_streams_fail_with_what_came_before() {
    let a = text(2 << 20, 4);
    let z = zstd::encode_all(&a[..], 3).unwrap();
    let cut = z[..z.len() / 2].to_vec();
    let e = fill_all(decoder(cut), 0, 1 << 20).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    // a corrupt block is found by its checksum at the latest (the zstd tool writes one)
    let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    e.include_checksum(true).unwrap();
    e.write_all(&a).unwrap();
    let mut bad = e.finish().unwrap();
    let mid = bad.len() / 2;
    for b in &mut bad[mid..mid + 64] {
        *b ^= 0x5a;
    }
    assert!(fill_all(decoder(bad), 0, 1 << 20).is_err());
    // a window past the limit is refused before anything is allocated
    let mut huge = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8];
    huge.extend_from_slice(&[0; 16]);
    let mut sink = Vec::new();
    assert!(decoder(huge).read_to_end(&mut sink).is_err());
}

#[test]
fn a_buffer_not_sealed_is_refused() {
    let a = text(6 << 20, 5);
    let mut d = decoder(zstd::encode_all(&a[..], 3).unwrap());
    // too small a fill for a window goes through the ring; a large one in place
    let small = 64 << 10;
    let mut one = vec![0u8; small + BLOCK_MAX];
    assert!(d.fill(&mut one, 0, small).unwrap() >= small);
    assert!(!d.direct && d.min_segment() > 2 << 20);
    let big = 3 << 20;
    let mut two = vec![0u8; big + BLOCK_MAX];
    assert!(d.fill(&mut two, 0, big).unwrap() >= big);
    assert!(d.direct);
    let mut three = vec![0u8; big + BLOCK_MAX];
    assert!(d.fill(&mut three, 0, big).is_err());
    // nor is a read once blocks were filled in place
    assert!(d.read(&mut three).is_err());
    let mut head = b"log".to_vec();
    assert!(!starts_modern(&head));
    head.splice(0..0, [0x28, 0xb5, 0x2f, 0xfd]);
    assert!(starts_modern(&head) && !starts_modern(&[0x27, 0xb5, 0x2f, 0xfd]));
}

/// Fills buffers of the sizes `sizes` asks in turn (never less than the decoder needs),
/// each one sealed; returns the bytes, or the first error.
fn fill_sizes(mut d: ZstdBlocks, sizes: &[usize]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut held = Vec::new();
    for i in 0.. {
        let want = sizes[i % sizes.len()].max(d.min_segment().min(16 << 20));
        let mut buf = vec![0x55u8; want + BLOCK_MAX];
        let end = d.fill(&mut buf, 0, want)?;
        out.extend_from_slice(&buf[..end]);
        held.push(d.seal(buf));
        held.retain(|b| Arc::strong_count(b) > 1);
        if end == 0 {
            return Ok(out);
        }
    }
    unreachable!()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    /// Any fill sizes, levels and window sizes read the stream as the streaming decoder
    /// does; a corrupt byte anywhere is an error or a wrong byte, never a panic.
    #[test]
    fn any_fill_sizes_read_the_stream(
        size in 1usize..(7 << 20),
        level in 1i32..6,
        wlog in 17u32..24,
        sizes in proptest::collection::vec(1usize..(5 << 20), 1..5),
        flip in 0usize..usize::MAX,
    ) {
        let a = text(size, size as u64);
        let mut e = zstd::stream::Encoder::new(Vec::new(), level).unwrap();
        e.window_log(wlog).unwrap();
        e.include_checksum(true).unwrap();
        e.write_all(&a).unwrap();
        let z = e.finish().unwrap();
        proptest::prop_assert!(fill_sizes(decoder(z.clone()), &sizes).unwrap() == a);
        let mut bad = z;
        let at = flip % bad.len();
        bad[at] ^= 0x40;
        let _ = fill_sizes(decoder(bad), &sizes);
    }
}

use std::io::Write;
