//! The classes of identifiers `--redact` replaces, as data (`data/redact.toml`), with their
//! validators and normalizations.

use regex::Regex;
use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The built-in classes.
pub const BUILTIN_CLASSES: &str = include_str!("../../data/redact.toml");

#[derive(Deserialize)]
struct File {
    keep: Vec<String>,
    class: Vec<ClassSpec>,
}

#[derive(Deserialize)]
struct ClassSpec {
    name: String,
    prefix: String,
    patterns: Vec<String>,
    #[serde(default)]
    check: Option<String>,
    #[serde(default)]
    canon: Option<String>,
    #[serde(default)]
    samples: Vec<(String, String)>,
    #[serde(default = "yes")]
    bounded: bool,
}

fn yes() -> bool {
    true
}

/// What a value must pass to be taken.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Check {
    /// Anything the pattern matches.
    None,
    /// Four octets up to 255, not part of a longer dotted number; loopback and 0.0.0.0 kept.
    Ipv4,
    /// Parses as IPv6 (trailing `:` trimmed); `::`, `::1` kept; no C++ `ns::name` lookalike.
    Ipv6,
    /// Holds a digit.
    HasDigit,
    /// A host name: a letter first, a digit somewhere, not a device name (`eth0`, `mlx5_0`).
    HostLike,
    /// A pod name: a digit or a dash in it.
    PodName,
    /// A domain that is not one of the public ones a report names (`nvidia.com/gpu`).
    Domain,
    /// A host name followed by domain labels: trailing file extensions (`.log`) are left out.
    HostDomain,
    /// Not a `0x` number (`startToken = 0x2d0f` in a driver line is a register, not a secret).
    NotHexLiteral,
}

/// How a value is normalized before it is keyed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Canon {
    /// As written.
    Exact,
    /// Lower case.
    Lower,
    /// An IP address in its canonical text form.
    Ip,
    /// A MAC: the hex digits, lower case, in colon pairs.
    Mac,
    /// A host: the short name (before the first dot), lower case.
    Host,
    /// Hex digits only, lower case (UUIDs with or without dashes, `0x` GUIDs).
    Hex,
}

/// One class: the patterns that find it and how its values are checked, keyed and named.
pub struct Class {
    /// Name (`ipv4`, `hf_token`, …).
    pub name: String,
    /// Alias prefix.
    pub prefix: String,
    /// Patterns; group `v` is the value, `p_PREFIX` a value of another prefix.
    pub patterns: Vec<Regex>,
    /// Validator.
    pub check: Check,
    /// Normalization.
    pub canon: Canon,
    /// `[line, value]` the class must replace.
    pub samples: Vec<(String, String)>,
    /// A value must not touch a letter or digit.
    pub bounded: bool,
}

/// The built-in classes and the lines that must stay unchanged.
pub fn builtin() -> (Vec<Class>, Vec<String>) {
    // the file is checked by the tests: an error here is a build defect
    parse(BUILTIN_CLASSES).expect("data/redact.toml is valid")
}

/// Parses a classes file.
pub fn parse(text: &str) -> Result<(Vec<Class>, Vec<String>), String> {
    let f: File = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for c in f.class {
        let patterns = c
            .patterns
            .iter()
            .map(|p| Regex::new(p).map_err(|e| format!("class {}: {e}", c.name)))
            .collect::<Result<Vec<_>, _>>()?;
        let check = match c.check.as_deref() {
            None => Check::None,
            Some("ipv4") => Check::Ipv4,
            Some("ipv6") => Check::Ipv6,
            Some("has_digit") => Check::HasDigit,
            Some("host_like") => Check::HostLike,
            Some("pod_name") => Check::PodName,
            Some("domain") => Check::Domain,
            Some("not_hex_literal") => Check::NotHexLiteral,
            Some(x) => return Err(format!("class {}: unknown check `{x}`", c.name)),
        };
        let canon = match c.canon.as_deref() {
            None | Some("exact") => Canon::Exact,
            Some("lower") => Canon::Lower,
            Some("ip") => Canon::Ip,
            Some("mac") => Canon::Mac,
            Some("host") => Canon::Host,
            Some("hex") => Canon::Hex,
            Some(x) => return Err(format!("class {}: unknown canon `{x}`", c.name)),
        };
        if !c.prefix.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(format!(
                "class {}: prefix must be letters and digits",
                c.name
            ));
        }
        out.push(Class {
            name: c.name,
            prefix: c.prefix,
            patterns,
            check,
            canon,
            samples: c.samples,
            bounded: c.bounded,
        });
    }
    Ok((out, f.keep))
}

