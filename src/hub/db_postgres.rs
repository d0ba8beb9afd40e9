//! The service's database in PostgreSQL (`typist serve --db postgres://…`), through the
//! synchronous `postgres` client. That client runs a runtime of its own and panics when
//! called on a thread of the service's tokio runtime, so its connection lives on a thread
//! of its own: each call is sent there and its answer waited for, as a call into SQLite
//! waits for SQLite. No TLS yet: `sslmode=require` is refused, saying so. Statements in
//! PostgreSQL's words (`sql::Dialect::Postgres`); what the tables are is `db.rs`'s.

use std::error::Error as _;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use postgres::types::{ToSql, Type};
use postgres::{Client, Config, NoTls};

use super::sql::{Arg, Cell, Row};

/// How long a connection is tried unless the URL's `connect_timeout` says.
const CONNECT_WAIT: Duration = Duration::from_secs(10);
/// How long a statement's answer is waited for (a lock held by another service, a
/// server that stopped answering) before the call is an error.
const ANSWER_WAIT: Duration = Duration::from_secs(120);

type Call = Box<dyn FnOnce(&mut Client) + Send>;

/// A connection to PostgreSQL on a thread of its own.
pub struct Postgres {
    /// Where (the URL with its password hidden), for errors.
    url: String,
    calls: Option<mpsc::Sender<Call>>,
    thread: Option<JoinHandle<()>>,
}

/// `url` with its password (`user:PASSWORD@`) hidden.
pub fn hide_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{path}")
        }
        _ => url.to_string(),
    }
}

/// An error of the client in one line: its kind and every cause below it.
fn said(e: &postgres::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

/// Whether `url` is a PostgreSQL URL typist can connect with (read, not connected to).
pub fn check_url(url: &str) -> Result<()> {
    config(url).map(|_| ())
}

/// The URL read and checked, before any connection.
fn config(url: &str) -> Result<Config> {
    let shown = hide_password(url);
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        bail!(
            "{shown} is not a PostgreSQL URL: give postgres://USER@HOST:PORT/DATABASE \
             (without a URL the service keeps SQLite in its data folder)"
        );
    }
    let mut config: Config = url.parse().map_err(|e| {
        anyhow!(
            "cannot read the PostgreSQL URL {shown}: {}; give postgres://USER@HOST:PORT/DATABASE",
            said(&e)
        )
    })?;
    if config.get_ssl_mode() == postgres::config::SslMode::Require {
        bail!(
            "{shown} asks for TLS (sslmode=require), which typist does not support yet: \
             reach the server over 127.0.0.1 or a Unix socket with sslmode=disable"
        );
    }
    if config.get_hosts().is_empty() {
        bail!(
            "{shown} names no host: give postgres://USER@HOST:PORT/DATABASE, or \
             ?host=/path/of/the/socket/folder for a Unix socket"
        );
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_WAIT);
    }
    // The password is hidden wherever typist prints (logs, errors).
    if let Some(p) = config.get_password() {
        crate::secrets::register(&String::from_utf8_lossy(p));
    }
    Ok(config)
}

fn cell(row: &postgres::Row, i: usize) -> Result<Cell, postgres::Error> {
    let ty = row.columns()[i].type_();
    Ok(if *ty == Type::INT8 {
        row.try_get::<_, Option<i64>>(i)?
            .map_or(Cell::Null, Cell::Int)
    } else if *ty == Type::INT4 {
        row.try_get::<_, Option<i32>>(i)?
            .map_or(Cell::Null, |v| Cell::Int(v.into()))
    } else if *ty == Type::BOOL {
        row.try_get::<_, Option<bool>>(i)?
            .map_or(Cell::Null, Cell::Bool)
    } else if *ty == Type::VOID {
        Cell::Null
    } else {
        row.try_get::<_, Option<String>>(i)?
            .map_or(Cell::Null, Cell::Text)
    })
}

/// The arguments as the client takes them.
fn params(args: &[Arg]) -> Vec<Box<dyn ToSql + Sync + Send>> {
    args.iter()
        .map(|a| -> Box<dyn ToSql + Sync + Send> {
            match a {
                Arg::Int(v) => Box::new(*v),
                Arg::Text(v) => Box::new(v.clone()),
                Arg::Bool(v) => Box::new(*v),
            }
        })
        .collect()
}

