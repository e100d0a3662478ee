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
        failures
    }
}
