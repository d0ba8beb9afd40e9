//! The one way out of a job's sandbox: its declared model endpoint. The sandbox has a
//! network of its own (a loopback and nothing else), so the service forwards one
//! address for it: inside, `typist serve job --forward ADDR=SOCKET` listens on the
//! sandbox's loopback and carries each connection to a Unix socket in the job's folder;
//! outside, the service accepts there and connects to the endpoint's host and port, and
//! to nothing else. The job's host asks `http://ADDR/...`: the same path, another address.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The port a job's model endpoint is asked at inside its sandbox.
pub const INSIDE_PORT: u16 = 18080;

/// A model endpoint `http://HOST:PORT/PATH` as the sandbox asks it (`http://127.0.0.1:
/// INSIDE_PORT/PATH`), and the `HOST:PORT` the service connects to.
pub fn inside_url(endpoint: &str) -> Result<(String, String)> {
    let Some(rest) = endpoint.strip_prefix("http://") else {
        bail!(
            "`model.endpoint`: a job's sandbox forwards only http:// endpoints (an https:// one would need its certificate's name inside it); serve the model over http on a trusted network"
        );
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains('@') {
        bail!("`model.endpoint`: {endpoint:?} has no host (or has credentials in it)");
    }
    let target = if authority.rsplit_once(':').is_some_and(|(_, p)| {
        !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && !authority.ends_with(']')
    }) {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    Ok((format!("http://127.0.0.1:{INSIDE_PORT}{path}"), target))
}

/// Outside: accepts on `socket` and carries each connection to `target` (`HOST:PORT`)
/// until the task is dropped (aborted).
pub async fn outside(socket: PathBuf, target: String) -> Result<tokio::task::JoinHandle<()>> {
    let _ = std::fs::remove_file(&socket);
    let listener = tokio::net::UnixListener::bind(&socket)
        .with_context(|| format!("cannot listen on {}", socket.display()))?;
    Ok(tokio::spawn(async move {
        while let Ok((mut inner, _)) = listener.accept().await {
            let target = target.clone();
            tokio::spawn(async move {
                match tokio::net::TcpStream::connect(&target).await {
                    Ok(mut out) => {
                        let _ = tokio::io::copy_bidirectional(&mut inner, &mut out).await;
                    }
                    Err(e) => tracing::warn!("hub: the model endpoint {target}: {e}"),
                }
            });
        }
    }))
}

/// Inside: listens on `addr` and carries each connection to `socket`.
async fn inside(addr: SocketAddr, socket: PathBuf) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr} in the sandbox"))?;
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let socket = socket.clone();
            tokio::spawn(async move {
                if let Ok(mut out) = tokio::net::UnixStream::connect(&socket).await {
                    let _ = tokio::io::copy_bidirectional(&mut conn, &mut out).await;
                }
            });
        }
    });
    Ok(())
}

/// `typist serve job`: in a job's sandbox, forwards `forwards` (`ADDR=SOCKET`) while
/// `program args` runs, and ends with its exit status.
pub fn run_job(forwards: &[String], program: &Path, args: &[String]) -> Result<i32> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        for f in forwards {
            let (addr, socket) = f
                .split_once('=')
                .context("--forward: ADDR=SOCKET (e.g. 127.0.0.1:18080=/job/net/model.sock)")?;
            let addr: SocketAddr = addr
                .parse()
                .with_context(|| format!("--forward: {addr:?} is not an address"))?;
            inside(addr, PathBuf::from(socket)).await?;
        }
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args).kill_on_drop(true);
        let status = cmd
            .status()
            .await
            .with_context(|| format!("cannot start {}", program.display()))?;
        use std::os::unix::process::ExitStatusExt;
        Ok(status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_is_asked_at_the_sandboxes_own_address() {
        assert_eq!(
            inside_url("http://10.1.2.3:8080/v1").unwrap(),
            (
                "http://127.0.0.1:18080/v1".to_string(),
                "10.1.2.3:8080".to_string()
            )
        );
        assert_eq!(
            inside_url("http://models.lan").unwrap().1,
            "models.lan:80".to_string()
        );
        assert!(inside_url("https://api.example.com/v1").is_err());
        assert!(inside_url("http://user:pw@host/v1").is_err());
    }
}