fn refs(p: &[Box<dyn ToSql + Sync + Send>]) -> Vec<&(dyn ToSql + Sync)> {
    p.iter()
        .map(|b| b.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

impl Postgres {
    /// Connects to the database `url` names (`postgres://USER@HOST:PORT/DATABASE`).
    pub fn connect(url: &str) -> Result<Postgres> {
        let config = config(url)?;
        let shown = hide_password(url);
        let (calls, inbox) = mpsc::channel::<Call>();
        let (ready, connected) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("typist-postgres".into())
            .spawn(move || {
                let mut client = match config.connect(NoTls) {
                    Ok(c) => {
                        let _ = ready.send(Ok(()));
                        c
                    }
                    Err(e) => {
                        let _ = ready.send(Err(said(&e)));
                        return;
                    }
                };
                for call in inbox {
                    call(&mut client);
                }
            })
            .map_err(|e| anyhow!("cannot start the database's thread: {e}"))?;
        match connected.recv() {
            Ok(Ok(())) => Ok(Postgres {
                url: shown,
                calls: Some(calls),
                thread: Some(thread),
            }),
            Ok(Err(why)) => bail!(
                "cannot connect to {shown}: {why}; is the server running, and do the URL's \
                 host, port, user and database name it?"
            ),
            Err(_) => bail!("cannot connect to {shown}: the connection's thread stopped"),
        }
    }

    /// Runs `f` on the connection's thread; its answer.
    fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error> + Send + 'static,
    ) -> Result<T> {
        let (reply, answer) = mpsc::sync_channel(1);
        let gone = || anyhow!("the connection to {} has stopped", self.url);
        self.calls
            .as_ref()
            .ok_or_else(gone)?
            .send(Box::new(move |c| {
                let _ = reply.send(f(c));
            }))
            .map_err(|_| gone())?;
        match answer.recv_timeout(ANSWER_WAIT) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => bail!("{}: {}", self.url, said(&e)),
            Err(mpsc::RecvTimeoutError::Timeout) => bail!(
                "{} did not answer in {} s: is the server overloaded, or a lock held?",
                self.url,
                ANSWER_WAIT.as_secs()
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(gone()),
        }
    }

    /// The rows `sql` answers.
    pub fn query(&self, sql: &str, args: &[Arg]) -> Result<Vec<Row>> {
        let (sql, args) = (sql.to_string(), args.to_vec());
        self.call(move |c| {
            let p = params(&args);
            c.query(sql.as_str(), &refs(&p))?
                .iter()
                .map(|r| (0..r.len()).map(|i| cell(r, i)).collect())
                .map(|cells: Result<Vec<Cell>, _>| cells.map(Row))
                .collect()
        })
    }

    /// Runs `sql`; the rows it changed.
    pub fn execute(&self, sql: &str, args: &[Arg]) -> Result<u64> {
        let (sql, args) = (sql.to_string(), args.to_vec());
        self.call(move |c| {
            let p = params(&args);
            c.execute(sql.as_str(), &refs(&p))
        })
    }

    /// Runs the statements of `sql` in one transaction: all of them, or none.
    pub fn batch_in_transaction(&self, sql: &str) -> Result<()> {
        let sql = sql.to_string();
        self.call(move |c| {
            let mut tx = c.transaction()?;
            tx.batch_execute(&sql)?;
            tx.commit()
        })
    }
}

impl Drop for Postgres {
    /// Closes the connection (its thread ends when no call can come).
    fn drop(&mut self) {
        self.calls.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_checked_before_any_connection_and_its_password_never_shown() {
        assert_eq!(
            hide_password("postgres://typist:s3cret-pw@127.0.0.1:5432/hub?sslmode=disable"),
            "postgres://typist:***@127.0.0.1:5432/hub?sslmode=disable"
        );
        assert_eq!(
            hide_password("postgres://typist@127.0.0.1/hub"),
            "postgres://typist@127.0.0.1/hub"
        );
        let e = |url: &str| format!("{:#}", Postgres::connect(url).err().unwrap());
        assert!(e("mysql://x@h/db").contains("not a PostgreSQL URL"));
        assert!(e("postgres://x@h:notaport/db").contains("cannot read the PostgreSQL URL"));
        let tls = e("postgres://u:pw-hidden-1@127.0.0.1/db?sslmode=require");
        assert!(tls.contains("does not support yet"), "{tls}");
        assert!(!tls.contains("pw-hidden-1"), "{tls}");
        assert!(e("postgres:///db").contains("names no host"));
    }

    #[test]
    fn a_server_not_there_is_an_error_saying_what_to_check() {
        // A port nothing listens on: bound, then let go.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("postgres://typist@127.0.0.1:{port}/hub");
        let e = format!("{:#}", Postgres::connect(&url).err().unwrap());
        assert!(e.starts_with(&format!("cannot connect to {url}: ")), "{e}");
        assert!(e.contains("is the server running"), "{e}");
    }
}
