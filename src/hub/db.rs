//! The service's database: SQLite in a file of the data folder (nothing to start), one
//! schema made by versioned migrations run at start (`migrations` records each one
//! applied). API tokens are kept as their sha256, never as given; submissions are the
//! job queue (their `state`), with their progress, attempts, error in words and result.

use std::path::Path;
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

/// The schema, one step per version; a step is never edited once released, only added.
const MIGRATIONS: &[&str] = &[
    // 1: tokens and submissions.
    "CREATE TABLE tokens (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        sha256 TEXT NOT NULL UNIQUE,
        admin INTEGER NOT NULL DEFAULT 0,
        created TEXT NOT NULL
    );
    CREATE TABLE submissions (
        id INTEGER PRIMARY KEY,
        token_id INTEGER NOT NULL REFERENCES tokens(id),
        name TEXT NOT NULL,
        benchmark TEXT NOT NULL,
        spec TEXT NOT NULL,
        state TEXT NOT NULL,
        done INTEGER NOT NULL DEFAULT 0,
        total INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        result TEXT,
        created TEXT NOT NULL,
        started TEXT,
        finished TEXT
    );
    CREATE INDEX submissions_state ON submissions(state, id);",
];

/// A job's state: `queued` (waiting for a worker), `running`, `done`, `failed`.
pub const QUEUED: &str = "queued";
pub const RUNNING: &str = "running";
pub const DONE: &str = "done";
pub const FAILED: &str = "failed";

/// Who called: a token's id, name and role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub id: i64,
    pub name: String,
    pub admin: bool,
}

/// One submission as the API shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Submission {
    pub id: i64,
    pub name: String,
    pub benchmark: String,
    /// Who submitted it (the token's name).
    pub by: String,
    #[serde(skip)]
    pub token_id: i64,
    /// What is measured: the submission's JSON as accepted.
    pub spec: serde_json::Value,
    pub state: String,
    pub progress: Progress,
    pub attempts: i64,
    pub error: Option<String>,
    /// The submission's figures once done (its `score.json` entry).
    pub result: Option<serde_json::Value>,
    pub created: String,
    pub started: Option<String>,
    pub finished: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Progress {
    /// Records written.
    pub done: i64,
    /// Records the job writes in all (cases × passes).
    pub total: i64,
}

pub struct Db {
    conn: Mutex<Connection>,
}

/// Now, in RFC 3339 (UTC, seconds).
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

impl Db {
    /// Opens (or makes) the database at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Db> {
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open the database {}", path.display()))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        migrate(&conn).with_context(|| format!("migrating {}", path.display()))?;
        Ok(Db {
            conn: Mutex::new(conn),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| anyhow::anyhow!("the database lock was poisoned"))?;
        Ok(f(&conn)?)
    }

    /// Adds a token called `name` (its sha256 kept); an existing name is refused.
    pub fn add_token(&self, name: &str, token: &str, admin: bool) -> Result<()> {
        let taken = self.with(|c| {
            c.query_row("SELECT 1 FROM tokens WHERE name = ?1", [name], |_| Ok(()))
                .optional()
        })?;
        if taken.is_some() {
            bail!("a token named {name:?} exists already: choose another name");
        }
        self.with(|c| {
            c.execute(
                "INSERT INTO tokens (name, sha256, admin, created) VALUES (?1, ?2, ?3, ?4)",
                params![
                    name,
                    crate::digest::sha256_hex(token.as_bytes()),
                    admin,
                    now()
                ],
            )
        })?;
        Ok(())
    }

    /// The caller a bearer token names, if any.
    pub fn caller(&self, token: &str) -> Result<Option<Caller>> {
        let sha = crate::digest::sha256_hex(token.as_bytes());
        self.with(|c| {
            c.query_row(
                "SELECT id, name, admin FROM tokens WHERE sha256 = ?1",
                [sha],
                |r| {
                    Ok(Caller {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        admin: r.get(2)?,
                    })
                },
            )
            .optional()
        })
    }

