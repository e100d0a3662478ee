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
    #[serde(default)]
    rejects: Vec<String>,
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
    /// A GUID: not a kernel address or register (`ffff…`, `0000…`), not one digit repeated.
    GuidLike,
    /// A host name after a host keyword: not a device name or a word of the sentence.
    HostWord,
    /// A domain name whatever its top-level domain, not a file or code name.
    DomainAny,
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
    /// Near misses: lines the whole redaction must leave unchanged.
    pub rejects: Vec<String>,
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
            Some("guid_like") => Check::GuidLike,
            Some("host_word") => Check::HostWord,
            Some("domain_any") => Check::DomainAny,
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
            rejects: c.rejects,
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
            let ip = ipv4_lenient(v)?;
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
        Check::GuidLike => {
            let h = v.to_ascii_lowercase();
            let h = h.trim_start_matches("0x").replace(':', "");
            let first = h.as_bytes().first().copied().unwrap_or(b'0');
            let dull = h.starts_with("ffff")
                || h.starts_with("0000")
                || h.bytes().all(|c| c == first)
                || !h.bytes().any(|c| c.is_ascii_digit());
            (!dull).then_some((s, e))
        }
        Check::HostWord => {
            let short = v.split('.').next().unwrap_or(v).to_ascii_lowercase();
            let plain =
                v.len() < 2 || device_like(&short) || SENTENCE_WORDS.contains(&short.as_str());
            (!plain).then(|| host_domain(text, s, e))
        }
        Check::DomainAny => domain_any(text, s, e),
        Check::NotHexLiteral => {
            let hex = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X"));
            (!hex.is_some_and(|h| !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit())))
                .then_some((s, e))
        }
    }
}

/// Words that follow a host keyword in a sentence (`server not responding`, `peer closed`).
const SENTENCE_WORDS: &[&str] = &[
    "not",
    "is",
    "was",
    "the",
    "a",
    "an",
    "to",
    "for",
    "and",
    "or",
    "closed",
    "reset",
    "down",
    "up",
    "lost",
    "unknown",
    "none",
    "null",
    "localhost",
    "local",
    "remote",
    "default",
    "unreachable",
    "error",
    "failed",
    "timeout",
    "timed",
    "returned",
    "responding",
    "ok",
    "true",
    "false",
    "in",
    "on",
    "at",
    "with",
    "from",
    "by",
    "of",
    "name",
    "address",
    "addr",
    "port",
    "connection",
];

/// An IPv4 address, leading zeros allowed (`010.077.001.099` is written by some tools).
fn ipv4_lenient(v: &str) -> Option<Ipv4Addr> {
    let mut o = [0u8; 4];
    let mut n = 0;
    for part in v.split('.') {
        if n == 4 || part.is_empty() || part.len() > 3 {
            return None;
        }
        o[n] = part.parse().ok()?;
        n += 1;
    }
    (n == 4).then(|| Ipv4Addr::from(o))
}

/// Top-level domains that are also file extensions or code names: a name ending with one is a
/// domain only with three labels or more, none of them an extension (`acme.cluster.sh`, not
/// `train.sh`, `libcuda.so`, `setup.py.in`).
const AMBIGUOUS_TLDS: &[&str] = &[
    "sh", "py", "pl", "in", "md", "rs", "so", "cc", "mk", "ps", "pm", "pt", "ml", "tf", "cl", "cr",
    "es", "it", "me", "am", "js", "ts", "lo", "la", "ko", "mo", "cu", "to", "is", "at", "as", "do",
    "id", "no", "be", "by", "re", "st", "ai",
];

