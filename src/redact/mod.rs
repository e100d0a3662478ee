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
mod known;
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

    /// A random key: 32 bytes from the system's generator, as 64 hex digits.
    pub fn random() -> std::io::Result<(Key, String)> {
        use std::io::Read;
        let mut b = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
        let text: String = b.iter().map(|x| format!("{x:02x}")).collect();
        Ok((Key::new(&text), text))
    }

    /// The key of a run: `--redact-key`, else [`KEY_ENV`], else the key file (read when it
    /// exists, else a random key written to it), else a random key that is never shown.
    pub fn for_run(
        flag: Option<&str>,
        file: Option<&std::path::Path>,
    ) -> Result<(Key, KeyOrigin), String> {
        if let Some(k) = flag.filter(|k| !k.is_empty()) {
            return Ok((Key::new(k), KeyOrigin::Given));
        }
        if let Some(k) = std::env::var(KEY_ENV).ok().filter(|k| !k.is_empty()) {
            return Ok((Key::new(&k), KeyOrigin::Given));
        }
        let random = || Key::random().map_err(|e| format!("no random key could be drawn ({e})"));
        let Some(path) = file else {
            return Ok((random()?.0, KeyOrigin::Random));
        };
        let shown = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) if !text.trim().is_empty() => {
                Ok((Key::new(text.trim()), KeyOrigin::FileRead(shown)))
            }
            Ok(_) => Err(format!("the key file {shown} is empty")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let (key, text) = random()?;
                write_key(path, &text)
                    .map_err(|e| format!("cannot write the key file {shown}: {e}"))?;
                Ok((key, KeyOrigin::FileWritten(shown)))
            }
            Err(e) => Err(format!("cannot read the key file {shown}: {e}")),
        }
    }
}

/// Writes a new key file readable by its owner only; never over an existing file.
fn write_key(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o.open(path)?;
    f.write_all(text.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()
}

/// Where the key of a run came from, which decides whether its aliases are stable across runs.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyOrigin {
    /// `--redact-key` or the environment.
    Given,
    /// Read from the key file.
    FileRead(String),
    /// Drawn at random and written to the key file.
    FileWritten(String),
    /// Drawn at random and kept nowhere.
    Random,
}