/// Public domains a report names for what they are (`nvidia.com/gpu` is a Kubernetes resource,
/// `pytorch.org` a download); kept with their subdomains.
const PUBLIC_DOMAINS: &[&str] = &[
    "nvidia.com",
    "kubernetes.io",
    "k8s.io",
    "pytorch.org",
    "python.org",
    "github.com",
    "nvcr.io",
    "docker.io",
    "kernel.org",
    "ubuntu.com",
    "debian.org",
    "redhat.com",
];

/// File extensions a host name in a file name is followed by (`gpu-node-07.log`).
const FILE_EXTENSIONS: &[&str] = &[
    "log", "gz", "zst", "xz", "bz2", "tar", "tgz", "txt", "json", "jsonl", "out", "err", "csv",
    "xml", "md", "html", "htm", "zip", "1", "2", "3", "old", "bak",
];

/// Device names that look like host names: `eth0`, `ib0`, `mlx5`, `nvme0n1`, `rank3`.
fn device_like(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    let letters = lower.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_' || c == 'n');
    const DEVICES: &[&str] = &[
        "eth", "ib", "mlx", "en", "eno", "ens", "enp", "wlan", "bond", "nvme", "hca", "cpu",
        "numa", "rank", "card", "nvidia", "nvswitch", "nvlink", "port", "link", "lane", "cuda",
        "dev", "sm", "tpc", "gpc", "lo", "ibp", "roce", "vf", "pf", "sd", "md", "dm",
    ];
    !lower.contains('-') && !lower.contains('.') && DEVICES.contains(&letters)
}

/// Applies a check to the value at `s..e` of `text`: the span to take, or `None`.
pub fn check(c: Check, text: &str, s: usize, e: usize) -> Option<(usize, usize)> {
    let v = &text[s..e];
    let b = text.as_bytes();
    match c {
        Check::None => Some((s, e)),
        Check::Ipv4 => {
            let ip: Ipv4Addr = v.parse().ok()?;
            let dotted_before = s >= 2 && b[s - 1] == b'.' && b[s - 2].is_ascii_digit();
            let dotted_after =
                b.get(e) == Some(&b'.') && b.get(e + 1).is_some_and(u8::is_ascii_digit);
            (!dotted_before && !dotted_after && !ip.is_loopback() && !ip.is_unspecified())
                .then_some((s, e))
        }
        Check::Ipv6 => {
            let t = v.trim_end_matches([':', '.']);
            let t = t.trim_start_matches('[');
            let s = s + (v.len() - v.trim_start_matches('[').len());
            let ip: Ipv6Addr = t.parse().ok()?;
            if ip.is_loopback() || ip.is_unspecified() {
                return None;
            }
            if b.get(s.wrapping_sub(1)) == Some(&b':') {
                return None;
            }
            let groups = t.split(':').filter(|g| !g.is_empty()).count();
            // `c10d::abc` parses: a compressed address of two groups must look like one
            let plausible = groups >= 3
                || t.starts_with("::")
                || ["fe8", "fc", "fd", "ff0", "2"]
                    .iter()
                    .any(|p| t.starts_with(p));
            plausible.then_some((s, s + t.len()))
        }
        Check::HasDigit => v.bytes().any(|c| c.is_ascii_digit()).then_some((s, e)),
        Check::HostLike => {
            let short = v.split('.').next().unwrap_or(v);
            let ok = short.bytes().any(|c| c.is_ascii_digit()) && !device_like(short);
            ok.then(|| host_domain(text, s, e))
        }
        Check::PodName => v
            .bytes()
            .any(|c| c.is_ascii_digit() || c == b'-')
            .then_some((s, e)),
        Check::Domain => {
            let lower = v.to_ascii_lowercase();
            let public = PUBLIC_DOMAINS
                .iter()
                .any(|d| lower == *d || lower.ends_with(&format!(".{d}")));
            let longer =
                b.get(e) == Some(&b'.') && b.get(e + 1).is_some_and(u8::is_ascii_alphanumeric);
            (!public && !longer).then_some((s, e))
        }
        Check::HostDomain => Some(host_domain(text, s, e)),
        Check::NotHexLiteral => {
            let hex = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X"));
            (!hex.is_some_and(|h| !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit())))
                .then_some((s, e))
        }
    }
}

