//! `--redact`: replaces identifying values and secrets in the values of a report before it is
//! rendered, so that every format (text, JSON, Markdown, HTML, timeline, scan and merge lines)
//! shows the same aliases and no rendering can undo or bypass the redaction.
//!
//! What is an identifier is data ([`classes`], `data/redact.toml`), plus the host names and
//! serial numbers the analysis knows. Each value is read through a [`view::View`] in which
//! ANSI escape sequences and C/JSON escapes are boundaries. An alias is the class prefix and
//! 48 bits of HMAC-SHA-256 of the normalized value under a [`Key`]: the same value gets the
//! same alias for one key in every format and run (`analyze`, `scan`, `merge`), another key
//! gives other aliases, and without the key an alias cannot be searched back.
//!
//! [`report`] walks the v1 report, [`fleet`] the scan lines.

pub mod classes;
pub mod fleet;
pub mod report;
mod view;

use classes::{Canon, Check, Class};
use hmac::{Hmac, Mac};
use regex::Regex;
use sha2::Sha256;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The environment variable that holds the redaction key when `--redact-key` is not given.
pub const KEY_ENV: &str = "FAULTLINE_REDACT_KEY";

/// Hex digits of an alias: 48 bits.
const ALIAS_HEX: usize = 12;

/// The secret that keys the aliases.
#[derive(Clone)]
pub struct Key(Vec<u8>);

impl Key {
    /// A key from its text (the bytes of the string, as given to `--redact-key`).
    pub fn new(text: &str) -> Key {
        Key(text.as_bytes().to_vec())
    }

    /// A random key for this run and its text (64 hex digits, to pass as `--redact-key`).
    pub fn random() -> std::io::Result<(Key, String)> {
        use std::io::Read;
        let mut b = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
        let text: String = b.iter().map(|x| format!("{x:02x}")).collect();
        Ok((Key::new(&text), text))
    }

    /// The key of a run: `--redact-key`, else [`KEY_ENV`], else a random one, whose text is
    /// returned so that it can be printed (the aliases of this run can then be reproduced).
    pub fn for_run(flag: Option<&str>) -> std::io::Result<(Key, Option<String>)> {
        if let Some(k) = flag.filter(|k| !k.is_empty()) {
            return Ok((Key::new(k), None));
        }
        if let Some(k) = std::env::var(KEY_ENV).ok().filter(|k| !k.is_empty()) {
            return Ok((Key::new(&k), None));
        }
        let (key, text) = Key::random()?;
        Ok((key, Some(text)))
    }
}

/// What the analysis knows to be identifying besides the classes: host names (from lines,
/// inputs, folder and bundle names, ranks) and serial numbers.
#[derive(Clone, Debug, Default)]
pub struct Known {
    /// Host names, short or full.
    pub hosts: BTreeSet<String>,
    /// Serial numbers.
    pub serials: BTreeSet<String>,
}

/// One rule as run: a class of the file, or one built from what the analysis knows.
struct Rule {
    prefix: String,
    patterns: Vec<Regex>,
    check: Check,
    canon: Canon,
    /// Found to be left alone: an alias already.
    keep: bool,
    /// A value must not touch a letter or digit.
    bounded: bool,
}

impl Rule {
    fn from_class(c: &Class) -> Rule {
        Rule {
            prefix: c.prefix.clone(),
            patterns: c.patterns.clone(),
            check: c.check,
            canon: c.canon,
            keep: false,
            bounded: c.bounded,
        }
    }
}

/// A value found in a text: where, and what replaces it.
struct Span {
    start: usize,
    end: usize,
    /// The rule.
    rank: usize,
    replacement: Option<String>,
}

/// Replaces identifying values with keyed aliases.
pub struct Redactor {
    mac: Hmac<Sha256>,
    rules: Vec<Rule>,
}

fn builtin_rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| classes::builtin().0.iter().map(Rule::from_class).collect())
}

