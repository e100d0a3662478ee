//! Values that are details of a line, never what decides the keys of its events (host, kind,
//! code, GPU, rank): the `[[memo_detail]]` table of data/recognizers.toml. The scan's memo of
//! line signatures (`src/scan/memo.rs`) masks their digits, so that lines that differ only there
//! (a peer's address, a sequence number, a length, a pid) are read in full once per chunk and
//! only counted after. The claim is checked twice: on the first line of each signature at run
//! time (a probe with those digits changed must give the same keys), and on each entry's sample
//! by the tests (`tests/memo_details.rs`).

use serde::Deserialize;

/// One entry of the table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DetailDef {
    /// The text just before the value (`opcode `, `pid=`, `remoteGids`: glued as NCCL prints it).
    pub after: String,
    /// A line with such a value that gives an event.
    pub sample: String,
}

/// The table, ready to search a line's message.
#[derive(Debug)]
pub struct DetailValues {
    defs: Vec<DetailDef>,
    search: Option<aho_corasick::AhoCorasick>,
    /// The `after`s that end in `=` (without it), found from each `=` of a message: the cheap
    /// part of the table (see [`DetailValues::eq_digits`]); and the bytes they end with.
    eq: Vec<Vec<u8>>,
    eq_last: [bool; 256],
}

/// Bytes that end a value: blanks, separators and closing brackets.
fn ends_value(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b',' | b';' | b')' | b']' | b'}' | b'"' | b'\''
    )
}

impl DetailValues {
    /// The table of `defs` (an empty `after`, or one with a digit, is refused).
    pub fn new(defs: Vec<DetailDef>) -> Result<DetailValues, String> {
        if let Some(d) = defs.iter().find(|d| d.after.trim().is_empty()) {
            return Err(format!(
                "memo_detail: empty `after` (sample {:?})",
                d.sample
            ));
        }
        // which digit runs are values must not depend on the digits (see `scan/skeleton.rs`)
        if let Some(d) = defs
            .iter()
            .find(|d| d.after.bytes().any(|c| c.is_ascii_digit()))
        {
            return Err(format!("`after` {:?} holds a digit", d.after));
        }
        let search = match defs.is_empty() {
            true => None,
            false => Some(
                aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                    .build(defs.iter().map(|d| d.after.as_bytes()))
                    .map_err(|e| e.to_string())?,
            ),
        };
        let eq: Vec<Vec<u8>> = defs
            .iter()
            .filter_map(|d| d.after.strip_suffix('='))
            .map(|a| a.as_bytes().to_vec())
            .collect();
        let mut eq_last = [false; 256];
        for a in &eq {
            if let Some(&c) = a.last() {
                eq_last[usize::from(c)] = true;
            }
        }
        Ok(DetailValues {
            defs,
            search,
            eq,
            eq_last,
        })
    }

    /// The entries.
    pub fn defs(&self) -> &[DetailDef] {
        &self.defs
    }

    /// Calls `f(start, end)` for each digit run of each detail value in `body` (a line's message),
    /// in order: a value runs from its `after` text (which, when it begins with a letter or a
    /// digit, begins a word) to the first blank, separator or closing bracket.
    pub fn digits(&self, body: &[u8], mut f: impl FnMut(usize, usize)) {
        let Some(ac) = &self.search else {
            return;
        };
        let mut at = 0;
        for m in ac.find_iter(body) {
            if m.start() < at {
                continue;
            }
            // a word's `after` starts a word (`len ` is not in `xlen `)
            let word =
                self.defs[m.pattern().as_usize()].after.as_bytes()[0].is_ascii_alphanumeric();
            if word && m.start() > 0 && body[m.start() - 1].is_ascii_alphanumeric() {
                continue;
            }
            at = value_digits(body, m.end(), &mut f);
        }
    }

