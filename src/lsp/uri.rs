//! The one URI codec: file paths to `file:` URIs and back, for the editor and the host.
//!
//! Built on `ls_types::Uri` (fluent-uri underneath), which typist already links for its
//! own server (through `tower-lsp-server`): no new crate, no new features. Its encoder
//! escapes every byte but RFC 3986's unreserved characters and `/`, exactly the set
//! typist's URIs have always used, so every URI on the wire stays byte for byte the same
//! (`url`'s `from_file_path` leaves `+ @ = ; ,` and more unescaped).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use tower_lsp_server::ls_types::Uri;

/// `/tmp/a b/é.py` → `file:///tmp/a%20b/%C3%A9.py`. A relative path is made absolute
/// against the current folder first (without touching the disk).
pub fn from_path(path: &Path) -> String {
    uri_of(path).as_str().to_string()
}

/// [`from_path`] as a typed URI, for typed notifications.
pub fn uri_of(path: &Path) -> Uri {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    Uri::from_file_path(&absolute)
        // Unreachable for an absolute path: its encoding always parses.
        .unwrap_or_else(|| Uri::from_str("file:///").expect("a fixed URI parses"))
}

/// The path a `file:` URI names, percent-decoded; `None` for another scheme or a
/// string that is not a URI.
pub fn to_path(uri: &str) -> Option<PathBuf> {
    let uri = Uri::from_str(uri).ok()?;
    if !uri.scheme().as_str().eq_ignore_ascii_case("file") {
        return None;
    }
    uri.to_file_path().map(|p| p.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_escape_what_needs_escaping() {
        assert_eq!(
            from_path(Path::new("/tmp/a b/é.py")),
            "file:///tmp/a%20b/%C3%A9.py"
        );
        // Everything but unreserved characters and `/`, as typist always did.
        assert_eq!(
            from_path(Path::new("/w/a+b@c=d;e,f(g)!~_-.x")),
            "file:///w/a%2Bb%40c%3Dd%3Be%2Cf%28g%29%21~_-.x"
        );
    }

    #[test]
    fn paths_come_back_from_file_uris_only() {
        let p = Path::new("/tmp/a b/é+%.py");
        assert_eq!(to_path(&from_path(p)).as_deref(), Some(p));
        assert_eq!(to_path("file:///w/x.py"), Some(PathBuf::from("/w/x.py")));
        assert_eq!(to_path("untitled:Untitled-1"), None);
        assert_eq!(to_path("not a uri"), None);
    }
}
