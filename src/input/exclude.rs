//! `--exclude GLOB`: shell-style patterns (`*`, `?`, `[abc]`, `[!a-z]`) matched against a
//! file's path, its name, and the name of an archive member (and that member's file name).

/// Whether `path` (a path on disk or a member name) matches one of `patterns`: the whole path,
/// or its last component.
pub fn excluded(path: &str, patterns: &[String]) -> bool {
    if patterns.is_empty() {
        return false;
    }
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    patterns.iter().any(|p| {
        let p = p.as_bytes();
        glob(p, path.as_bytes()) || glob(p, name.as_bytes()) || {
            // a pattern without a leading `/` or `*` also matches a path's tail
            let mut tail = path;
            let mut hit = false;
            while let Some((_, t)) = tail.split_once('/') {
                if glob(p, t.as_bytes()) {
                    hit = true;
                    break;
                }
                tail = t;
            }
            hit
        }
    })
}

/// Matches `text` against the glob `pat` (`*` crosses `/`, as in `--exclude 'logs/*'`).
pub fn glob(pat: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pat.len() {
            match pat[p] {
                b'*' => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                b'?' => {
                    p += 1;
                    t += 1;
                    continue;
                }
                b'[' => {
                    if let Some((hit, next)) = class(&pat[p..], text[t]) {
                        if hit {
                            p += next;
                            t += 1;
                            continue;
                        }
                    } else if text[t] == b'[' {
                        p += 1;
                        t += 1;
                        continue;
                    }
                }
                c if c == text[t] => {
                    p += 1;
                    t += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                p = sp + 1;
                t = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    pat[p..].iter().all(|&c| c == b'*')
}

/// A bracket class at the start of `pat`: whether `c` is in it and the class's length; `None`
/// when the bracket is not closed (then it is a literal `[`).
fn class(pat: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let neg = matches!(pat.get(i), Some(b'!' | b'^'));
    if neg {
        i += 1;
    }
    let mut hit = false;
    let first = i;
    while i < pat.len() && (pat[i] != b']' || i == first) {
        if i + 2 < pat.len() && pat[i + 1] == b'-' && pat[i + 2] != b']' {
            hit |= pat[i] <= c && c <= pat[i + 2];
            i += 3;
        } else {
            hit |= pat[i] == c;
            i += 1;
        }
    }
    (i < pat.len()).then_some((hit != neg, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_names_paths_and_members() {
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(excluded("in/postmortem.md", &p(&["*.md"])));
        assert!(excluded("gpu-node-07/var/log/secure", &p(&["secure"])));
        assert!(excluded("a/b/var/log/x.log", &p(&["var/log/*"])));
        assert!(excluded("in/kern.log.3", &p(&["kern.log.[0-9]"])));
        assert!(!excluded("in/kern.log", &p(&["kern.log.[0-9]"])));
        assert!(!excluded("in/kern.log", &p(&["*.md", "syslog*"])));
        assert!(excluded("x/ab", &p(&["[!c]b"])));
        assert!(glob(b"a?c*", b"abcdef"));
        assert!(!glob(b"a?c", b"ac"));
    }
}
