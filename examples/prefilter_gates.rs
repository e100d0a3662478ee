//! Chooses the prefilter's gates (issue 32): substrings of the prefilter's literals such that
//! every literal holds one, few enough for three packed searchers and rare in ordinary logs,
//! so that the search of candidate lines makes three passes over the bytes where the literals
//! themselves need five, and compares the literals only where a gate is.
//!
//! The cost of a substring of four bytes or more is measured on the given ordinary logs, in the
//! lines that hold no literal (a line that holds one is a candidate whatever the gates): the
//! lines that hold it, plus the positions of its first four bytes (the packed searcher's
//! fingerprint, compared wherever it is). The literals are covered greedily, each step taking
//! the substring with the most literals not yet covered per cost (plus a fixed price per gate,
//! doubled until the gates fit `--max`); gates no literal needs are dropped. The gates are then
//! laid out in searchers of at most 64 and their 16 buckets each, so that each bucket accepts
//! the fewest text positions (by the bytes' frequencies in the same logs), and printed as the
//! `[prefilter] gates` lists of `data/recognizers.toml`, with each gate's cost.
//!
//! `cargo run --profile fast --example prefilter_gates -- [--max N] FILE...` (`--max` 192 by
//! default; `CURVE=1` prints the gates and cost at each price; `MIN=3` allows 3-byte gates)

use aho_corasick::AhoCorasick;
use std::collections::BTreeMap;

/// Gates of three packed searchers at most.
const MAX_GATES: usize = 192;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut max = MAX_GATES;
    if args.len() >= 2 && args[0] == "--max" {
        max = args[1].parse().expect("--max N");
        args.drain(..2);
    }
    if args.is_empty() {
        eprintln!("usage: prefilter_gates [--max N] FILE...");
        std::process::exit(2);
    }
    let set = faultline::events::RecognizerSet::load(&[]).expect("built-in recognizers");
    let literals: Vec<String> = set.prefilter_literals.clone();
    let lines = corpus_lines(&args);
    let (subs, cost) = measure(&literals, &lines);
    println!(
        "# {} literals, {} corpus lines ({} files)",
        literals.len(),
        lines.len(),
        args.len()
    );
    let sets = containment(&literals, &subs);
    if std::env::var_os("CURVE").is_some() {
        for k in 0..24 {
            let price = 0.01 * 2f64.powi(k);
            let g = cover(&sets, literals.len(), &cost, price);
            let f: u64 = g.iter().map(|&x| cost[x]).sum();
            println!("price {price:>10.2}: {} gates, cost {f}", g.len());
        }
    }
    let mut price = 1.0f64;
    loop {
        let gates = cover(&sets, literals.len(), &cost, price);
        if gates.len() <= max || price > 1e7 {
            let freq = byte_freq(&literals, &lines);
            let names: Vec<&[u8]> = gates.iter().map(|&g| subs[g].as_bytes()).collect();
            let groups: Vec<Vec<usize>> = layout(&names, &freq)
                .into_iter()
                .map(|g| g.into_iter().map(|i| gates[i]).collect())
                .collect();
            report(&literals, &subs, &cost, &groups, price);
            return;
        }
        price *= 2.0;
    }
}

/// The lines of the files (only text files; a file that cannot be read is skipped with a note).
fn corpus_lines(files: &[String]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for f in files {
        match std::fs::read(f) {
            Ok(b) if !b.contains(&0) => out.extend(b.split(|&c| c == b'\n').map(<[u8]>::to_vec)),
            Ok(_) => eprintln!("{f}: binary, skipped"),
            Err(e) => eprintln!("{f}: {e}"),
        }
    }
    out
}

/// Every distinct substring of at least four bytes of the literals, and for each the number of
/// corpus lines that hold it and no literal.
fn measure(literals: &[String], lines: &[Vec<u8>]) -> (Vec<String>, Vec<u64>) {
    let mut subs: Vec<String> = Vec::new();
    for l in literals {
        let b = l.as_bytes();
        for i in 0..b.len() {
            for j in i + min_len()..=b.len() {
                if let Ok(s) = std::str::from_utf8(&b[i..j]) {
                    subs.push(s.to_string());
                }
            }
        }
    }
    subs.sort();
    subs.dedup();
    let lits = AhoCorasick::new(literals).expect("literals");
    let all = AhoCorasick::new(&subs).expect("substrings");
    let mut cost = vec![0u64; subs.len()];
    let mut seen = vec![u32::MAX; subs.len()];
    for (n, line) in lines.iter().enumerate() {
        if lits.find(line).is_some() {
            continue;
        }
        for m in all.find_overlapping_iter(line) {
            let p = m.pattern().as_usize();
            if seen[p] != n as u32 {
                seen[p] = n as u32;
                cost[p] += 1;
            }
        }
    }
    {
        // the cost of a gate is where the packed searcher must compare it: the positions of its
        // first four bytes (its fingerprint) in the lines that hold no literal
        let mut grams: std::collections::HashMap<&[u8], u64> = std::collections::HashMap::new();
        for line in lines.iter().filter(|l| lits.find(l).is_none()) {
            for w in line.windows(4) {
                *grams.entry(w).or_default() += 1;
            }
        }
        for (s, f) in subs.iter().zip(cost.iter_mut()) {
            *f += grams.get(&s.as_bytes()[..4]).copied().unwrap_or(0);
        }
    }
    (subs, cost)
}

