//! The canonical hash of a suggestion request, which tells two requests that asked the
//! same thing of the same editor state apart from all others.

use serde_json::{Value, json};

/// sha256 of the canonical form of a suggestion request: the method, the parameters
/// with the workspace's location and every document version taken out, and the
/// document's text. Two requests with the same hash asked the same thing of the same
/// editor state, whatever the run, worker or temporary folder.
pub fn request_hash(method: &str, params: &Value, root_uri: &str, text: &str) -> String {
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
        "text_sha256": sha256_hex(text.as_bytes()),
    });
    sha256_hex(canonical.to_string().as_bytes())
}

/// Lower-case hex sha256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    use std::fmt::Write;
    let digest = sha2::Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}