    /// Token `id`'s holder and the sha256 it is kept as (a web session is signed for
    /// it: a token removed or made again ends its sessions).
    pub fn token(&self, id: i64) -> Result<Option<(Caller, String)>> {
        self.with(|c| {
            c.query_row(
                "SELECT id, name, admin, sha256 FROM tokens WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        Caller {
                            id: r.get(0)?,
                            name: r.get(1)?,
                            admin: r.get(2)?,
                        },
                        r.get(3)?,
                    ))
                },
            )
            .optional()
        })
    }

    /// Queues a submission; its id.
    pub fn submit(
        &self,
        caller: &Caller,
        name: &str,
        benchmark: &str,
        spec: &serde_json::Value,
    ) -> Result<i64> {
        self.with(|c| {
            c.execute(
                "INSERT INTO submissions (token_id, name, benchmark, spec, state, created)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![caller.id, name, benchmark, spec.to_string(), QUEUED, now()],
            )?;
            Ok(c.last_insert_rowid())
        })
    }

    pub fn submission(&self, id: i64) -> Result<Option<Submission>> {
        Ok(self
            .select("WHERE s.id = ?1", params![id])?
            .into_iter()
            .next())
    }

    /// Every submission, in order of submission.
    pub fn submissions(&self) -> Result<Vec<Submission>> {
        self.select("", params![])
    }

    fn select(&self, filter: &str, args: impl rusqlite::Params) -> Result<Vec<Submission>> {
        let sql = format!(
            "SELECT s.id, s.name, s.benchmark, t.name, s.token_id, s.spec, s.state, s.done,
                    s.total, s.attempts, s.error, s.result, s.created, s.started, s.finished
             FROM submissions s JOIN tokens t ON t.id = s.token_id {filter} ORDER BY s.id"
        );
        self.with(|c| {
            let mut st = c.prepare(&sql)?;
            let rows = st.query_map(args, |r| {
                let json = |i: usize| -> rusqlite::Result<Option<serde_json::Value>> {
                    let s: Option<String> = r.get(i)?;
                    Ok(s.and_then(|s| serde_json::from_str(&s).ok()))
                };
                Ok(Submission {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    benchmark: r.get(2)?,
                    by: r.get(3)?,
                    token_id: r.get(4)?,
                    spec: json(5)?.unwrap_or_default(),
                    state: r.get(6)?,
                    progress: Progress {
                        done: r.get(7)?,
                        total: r.get(8)?,
                    },
                    attempts: r.get(9)?,
                    error: r.get(10)?,
                    result: json(11)?,
                    created: r.get(12)?,
                    started: r.get(13)?,
                    finished: r.get(14)?,
                })
            })?;
            rows.collect()
        })
    }

    /// Takes the oldest queued submission for a worker: now `running`, one attempt more.
    pub fn take_queued(&self) -> Result<Option<Submission>> {
        let id: Option<i64> = self.with(|c| {
            let tx = c.unchecked_transaction()?;
            let id: Option<i64> = tx
                .query_row(
                    "SELECT id FROM submissions WHERE state = ?1 ORDER BY id LIMIT 1",
                    [QUEUED],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(id) = id {
                tx.execute(
                    "UPDATE submissions SET state = ?1, attempts = attempts + 1,
                     started = COALESCE(started, ?2), error = NULL WHERE id = ?3 AND state = ?4",
                    params![RUNNING, now(), id, QUEUED],
                )?;
            }
            tx.commit()?;
            Ok(id)
        })?;
        match id {
            Some(id) => self.submission(id),
            None => Ok(None),
        }
    }

    /// Jobs left `running` by a service that stopped (killed, a power cut): queued again,
    /// to resume where their records end, the interrupted attempt not counted (it was
    /// the service's stop, not the job's failure). Their number.
    pub fn requeue_running(&self) -> Result<usize> {
        self.with(|c| {
            c.execute(
                "UPDATE submissions SET state = ?1, attempts = MAX(attempts - 1, 0)
                 WHERE state = ?2",
                params![QUEUED, RUNNING],
            )
        })
    }

    pub fn progress(&self, id: i64, done: i64, total: i64) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE submissions SET done = ?1, total = ?2 WHERE id = ?3",
                params![done, total, id],
            )
        })?;
        Ok(())
    }

    /// Back in the queue after a failed attempt (`why` kept until the next one).
    pub fn retry(&self, id: i64, why: &str) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE submissions SET state = ?1, error = ?2 WHERE id = ?3",
                params![QUEUED, why, id],
            )
        })?;
        Ok(())
    }

    pub fn fail(&self, id: i64, why: &str) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE submissions SET state = ?1, error = ?2, finished = ?3 WHERE id = ?4",
                params![FAILED, why, now(), id],
            )
        })?;
        Ok(())
    }

    pub fn finish(&self, id: i64, result: &serde_json::Value) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE submissions SET state = ?1, result = ?2, error = NULL, finished = ?3
                 WHERE id = ?4",
                params![DONE, result.to_string(), now(), id],
            )
        })?;
        Ok(())
    }
}

/// Applies every migration not yet applied, each in its own transaction.
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)",
    )?;
    let have: i64 = conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM migrations",
        [],
        |r| r.get(0),
    )?;
    for (i, step) in MIGRATIONS.iter().enumerate() {
        let version = i as i64 + 1;
        if version <= have {
            continue;
        }
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(step)?;
        tx.execute(
            "INSERT INTO migrations (version, applied) VALUES (?1, ?2)",
            params![version, now()],
        )?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_of_submissions_taken_in_order_and_requeued_after_a_stop() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("hub.sqlite")).unwrap();
        db.add_token("team-a", "secret-a", false).unwrap();
        assert!(db.add_token("team-a", "other", false).is_err());
        assert_eq!(db.caller("nope").unwrap(), None);
        let a = db.caller("secret-a").unwrap().unwrap();
        assert_eq!((a.name.as_str(), a.admin), ("team-a", false));
        let spec = serde_json::json!({"assistant": "typist-ngram"});
        let one = db.submit(&a, "first", "default", &spec).unwrap();
        let two = db.submit(&a, "second", "default", &spec).unwrap();
        let took = db.take_queued().unwrap().unwrap();
        assert_eq!(
            (took.id, took.state.as_str(), took.attempts),
            (one, RUNNING, 1)
        );
        // The service stops: the running job is queued again, and taken first.
        assert_eq!(db.requeue_running().unwrap(), 1);
        let again = db.take_queued().unwrap().unwrap();
        assert_eq!((again.id, again.attempts), (one, 1));
        db.finish(one, &serde_json::json!({"x": 1})).unwrap();
        let next = db.take_queued().unwrap().unwrap();
        assert_eq!(next.id, two);
        db.fail(two, "the run failed").unwrap();
        let all = db.submissions().unwrap();
        assert_eq!(all[0].state, DONE);
        assert_eq!(all[0].result, Some(serde_json::json!({"x": 1})));
        assert_eq!(all[1].error.as_deref(), Some("the run failed"));
        assert_eq!(all[1].by, "team-a");
        // Opened again: the migrations are not run twice.
        drop(db);
        let db = Db::open(&dir.path().join("hub.sqlite")).unwrap();
        assert_eq!(db.submissions().unwrap().len(), 2);
    }
}
