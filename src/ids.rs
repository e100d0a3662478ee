//! Device identifiers: PCI addresses in every spelling the tools print, normalized to `dddd:bb:dd.f`.

/// Normalizes a PCI address: `PCI:0000:3b:00`, `0000:3b:00`, `00000000:3B:00.0`, `3b:00.0` → `0000:3b:00.0`.
pub fn normalize_bdf(s: &str) -> Option<String> {
    let s = s
        .trim()
        .trim_start_matches("PCI:")
        .trim_end_matches([':', ',', '.', ')']);
    let parts: Vec<&str> = s.split(':').collect();
    let (domain, bus, devfn) = match parts.as_slice() {
        [d, b, df] => (*d, *b, *df),
        [b, df] => ("0", *b, *df),
        _ => return None,
    };
    let (dev, func) = match devfn.split_once('.') {
        Some((d, f)) => (d, f),
        None => (devfn, "0"),
    };
    let hex = |x: &str, max: usize| -> Option<u32> {
        (!x.is_empty() && x.len() <= max && x.bytes().all(|c| c.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(x, 16).ok())
            .flatten()
    };
    let d = hex(domain, 8)?;
    let b = hex(bus, 2)?;
    let v = hex(dev, 2)?;
    let f = hex(func, 1)?;
    if d > 0xffff || v > 0x1f || f > 7 {
        return None;
    }
    Some(format!("{d:04x}:{b:02x}:{v:02x}.{f:x}"))
}

/// Decodes NCCL's `busId 3b000` (`%lx` of domain<<20 | bus<<12 | dev<<4 | fn... as printed) into `0000:3b:00.0`.
pub fn nccl_bus_id(s: &str) -> Option<String> {
    let v = u64::from_str_radix(s.trim(), 16).ok()?;
    let func = v & 0xf;
    let dev = (v >> 4) & 0xff;
    let bus = (v >> 12) & 0xff;
    let domain = v >> 20;
    if func > 7 || dev > 0x1f || domain > 0xffff {
        return None;
    }
    Some(format!("{domain:04x}:{bus:02x}:{dev:02x}.{func:x}"))
}

/// Decodes an AER requester id `id=0010` (bus<<8 | devfn) into a bus id in domain 0.
pub fn aer_requester_id(s: &str) -> Option<String> {
    let v = u32::from_str_radix(s.trim(), 16).ok()?;
    if v > 0xffff {
        return None;
    }
    let bus = v >> 8;
    let dev = (v >> 3) & 0x1f;
    let func = v & 7;
    Some(format!("0000:{bus:02x}:{dev:02x}.{func:x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(
            normalize_bdf("PCI:0000:3b:00").as_deref(),
            Some("0000:3b:00.0")
        );
        assert_eq!(
            normalize_bdf("00000000:3B:00.0").as_deref(),
            Some("0000:3b:00.0")
        );
        assert_eq!(normalize_bdf("0000:10:1c").as_deref(), Some("0000:10:1c.0"));
        assert_eq!(
            normalize_bdf("0000:5d:00.0:").as_deref(),
            Some("0000:5d:00.0")
        );
        assert_eq!(normalize_bdf("zz:00.0"), None);
        assert_eq!(normalize_bdf("hello"), None);
    }

    #[test]
    fn nccl_and_aer() {
        assert_eq!(nccl_bus_id("3b000").as_deref(), Some("0000:3b:00.0"));
        assert_eq!(nccl_bus_id("1b000").as_deref(), Some("0000:1b:00.0"));
        assert_eq!(aer_requester_id("0010").as_deref(), Some("0000:00:02.0"));
    }
}
