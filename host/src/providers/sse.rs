//! Server-sent events (the `text/event-stream` format of the HTML standard), as OpenAI and
//! Anthropic stream an answer: `event:` and `data:` fields, one event per blank line, comments
//! (`:`) ignored. Bytes arrive in whatever pieces the network makes; the decoder keeps the
//! unfinished line and event between them, never more than its limit.

/// One event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Its `event:` name, when it has one (Anthropic names every event; OpenAI none).
    pub event: Option<String>,
    /// Its `data:` lines, joined by `\n`.
    pub data: String,
}

/// Decodes a stream of bytes into events.
#[derive(Debug)]
pub struct Decoder {
    line: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
    limit: usize,
    /// The previous piece ended on `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

/// An event (or a line) longer than the decoder's limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("one streamed event is longer than {0} bytes")]
pub struct TooLong(pub usize);

impl Decoder {
    /// A decoder refusing an event longer than `limit` bytes.
    pub fn new(limit: usize) -> Decoder {
        Decoder {
            line: Vec::new(),
            event: None,
            data: None,
            limit,
            after_cr: false,
        }
    }

    /// The events `bytes` completes, in order.
    ///
    /// # Errors
    /// [`TooLong`] when the event being read grows past the limit.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Event>, TooLong> {
        let mut out = Vec::new();
        for &b in bytes {
            let after_cr = std::mem::replace(&mut self.after_cr, false);
            match b {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(e) = self.line_done(&line) {
                        out.push(e);
                    }
                }
                _ => {
                    self.line.push(b);
                    let held = self.line.len() + self.data.as_ref().map_or(0, String::len);
                    if held > self.limit {
                        return Err(TooLong(self.limit));
                    }
                }
            }
        }
        Ok(out)
    }

    /// One whole line: a field, a comment, or the blank line that ends an event.
    fn line_done(&mut self, line: &[u8]) -> Option<Event> {
        if line.is_empty() {
            let event = self.event.take();
            return self.data.take().map(|data| Event { event, data });
        }
        if line.first() == Some(&b':') {
            return None;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = line.split_once(':').unwrap_or((&line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            // `id` and `retry` matter to a browser reconnecting, not to one answer.
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const STREAM: &str = "event: message_start\ndata: {\"a\":1}\n\n: a comment\r\n\
                          data: first\r\ndata:second\r\n\r\nid: 7\nretry: 10\n\n\
                          event: ping\rdata: {}\r\rdata: [DONE]\n\n";

    fn expected() -> Vec<Event> {
        vec![
            Event {
                event: Some("message_start".into()),
                data: "{\"a\":1}".into(),
            },
            Event {
                event: None,
                data: "first\nsecond".into(),
            },
            Event {
                event: Some("ping".into()),
                data: "{}".into(),
            },
            Event {
                event: None,
                data: "[DONE]".into(),
            },
        ]
    }

    #[test]
    fn fields_comments_and_every_line_ending() {
        let mut d = Decoder::new(1 << 20);
        assert_eq!(d.push(STREAM.as_bytes()).expect("decoded"), expected());
    }

    #[test]
    fn an_endless_line_is_refused_at_the_limit() {
        let mut d = Decoder::new(64);
        assert!(d.push(b"data: ").is_ok());
        assert_eq!(d.push(&[b'x'; 100]), Err(TooLong(64)));
        // Many data lines of one event count together.
        let mut d = Decoder::new(64);
        let lines = "data: 0123456789\n".repeat(10);
        assert_eq!(d.push(lines.as_bytes()), Err(TooLong(64)));
    }

    proptest! {
        /// However the network cuts the bytes, the same events come out.
        #[test]
        fn pieces_do_not_matter(cuts in proptest::collection::vec(0..STREAM.len(), 0..12)) {
            let mut cuts = cuts;
            cuts.sort_unstable();
            let bytes = STREAM.as_bytes();
            let mut d = Decoder::new(1 << 20);
            let mut got = Vec::new();
            let mut from = 0;
            for c in cuts.into_iter().chain([bytes.len()]) {
                got.extend(d.push(&bytes[from..c]).expect("decoded"));
                from = c;
            }
            prop_assert_eq!(got, expected());
        }
    }
}
