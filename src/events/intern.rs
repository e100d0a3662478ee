//! Names from the knowledge data (kinds, recognizer ids, catalog tables), held once for the
//! whole run: a draft names them with a `&'static str`, not a `String` of its own, since a
//! large input keeps hundreds of thousands of drafts. Only text of the knowledge files is
//! interned, never text of an input (which would grow the table without bound).

use std::collections::HashSet;
use std::sync::Mutex;

/// The one copy of `name` for the whole run.
pub fn intern(name: &str) -> &'static str {
    thread_local! {
        static NEAR: std::cell::RefCell<HashSet<&'static str>> = Default::default();
    }
    if let Some(s) = NEAR.with(|n| n.borrow().get(name).copied()) {
        return s;
    }
    static ALL: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let s = {
        let mut all = ALL.lock().unwrap_or_else(|e| e.into_inner());
        let all = all.get_or_insert_with(HashSet::new);
        match all.get(name) {
            Some(s) => *s,
            None => {
                let s: &'static str = Box::leak(name.to_string().into_boxed_str());
                all.insert(s);
                s
            }
        }
    };
    NEAR.with(|n| n.borrow_mut().insert(s));
    s
}

#[cfg(test)]
mod tests {
    use super::intern;

    #[test]
    fn one_copy_per_name() {
        let a = intern("xid");
        let b = intern(&String::from("xid"));
        assert_eq!(a, "xid");
        assert!(std::ptr::eq(a, b));
        let other = std::thread::spawn(|| intern("xid") as *const str as *const u8 as usize)
            .join()
            .unwrap_or(0);
        assert_eq!(other, a.as_ptr() as usize);
    }
}