/// Names worth nothing to hide and common enough to hurt: never treated as hosts.
fn plain_host(h: &str) -> bool {
    h.len() < 2
        || matches!(
            h.to_ascii_lowercase().as_str(),
            "localhost" | "(none)" | "unknown" | "none"
        )
        || h.parse::<std::net::IpAddr>().is_ok()
        || h.bytes().all(|c| c.is_ascii_digit() || c == b'.')
        || h.bytes().any(|c| c.is_ascii_whitespace())
}

/// The shape of a host name, digit runs generalized: `gpu-node-07` → `gpu\-node\-[0-9]+`, so that
/// peers of the same fleet (`gpu-node-12`) are found though no input names them as hosts.
fn shape(h: &str) -> Option<String> {
    let letters = h.bytes().filter(u8::is_ascii_alphabetic).count();
    if letters < 3 || !h.bytes().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut out = String::new();
    let mut in_digits = false;
    for c in h.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push_str("[0-9]+");
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push_str(&regex::escape(&c.to_string()));
        }
    }
    Some(out)
}

/// A rule for a set of literal-ish alternatives, longest first.
fn alternatives(prefix: &str, alts: Vec<String>, domain: bool, canon: Canon) -> Option<Rule> {
    if alts.is_empty() {
        return None;
    }
    let suffix = if domain { r"(?:\.[a-z0-9-]+)*" } else { "" };
    let re = regex::RegexBuilder::new(&format!("(?i)(?P<v>(?:{}){suffix})", alts.join("|")))
        .size_limit(64 << 20)
        .build()
        .ok()?;
    Some(Rule {
        prefix: prefix.into(),
        patterns: vec![re],
        check: if domain {
            Check::HostDomain
        } else {
            Check::None
        },
        canon,
        keep: false,
        bounded: true,
    })
}

impl Redactor {
    /// A redactor with this key, for an analysis that knows these hosts and serials.
    pub fn new(key: &Key, known: &Known) -> Redactor {
        let builtin = builtin_rules();
        let mut prefixes: BTreeSet<&str> = builtin.iter().map(|r| r.prefix.as_str()).collect();
        prefixes.extend(["host", "serial", "ip", "ip6"]);
        let alias = Rule {
            prefix: String::new(),
            patterns: vec![Regex::new(&format!(
                r"\b(?P<v>(?:{})-[0-9a-f]{{{ALIAS_HEX}}})\b",
                prefixes.into_iter().collect::<Vec<_>>().join("|")
            ))
            .expect("prefixes are letters and digits")],
            check: Check::None,
            canon: Canon::Exact,
            keep: true,
            bounded: true,
        };
        let mut hosts: Vec<&String> = known.hosts.iter().filter(|h| !plain_host(h)).collect();
        hosts.sort_by_key(|h| (std::cmp::Reverse(h.len()), h.as_str()));
        let names: Vec<String> = hosts.iter().map(|h| regex::escape(h)).collect();
        let mut shapes: Vec<String> = hosts.iter().filter_map(|h| shape(h)).collect();
        shapes.sort_by_key(|s| (std::cmp::Reverse(s.len()), s.clone()));
        shapes.dedup();
        let mut serials: Vec<&String> = known.serials.iter().filter(|s| s.len() >= 4).collect();
        serials.sort_by_key(|s| (std::cmp::Reverse(s.len()), s.as_str()));
        let serials: Vec<String> = serials.iter().map(|s| regex::escape(s)).collect();
        let mut rules = vec![alias];
        rules.extend(alternatives("host", names, true, Canon::Host));
        rules.extend(alternatives("host", shapes, true, Canon::Host));
        rules.extend(alternatives("serial", serials, false, Canon::Exact));
        rules.extend(builtin.iter().map(|r| Rule {
            prefix: r.prefix.clone(),
            patterns: r.patterns.clone(),
            check: r.check,
            canon: r.canon,
            keep: false,
            bounded: r.bounded,
        }));
        Redactor {
            mac: Hmac::<Sha256>::new_from_slice(&key.0).expect("HMAC takes any key length"),
            rules,
        }
    }

