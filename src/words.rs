//! Phrasing shared by every report and warning: counts read as a person writes them.

/// `1 input`, `3 inputs`: a count and its noun, plural when the count is not one. For nouns
/// whose plural is not `+s`, use [`counted_as`].
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `1 path or input`, `2 paths or inputs`: a count with its singular and plural spelled out.
pub fn counted_as(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_the_rest_plural() {
        assert_eq!(counted(1, "input"), "1 input");
        assert_eq!(counted(0, "incident"), "0 incidents");
        assert_eq!(counted(12, "line"), "12 lines");
        assert_eq!(
            counted_as(2, "path or input", "paths or inputs"),
            "2 paths or inputs"
        );
    }
}
