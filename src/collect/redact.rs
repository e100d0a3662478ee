//! `collect --redact`: every member goes through the keyed redaction of `analyze --redact`
//! ([`crate::redact::Redactor`]) line by line before it is written, the host name included; a
//! gzip member (a rotated log, the bug report) is decompressed first and written as text.

use crate::redact::{Known, Redactor};
use std::io::Read;

/// The redactor of a capture on `host` whose members are `members`: as `analyze --redact` does,
/// the members are analyzed first so that every host name and GPU serial they name is known
/// (a kernel log names its host in systemd's `Hostname set to <…>` line, nvidia-smi the
/// serials), then this node's own name is added.
pub fn redactor(
    key: &crate::redact::Key,
    host: &str,
    members: &[(String, Vec<u8>)],
) -> Result<Redactor, String> {
    let limits = crate::input::Limits::default();
    let inputs: Vec<crate::input::Input> = members
        .iter()
        .flat_map(|(n, d)| crate::input::container::expand_bytes(n, d.clone(), &limits))
        .collect();
    let k = crate::Knowledge::load(&[]).map_err(|e| e.to_string())?;
    let a = crate::analyze_inputs(inputs, Vec::new(), &crate::Options::default(), &k);
    let mut known = Known {
        hosts: crate::report::known_hosts(&a),
        serials: crate::report::known_serials(&a),
    };
    if !host.is_empty() {
        known.hosts.insert(host.to_string());
        known.hosts.insert(crate::timeline::short_host(host));
    }
    Redactor::new(key, &known)
}

/// A member as written with redaction: its name (without `.gz` when it was decompressed) and
/// its redacted text. `cap` bounds a decompressed member.
pub fn member(r: &Redactor, name: &str, data: &[u8], cap: u64) -> (String, Vec<u8>) {
    let (name, text) = if data.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let dec = flate2::read::MultiGzDecoder::new(data);
        let _ = dec.take(cap).read_to_end(&mut out);
        (name.strip_suffix(".gz").unwrap_or(name).to_string(), out)
    } else {
        (name.to_string(), data.to_vec())
    };
    let text = String::from_utf8_lossy(&text);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        out.push_str(&r.text(body));
        out.push_str(nl);
    }
    (r.text(&name), out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_gzip_members_are_redacted() {
        let key = crate::redact::Key::new("k");
        let r = redactor(&key, "gpu-node-07", &[]).unwrap();
        let (n, t) = member(
            &r,
            "kern.log",
            b"2026-03-14T02:13:07+0000 gpu-node-07 kernel: NVRM: Xid 79\n",
            1 << 20,
        );
        let t = String::from_utf8(t).unwrap();
        assert_eq!(n, "kern.log");
        assert!(
            !t.contains("gpu-node-07") && t.contains("host-") && t.ends_with("Xid 79\n"),
            "{t}"
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, b"user gpu-node-07\n").unwrap();
        let (n, t) = member(&r, "var/log/dpkg.log.2.gz", &gz.finish().unwrap(), 1 << 20);
        assert_eq!(n, "var/log/dpkg.log.2");
        assert!(!String::from_utf8(t).unwrap().contains("gpu-node-07"));
    }
}
