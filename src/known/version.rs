//! Version numbers and ranges of the known-issues file: `535.104.05`, `2.19.3`, `1.16.1`, and
//! ranges written as comma-separated clauses (`">=525, <525.105.17"`), each an operator (`>=`,
//! `>`, `<=`, `<`, `=`) and a version; `"*"` (or an empty text) is every version. Versions compare
//! number by number, a missing number counting as 0 (`525` is `525.0.0`).

use std::cmp::Ordering;

/// A version as numbers (`535.104.05` → `[535, 104, 5]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version(pub Vec<u64>);

impl Version {
    /// The leading dotted number of `s` (`535.183.01-0ubuntu0.22.04.1` → 535.183.1; an epoch
    /// `3:550.54.15-1.el8` is skipped); `None` when `s` does not start with a digit.
    pub fn parse(s: &str) -> Option<Version> {
        let s = s.trim();
        let s = match s.split_once(':') {
            Some((epoch, rest)) if epoch.bytes().all(|b| b.is_ascii_digit()) => rest,
            _ => s,
        };
        let head: &str = s
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .next()
            .unwrap_or("");
        let nums: Vec<u64> = head
            .split('.')
            .take_while(|p| !p.is_empty())
            .map_while(|p| p.parse().ok())
            .collect();
        (!nums.is_empty()).then_some(Version(nums))
    }

    fn at(&self, i: usize) -> u64 {
        self.0.get(i).copied().unwrap_or(0)
    }

    /// The major number (a driver's branch, a CUDA major version).
    pub fn major(&self) -> u64 {
        self.at(0)
    }
}

impl Ord for Version {
    fn cmp(&self, o: &Self) -> Ordering {
        let n = self.0.len().max(o.0.len());
        (0..n)
            .map(|i| self.at(i).cmp(&o.at(i)))
            .find(|c| c.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// One clause of a range.
#[derive(Clone, Debug, PartialEq)]
enum Op {
    Ge,
    Gt,
    Le,
    Lt,
    Eq,
}

/// A version range: every clause holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Range(Vec<(Op, Version)>);

impl Range {
    /// Parses a range; the error names the clause that is not one.
    pub fn parse(s: &str) -> Result<Range, String> {
        let mut out = Vec::new();
        for c in s
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty() && *c != "*")
        {
            let (op, rest) = [
                (">=", Op::Ge),
                ("<=", Op::Le),
                (">", Op::Gt),
                ("<", Op::Lt),
                ("=", Op::Eq),
            ]
            .into_iter()
            .find_map(|(p, op)| c.strip_prefix(p).map(|r| (op, r)))
            .ok_or_else(|| format!("`{c}` is not `>=V`, `>V`, `<=V`, `<V` or `=V`"))?;
            let v = Version::parse(rest).ok_or_else(|| format!("`{c}`: no version"))?;
            out.push((op, v));
        }
        Ok(Range(out))
    }

    /// True when `v` lies in the range.
    pub fn contains(&self, v: &Version) -> bool {
        self.0.iter().all(|(op, b)| match op {
            Op::Ge => v >= b,
            Op::Gt => v > b,
            Op::Le => v <= b,
            Op::Lt => v < b,
            Op::Eq => v == b,
        })
    }

    /// The lowest and highest bound of the range (`None`: open on that side), inclusive or not
    /// does not matter for [`Range::overlaps`], which is a conservative test.
    fn bounds(&self) -> (Option<&Version>, Option<&Version>) {
        let lo = self
            .0
            .iter()
            .filter(|(op, _)| matches!(op, Op::Ge | Op::Gt | Op::Eq))
            .map(|(_, v)| v)
            .max();
        let hi = self
            .0
            .iter()
            .filter(|(op, _)| matches!(op, Op::Le | Op::Lt | Op::Eq))
            .map(|(_, v)| v)
            .min();
        (lo, hi)
    }

    /// True when some version could lie in both ranges.
    pub fn overlaps(&self, o: &Range) -> bool {
        let (a_lo, a_hi) = self.bounds();
        let (b_lo, b_hi) = o.bounds();
        let below = |lo: Option<&Version>, hi: Option<&Version>| match (lo, hi) {
            (Some(l), Some(h)) => l < h || (l == h && self.contains(l) && o.contains(l)),
            _ => true,
        };
        below(a_lo, b_hi) && below(b_lo, a_hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn versions_compare_number_by_number() {
        assert!(v("525.105.17") > v("525.85.12"));
        assert!(v("525") < v("525.60.13"));
        assert_eq!(v("3:550.54.15-1.el8"), v("550.54.15"));
        assert_eq!(v("535.183.01-0ubuntu0.22.04.1"), v("535.183.1"));
        assert_eq!(Version::parse("abc"), None);
    }

    #[test]
    fn ranges_hold_their_versions() {
        let r = Range::parse(">=525, <525.105.17").unwrap();
        assert!(r.contains(&v("525.85.12")));
        assert!(!r.contains(&v("525.105.17")));
        assert!(!r.contains(&v("520.61.05")));
        assert!(Range::parse("*").unwrap().contains(&v("1.0")));
        assert!(Range::parse("~1.0").is_err());
    }

    #[test]
    fn overlap_is_conservative() {
        let a = Range::parse(">=525, <525.105.17").unwrap();
        assert!(a.overlaps(&Range::parse(">=525.47.04, <530").unwrap()));
        assert!(!a.overlaps(&Range::parse(">=530, <550").unwrap()));
        assert!(!a.overlaps(&Range::parse("<525").unwrap()));
    }
}
