//! The canonical hash of a suggestion request, which tells two requests that asked the
//! same thing of the same editor state apart from all others.
//!
//! The hash is taken over a canonical JSON of the request, written while the parameters
//! are walked (no intermediate value); its bytes are those of the first definition, which
//! a test keeps. [`TextHash`] is the running sha256 of a document's text that a session
//! keeps while the document grows by appends (any other change drops it), so a request
//! hashes only what was typed since the last one.

use serde_json::Value;

use crate::digest::{hex, sha256_hex};

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
    // The canonical form is written as it is walked (no copy of the parameters): the
    // bytes `json!({"method", "params": canonical, "text_sha256"}).to_string()` gives.
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(b"{\"method\":");
    write_json(&mut out, &method);
    out.extend_from_slice(b",\"params\":");
    write_canonical(&mut out, params, root_uri);
    out.extend_from_slice(b",\"text_sha256\":");
    write_json(&mut out, &text_sha256);
    out.push(b'}');
    sha256_hex(&out)
}

fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    // Writing to a Vec cannot fail, nor can a string or a JSON value be refused.
    let _ = serde_json::to_writer(out, v);
}

/// `v` without its `version` members, the first `root_uri` of each string replaced by
/// `file:///workspace`, as JSON.
fn write_canonical(out: &mut Vec<u8>, v: &Value, root_uri: &str) {
    match v {
        Value::String(s) => match s.find(root_uri) {
            Some(i) => {
                let mut t = String::with_capacity(s.len() + 17);
                t.push_str(&s[..i]);
                t.push_str("file:///workspace");
                t.push_str(&s[i + root_uri.len()..]);
                write_json(out, &t);
            }
            None => write_json(out, s),
        },
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(out, x, root_uri);
            }
            out.push(b']');
        }
        Value::Object(o) => {
            out.push(b'{');
            let mut first = true;
            for (k, x) in o.iter().filter(|(k, _)| k.as_str() != "version") {
                if !first {
                    out.push(b',');
                }
                first = false;
                write_json(out, k);
                out.push(b':');
                write_canonical(out, x, root_uri);
            }
            out.push(b'}');
        }
        other => write_json(out, other),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The canonical form as it was first defined: a copy of the parameters, hashed as
    /// `serde_json` prints it.
    fn reference(method: &str, params: &Value, root_uri: &str, text_sha256: &str) -> String {
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
        let canonical = serde_json::json!({
            "method": method,
            "params": canon(params, root_uri),
            "text_sha256": text_sha256,
        });
        sha256_hex(canonical.to_string().as_bytes())
    }

    #[test]
    fn the_canonical_form_is_written_as_it_was_built() {
        let root = "file:///tmp/typist-ws-1";
        let params = serde_json::json!({
            "textDocument": {"uri": "file:///tmp/typist-ws-1/pkg/a.py", "version": 7},
            "position": {"line": 12, "character": 4},
            "context": {"triggerKind": 2, "selectedCompletionInfo": null, "version": "x"},
            "workspaceFolders": [
                {"uri": "file:///tmp/typist-ws-1", "name": "ws \"q\" é\n\t\u{1}"},
                "file:///tmp/typist-ws-1/x file:///tmp/typist-ws-1/y",
                [1.5, -2, true, false, null, 1e300, 18446744073709551615u64]
            ],
            "version": 3,
            "empty": {}, "none": []
        });
        for (method, root_uri) in [
            ("textDocument/inlineCompletion", root),
            ("textDocument/completion", "file:///elsewhere"),
            ("getCompletions", ""),
        ] {
            assert_eq!(
                request_hash_of(method, &params, root_uri, "abc"),
                reference(method, &params, root_uri, "abc"),
                "{method} {root_uri:?}"
            );
        }
        assert_eq!(
            request_hash_of("m", &Value::Null, root, ""),
            reference("m", &Value::Null, root, "")
        );
    }

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
