//! One line through every recognizer the scanner would run on it: what the knowledge's
//! self-tests outside the recognizer files (the known issues' samples) use to turn a sample line
//! into the events a run would give.

use super::{text, Draft, RecognizerSet, Record};

impl RecognizerSet {
    /// The drafts `line` gives (lines after a `\n` are its continuations), after the prefilter.
    pub fn probe(&self, line: &str) -> Vec<Draft> {
        let parts: Vec<String> = line.split('\n').map(str::to_string).collect();
        let head = crate::formats::parse_head(parts[0].as_bytes());
        let body = text::normalize_body(&line[head.msg_start.min(parts[0].len())..]);
        let following: Vec<String> = parts[1..].to_vec();
        let rec = Record {
            full: line,
            body: &body,
            preceding: &[],
            following: &following,
            rank: head.rank,
        };
        let mut out = Vec::new();
        if self.prefilter.find(line).is_some() {
            self.apply_all(&self.owners_in(line), &rec, &mut out);
        }
        self.settle(&mut out);
        out.retain(|d| !d.derived);
        out
    }
}