    /// The alias of a value already normalized: `PREFIX-` and 12 hex digits.
    pub fn alias(&self, prefix: &str, canonical: &str) -> String {
        let mut m = self.mac.clone();
        m.update(prefix.as_bytes());
        m.update(&[0]);
        m.update(canonical.as_bytes());
        let d = m.finalize().into_bytes();
        let hex: String = d[..ALIAS_HEX / 2]
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect();
        format!("{prefix}-{hex}")
    }

    /// A free text (a log line, a path, a summary) with every identifier replaced.
    pub fn text(&self, s: &str) -> String {
        let view = view::View::new(s);
        let t = view.as_ref().map_or(s, |v| v.text.as_str());
        let spans = self.spans(t);
        if spans.is_empty() {
            return s.to_string();
        }
        let mut out = String::with_capacity(s.len() + 16);
        let mut last = 0;
        for sp in spans {
            let (a, b) = view
                .as_ref()
                .map_or((sp.start, sp.end), |v| v.original(sp.start, sp.end));
            if a < last || b > s.len() || !s.is_char_boundary(a) || !s.is_char_boundary(b) {
                continue;
            }
            out.push_str(&s[last..a]);
            out.push_str(sp.replacement.as_deref().unwrap_or(&s[a..b]));
            last = b;
        }
        out.push_str(&s[last..]);
        out
    }

    /// A host name as a whole value (a report's `host` field): an address gets the alias of its
    /// address class, a name the alias of its short name, as in any text.
    pub fn host(&self, h: &str) -> String {
        let t = h.trim();
        if t.is_empty() || self.is_alias(t) {
            return h.to_string();
        }
        match classes::canonical(Canon::Ip, t).parse::<std::net::IpAddr>() {
            Ok(ip @ std::net::IpAddr::V4(_)) => self.alias("ip", &ip.to_string()),
            Ok(ip) => self.alias("ip6", &ip.to_string()),
            Err(_) if plain_host(t) => h.to_string(),
            Err(_) => self.alias("host", &classes::canonical(Canon::Host, t)),
        }
    }

    /// A serial number as a whole value (a GPU table's `serial`).
    pub fn serial(&self, s: &str) -> String {
        let t = s.trim();
        if t.is_empty() || matches!(t, "N/A" | "n/a" | "[N/A]" | "0") || self.is_alias(t) {
            return s.to_string();
        }
        self.alias("serial", t)
    }

    /// A user name as a whole value (a detail named `user`).
    pub fn user(&self, s: &str) -> String {
        let t = s.trim();
        if t.is_empty() || self.is_alias(t) {
            return s.to_string();
        }
        self.alias("user", t)
    }

    fn is_alias(&self, t: &str) -> bool {
        self.rules[0].patterns[0]
            .find(t)
            .is_some_and(|m| m.start() == 0 && m.end() == t.len())
    }

