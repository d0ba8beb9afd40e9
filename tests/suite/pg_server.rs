//! A real PostgreSQL for the service's tests (Debian's `postgresql`, installed by
//! scripts/install-servers.sh): a cluster made by `initdb` in a temporary folder,
//! listening on 127.0.0.1 on a free port and on a Unix socket in that folder, run as an
//! unprivileged user when the tests run as root (PostgreSQL refuses root), stopped
//! when dropped. A server that cannot start fails the test, saying why.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a new cluster is waited for.
const START_WAIT: Duration = Duration::from_secs(60);
/// How long a fast shutdown is waited for before the server is killed.
const STOP_WAIT: Duration = Duration::from_secs(15);
/// Who runs PostgreSQL when the tests run as root.
const UNPRIVILEGED: (&str, &str) = ("nobody", "nogroup");

pub struct PgServer {
    child: Child,
    /// The server's folder (cluster, socket, log): kept until the server stopped.
    dir: tempfile::TempDir,
    pub port: u16,
    /// `postgres://typist@127.0.0.1:PORT/hub`.
    pub url: String,
}

/// The newest PostgreSQL's programs Debian installed (`/usr/lib/postgresql/N/bin`).
fn bin_dir() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    match found.pop() {
        Some((_, bin)) => bin,
        None => panic!(
            "PostgreSQL is not installed (no /usr/lib/postgresql/N/bin/postgres): run \
             scripts/install-servers.sh (Debian's postgresql)"
        ),
    }
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").ok().map(|m| m.uid()) == Some(0)
}

/// `program` as PostgreSQL's user: as is, or through `setpriv` when root (which execs,
/// so the child's pid is the program's).
fn as_postgres_user(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={}", UNPRIVILEGED.0),
            &format!("--regid={}", UNPRIVILEGED.1),
            "--clear-groups",
            "--",
        ])
        .arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl PgServer {
    /// A new cluster, started, with an empty database `hub` owned by `typist`.
    pub fn start() -> PgServer {
        let bin = bin_dir();
        let dir = tempfile::tempdir().unwrap();
        // PostgreSQL's user must reach its folder inside the test's.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().join("pg");
        std::fs::create_dir(&home).unwrap();
        if is_root() {
            let chown = Command::new("chown")
                .arg(format!("{}:{}", UNPRIVILEGED.0, UNPRIVILEGED.1))
                .arg(&home)
                .output()
                .unwrap();
            assert!(
                chown.status.success(),
                "chown {}: {chown:?}",
                home.display()
            );
        }
        let data = home.join("data");
        let init = as_postgres_user(&bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", "typist", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .args(["--no-instructions"])
            .output()
            .unwrap();
        assert!(
            init.status.success(),
            "initdb failed: {}{}",
            String::from_utf8_lossy(&init.stdout),
            String::from_utf8_lossy(&init.stderr)
        );
        // A port taken between the look and the start: another try on another port.
        let mut why = String::new();
        for _ in 0..3 {
            let port = free_port();
            let log = dir.path().join(format!("postgres-{port}.log"));
            let mut child = as_postgres_user(&bin.join("postgres"))
                .arg("-D")
                .arg(&data)
                .arg("-k")
                .arg(&home)
                .args(["-p", &port.to_string()])
                .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .unwrap();
            match wait_ready(&mut child, &log) {
                Ok(()) => {
                    let server = PgServer {
                        child,
                        dir,
                        port,
                        url: format!("postgres://typist@127.0.0.1:{port}/hub"),
                    };
                    server.create_database(&bin);
                    return server;
                }
                Err(e) => {
                    why = e;
                    stop(&mut child);
                }
            }
        }
        panic!("PostgreSQL did not start: {why}");
    }

    fn create_database(&self, bin: &Path) {
        let o = Command::new(bin.join("createdb"))
            .arg("-h")
            .arg(self.dir.path().join("pg"))
            .args(["-p", &self.port.to_string(), "-U", "typist", "hub"])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "createdb: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// The URL of the database over the Unix socket.
    pub fn socket_url(&self) -> String {
        format!(
            "postgres://typist@/hub?host={}&port={}",
            self.dir.path().join("pg").display(),
            self.port
        )
    }

    /// The first column of `sql`'s rows, as text, read by a client of the test's own.
    pub fn column(&self, sql: &str) -> Vec<String> {
        let mut c = postgres::Client::connect(&self.url, postgres::NoTls).unwrap();
        c.simple_query(sql)
            .unwrap()
            .into_iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("").to_string()),
                _ => None,
            })
            .collect()
    }
}

/// Waits for the server's log to say it accepts connections.
fn wait_ready(child: &mut Child, log: &Path) -> Result<(), String> {
    let deadline = Instant::now() + START_WAIT;
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains("database system is ready to accept connections") {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("postgres exited ({status}): {text}"));
        }
        if Instant::now() > deadline {
            return Err(format!("not ready in {} s: {text}", START_WAIT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A fast shutdown (SIGINT), then SIGKILL if it does not end in time.
fn stop(child: &mut Child) {
    if child.try_wait().ok().flatten().is_some() {
        return;
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + STOP_WAIT;
    while Instant::now() < deadline {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for PgServer {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}