/// The literals each substring is part of, as bit sets.
fn containment(literals: &[String], subs: &[String]) -> Vec<Vec<u64>> {
    let words = literals.len().div_ceil(64);
    let all = AhoCorasick::new(subs).expect("substrings");
    let mut sets = vec![vec![0u64; words]; subs.len()];
    for (i, l) in literals.iter().enumerate() {
        for m in all.find_overlapping_iter(l) {
            sets[m.pattern().as_usize()][i / 64] |= 1 << (i % 64);
        }
    }
    sets
}

fn count(a: &[u64], not: &[u64]) -> u32 {
    a.iter().zip(not).map(|(x, c)| (x & !c).count_ones()).sum()
}

/// A greedy cover: the substring with the most uncovered literals per (false lines + price),
/// until every literal is covered; then the gates not needed are dropped.
fn cover(sets: &[Vec<u64>], n: usize, cost: &[u64], price: f64) -> Vec<usize> {
    let words = n.div_ceil(64);
    let mut covered = vec![0u64; words];
    for i in n..words * 64 {
        covered[i / 64] |= 1 << (i % 64);
    }
    let mut gates: Vec<usize> = Vec::new();
    while covered.iter().any(|c| *c != u64::MAX) {
        let best = (0..sets.len())
            .map(|s| {
                (
                    count(&sets[s], &covered) as f64 / (cost[s] as f64 + price),
                    s,
                )
            })
            .filter(|(v, _)| *v > 0.0)
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
            .map(|(_, s)| s)
            .expect("a literal is its own substring");
        for (c, x) in covered.iter_mut().zip(&sets[best]) {
            *c |= x;
        }
        gates.push(best);
    }
    prune(sets, cost, gates)
}

/// Drops the gates not needed, most false lines first: a gate goes when every literal it
/// covers holds another gate kept.
fn prune(sets: &[Vec<u64>], cost: &[u64], mut gates: Vec<usize>) -> Vec<usize> {
    gates.sort_by_key(|&g| std::cmp::Reverse(cost[g]));
    let mut k = 0;
    while k < gates.len() {
        let g = gates[k];
        let mut others = vec![0u64; sets[g].len()];
        for &o in gates.iter().filter(|&&o| o != g) {
            for (c, x) in others.iter_mut().zip(&sets[o]) {
                *c |= x;
            }
        }
        if count(&sets[g], &others) > 0 {
            k += 1;
        } else {
            gates.remove(k);
        }
    }
    gates.sort();
    gates
}