    /// [`DetailValues::digits`] of the entries whose `after` ends in `=` only, found from each
    /// `=` of `body` (a `memchr`, no automaton: what the memo signs every line with first).
    pub fn eq_digits(&self, body: &[u8], mut f: impl FnMut(usize, usize)) {
        if self.eq.is_empty() {
            return;
        }
        let mut at = 0;
        for q in memchr::memchr_iter(b'=', body) {
            if q < at || q == 0 || !self.eq_last[usize::from(body[q - 1])] {
                continue;
            }
            let before = &body[..q];
            // the byte before `=` first: most `=`s follow no `after` (a short compare is cheaper
            // than a call to compare)
            let hit = self.eq.iter().find(|a| {
                before.last() == a.last()
                    && before.len() >= a.len()
                    && before[q - a.len()..]
                        .iter()
                        .zip(a.iter())
                        .all(|(x, y)| x == y)
                    && (!a.first().is_some_and(u8::is_ascii_alphanumeric)
                        || q == a.len()
                        || !body[q - a.len() - 1].is_ascii_alphanumeric())
            });
            if hit.is_some() {
                at = value_digits(body, q + 1, &mut f);
            }
        }
    }
}

/// Calls `f` for each digit run of the value that starts at `v` in `body`; returns its end.
fn value_digits(body: &[u8], v: usize, f: &mut impl FnMut(usize, usize)) -> usize {
    let n = body[v..].iter().take_while(|&&c| !ends_value(c)).count();
    digit_runs(&body[v..v + n], |s, e| f(v + s, v + e));
    v + n
}

/// Calls `f(start, end)` for each run of ASCII digits in `text`, in order.
pub fn digit_runs(text: &[u8], mut f: impl FnMut(usize, usize)) {
    let mut i = 0;
    while let Some(p) = text[i..].iter().position(u8::is_ascii_digit) {
        let s = i + p;
        let n = text[s..].iter().take_while(|c| c.is_ascii_digit()).count();
        f(s, s + n);
        i = s + n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(t: &DetailValues, body: &str) -> Vec<String> {
        let mut out = Vec::new();
        t.digits(body.as_bytes(), |s, e| out.push(body[s..e].to_string()));
        out
    }

    fn table(afters: &[&str]) -> DetailValues {
        let defs = afters.iter().map(|a| DetailDef {
            after: a.to_string(),
            sample: String::new(),
        });
        DetailValues::new(defs.collect()).unwrap()
    }

    #[test]
    fn a_value_runs_to_its_end_and_only_its_digits_are_found() {
        let t = table(&["pid=", "peer ", "len ", "remoteGids", "opcode="]);
        assert_eq!(
            spans(&t, "Xid 79, pid=1234, name=python3 pid=7x8"),
            ["1234", "7", "8"]
        );
        assert_eq!(
            spans(&t, "from peer 10.0.0.2<4432> with error 12, opcode=0 len 32, x remoteGids::ffff:10.9.0.1 hca mlx5_3"),
            ["10", "0", "0", "2", "4432", "0", "32", "10", "9", "0", "1"]
        );
        // the error's own number and texts without an `after` stay
        assert!(spans(&t, "with error 12 Xid 79 xlen 5").is_empty());
        assert!(spans(&t, "pid=").is_empty());
        assert!(spans(&t, "").is_empty());
        assert!(spans(&table(&[]), "pid=5").is_empty());
        // the `=` entries alone, found from each `=`
        let mut eq = Vec::new();
        let body = "Xid 79, pid=1234, xpid=5 opcode=0 len 32 =7 pid=8a9";
        t.eq_digits(body.as_bytes(), |s, e| eq.push(&body[s..e]));
        assert_eq!(eq, ["1234", "0", "8", "9"]);
        assert!(DetailValues::new(vec![DetailDef {
            after: " ".into(),
            sample: String::new()
        }])
        .is_err());
        assert!(DetailValues::new(vec![DetailDef {
            after: "mlx5_".into(),
            sample: String::new()
        }])
        .is_err());
    }
}
