//! What a [`Client`](super::Client) talks over: a byte stream in each direction (a
//! child's stdio, a TCP or Unix socket, in-memory pipes in tests) and, when typist
//! started the server, the child process. Framing and JSON-RPC run the same over any of
//! them; only how the stream ends is told differently (a child's exit status, or the
//! address whose connection dropped).
//!
//! At the other end is the child process, the `Address` attached to, or nothing (pipes).
//! The end of a stream is an `LspError::ServerExited` with the child's status, a
//! `Disconnected` naming the address, or, before it starts, a refused `Connect`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::watch;

use super::LspError;
use super::process::{ExitInfo, ServerProcess};

/// Where a running server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// `tcp://HOST:PORT`.
    Tcp(String),
    /// `unix:PATH`, `unix://PATH` or a bare socket path.
    Unix(PathBuf),
}

impl Address {
    /// `tcp://HOST:PORT`, `unix:PATH` (also `unix://PATH`), or a path to a socket
    /// (anything holding a `/`).
    pub fn parse(s: &str) -> Result<Address, String> {
        let s = s.trim();
        if let Some(rest) = s.strip_prefix("tcp://") {
            let rest = rest.trim_end_matches('/');
            let port = rest.rsplit_once(':').map(|(h, p)| (h, p.parse::<u16>()));
            return match port {
                Some((h, Ok(_))) if !h.is_empty() => Ok(Address::Tcp(rest.to_string())),
                _ => Err(format!("{s:?} is not tcp://HOST:PORT")),
            };
        }
        let path = s
            .strip_prefix("unix://")
            .or_else(|| s.strip_prefix("unix:"))
            .or_else(|| (s.contains('/') && !s.contains("://")).then_some(s));
        match path {
            Some(p) if !p.is_empty() => Ok(Address::Unix(PathBuf::from(p))),
            _ => Err(format!(
                "{s:?} is not an address: tcp://127.0.0.1:PORT, unix:/path/to/socket or a socket path"
            )),
        }
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Tcp(hp) => write!(f, "tcp://{hp}"),
            Address::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

pub(super) type Reader = Box<dyn AsyncBufRead + Unpin + Send>;
pub(super) type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// How the far end of a transport is named when its stream ends.
pub(super) enum Peer {
    /// A child typist started: its exit status tells why.
    Child(ServerProcess),
    /// A server typist attached to: the address names it.
    Attached(Address),
    /// Streams handed in (tests): nothing more to say.
    Streams,
}

/// The two directions of a stream, and what is at the other end.
pub struct Transport {
    pub(super) reader: Reader,
    pub(super) writer: Writer,
    pub(super) peer: Peer,
    /// The child's exit, once it has happened (closed from the start without a child).
    pub(super) exit_rx: watch::Receiver<Option<ExitInfo>>,
}

impl Transport {
    /// Starts `program` in its own process group and talks over its stdio.
    pub fn spawn(
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
    ) -> Result<Transport, LspError> {
        let (process, stdin, stdout, exit_rx) =
            ServerProcess::spawn(name, program, args, env, cwd)?;
        Ok(Transport {
            reader: Box::new(BufReader::new(stdout)),
            writer: Box::new(stdin),
            peer: Peer::Child(process),
            exit_rx,
        })
    }

    /// Any reader/writer pair (in-memory pipes in tests).
    pub fn streams<R, W>(reader: R, writer: W) -> Transport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Transport::over(reader, writer, Peer::Streams)
    }

    fn over<R, W>(reader: R, writer: W, peer: Peer) -> Transport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        // No process: the exit channel is closed from the start.
        let (_exit_tx, exit_rx) = watch::channel(None);
        Transport {
            reader: Box::new(BufReader::new(reader)),
            writer: Box::new(writer),
            peer,
            exit_rx,
        }
    }

    /// Opens a connection to a server that is already running, within `timeout`. A
    /// refused or unreachable address is an [`LspError::Connect`] naming it.
    pub async fn connect(
        name: &str,
        address: &Address,
        timeout: Duration,
    ) -> Result<Transport, LspError> {
        let err = |message: String| LspError::Connect {
            server: name.to_string(),
            address: address.to_string(),
            message,
        };
        let opened = tokio::time::timeout(timeout, async {
            match address {
                Address::Tcp(hp) => {
                    let s = tokio::net::TcpStream::connect(hp.as_str()).await?;
                    // Small frames, one at a time: no Nagle delay on each keystroke.
                    s.set_nodelay(true)?;
                    let (r, w) = s.into_split();
                    Ok::<_, std::io::Error>(Transport::over(r, w, Peer::Attached(address.clone())))
                }
                Address::Unix(p) => {
                    let (r, w) = tokio::net::UnixStream::connect(p).await?.into_split();
                    Ok(Transport::over(r, w, Peer::Attached(address.clone())))
                }
            }
        })
        .await;
        match opened {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(e)) => Err(err(e.to_string())),
            Err(_) => Err(err(format!("no connection within {timeout:?}"))),
        }
    }

    /// The address this transport is attached to, if it is.
    pub fn address(&self) -> Option<&Address> {
        match &self.peer {
            Peer::Attached(a) => Some(a),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        let ok = |s: &str| Address::parse(s).unwrap().to_string();
        assert_eq!(ok("tcp://127.0.0.1:4000"), "tcp://127.0.0.1:4000");
        assert_eq!(ok("tcp://localhost:4000/"), "tcp://localhost:4000");
        assert_eq!(ok("unix:/tmp/s.sock"), "unix:/tmp/s.sock");
        assert_eq!(ok("unix:///tmp/s.sock"), "unix:/tmp/s.sock");
        assert_eq!(ok("/tmp/s.sock"), "unix:/tmp/s.sock");
        assert_eq!(ok("./s.sock"), "unix:./s.sock");
        for bad in [
            "tcp://127.0.0.1",
            "tcp://:80",
            "tcp://h:99999",
            "http://x:1",
            "s.sock",
            "",
        ] {
            assert!(Address::parse(bad).is_err(), "{bad}");
        }
    }
}
