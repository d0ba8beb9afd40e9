//! `typist host --listen`: the host on a socket instead of stdio, for clients that
//! attach to a running server (`typist run --connect`). Binds 127.0.0.1 only (or a
//! Unix socket), prints `listening on ADDRESS` as its first line of stdout, and serves
//! each accepted connection with a fresh LSP service: no document, model or request
//! count is shared between connections, so each client session meets a new server, as
//! when typist starts one. A crash fault ends the whole process (every connection and
//! the listener), as a crashed server would; raw-frame faults write to stdout, so they
//! apply to stdio only.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use super::HostArgs;

/// Where the host listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// `tcp://127.0.0.1:PORT` (0: any free port).
    Tcp(u16),
    /// `unix:PATH` (or a path).
    Unix(PathBuf),
}

impl Listen {
    /// `tcp://127.0.0.1:PORT`, `unix:PATH` or a path holding a `/`; any other host than
    /// 127.0.0.1 is refused (the host is for tests and local runs).
    pub fn parse(s: &str) -> Result<Listen> {
        if let Some(rest) = s.strip_prefix("tcp://") {
            let Some(port) = rest.strip_prefix("127.0.0.1:") else {
                bail!("--listen {s}: typist host listens on 127.0.0.1 only (tcp://127.0.0.1:PORT)");
            };
            let port = port
                .trim_end_matches('/')
                .parse()
                .with_context(|| format!("--listen {s}: bad port"))?;
            return Ok(Listen::Tcp(port));
        }
        match s.strip_prefix("unix:").map(|p| p.trim_start_matches("//")) {
            Some(p) if !p.is_empty() => Ok(Listen::Unix(p.into())),
            None if s.contains('/') && !s.contains("://") => Ok(Listen::Unix(s.into())),
            _ => bail!("--listen {s}: give tcp://127.0.0.1:PORT or unix:PATH"),
        }
    }
}

/// Serves every connection until the process is stopped.
pub async fn serve_listen(args: HostArgs, at: &Listen) -> Result<()> {
    match at {
        Listen::Tcp(port) => {
            let l = tokio::net::TcpListener::bind(("127.0.0.1", *port))
                .await
                .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
            announce(&format!("tcp://{}", l.local_addr()?))?;
            loop {
                let (s, peer) = l.accept().await?;
                tracing::debug!(%peer, "connection");
                s.set_nodelay(true)?;
                let (r, w) = s.into_split();
                tokio::spawn(super::serve(args.clone(), r, w));
            }
        }
        Listen::Unix(path) => {
            remove_stale_socket(path)?;
            let l = tokio::net::UnixListener::bind(path)
                .with_context(|| format!("cannot listen on {}", path.display()))?;
            announce(&format!("unix:{}", path.display()))?;
            loop {
                let (s, _) = l.accept().await?;
                let (r, w) = s.into_split();
                tokio::spawn(super::serve(args.clone(), r, w));
            }
        }
    }
}

/// The first line of stdout, for whoever started the host to read the address from.
fn announce(address: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on {address}")?;
    out.flush()?;
    eprintln!("typist host: listening on {address}");
    Ok(())
}

/// A socket file left by an earlier host is replaced; any other file is not touched.
fn remove_stale_socket(path: &std::path::Path) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => std::fs::remove_file(path)
            .with_context(|| format!("cannot replace the socket {}", path.display())),
        Ok(_) => bail!("{} exists and is not a socket", path.display()),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        assert_eq!(Listen::parse("tcp://127.0.0.1:0").unwrap(), Listen::Tcp(0));
        assert_eq!(
            Listen::parse("unix:/tmp/h.sock").unwrap(),
            Listen::Unix("/tmp/h.sock".into())
        );
        assert_eq!(
            Listen::parse("/tmp/h.sock").unwrap(),
            Listen::Unix("/tmp/h.sock".into())
        );
        for bad in [
            "tcp://0.0.0.0:80",
            "tcp://localhost:1",
            "h.sock",
            "http://x/y",
        ] {
            assert!(Listen::parse(bad).is_err(), "{bad}");
        }
    }
}
