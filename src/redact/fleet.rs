//! The redaction pass over `scan` and `merge` results: each bundle line is redacted in place,
//! then the fleet summary is folded again from the redacted lines (aliases are one-to-one, so
//! every count stays what it was), so that the summary cannot hold what the lines do not.

use super::{Known, Redactor};
use crate::fleet::{Bundle, BundleLine};

/// The hosts and serials that lines name: the hosts of bundles, incidents and GPUs, and the
/// folder names between the scan root and each bundle that start with a letter and hold a digit
/// (`rack12/dgx-b200-4/…`: a folder per host, rack or cluster above the bundle's own).
pub fn known(lines: &[BundleLine]) -> Known {
    let mut k = Known::default();
    for l in lines {
        k.hosts.extend(l.host.iter().cloned());
        k.hosts.extend(key_folders(&l.key));
        for i in &l.incidents {
            k.hosts.extend(i.host.iter().cloned());
            k.hosts.extend(i.hosts.iter().cloned());
        }
        for g in &l.gpus {
            k.hosts.extend(g.host.iter().cloned());
            k.serials.extend(g.serial.iter().cloned());
        }
    }
    // the short name too, so that a folder named by the full name is found by its short name
    let short: Vec<String> = k
        .hosts
        .iter()
        .filter_map(|h| h.split_once('.').map(|(s, _)| s.to_string()))
        .filter(|s| s.parse::<u8>().is_err())
        .collect();
    k.hosts.extend(short);
    k
}

/// The folder names of a shard key that may name a host, rack or cluster: a letter first, a
/// digit in it, no dot (not a file name).
fn key_folders(key: &str) -> impl Iterator<Item = String> + '_ {
    key.split(['/', '\\'])
        .filter(|c| {
            c.starts_with(|ch: char| ch.is_ascii_alphabetic())
                && c.bytes().any(|ch| ch.is_ascii_digit())
                && !c.contains('.')
        })
        .map(str::to_string)
}

/// The hosts that `scan --list` shows: the bundles' host hints and key folders.
pub fn known_bundles(bundles: &[Bundle]) -> Known {
    let mut k = Known::default();
    for b in bundles {
        k.hosts.extend(b.host_hint.iter().cloned());
        k.hosts.extend(key_folders(&b.key));
    }
    k
}

impl Redactor {
    /// Redacts what `scan --list` shows of a bundle, in place.
    pub fn bundle(&self, b: &mut Bundle) {
        self.put(&mut b.name);
        self.put(&mut b.key);
        self.opt_host(&mut b.host_hint);
        self.opt(&mut b.error);
        for f in &mut b.files {
            let shown = f.to_string_lossy();
            let red = self.text(&shown);
            if red != shown {
                *f = red.into();
            }
        }
    }

    /// Redacts one bundle line in place.
    pub fn bundle_line(&self, l: &mut BundleLine) {
        self.put(&mut l.bundle);
        self.opt_host(&mut l.host);
        self.put(&mut l.verdict.summary);
        for i in &mut l.incidents {
            self.put(&mut i.summary);
            self.opt_host(&mut i.host);
            self.hosts(&mut i.hosts);
            self.all(&mut i.gpus);
            self.all(&mut i.evidence);
            self.all(&mut i.actions);
        }
        self.all(&mut l.warnings);
        self.put(&mut l.key);
        for g in &mut l.gpus {
            self.opt_host(&mut g.host);
            self.opt(&mut g.uuid);
            if let Some(s) = &mut g.serial {
                *s = self.serial(s);
            }
            self.opt(&mut g.name);
        }
    }

    /// Redacts the lines of a scan or merge and folds their summary again; `shard` is kept.
    pub fn fleet(&self, lines: &mut [BundleLine], summary: &mut crate::fleet::FleetSummary) {
        lines.iter_mut().for_each(|l| self.bundle_line(l));
        let shard = summary.shard.take();
        *summary = crate::fleet::fold(lines);
        summary.shard = shard;
    }
}
