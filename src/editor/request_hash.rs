//! The canonical hash of a suggestion request, which tells two requests that asked the
//! same thing of the same editor state apart from all others.

use serde_json::{Value, json};

/// sha256 of the canonical form of a suggestion request: the method, the parameters
/// with the workspace's location and every document version taken out, and the
/// document's text. Two requests with the same hash asked the same thing of the same
/// editor state, whatever the run, worker or temporary folder.
pub fn request_hash(method: &str, params: &Value, root_uri: &str, text: &str) -> String {
    request_hash_of(method, params, root_uri, &sha256_hex(text.as_bytes()))
}

/// [`request_hash`] given the text's sha256 (hex), which a session keeps up to date as
/// the document grows ([`TextHash`]) instead of hashing the whole text per request.
pub fn request_hash_of(method: &str, params: &Value, root_uri: &str, text_sha256: &str) -> String {
    fn canon(v: &Value, root_uri: &str) -> Value {
        match v {
            Value::String(s) => Value::String(s.replacen(root_uri, "file:///workspace", 1)),
            Value::Array(a) => Value::Array(a.iter().map(|x| canon(x, root_uri)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .filter(|(k, _)| k.as_str() != "version")
                    .map(|(k, x)| (k.clone(), canon(x, root_uri)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let canonical = json!({
        "method": method,
        "params": canon(params, root_uri),
        "text_sha256": text_sha256,
    });
    sha256_hex(canonical.to_string().as_bytes())
}

/// A running sha256 of a document's text as it grows: the state over its first `len`
/// bytes. Whoever changes the text other than by appending drops it.
#[derive(Clone, Default)]
pub struct TextHash {
    state: sha2::Sha256,
    len: usize,
}

impl TextHash {
    /// The sha256 (hex) of `text`, which must begin with the bytes hashed so far.
    pub fn of(&mut self, text: &str) -> String {
        use sha2::Digest;
        if text.len() < self.len {
            *self = TextHash::default();
        }
        self.state.update(&text.as_bytes()[self.len..]);
        self.len = text.len();
        hex(&self.state.clone().finalize())
    }
}

fn hex(digest: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(64);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Lower-case hex sha256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_hash_is_the_hash_of_the_whole_text() {
        let mut h = TextHash::default();
        let mut text = String::new();
        for part in ["", "import os\n", "é😀", "\n", "x = 1"] {
            text.push_str(part);
            assert_eq!(h.of(&text), sha256_hex(text.as_bytes()));
        }
        assert_eq!(
            h.of("abc"),
            sha256_hex(b"abc"),
            "a shorter text starts over"
        );
    }
}