    /// Every value found in `t`, non-overlapping, in order.
    ///
    /// Rules are applied in their order: a value that overlaps one already taken keeps only
    /// what lies outside it, and each such piece (trimmed of punctuation) is replaced by the
    /// value's own alias, so that no part of a value survives an overlap
    /// (`dinov2-nodes.cn-d003`: the host `cn-d003` is known, the rest is a domain's).
    fn spans(&self, t: &str) -> Vec<Span> {
        let mut found = Vec::new();
        for (rank, rule) in self.rules.iter().enumerate() {
            for re in &rule.patterns {
                self.find(rule, rank, re, t, &mut found);
            }
        }
        found.sort_by_key(|s| (s.rank, s.start, std::cmp::Reverse(s.end)));
        let b = t.as_bytes();
        let mut taken: Vec<Span> = Vec::with_capacity(found.len());
        for s in found {
            let mut pieces = vec![(s.start, s.end)];
            for x in taken.iter().filter(|x| x.start < s.end && s.start < x.end) {
                pieces = pieces
                    .into_iter()
                    .flat_map(|(a, e)| [(a, e.min(x.start)), (a.max(x.end), e)])
                    .filter(|(a, e)| a < e)
                    .collect();
            }
            let whole = pieces == [(s.start, s.end)];
            for (mut a, mut e) in pieces {
                if !whole {
                    let punct = |c: u8| c.is_ascii() && !c.is_ascii_alphanumeric();
                    while a < e && punct(b[a]) {
                        a += 1;
                    }
                    while e > a && punct(b[e - 1]) {
                        e -= 1;
                    }
                }
                if a < e {
                    let at = taken.partition_point(|x| x.start < a);
                    taken.insert(
                        at,
                        Span {
                            start: a,
                            end: e,
                            rank: s.rank,
                            replacement: s.replacement.clone(),
                        },
                    );
                }
            }
        }
        taken
    }

    fn find(&self, rule: &Rule, rank: usize, re: &Regex, t: &str, found: &mut Vec<Span>) {
        let b = t.as_bytes();
        let names: Vec<&str> = re.capture_names().flatten().collect();
        let mut pos = 0;
        while pos <= t.len() {
            let Some(c) = re.captures_at(t, pos) else {
                break;
            };
            let whole = c.get(0).expect("group 0");
            pos = if whole.end() > whole.start() {
                whole.end()
            } else {
                t[whole.end()..]
                    .chars()
                    .next()
                    .map_or(t.len() + 1, |ch| whole.end() + ch.len_utf8())
            };
            // (value, prefix, normalization, whether the rule's own check applies)
            let groups: Vec<(Option<regex::Match>, &str, Canon, bool)> = if names.is_empty() {
                vec![(Some(whole), rule.prefix.as_str(), rule.canon, true)]
            } else {
                names
                    .iter()
                    .filter_map(|n| match *n {
                        "v" => Some((c.name(n), rule.prefix.as_str(), rule.canon, true)),
                        _ => n
                            .strip_prefix("p_")
                            .map(|p| (c.name(n), p, Canon::Exact, false)),
                    })
                    .collect()
            };
            for (m, prefix, canon, own) in groups {
                let Some(m) = m.filter(|m| m.end() > m.start()) else {
                    continue;
                };
                // a value that starts (ends) with a letter or digit must not have one before
                // (after) it: `xgpu-node-07` is no host, `-bwayne@…` after a MAC is an address
                let alnum = |i: Option<&u8>| i.is_some_and(u8::is_ascii_alphanumeric);
                let glued_before = alnum(b.get(m.start()))
                    && alnum(m.start().checked_sub(1).and_then(|i| b.get(i)));
                let glued_after =
                    alnum(m.end().checked_sub(1).and_then(|i| b.get(i))) && alnum(b.get(m.end()));
                if rule.bounded && (glued_before || glued_after) {
                    continue;
                }
                let checked = if own {
                    classes::check(rule.check, t, m.start(), m.end())
                } else {
                    Some((m.start(), m.end()))
                };
                let Some((start, end)) = checked.filter(|(s, e)| e > s) else {
                    continue;
                };
                let replacement = (!rule.keep)
                    .then(|| self.alias(prefix, &classes::canonical(canon, &t[start..end])));
                found.push(Span {
                    start,
                    end,
                    rank,
                    replacement,
                });
            }
        }
    }
}

/// The redactor of one `analyze` run: its key and the hosts and serials the analysis knows.
pub fn for_analysis(key: &Key, a: &crate::Analysis) -> Redactor {
    Redactor::new(
        key,
        &Known {
            hosts: crate::report::known_hosts(a),
            serials: crate::report::known_serials(a),
        },
    )
}

#[cfg(test)]
mod tests;
