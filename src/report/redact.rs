//! `--redact`: replaces host names, IP and MAC addresses, user names, home paths and secrets in
//! any rendered report with stable pseudonyms (a hash of the value, so the same entity gets the
//! same alias in every file and format). GPU serials and UUIDs are kept unless asked.

use regex::{Captures, Regex};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Replaces identifying values in report text.
pub struct Redactor {
    hosts: Option<Regex>,
    serials: bool,
    ipv4: Regex,
    mac: Regex,
    home: Regex,
    user: Regex,
    secret: Regex,
    uuid: Regex,
    serial: Regex,
    serial_values: Option<Regex>,
}

/// FNV-1a, 32 bits: a fixed hash, the same on every machine and run.
pub fn fnv1a(s: &str) -> u32 {
    let mut h: u32 = 0x811c9dc5;
    for b in s.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x01000193);
    }
    h
}

fn alias(kind: &str, value: &str) -> String {
    // FNV-1a mixed by a finalizer so that similar names get dissimilar aliases
    let mut h = fnv1a(value);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    format!("{kind}-{:06x}", h & 0xff_ffff)
}

impl Redactor {
    /// A redactor for these host names; `serials` also hides GPU serials and UUIDs.
    pub fn new(hosts: &BTreeSet<String>, serials: bool) -> Redactor {
        let mut names: Vec<&String> = hosts.iter().filter(|h| h.len() >= 2).collect();
        names.sort_by_key(|h| std::cmp::Reverse(h.len()));
        let hosts = (!names.is_empty()).then(|| {
            let alt: Vec<String> = names.iter().map(|h| regex::escape(h)).collect();
            // the short name, optionally followed by domain labels
            Regex::new(&format!(r"\b(?:{})(?:\.[A-Za-z0-9-]+)*\b", alt.join("|")))
                .expect("escaped names")
        });
        // the fixed patterns are compiled once per process (a fleet scan builds one redactor per
        // bundle); a clone of a compiled regex shares it
        static FIXED: OnceLock<[Regex; 7]> = OnceLock::new();
        let [ipv4, mac, home, user, secret, uuid, serial] = FIXED
            .get_or_init(|| {
                [
                    Regex::new(r"\b\d{1,3}(?:\.\d{1,3}){3}\b").expect("static"),
                    Regex::new(r"\b[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}\b").expect("static"),
                    Regex::new(r"/(home|Users)/([A-Za-z0-9._-]+)").expect("static"),
                    Regex::new(r"\b(for user|user=|User=|by user|USER=)\s?([A-Za-z0-9._-]+)")
                        .expect("static"),
                    Regex::new(
                        // the value stops at a quote or backslash so that a JSON string keeps its end
                        r#"(?i)\b(token|password|passwd|secret|api[_-]?key|authorization)(\s*[=:]\s*)([^\s"\\]+)"#,
                    )
                    .expect("static"),
                    Regex::new(r"GPU-[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}").expect("static"),
                    Regex::new(r"(?i)(serial(?: number)?(?: is)?\W{0,6})(\d{6,})")
                        .expect("static"),
                ]
            })
            .clone();
        Redactor {
            hosts,
            serials,
            ipv4,
            mac,
            home,
            user,
            secret,
            uuid,
            serial,
            serial_values: None,
        }
    }

    /// Also hides these serial numbers wherever they stand (a report table holds a serial with no
    /// `serial` word before it), when serials are to be hidden at all.
    pub fn with_serials(mut self, values: &BTreeSet<String>) -> Redactor {
        let mut v: Vec<&String> = values.iter().filter(|s| s.len() >= 4).collect();
        v.sort_by_key(|s| std::cmp::Reverse(s.len()));
        if self.serials && !v.is_empty() {
            let alt: Vec<String> = v.iter().map(|s| regex::escape(s)).collect();
            self.serial_values =
                Some(Regex::new(&format!(r"\b(?:{})\b", alt.join("|"))).expect("escaped values"));
        }
        self
    }

