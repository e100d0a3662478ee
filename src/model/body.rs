//! [`Body`]: the part of an event's message after its line prefix, kept as a place in the
//! message when it ends it (nearly always), so that the text is held once.

/// The part of a message after its line prefix: where it starts in the message when the message
/// ends with it, else a text of its own (a record whose continuation lines were joined or
/// unescaped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// The message from this byte on.
    Tail(u32),
    /// A text of its own.
    Own(Box<str>),
}

impl Default for Body {
    fn default() -> Body {
        Body::Tail(0)
    }
}

impl Body {
    /// The body `body` of `message`: a place in it when it ends with `body`.
    pub fn of(message: &str, body: String) -> Body {
        match message.len().checked_sub(body.len()) {
            Some(at) if message.ends_with(body.as_str()) && message.is_char_boundary(at) => {
                u32::try_from(at).map_or_else(|_| Body::Own(body.into()), Body::Tail)
            }
            _ => Body::Own(body.into()),
        }
    }

    /// The body of `message` that is `body` cut to its first `max_chars` characters, made without
    /// a copy of the text when `message` ends with it.
    pub fn cut(message: &str, body: &str, max_chars: usize) -> Body {
        let body = match body.char_indices().nth(max_chars) {
            Some((at, _)) => &body[..at],
            None => body,
        };
        match message.len().checked_sub(body.len()) {
            Some(at) if message.ends_with(body) && message.is_char_boundary(at) => {
                u32::try_from(at).map_or_else(|_| Body::Own(body.into()), Body::Tail)
            }
            _ => Body::Own(body.into()),
        }
    }

    /// The text, read from `message` (the message it was made for; empty when that message was
    /// taken away).
    pub fn text<'a>(&'a self, message: &'a str) -> &'a str {
        match self {
            Body::Tail(at) => message.get(*at as usize..).unwrap_or(""),
            Body::Own(s) => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Body;

    #[test]
    fn a_tail_is_a_place_else_a_text() {
        let m = "Jan 1 00:00:00 h kernel: NVRM: Xid 79";
        let b = Body::of(m, "NVRM: Xid 79".into());
        assert_eq!(b, Body::Tail(25));
        assert_eq!(b.text(m), "NVRM: Xid 79");
        let joined = Body::of("a\\nb", "a\nb".into());
        assert_eq!(joined.text("a\\nb"), "a\nb");
        assert!(matches!(joined, Body::Own(_)));
        assert_eq!(b.text(""), "");
    }
}
