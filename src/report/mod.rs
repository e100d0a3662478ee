//! Reports: the v1 JSON document of the contract, a terminal text report, a Markdown
//! post-mortem and a self-contained HTML post-mortem, all built from one [`json::Report`] value
//! so that they agree.

#[cfg(test)]
mod fixture;
pub mod html;
pub mod json;
pub mod known;
pub mod markdown;
pub mod postmortem;
mod terminal;
pub use terminal::terminal_safe;
pub mod text;

/// Formats a UTC microsecond time as `2026-03-14T02:13:07.412000Z`.
pub fn iso_us(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us).map_or_else(
        || us.to_string(),
        |d| d.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
    )
}

/// Formats a UTC microsecond time for people: `2026-03-14 02:13:07`.
pub fn short_us(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us).map_or_else(
        || us.to_string(),
        |d| d.format("%Y-%m-%d %H:%M:%S").to_string(),
    )
}

/// Every host name an analysis knows (lines, inputs, bundles, job ranks), short and full.
pub fn known_hosts(a: &crate::Analysis) -> std::collections::BTreeSet<String> {
    let mut hosts = std::collections::BTreeSet::new();
    for e in &a.events {
        if let Some(h) = &e.host {
            hosts.insert(h.to_string());
        }
    }
    for r in &a.inputs {
        if let Some(h) = &r.host {
            hosts.insert(crate::timeline::short_host(h));
        }
        if let Some(h) = r.bundle.as_ref().and_then(|b| b.host.clone()) {
            hosts.insert(crate::timeline::short_host(&h));
        }
    }
    if let Some(j) = &a.job {
        for r in &j.ranks {
            if let Some(h) = &r.host {
                hosts.insert(h.clone());
            }
        }
    }
    // IP-address "hosts" are handled by the address rule
    hosts.retain(|h| !h.bytes().all(|c| c.is_ascii_digit() || c == b'.'));
    hosts
}

/// Every GPU serial number an analysis knows (inventories and identities read from lines).
pub fn known_serials(a: &crate::Analysis) -> std::collections::BTreeSet<String> {
    let mut serials = std::collections::BTreeSet::new();
    for r in &a.inputs {
        serials.extend(r.gpus.iter().filter_map(|g| g.serial.clone()));
    }
    serials.extend(a.identities.values().filter_map(|(_, s)| s.clone()));
    serials
}

/// Pushes `c`, or its visible stand-in when it is a control character other than `\n` and `\t`.
pub(crate) fn push_visible(o: &mut String, c: char) {
    match c {
        '\n' | '\t' => o.push(c),
        '\u{0}'..='\u{1f}' => o.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
        '\u{7f}' => o.push('\u{2421}'),
        c if ('\u{80}'..='\u{9f}').contains(&c) || terminal::invisible(c) => {
            let _ = std::fmt::Write::write_fmt(o, format_args!("⟨U+{:04X}⟩", c as u32));
        }
        _ => o.push(c),
    }
}