    /// Redacts one text (a whole rendered report).
    pub fn apply(&self, text: &str) -> String {
        let mut t = text.to_string();
        if let Some(h) = &self.hosts {
            t = h
                .replace_all(&t, |c: &Captures| {
                    let full = &c[0];
                    alias("host", full.split('.').next().unwrap_or(full))
                })
                .into_owned();
        }
        t = self
            .ipv4
            .replace_all(&t, |c: &Captures| {
                let m = c.get(0).expect("match");
                let before = t[..m.start()].chars().next_back();
                let after = t[m.end()..].chars().next();
                let version_like = before == Some('.')
                    || after == Some('.')
                        && t[m.end() + 1..].starts_with(|ch: char| ch.is_ascii_digit());
                if version_like {
                    c[0].to_string()
                } else {
                    alias("ip", &c[0])
                }
            })
            .into_owned();
        t = self
            .mac
            .replace_all(&t, |c: &Captures| alias("mac", &c[0].to_ascii_lowercase()))
            .into_owned();
        t = self
            .home
            .replace_all(&t, |c: &Captures| {
                format!("/{}/{}", &c[1], alias("user", &c[2]))
            })
            .into_owned();
        t = self
            .user
            .replace_all(&t, |c: &Captures| {
                format!("{} {}", &c[1], alias("user", &c[2]))
            })
            .into_owned();
        t = self
            .secret
            .replace_all(&t, |c: &Captures| format!("{}{}<redacted>", &c[1], &c[2]))
            .into_owned();
        if self.serials {
            t = self
                .uuid
                .replace_all(&t, |c: &Captures| format!("GPU-{}", alias("uuid", &c[0])))
                .into_owned();
            t = self
                .serial
                .replace_all(&t, |c: &Captures| {
                    format!("{}{}", &c[1], alias("serial", &c[2]))
                })
                .into_owned();
            if let Some(v) = &self.serial_values {
                t = v
                    .replace_all(&t, |c: &Captures| alias("serial", &c[0]))
                    .into_owned();
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_ips_users_and_secrets_get_stable_aliases() {
        let hosts: BTreeSet<String> = ["gpu-node-1", "gpu-node-10"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let r = Redactor::new(&hosts, false);
        let t = r.apply("gpu-node-10.cluster.local and gpu-node-1 from 10.1.2.3 driver 535.54.03 /home/alice/x token=abc GPU-12345678-1234-1234-1234-123456789abc");
        assert!(
            !t.contains("gpu-node-1")
                && !t.contains("10.1.2.3")
                && !t.contains("alice")
                && !t.contains("abc "),
            "{t}"
        );
        assert!(t.contains("535.54.03"), "versions are not addresses: {t}");
        // a secret at the end of a JSON string: the string and the document stay whole
        let json = r#"{"message":"name=python token=abc123","n":1}"#;
        let red = r.apply(json);
        assert_eq!(red, r#"{"message":"name=python token=<redacted>","n":1}"#);
        serde_json::from_str::<serde_json::Value>(&red).expect("valid JSON");
        assert!(t.contains("GPU-12345678"), "UUIDs kept by default");
        assert_eq!(r.apply("gpu-node-1"), r.apply("gpu-node-1"));
        assert_ne!(r.apply("gpu-node-1"), r.apply("gpu-node-10"));
        let s = Redactor::new(&hosts, true)
            .apply("GPU-12345678-1234-1234-1234-123456789abc Serial Number: 1324021076543");
        assert!(
            !s.contains("12345678") && !s.contains("1324021076543"),
            "{s}"
        );
        // a serial alone in a table cell: hidden when known, with the alias of its labelled form
        let known: BTreeSet<String> = ["1324021076543".to_string()].into();
        let with = Redactor::new(&hosts, true).with_serials(&known);
        let labelled = s.rsplit(' ').next().unwrap();
        assert!(labelled.starts_with("serial-"), "{s}");
        assert_eq!(with.apply("| 1324021076543 |"), format!("| {labelled} |"));
        let kept = Redactor::new(&hosts, false).with_serials(&known);
        assert_eq!(kept.apply("| 1324021076543 |"), "| 1324021076543 |");
    }
}