fn report(literals: &[String], subs: &[String], cost: &[u64], groups: &[Vec<usize>], price: f64) {
    let gates: Vec<usize> = groups.iter().flatten().copied().collect();
    let total: u64 = gates.iter().map(|&g| cost[g]).sum();
    println!(
        "# {} gates in {} searchers (price {price}), cost {total}",
        gates.len(),
        groups.len()
    );
    let mut by_gate: BTreeMap<&str, usize> = BTreeMap::new();
    for l in literals {
        let g = gates
            .iter()
            .find(|&&g| l.contains(subs[g].as_str()))
            .expect("covered");
        *by_gate.entry(subs[*g].as_str()).or_default() += 1;
    }
    println!("gates = [");
    for (k, group) in groups.iter().enumerate() {
        println!("  # searcher {}", k + 1);
        println!("  [");
        for chunk in group.chunks(6) {
            let line: Vec<String> = chunk.iter().map(|&g| toml_str(&subs[g])).collect();
            println!("    {},", line.join(", "));
        }
        println!("  ],");
    }
    println!("]");
    println!("# gate: cost (lines without a literal that hold it + positions of its first four bytes there), literals");
    for &g in &gates {
        println!(
            "#   {:?}: {}, {}",
            subs[g],
            cost[g],
            by_gate.get(subs[g].as_str()).unwrap_or(&0)
        );
    }
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The shortest gate (`MIN` in the environment, 4 by default).
fn min_len() -> usize {
    std::env::var("MIN")
        .ok()
        .and_then(|m| m.parse().ok())
        .unwrap_or(4)
}

/// How often each byte occurs in the corpus lines that hold no literal (a share of all bytes).
fn byte_freq(literals: &[String], lines: &[Vec<u8>]) -> [f64; 256] {
    let lits = AhoCorasick::new(literals).expect("literals");
    let mut n = [0u64; 256];
    for line in lines.iter().filter(|l| lits.find(l).is_none()) {
        for &b in line.iter() {
            n[b as usize] += 1;
        }
        n[b'\n' as usize] += 1;
    }
    let all: u64 = n.iter().sum::<u64>().max(1);
    let mut f = [0f64; 256];
    for (x, c) in f.iter_mut().zip(n) {
        *x = c as f64 / all as f64;
    }
    f
}

/// Buckets of a packed searcher of more than 32 literals.
const BUCKETS: usize = 16;

/// The share of text positions a bucket of `members` accepts: for each of the four fingerprint
/// bytes, the share of the bytes whose low and high halves are both among the members' there.
fn rate(members: &[usize], gates: &[&[u8]], freq: &[f64; 256]) -> f64 {
    if members.is_empty() {
        return 0.0;
    }
    (0..4)
        .map(|j| {
            let (lo, hi) = members.iter().fold((0u16, 0u16), |(lo, hi), &k| {
                let b = gates[k][j];
                (lo | 1 << (b & 15), hi | 1 << (b >> 4))
            });
            (0..256usize)
                .filter(|&b| lo >> (b & 15) & 1 == 1 && hi >> (b >> 4) & 1 == 1)
                .map(|b| freq[b])
                .sum::<f64>()
        })
        .product()
}

/// The gates in the order that makes the searchers' buckets accept the fewest text positions:
/// balanced searchers of at most 64, sorted runs in 16 buckets each, then swaps between any
/// two buckets of any searchers while that lowers the sum of their rates.
fn layout(gates: &[&[u8]], freq: &[f64; 256]) -> Vec<Vec<usize>> {
    // searchers of 64 gates in 16 buckets (Fat Teddy), the last one of 32 or fewer in 8 (Slim
    // Teddy, twice the bytes per step); a bucket holds four gates at most in both
    let mut owner: Vec<usize> = Vec::new();
    let (mut left, mut k) = (gates.len(), 0);
    let mut per: Vec<usize> = Vec::new();
    while left > 0 {
        let buckets = if left > 32 { BUCKETS } else { BUCKETS / 2 };
        per.push(buckets);
        left = left.saturating_sub(buckets * 4);
    }
    let searchers = per.len();
    while owner.len() < per.iter().sum::<usize>() {
        if owner.iter().filter(|&&o| o == k).count() < per[k] {
            owner.push(k);
        }
        k = (k + 1) % searchers;
    }
    let nb = owner.len();
    let mut sorted: Vec<usize> = (0..gates.len()).collect();
    sorted.sort_by_key(|&i| gates[i]);
    let (q, r) = (gates.len() / nb, gates.len() % nb);
    let mut sets: Vec<Vec<usize>> = Vec::new();
    let mut at = 0;
    for b in 0..nb {
        let len = q + usize::from(b < r);
        sets.push(sorted[at..at + len].to_vec());
        at += len;
    }
    for _ in 0..20 {
        let mut better = false;
        for a in 0..nb {
            for b in a + 1..nb {
                better |= swaps(&mut sets, (a, b), gates, freq);
            }
        }
        if !better {
            break;
        }
    }
    let total: f64 = sets.iter().map(|s| rate(s, gates, freq)).sum();
    eprintln!("layout: {searchers} searchers, accepted share of positions {total:.5}");
    // within a searcher, one gate of each bucket in turn, the longer buckets first
    let mut out = Vec::new();
    for k in 0..searchers {
        let mut mine: Vec<&Vec<usize>> = sets
            .iter()
            .zip(&owner)
            .filter(|(_, &o)| o == k)
            .map(|(s, _)| s)
            .collect();
        mine.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let most = mine.first().map_or(0, |s| s.len());
        let mut group = Vec::new();
        for turn in 0..most {
            for s in mine.iter().filter(|s| turn < s.len()) {
                group.push(s[turn]);
            }
        }
        out.push(group);
    }
    out
}

/// Swaps between buckets `a` and `b` while that lowers their rates; whether one was made.
fn swaps(
    sets: &mut [Vec<usize>],
    (a, b): (usize, usize),
    gates: &[&[u8]],
    freq: &[f64; 256],
) -> bool {
    let (left, right) = sets.split_at_mut(b);
    let (sa, sb) = (&mut left[a], &mut right[0]);
    let mut better = false;
    let mut now = rate(sa, gates, freq) + rate(sb, gates, freq);
    for x in 0..sa.len() {
        for y in 0..sb.len() {
            std::mem::swap(&mut sa[x], &mut sb[y]);
            let after = rate(sa, gates, freq) + rate(sb, gates, freq);
            if after < now * (1.0 - 1e-9) {
                now = after;
                better = true;
            } else {
                std::mem::swap(&mut sa[x], &mut sb[y]);
            }
        }
    }
    better
}
