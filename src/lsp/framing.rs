//! Content-Length framing of JSON-RPC messages on a byte stream.
//!
//! Owns the wire format only: header parsing (strict, case-insensitive names), junk
//! tolerance before a frame, and bounds on every allocation. Knows nothing of JSON-RPC
//! ids or methods. A malformed header or an absurd length is a [`FramingError`], never a
//! panic; after an error the reader resynchronises on the next header line.
//!
//! Junk lines (a server's stray prints on stdout) are skipped, logged and counted
//! (`FrameReader::junk_lines`). `MAX_BODY` (64 MiB) bounds a body and `MAX_LINE` (16 KiB)
//! a header or junk line.

use memchr::memchr;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// Largest message body accepted. Real servers send a few MB at most (a big
/// `publishDiagnostics` or completion list); anything past this is a lying header.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
/// Longest header (or junk) line read before giving up on it.
pub const MAX_LINE: usize = 16 * 1024;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FramingError {
    #[error("malformed header line {0:?}")]
    BadHeader(String),
    #[error("bad content-length {0:?}")]
    BadLength(String),
    #[error("content-length {0} exceeds the limit of {MAX_BODY} bytes")]
    TooLong(usize),
    #[error("frame without content-length header")]
    MissingLength,
    #[error("stream ended in the middle of a frame")]
    UnexpectedEof,
    #[error("header line longer than {MAX_LINE} bytes")]
    LineTooLong,
    #[error("i/o error reading frame: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads frames one at a time. Junk lines between frames (servers that print to
/// stdout) are skipped, logged and counted in [`FrameReader::junk_lines`].
pub struct FrameReader<R> {
    inner: R,
    pub junk_lines: u64,
}

enum Line {
    Eof,
    Text(String),
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        FrameReader {
            inner,
            junk_lines: 0,
        }
    }

    /// Next frame body, `Ok(None)` at a clean end of stream.
    pub async fn read_frame(&mut self) -> Result<Option<Vec<u8>>, FramingError> {
        let mut length: Option<usize> = None;
        let mut in_headers = false;
        loop {
            let line = match self.read_line().await? {
                Line::Eof if in_headers => return Err(FramingError::UnexpectedEof),
                Line::Eof => return Ok(None),
                Line::Text(t) => t,
            };
            if line.is_empty() {
                if !in_headers {
                    continue; // stray blank line between frames
                }
                break;
            }
            match parse_header(&line) {
                Some((name, value)) if name.eq_ignore_ascii_case("content-length") => {
                    if length.is_some() {
                        return Err(FramingError::BadHeader(line));
                    }
                    length = Some(parse_length(value)?);
                    in_headers = true;
                }
                Some((name, _)) if name.eq_ignore_ascii_case("content-type") => {
                    in_headers = true;
                }
                _ if in_headers => return Err(FramingError::BadHeader(line)),
                _ => {
                    self.junk_lines += 1;
                    tracing::warn!(target: "typist::lsp", junk = %truncate(&line, 200), "junk line on server stdout");
                }
            }
        }
        let len = length.ok_or(FramingError::MissingLength)?;
        let mut body = vec![0u8; len];
        match self.inner.read_exact(&mut body).await {
            Ok(_) => Ok(Some(body)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(FramingError::UnexpectedEof)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// One line without its terminator (`\r\n` or `\n`), bounded by [`MAX_LINE`].
    async fn read_line(&mut self) -> Result<Line, FramingError> {
        let mut buf = Vec::new();
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                if buf.is_empty() {
                    return Ok(Line::Eof);
                }
                // A partial line at EOF: junk or a cut header, either way the stream is over.
                return Err(FramingError::UnexpectedEof);
            }
            let (take, done) = match memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if buf.len() + take > MAX_LINE {
                let drop_n = take;
                self.inner.consume(drop_n);
                // Skip the rest of this over-long line so the next call resynchronises.
                self.skip_line().await?;
                return Err(FramingError::LineTooLong);
            }
            buf.extend_from_slice(&chunk[..take]);
            self.inner.consume(take);
            if done {
                break;
            }
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        Ok(Line::Text(String::from_utf8_lossy(&buf).into_owned()))
    }

    async fn skip_line(&mut self) -> Result<(), FramingError> {
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                return Ok(());
            }
            if let Some(i) = memchr(b'\n', chunk) {
                self.inner.consume(i + 1);
                return Ok(());
            }
            let n = chunk.len();
            self.inner.consume(n);
        }
    }
}

fn parse_header(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return None;
    }
    Some((name, value.trim()))
}

fn parse_length(value: &str) -> Result<usize, FramingError> {
    if value.is_empty() || value.len() > 12 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(FramingError::BadLength(value.to_string()));
    }
    let n: usize = value
        .parse()
        .map_err(|_| FramingError::BadLength(value.to_string()))?;
    if n > MAX_BODY {
        return Err(FramingError::TooLong(n));
    }
    Ok(n)
}