/// A host name with domain labels, without the file extensions that follow it.
fn host_domain(text: &str, s: usize, e: usize) -> (usize, usize) {
    let mut end = e;
    while let Some(dot) = text[s..end].rfind('.') {
        let label = &text[s + dot + 1..end];
        if FILE_EXTENSIONS.contains(&label.to_ascii_lowercase().as_str()) {
            end = s + dot;
        } else {
            break;
        }
    }
    (s, end)
}

/// The normalized form of a value, which is what its alias is computed from.
pub fn canonical(c: Canon, v: &str) -> String {
    match c {
        Canon::Exact => v.to_string(),
        Canon::Lower => v.to_lowercase(),
        Canon::Ip => {
            let t = v.trim_matches(|c| c == '[' || c == ']');
            let t = t.split('%').next().unwrap_or(t);
            t.parse::<IpAddr>()
                .map_or_else(|_| t.to_ascii_lowercase(), |ip| ip.to_string())
        }
        Canon::Mac => {
            let hex: Vec<char> = v
                .chars()
                .filter(char::is_ascii_hexdigit)
                .map(|c| c.to_ascii_lowercase())
                .collect();
            hex.chunks(2)
                .map(|p| p.iter().collect::<String>())
                .collect::<Vec<_>>()
                .join(":")
        }
        Canon::Host => v.split('.').next().unwrap_or(v).to_ascii_lowercase(),
        Canon::Hex => {
            let v = v
                .strip_prefix("0x")
                .or_else(|| v.strip_prefix("0X"))
                .unwrap_or(v);
            v.chars()
                .filter(char::is_ascii_hexdigit)
                .map(|c| c.to_ascii_lowercase())
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_file_parses_and_canonical_forms_agree() {
        let (classes, keep) = builtin();
        assert!(classes.len() >= 30, "{} classes", classes.len());
        assert!(keep.len() >= 10);
        assert_eq!(
            canonical(Canon::Ip, "2001:0db8:0000:0000:0000:0000:0000:0001"),
            "2001:db8::1"
        );
        assert_eq!(canonical(Canon::Ip, "[2001:db8::1]"), "2001:db8::1");
        assert_eq!(
            canonical(Canon::Mac, "0C-42-A1-03-00-13"),
            "0c:42:a1:03:00:13"
        );
        assert_eq!(canonical(Canon::Mac, "0c42.a103.0013"), "0c:42:a1:03:00:13");
        assert_eq!(
            canonical(Canon::Host, "GPU-Node-07.cluster.local"),
            "gpu-node-07"
        );
        assert_eq!(canonical(Canon::Hex, "0x0C42a103"), "0c42a103");
        assert!(device_like("eth0") && device_like("mlx5") && device_like("nvme0n1"));
        assert!(!device_like("dgx17") && !device_like("gpu-node-07"));
    }
}
