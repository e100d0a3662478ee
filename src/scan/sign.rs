//! How the memo signs a line ([`super::memo`]): the prefix's digits and the detail values'
//! digits masked, the host left out when nothing can touch it; and the probe that checks the
//! masks on a signature's first line.

use super::memo::Masks;
#[cfg(test)]
use super::skeleton::mask_details;
use crate::events::details::DetailValues;
#[cfg(test)]
use crate::events::RecognizerSet;
use crate::formats::LineHead;

/// The masked spans of `line` (see the module doc), as (start, end) offsets in order: each digit
/// run of the prefix and of each detail value in the body.
pub(super) fn masked(
    line: &[u8],
    msg_start: usize,
    (details, masks): (&DetailValues, Masks),
    mut f: impl FnMut(usize, usize),
) {
    let ms = msg_start.min(line.len());
    crate::events::details::digit_runs(&line[..ms], &mut f);
    let body = &line[ms..];
    match masks {
        Masks::Plain => details.eq_digits(body, |s, e| f(ms + s, ms + e)),
        Masks::Detailed => details.digits(body, |s, e| f(ms + s, ms + e)),
    }
}

/// Appends `body` with each digit run `values` finds in it written as one 0xfe byte.
pub(super) fn mask_with(
    sig: &mut Vec<u8>,
    body: &[u8],
    values: impl FnOnce(&[u8], &mut dyn FnMut(usize, usize)),
) {
    let mut from = 0;
    values(body, &mut |s, e| {
        sig.extend_from_slice(&body[from..s]);
        sig.push(0xfe);
        from = e;
    });
    sig.extend_from_slice(&body[from..]);
}

/// Writes the signature of a simple line into `sig`: host, rank, then the line with each masked
/// digit run (see [`masked`]) written as one 0xfe byte (so `pid=7` and `pid=12345` sign alike)
/// and 0xff where the message starts; in detail, a host that can change nothing of the reading
/// left out. What [`super::memo::Memo::sign`] writes, the table searched every time.
#[cfg(test)]
fn signature(
    sig: &mut Vec<u8>,
    line: &[u8],
    head: &LineHead<'_>,
    (set, masks): (&RecognizerSet, Masks),
) {
    sig.clear();
    sig.push(masks as u8);
    let ms = head.msg_start.min(line.len());
    let (prefix, body) = line.split_at(ms);
    let free = (masks == Masks::Detailed)
        .then(|| host_span(line, head))
        .flatten()
        .filter(|&(s, e)| e <= ms && set.host_guard().neutral(line, (s, e)));
    match free {
        Some((s, e)) => {
            sig.extend_from_slice(&[HOST_FREE, 0xff]);
            rank(sig, head);
            mask_digits(sig, &line[..s]);
            sig.push(0xfd);
            mask_digits(sig, &line[e..ms]);
        }
        None => {
            host_and_rank(sig, head);
            mask_digits(sig, prefix);
        }
    }
    sig.push(0xff);
    match masks {
        Masks::Plain => mask_with(sig, body, |b, f| set.details.eq_digits(b, f)),
        Masks::Detailed => mask_details(sig, body, &set.details),
    }
}

/// What a signature without its host holds in the host's place (see [`super::memo::Memo::host_free`]).
pub(super) const HOST_FREE: u8 = 2;

/// Where the host the line's head names stands in `line`, when it is a part of it.
pub(super) fn host_span(line: &[u8], head: &LineHead<'_>) -> Option<(usize, usize)> {
    let h = head.prefix.and_then(|p| p.host).or(head.host)?;
    let s = (h.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    (s + h.len() <= line.len()).then_some((s, s + h.len()))
}

/// The host the line's head names, as text (the key's host of its events), when it is UTF-8.
pub(super) fn host_text<'a>(head: &LineHead<'a>) -> Option<&'a str> {
    let h = head.prefix.and_then(|p| p.host).or(head.host)?;
    std::str::from_utf8(h).ok()
}

/// The start of a signature: the line's host and rank.
pub(super) fn host_and_rank(sig: &mut Vec<u8>, head: &LineHead<'_>) {
    let host = head.prefix.and_then(|p| p.host).or(head.host);
    match host {
        Some(h) => {
            sig.push(1);
            sig.extend_from_slice(h);
        }
        None => sig.push(0),
    }
    sig.push(0xff);
    rank(sig, head);
}