/// Generic top-level domains (the country codes are every two letters' pair below).
const GENERIC_TLDS: &[&str] = &[
    "com",
    "net",
    "org",
    "edu",
    "gov",
    "mil",
    "int",
    "arpa",
    "io",
    "ai",
    "dev",
    "app",
    "cloud",
    "local",
    "localdomain",
    "internal",
    "intranet",
    "intra",
    "lan",
    "corp",
    "home",
    "cluster",
    "svc",
    "site",
    "tech",
    "info",
    "biz",
    "xyz",
    "online",
    "top",
    "pro",
    "name",
    "mobi",
    "asia",
    "club",
    "store",
    "shop",
    "live",
    "news",
    "email",
    "systems",
    "network",
    "host",
    "hosting",
    "space",
    "website",
    "services",
    "company",
    "digital",
    "today",
    "global",
    "world",
    "zone",
    "lab",
    "labs",
    "science",
    "research",
    "university",
    "institute",
    "ninja",
    "run",
    "page",
    "codes",
    "software",
    "computer",
    "science",
    "works",
    "group",
    "team",
    "center",
    "studio",
    "io",
    "gpu",
    "ml",
    "priv",
    "private",
    "test",
    "example",
    "invalid",
    "onion",
    "aws",
    "google",
    "azure",
    "microsoft",
    "amazon",
    "nvidia",
    "meta",
    "ibm",
    "oracle",
    "hpc",
];

/// Whether a two-letter label is an ISO 3166 country code (every ccTLD is one, plus `uk`, `eu`,
/// `ac`).
fn country_code(t: &str) -> bool {
    const CC: &str = "ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi         bj bm bn bo br bs bt bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz         de dj dk dm do dz ec ee eg er es et eu fi fj fk fm fo fr ga gd ge gf gg gh gi gl gm gn         gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke         kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml         mm mn mo mp mq mr ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe         pf pg ph pk pl pm pn pr ps pt pw py qa re ro rs ru rw sa sb sc sd se sg sh si sk sl sm         sn so sr ss st sv sx sy sz tc td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug uk us         uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw";
    t.len() == 2 && CC.split_whitespace().any(|c| c == t)
}

/// A domain name at `s..e` whatever its top-level domain: its last label a country code or a
/// generic TLD, not a public domain a report names, not followed by more of a code name (`(`,
/// `_`, a dot and a letter), not a file name (an ambiguous TLD needs three labels, none an
/// extension).
fn domain_any(text: &str, s: usize, e: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let (s, e) = host_domain(text, s, e);
    let v = text[s..e].to_ascii_lowercase();
    let labels: Vec<&str> = v.split('.').collect();
    let tld = *labels.last()?;
    if labels.len() < 2 || !(country_code(tld) || GENERIC_TLDS.contains(&tld)) {
        return None;
    }
    let code_after = matches!(b.get(e), Some(b'(' | b'_' | b'['))
        || (b.get(e) == Some(&b'.') && b.get(e + 1).is_some_and(u8::is_ascii_alphanumeric));
    let code_before = s > 0 && matches!(b[s - 1], b'_' | b'.');
    if code_after || code_before {
        return None;
    }
    let public = PUBLIC_DOMAINS
        .iter()
        .any(|d| v == *d || v.ends_with(&format!(".{d}")));
    let file_like = |l: &&str| FILE_EXTENSIONS.contains(l) || AMBIGUOUS_TLDS.contains(l);
    let ambiguous = AMBIGUOUS_TLDS.contains(&tld)
        && (labels.len() < 3 || labels[..labels.len() - 1].iter().any(file_like));
    // a label of digits only is a version (`v1.2.de`), a first label `self`/`torch` is code
    let code = labels.iter().any(|l| l.bytes().all(|c| c.is_ascii_digit()))
        || matches!(
            labels[0],
            "self" | "torch" | "np" | "os" | "sys" | "nn" | "cls" | "args"
        );
    (!public && !ambiguous && !code).then_some((s, e))
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
                .ok()
                .or_else(|| ipv4_lenient(t).map(IpAddr::V4))
                .map_or_else(|| t.to_ascii_lowercase(), |ip| ip.to_string())
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