impl KeyOrigin {
    /// The report's note on the aliases of this run (the key itself is never in it).
    pub fn note(&self) -> String {
        let stable = "redaction: aliases are stable across runs that use the same key";
        match self {
            KeyOrigin::Given => format!("{stable} (given by --redact-key or {KEY_ENV})"),
            KeyOrigin::FileRead(f) => format!("{stable} (read from the key file {f})"),
            KeyOrigin::FileWritten(f) => {
                format!("{stable} (a new random key, written to the key file {f})")
            }
            KeyOrigin::Random => "redaction: aliases are NOT stable across runs: the key was drawn at random for this run and kept nowhere (give --redact-key-file FILE to keep it)".into(),
        }
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

/// How a rule finds its values.
enum Finder {
    /// Regexes of a class (group `v` the value, `p_PREFIX` a value of another prefix).
    Patterns(Vec<Regex>),
    /// Literal values the analysis knows, in one automaton.
    Literals(known::Literals),
    /// Host names of a known shape.
    Shapes(known::Shapes),
}

/// One rule as run: a class of the file, or one built from what the analysis knows.
struct Rule {
    prefix: String,
    finder: Finder,
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
            finder: Finder::Patterns(c.patterns.clone()),
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
    /// Every pattern of the rules in one set, which says in one pass which patterns can match
    /// a text (most match none), with the rule and pattern of each; `None` when the set is too
    /// large to build (every pattern is then run: slower, never less redacted).
    set: Option<(regex::RegexSet, Vec<(usize, usize)>)>,
}

/// The set of every pattern of `rules`.
fn pattern_set(rules: &[Rule]) -> Option<(regex::RegexSet, Vec<(usize, usize)>)> {
    let mut index = Vec::new();
    let mut sources = Vec::new();
    for (r, rule) in rules.iter().enumerate() {
        if let Finder::Patterns(p) = &rule.finder {
            for (k, re) in p.iter().enumerate() {
                index.push((r, k));
                sources.push(re.as_str());
            }
        }
    }
    let set = regex::RegexSetBuilder::new(sources)
        .size_limit(256 << 20)
        .dfa_size_limit(16 << 20)
        .build()
        .ok()?;
    Some((set, index))
}

fn builtin_rules() -> Result<&'static [Rule], String> {
    static RULES: OnceLock<Result<Vec<Rule>, String>> = OnceLock::new();
    RULES
        .get_or_init(|| {
            let (classes, _) = classes::parse(classes::BUILTIN_CLASSES)?;
            Ok(classes.iter().map(Rule::from_class).collect())
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(|e| format!("data/redact.toml: {e}"))
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
        || crate::input::generic_folder(h)
}

/// A rule over what the analysis knows.
fn known_rule(prefix: &str, finder: Finder, domain: bool, canon: Canon) -> Rule {
    Rule {
        prefix: prefix.into(),
        finder,
        check: if domain {
            Check::HostDomain
        } else {
            Check::None
        },
        canon,
        keep: false,
        bounded: true,
    }
}

impl Redactor {
    /// A redactor with this key, for an analysis that knows these hosts and serials; an error
    /// when a rule cannot be built (the run must stop then: a dropped rule would fail open).
    pub fn new(key: &Key, known: &Known) -> Result<Redactor, String> {
        let builtin = builtin_rules()?;
        let mut prefixes: BTreeSet<&str> = builtin.iter().map(|r| r.prefix.as_str()).collect();
        prefixes.extend(["host", "serial", "ip", "ip6"]);
        let alias = Rule {
            prefix: String::new(),
            finder: Finder::Patterns(vec![Regex::new(&format!(
                r"\b(?P<v>(?:{})-[0-9a-f]{{{ALIAS_HEX}}})\b",
                prefixes.into_iter().collect::<Vec<_>>().join("|")
            ))
            .map_err(|e| format!("the alias rule: {e}"))?]),
            check: Check::None,
            canon: Canon::Exact,
            keep: true,
            bounded: true,
        };
        let hosts: Vec<&str> = known
            .hosts
            .iter()
            .map(String::as_str)
            .filter(|h| !plain_host(h))
            .collect();
        let serials: Vec<&str> = known
            .serials
            .iter()
            .map(String::as_str)
            .filter(|s| s.len() >= 4)
            .collect();
        let mut rules = vec![alias];
        if let Some(l) = known::Literals::new(&hosts, true)? {
            rules.push(known_rule("host", Finder::Literals(l), true, Canon::Host));
        }
        if let Some(s) = known::Shapes::new(hosts.iter().copied()) {
            rules.push(known_rule("host", Finder::Shapes(s), true, Canon::Host));
        }
        if let Some(l) = known::Literals::new(&serials, false)? {
            rules.push(known_rule(
                "serial",
                Finder::Literals(l),
                false,
                Canon::Exact,
            ));
        }
        rules.extend(builtin.iter().map(|r| Rule {
            prefix: r.prefix.clone(),
            finder: match &r.finder {
                Finder::Patterns(p) => Finder::Patterns(p.clone()),
                _ => unreachable!("built-in rules are patterns"),
            },
            check: r.check,
            canon: r.canon,
            keep: false,
            bounded: r.bounded,
        }));
        Ok(Redactor {
            mac: Hmac::<Sha256>::new_from_slice(&key.0).map_err(|e| format!("the key: {e}"))?,
            set: pattern_set(&rules),
            rules,
        })
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
        let Finder::Patterns(p) = &self.rules[0].finder else {
            return false;
        };
        p[0].find(t)
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
        let mut values = Vec::new();
        let hits = self.set.as_ref().map(|(set, index)| {
            let m = set.matches(t);
            (m, index)
        });
        let mut k = 0;
        for (rank, rule) in self.rules.iter().enumerate() {
            match &rule.finder {
                Finder::Patterns(p) => {
                    for re in p {
                        let run = hits.as_ref().is_none_or(|(m, index)| {
                            debug_assert_eq!(index[k].0, rank);
                            m.matched(k)
                        });
                        k += 1;
                        if run {
                            self.find(rule, rank, re, t, &mut found);
                        }
                    }
                }
                Finder::Literals(l) => l.find(t, &mut values),
                Finder::Shapes(s) => s.find(t, &mut values),
            }
            for (s, e) in values.drain(..) {
                self.take(rule, rank, t, (s, e), &mut found);
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
            if names.is_empty() {
                self.take(rule, rank, t, (whole.start(), whole.end()), found);
                continue;
            }
            for n in &names {
                let Some(m) = c.name(n).filter(|m| m.end() > m.start()) else {
                    continue;
                };
                if *n == "v" {
                    self.take(rule, rank, t, (m.start(), m.end()), found);
                } else if let Some(p) = n.strip_prefix("p_") {
                    // a value of another prefix, as found: no check of this rule's
                    if rule.bounded && known::glued(b, m.start(), m.end()) {
                        continue;
                    }
                    found.push(Span {
                        start: m.start(),
                        end: m.end(),
                        rank,
                        replacement: Some(self.alias(p, &t[m.start()..m.end()])),
                    });
                }
            }
        }
    }

    /// Takes the value at `s..e` if it passes the rule: not glued to a letter or digit when the
    /// rule is bounded (`xgpu-node-07` is no host, `-bwayne@…` after a MAC is an address), and
    /// the rule's check.
    fn take(
        &self,
        rule: &Rule,
        rank: usize,
        t: &str,
        (s, e): (usize, usize),
        found: &mut Vec<Span>,
    ) {
        if e <= s || (rule.bounded && known::glued(t.as_bytes(), s, e)) {
            return;
        }
        let Some((start, end)) = classes::check(rule.check, t, s, e).filter(|(s, e)| e > s) else {
            return;
        };
        let replacement = (!rule.keep).then(|| {
            self.alias(
                &rule.prefix,
                &classes::canonical(rule.canon, &t[start..end]),
            )
        });
        found.push(Span {
            start,
            end,
            rank,
            replacement,
        });
    }
}

/// The redactor of one `analyze` run: its key and the hosts and serials the analysis knows.
pub fn for_analysis(key: &Key, a: &crate::Analysis) -> Result<Redactor, String> {
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
