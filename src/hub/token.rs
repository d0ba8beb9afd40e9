//! Random tokens: API tokens, upload keys, the web sessions' key.

use anyhow::{Context, Result};

/// A new API token: 32 random bytes in hex, prefixed `typ_`.
pub fn new_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .context("cannot read /dev/urandom for a token")?;
    Ok(format!("typ_{}", crate::digest::hex(&bytes)))
}