/// The line's rank, in a signature.
pub(super) fn rank(sig: &mut Vec<u8>, head: &LineHead<'_>) {
    match head.rank {
        Some(r) => {
            sig.push(1);
            sig.extend_from_slice(&r.to_le_bytes());
        }
        None => sig.push(0),
    }
}

/// Appends `text` with each digit run written as one 0xfe byte.
pub(super) fn mask_digits(sig: &mut Vec<u8>, text: &[u8]) {
    let mut i = 0;
    while let Some(p) = text[i..].iter().position(u8::is_ascii_digit) {
        sig.extend_from_slice(&text[i..i + p]);
        sig.push(0xfe);
        i += p;
        i += text[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    }
    sig.extend_from_slice(&text[i..]);
}

/// The probe of the masks: `line` with every masked digit changed (d -> d + 1 mod 10).
pub(super) fn probe(line: &[u8], msg_start: usize, masks: (&DetailValues, Masks)) -> Vec<u8> {
    let mut p = line.to_vec();
    masked(line, msg_start, masks, |s, e| {
        for c in &mut p[s..e] {
            *c = b'0' + (*c - b'0' + 1) % 10;
        }
    });
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::parse_head;
    use crate::formats::repeat::HeadCache;
    use crate::scan::memo::Memo;

    /// The built-in recognizers.
    fn set() -> &'static RecognizerSet {
        static SET: std::sync::OnceLock<RecognizerSet> = std::sync::OnceLock::new();
        SET.get_or_init(|| RecognizerSet::load(&[]).unwrap())
    }

    /// The built-in table of detail values.
    fn details() -> &'static DetailValues {
        &set().details
    }

    /// The signature as the masked spans define it: the line with each span one 0xfe byte and
    /// 0xff where the message starts, after host and rank.
    fn by_spans(line: &[u8], head: &LineHead<'_>, masks: Masks) -> Vec<u8> {
        let mut sig = Vec::new();
        signature(
            &mut sig,
            b"",
            &LineHead {
                msg_start: 0,
                ..*head
            },
            (set(), masks),
        );
        sig.truncate(sig.len() - 1); // masks, host and rank only
        let ms = head.msg_start.min(line.len());
        let mut from = 0;
        let mut spans = Vec::new();
        masked(line, ms, (details(), masks), |s, e| spans.push((s, e)));
        let mut marked = false;
        for (s, e) in spans {
            if !marked && s >= ms {
                sig.extend_from_slice(&line[from..ms]);
                sig.push(0xff);
                (from, marked) = (ms, true);
            }
            sig.extend_from_slice(&line[from..s]);
            sig.push(0xfe);
            from = e;
        }
        if !marked {
            sig.extend_from_slice(&line[from..ms]);
            sig.push(0xff);
            from = ms;
        }
        sig.extend_from_slice(&line[from..]);
        sig
    }

    #[test]
    fn the_signature_masks_prefix_digits_and_detail_values() {
        for l in [
            &b"Jan 12 00:00:00 gpu-node-01 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=13671, name=python3, Ch 00000010"[..],
            b"Jan 12 01:06:39 gpu-node-01 kernel: [ 4099.980000] nvidia-nvswitch1: SXid (PCI:0000:05:00.0): 12028, Non-fatal",
            b"[  12.5] pid=1 pid= xpid=22pid=3 =4",
            b"2026-03-14T02:13:07.412+00:00 node7 kernel: x pid=9",
            b"[rank3]: Jan 12 00:00:00 h kernel: pid=5",
            b"no prefix pid=77",
            b"Jan 12 00:00:00 h kernel:",
            b"pid=",
            b"",
            b"gpu-n0001:1234:5678 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.7<4432> with error 12, opcode 129, len 0, vendor err 129 (Recv) localGid ::ffff:10.0.0.8 remoteGids::ffff:10.0.0.7 hca mlx5_3",
        ] {
            let head = parse_head(l);
            for masks in [Masks::Plain, Masks::Detailed] {
                let mut sig = Vec::new();
                signature(&mut sig, l, &head, (set(), masks));
                if sig.get(1) == Some(&HOST_FREE) {
                    // the host left out: checked below
                    continue;
                }
                let want = by_spans(l, &head, masks);
                assert_eq!(sig, want, "{masks:?} {}", String::from_utf8_lossy(l));
            }
        }
        // through the head cache, lines that repeat a prefix sign as they sign alone
        let lines: [&[u8]; 5] = [
            b"Jan 12 00:00:00 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=1, name=p",
            b"Jan 12 00:00:01 n1 kernel: [ 12.500000] nvidia-nvswitch1: SXid pid=4",
            b"Jan 12 00:00:02 n1 kernel: [12.5] x",
            b"Jan 12 00:00:02 n2 kernel: [12.5] x",
            b"Jan 12 00:00:03 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=1, name=p",
        ];
        let nccl: [&[u8]; 3] = [
            b"gpu-n0001:1234:5678 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.7<4432> with error 12, opcode 129, len 0, vendor err 129 (Recv) localGid ::ffff:10.0.0.8 remoteGids::ffff:10.0.0.7 hca mlx5_3",
            b"gpu-n0001:1234:5679 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.99<32> with error 12, opcode 1, len 70, vendor err 1 (Recv) localGid ::ffff:10.0.0.8 remoteGids::ffff:10.0.0.7 hca mlx5_3",
            b"gpu-n0001:1234:5679 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.99<32> with error 12, opcode=1 len=70",
        ];
        let (mut cache, mut memo) = (HeadCache::default(), Memo::default());
        for l in lines.iter().chain(&nccl).chain(&lines) {
            let head = cache.parse(l, None);
            for masks in [Masks::Plain, Masks::Detailed] {
                memo.sign(l, (&head, cache.repeated()), (set(), masks));
                let mut alone = Vec::new();
                signature(&mut alone, l, &head, (set(), masks));
                assert_eq!(memo.sig, alone, "{masks:?} {}", String::from_utf8_lossy(l));
            }
        }
        let (a, b) = (
            &b"Jan 12 00:00:00 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=1, name=p"[..],
            &b"Jan 13 10:20:30 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=12345, name=p"[..],
        );
        let (mut sa, mut sb) = (Vec::new(), Vec::new());
        signature(&mut sa, a, &parse_head(a), (set(), Masks::Plain));
        signature(&mut sb, b, &parse_head(b), (set(), Masks::Plain));
        assert_eq!(sa, sb);
        // NCCL lines that differ in their pid, source line and detail values, not in their device
        // or status, sign alike; another status signs apart
        let nccl = |host: &str, err: &str, peer: &str| {
            let pid = if host == "gpu-n0001" { "1" } else { "48213" };
            let l = format!("{host}:{pid}:5678 [3] transport/net_ib.cc:{pid} NCCL WARN NET/IB : Got completion from peer {peer}<{pid}> with error {err}, opcode {pid}, len 0, vendor err {pid} (Recv) localGid ::ffff:{peer} remoteGids::ffff:{peer} hca mlx5_{pid}");
            let mut sig = Vec::new();
            let masks = (set(), Masks::Detailed);
            signature(&mut sig, l.as_bytes(), &parse_head(l.as_bytes()), masks);
            sig
        };
        // and in detail, their hosts too, unless a host could touch an anchor
        let one = nccl("gpu-n0001", "12", "10.0.0.7");
        assert_eq!(one[1], HOST_FREE);
        assert_eq!(one, nccl("gpu-n0001", "12", "192.168.100.9"));
        assert_eq!(one, nccl("rack7-node-b", "12", "192.168.100.9"));
        assert_ne!(one, nccl("gpu-n0001", "5", "10.0.0.7"));
        let word = set()
            .anchors
            .iter()
            .find(|a| a.len() >= 4 && a.bytes().all(|c| c.is_ascii_alphanumeric()));
        let touched = format!(
            "{}-7",
            word.expect("an anchor made of letters").to_lowercase()
        );
        assert_ne!(one, nccl(&touched, "12", "10.0.0.7"));
        assert_eq!(nccl(&touched, "12", "10.0.0.7")[1], 1);
    }
}
