//! The `[[memo_detail]]` table (data/recognizers.toml) claims that the digits of its values never
//! decide an event's key (kind, code, GPU, rank, a host named in the record): the scan's memo
//! counts lines that differ only there under the keys of the first one. Checked here on each
//! entry's sample and on every line of the real cases (`../shared/corpus-real*`) that holds a
//! detail value: the same keys whatever those digits are.

use faultline::events::{Draft, RecognizerSet};
use std::path::Path;

type Key = (
    String,
    Option<i64>,
    Option<String>,
    Option<i64>,
    Option<String>,
);

fn keys(set: &RecognizerSet, line: &str) -> Vec<Key> {
    let key = |d: &Draft| {
        (
            d.kind.to_string(),
            d.code,
            d.gpu.as_deref().map(String::from),
            d.rank,
            d.host().map(String::from),
        )
    };
    set.probe(line).iter().map(key).collect()
}

/// `line` with the digits of its detail values (and only those) rewritten by `f`.
fn varied(set: &RecognizerSet, line: &str, f: impl Fn(&str) -> String) -> String {
    let head = faultline::formats::parse_head(line.as_bytes());
    let ms = head.msg_start.min(line.len());
    let body = &line[ms..];
    let mut out = line[..ms].to_string();
    let mut from = 0;
    set.details.digits(body.as_bytes(), |s, e| {
        out.push_str(&body[from..s]);
        out.push_str(&f(&body[s..e]));
        from = e;
    });
    out.push_str(&body[from..]);
    out
}

/// A rewrite of a digit run.
type Rewrite = Box<dyn Fn(&str) -> String>;

/// The rewrites of a digit run the memo's probe and a storm may bring.
fn rewrites() -> Vec<Rewrite> {
    vec![
        Box::new(|d: &str| {
            d.bytes()
                .map(|c| char::from(b'0' + (c - b'0' + 1) % 10))
                .collect()
        }),
        Box::new(|d: &str| "9".repeat(d.len())),
        Box::new(|d: &str| "0".repeat(d.len())),
        Box::new(|_: &str| "1".into()),
        Box::new(|_: &str| "4294967296".into()),
    ]
}

/// Lines whose keys change with their detail digits (at most a few shown).
fn breaking(set: &RecognizerSet, line: &str) -> Option<String> {
    let want = keys(set, line);
    for f in rewrites() {
        let v = varied(set, line, &f);
        if v != line && keys(set, &v) != want {
            return Some(format!(
                "{line}\n  -> {v}\n  keys {want:?} -> {:?}",
                keys(set, &v)
            ));
        }
    }
    None
}

#[test]
fn each_entry_sample_holds_a_value_whose_digits_decide_no_key() {
    let set = RecognizerSet::load(&[]).unwrap();
    assert!(set.details.defs().len() >= 10, "the table is read");
    for d in set.details.defs() {
        let line = &d.sample;
        assert!(line.contains(&d.after), "{:?}: sample lacks it", d.after);
        let mut spans = 0;
        let head = faultline::formats::parse_head(line.as_bytes());
        let body = &line.as_bytes()[head.msg_start.min(line.len())..];
        set.details.digits(body, |_, _| spans += 1);
        assert!(
            spans > 0,
            "{:?}: no digit of a value found in {line}",
            d.after
        );
        assert!(
            !keys(&set, line).is_empty(),
            "{:?}: sample gives no event",
            d.after
        );
        if let Some(b) = breaking(&set, line) {
            panic!("{:?}: {b}", d.after);
        }
    }
}

#[test]
fn on_the_real_cases_detail_digits_decide_no_key() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared");
    let dirs: Vec<_> = ["corpus-real", "corpus-real-next", "corpus-real-3"]
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect();
    if dirs.is_empty() {
        eprintln!(
            "SKIPPED: ../shared/corpus-real* not found; detail values not checked on real lines"
        );
        return;
    }
    let set = RecognizerSet::load(&[]).unwrap();
    let (mut checked, mut bad) = (0usize, Vec::new());
    let mut files = Vec::new();
    for d in &dirs {
        collect(d, &mut files);
    }
    for f in files {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for line in text.lines().filter(|l| l.len() < 4096) {
            let head = faultline::formats::parse_head(line.as_bytes());
            let body = &line.as_bytes()[head.msg_start.min(line.len())..];
            let mut any = false;
            set.details.digits(body, |_, _| any = true);
            if !any || set.probe(line).is_empty() {
                continue;
            }
            checked += 1;
            if let Some(b) = breaking(&set, line) {
                bad.push(format!("{}: {b}", f.display()));
            }
        }
    }
    eprintln!("real lines with detail values that give events: {checked} checked");
    assert!(checked > 0, "no real line holds a detail value");
    assert!(
        bad.is_empty(),
        "{} lines:\n{}",
        bad.len(),
        bad[..bad.len().min(5)].join("\n")
    );
}

/// The plain-text logs under `dir` (compressed files and archives are left out).
fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if !p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
            ["gz", "zst", "tar", "tgz", "xz", "bz2", "zip", "json", "md"].contains(&e)
        }) {
            out.push(p);
        }
    }
}
