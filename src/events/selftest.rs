//! The knowledge's own test: every recognizer's samples must give an event and its rejects
//! none, run the way the scanner runs them.

use super::{load, text, RecognizerSet, Record};
use std::borrow::Cow;

impl RecognizerSet {
    /// Checks every recognizer's samples and rejects; returns one message per failure.
    pub fn self_test(&self) -> Vec<String> {
        let mut failures = Vec::new();
        for (i, c) in self.compiled.iter().enumerate() {
            // a built-in recognizer's lines are embedded apart from it
            let (samples, rejects) = match &c.def {
                Cow::Borrowed(d) => {
                    load::builtin_samples(d).map_or((&d.samples, &d.rejects), |(s, r)| (s, r))
                }
                Cow::Owned(d) => (&d.samples, &d.rejects),
            };
            if samples.is_empty() {
                failures.push(format!("{}: has no sample lines", c.def.id));
            }

            for (lines, want) in [(samples, true), (rejects, false)] {
                for s in lines {
                    let parts: Vec<String> = s.split('\n').map(str::to_string).collect();
                    let head = crate::formats::parse_head(parts[0].as_bytes());
                    let body = text::normalize_body(&s[head.msg_start.min(parts[0].len())..]);
                    let following: Vec<String> = parts[1..].to_vec();
                    let rec = Record {
                        full: s,
                        body: &body,
                        preceding: &[],
                        following: &following,
                        rank: head.rank,
                    };
                    let owners = self.owners_in(s);
                    let hit = owners.contains(&i)
                        && (c.def.benign.is_some() || self.prefilter.find(s.as_str()).is_some());
                    let mut out = Vec::new();
                    let mut claimed = false;
                    if hit && c.def.generic {
                        // a catch-all is tested as the scanner runs it: after the others
                        self.apply_all(&owners, &rec, &mut out);
                        out.retain(|d| d.recognizer() == c.def.id);
                    } else if hit {
                        claimed = self.apply(i, &rec, &mut out);
                    }
                    self.settle(&mut out);
                    let got = if c.def.benign.is_some() {
                        claimed
                    } else {
                        out.iter().any(|d| !d.derived)
                    };
                    if got != want {
                        failures.push(format!(
                            "{}: {} {:?}",
                            c.def.id,
                            if want {
                                "missed sample"
                            } else {
                                "matched reject"
                            },
                            s
                        ));
                    }
                }
            }
        }
        failures.extend(self.detail_failures());
        failures
    }

    /// Checks each `[[memo_detail]]` sample: it holds a value with digits, gives an event, and
    /// gives the same keys (kind, code, GPU, rank, a host of its own) with those digits changed.
    fn detail_failures(&self) -> Vec<String> {
        type Key = (
            &'static str,
            Option<i64>,
            Option<String>,
            Option<i64>,
            Option<String>,
        );
        let keys = |line: &str| -> Vec<Key> {
            let key = |d: &super::Draft| {
                let gpu = d.gpu.as_deref().map(String::from);
                (d.kind, d.code, gpu, d.rank, d.host().map(String::from))
            };
            self.probe(line).iter().map(key).collect()
        };
        let mut failures = Vec::new();
        for d in self.details.defs() {
            let line = d.sample.as_str();
            let head = crate::formats::parse_head(line.as_bytes());
            let ms = head.msg_start.min(line.len());
            let mut spans = Vec::new();
            self.details
                .digits(&line.as_bytes()[ms..], |s, e| spans.push((ms + s, ms + e)));
            let want = keys(line);
            if spans.is_empty() || want.is_empty() {
                failures.push(format!(
                    "memo_detail {:?}: sample holds no value with digits or gives no event: {line:?}",
                    d.after
                ));
                continue;
            }
            for rewrite in [|c: u8| b'0' + (c - b'0' + 1) % 10, |_| b'9'] {
                let mut v = line.as_bytes().to_vec();
                for &(s, e) in &spans {
                    v[s..e].iter_mut().for_each(|c| *c = rewrite(*c));
                }
                let v = String::from_utf8_lossy(&v);
                if keys(&v) != want {
                    failures.push(format!(
                        "memo_detail {:?}: its digits change the keys: {line:?} -> {v:?}",
                        d.after
                    ));
                }
            }
        }
        failures
    }
}
