//! The head cache of the scanner's memo lookups (`formats::repeat::HeadCache`) reads every line
//! exactly as the full head reader does: over every line of the real cases, the clean logs and
//! the test data, in file order, and over each line followed by copies of itself with its time
//! of day and its digits changed (valid and invalid times, other hosts, days that do not exist).

mod common;
use common::real_case_folders;
use faultline::formats::parse_head_with;
use faultline::formats::repeat::HeadCache;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if std::fs::metadata(&p).is_ok_and(|m| m.len() < 8 << 20) {
            out.push(p);
        }
    }
}

/// `line` with the digit at `at` (if it is one) changed to `d`.
fn with_digit(line: &[u8], at: usize, d: u8) -> Vec<u8> {
    let mut l = line.to_vec();
    if l.get(at).is_some_and(u8::is_ascii_digit) {
        l[at] = d;
    }
    l
}

/// Reads `lines` in order through one cache, checking each head; returns how many it checked.
fn check(lines: &[Vec<u8>], learned: Option<&[u8]>, what: &str) -> usize {
    let mut cache = HeadCache::default();
    let mut n = 0;
    for l in lines {
        let got = format!("{:?}", cache.parse(l, learned));
        let want = format!("{:?}", parse_head_with(l, learned));
        assert_eq!(got, want, "{what}: {}", String::from_utf8_lossy(l));
        n += 1;
    }
    n
}

#[test]
fn cached_heads_are_the_heads_the_full_reader_reads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    files(&root.join("tests"), &mut paths);
    let shared = root.join("../shared");
    let mut met_shared = false;
    let mut sets = real_case_folders();
    sets.push("noise".to_string());
    for d in &sets {
        let before = paths.len();
        files(&shared.join(d), &mut paths);
        met_shared |= paths.len() > before;
    }
    if !met_shared {
        eprintln!("head_cache: ../shared/corpus-real*, noise absent: checking the test data only");
    }
    let mut lines_checked = 0;
    for p in &paths {
        let Ok(text) = std::fs::read(p) else { continue };
        let what = p.display().to_string();
        let lines: Vec<Vec<u8>> = text
            .split(|&c| c == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
            .collect();
        lines_checked += check(&lines, None, &what);
        // each line, then copies with a digit of its first 20 bytes changed (valid and invalid
        // times and days: 0, 5, 9)
        let mut varied = Vec::new();
        for l in lines.iter().take(400) {
            varied.push(l.clone());
            for at in [4, 5, 7, 8, 10, 11, 13, 14, 17, 19] {
                for d in [b'0', b'9'] {
                    varied.push(with_digit(l, at, d));
                }
            }
            varied.push(l.clone());
        }
        lines_checked += check(&varied, None, &what);
        let learned = lines
            .first()
            .and_then(|l| l.split(|&c| c == b' ').next())
            .filter(|t| !t.is_empty());
        lines_checked += check(&varied, learned, &what);
    }
    assert!(lines_checked > 10_000, "only {lines_checked} lines checked");
}