/// Frames a message body for the wire.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

pub(crate) fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn frames(input: &[u8]) -> Vec<Result<Option<String>, String>> {
        let mut r = FrameReader::new(BufReader::new(input));
        let mut out = Vec::new();
        loop {
            let f = r.read_frame().await;
            let end = matches!(f, Ok(None) | Err(FramingError::UnexpectedEof));
            out.push(
                f.map(|o| o.map(|b| String::from_utf8(b).unwrap()))
                    .map_err(|e| e.to_string()),
            );
            if end || out.len() > 10 {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn two_frames_then_clean_eof() {
        let mut input = encode(br#"{"a":1}"#);
        input.extend(encode(br#"{"b":2}"#));
        assert_eq!(
            frames(&input).await,
            vec![
                Ok(Some(r#"{"a":1}"#.into())),
                Ok(Some(r#"{"b":2}"#.into())),
                Ok(None)
            ]
        );
    }

    #[tokio::test]
    async fn header_names_are_case_insensitive_and_content_type_is_allowed() {
        let input = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}";
        assert_eq!(frames(input).await, vec![Ok(Some("{}".into())), Ok(None)]);
    }

    #[tokio::test]
    async fn junk_before_a_frame_is_skipped_and_counted() {
        let mut input = b"Starting server v1.2\nDEBUG: ready\r\n".to_vec();
        input.extend(encode(b"{}"));
        let mut r = FrameReader::new(BufReader::new(&input[..]));
        assert_eq!(r.read_frame().await.unwrap().unwrap(), b"{}");
        assert_eq!(r.junk_lines, 2);
        assert!(r.read_frame().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn bad_and_huge_lengths_are_errors_and_the_reader_recovers() {
        let mut input = b"Content-Length: abc\r\n\r\n".to_vec();
        input.extend(b"Content-Length: 99999999999\r\n\r\n");
        input.extend(b"Content-Length: -1\r\n\r\n");
        input.extend(encode(b"[1]"));
        let got = frames(&input).await;
        assert_eq!(got[0], Err("bad content-length \"abc\"".into()));
        assert_eq!(
            got[1],
            Err(format!(
                "content-length 99999999999 exceeds the limit of {MAX_BODY} bytes"
            ))
        );
        assert_eq!(got[2], Err("bad content-length \"-1\"".into()));
        assert_eq!(got[3], Ok(Some("[1]".into())));
        assert_eq!(got[4], Ok(None));
    }

    #[tokio::test]
    async fn eof_mid_body_and_mid_header_are_reported() {
        assert_eq!(
            frames(b"Content-Length: 10\r\n\r\n{\"a\"").await,
            vec![Err("stream ended in the middle of a frame".into())]
        );
        assert_eq!(
            frames(b"Content-Length: 10\r\n").await,
            vec![Err("stream ended in the middle of a frame".into())]
        );
    }

    #[tokio::test]
    async fn header_block_without_length_or_with_garbage_is_an_error() {
        let got = frames(b"Content-Type: x\r\n\r\n").await;
        assert_eq!(got[0], Err("frame without content-length header".into()));
        let got = frames(b"Content-Length: 2\r\nnot a header\r\n\r\n{}").await;
        assert_eq!(got[0], Err("malformed header line \"not a header\"".into()));
    }

    #[tokio::test]
    async fn an_overlong_junk_line_is_an_error_not_an_allocation() {
        let mut input = vec![b'x'; MAX_LINE * 4];
        input.push(b'\n');
        input.extend(encode(b"{}"));
        let got = frames(&input).await;
        assert_eq!(
            got[0],
            Err(format!("header line longer than {MAX_LINE} bytes"))
        );
        assert_eq!(got[1], Ok(Some("{}".into())));
    }

    /// A reader that hands out its input `step` bytes at a time.
    struct Trickle {
        data: Vec<u8>,
        pos: usize,
        step: usize,
    }
    impl tokio::io::AsyncRead for Trickle {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let end = (self.pos + self.step)
                .min(self.data.len())
                .min(self.pos + buf.remaining());
            buf.put_slice(&self.data[self.pos..end]);
            self.pos = end;
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn frames_split_at_every_byte_boundary() {
        let mut input = b"junk\n".to_vec();
        input.extend(encode("{\"é\":\"ü\"}".as_bytes()));
        input.extend(encode(b"{}"));
        for step in 1..input.len() {
            let mut r = FrameReader::new(BufReader::with_capacity(
                step.max(1),
                Trickle {
                    data: input.clone(),
                    pos: 0,
                    step,
                },
            ));
            assert_eq!(
                r.read_frame().await.unwrap().unwrap(),
                "{\"é\":\"ü\"}".as_bytes(),
                "step {step}"
            );
            assert_eq!(r.read_frame().await.unwrap().unwrap(), b"{}", "step {step}");
            assert!(r.read_frame().await.unwrap().is_none(), "step {step}");
            assert_eq!(r.junk_lines, 1);
        }
    }
}
