//! The service's database: SQLite in a file of the data folder by default (nothing to
//! start), PostgreSQL when `typist serve --db URL` names one. One schema for both, made by
//! versioned migrations run at start (`migrations` records each one applied), and one
//! text per statement (`sql.rs` writes it out in each engine's words). API tokens are kept
//! as their sha256, never as given; submissions are the job queue (their `state`), with
//! their progress, attempts, error in words and result. A queued job is taken by one
//! service only, and a job left running is queued again only when no live service holds
//! it (PostgreSQL's row and advisory locks; SQLite has one service per file).

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::db_postgres::Postgres;
use super::db_sqlite::Sqlite;
use super::sql::{Arg, Dialect, Row};

/// The schema, one step per version; a step is never edited once released, only added.
/// Written once for both engines (`{word}`s: `sql::Dialect::sql`).
pub const MIGRATIONS: &[&str] = &[
    // 1: tokens and submissions.
    "CREATE TABLE tokens (
        id {id},
        name TEXT NOT NULL UNIQUE,
        sha256 TEXT NOT NULL UNIQUE,
        admin {bool} NOT NULL DEFAULT {false},
        created TEXT NOT NULL
    );
    CREATE TABLE submissions (
        id {id},
        token_id {int} NOT NULL REFERENCES tokens(id),
        name TEXT NOT NULL,
        benchmark TEXT NOT NULL,
        spec TEXT NOT NULL,
        state TEXT NOT NULL,
        done {int} NOT NULL DEFAULT 0,
        total {int} NOT NULL DEFAULT 0,
        attempts {int} NOT NULL DEFAULT 0,
        error TEXT,
        result TEXT,
        created TEXT NOT NULL,
        started TEXT,
        finished TEXT
    );
    CREATE INDEX submissions_state ON submissions(state, id);",
];

/// The one lock a migrating service holds on PostgreSQL (two services starting at once
/// migrate one after the other); a pair of keys, apart from the jobs' single keys.
const MIGRATION_LOCK: (i32, i32) = (46, 1);

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

/// Where the service's database is: the engine and its connection.
enum Engine {
    Sqlite(Sqlite),
    Postgres(Postgres),
}

pub struct Db {
    engine: Engine,
}

/// Now, in RFC 3339 (UTC, seconds).
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// A submission's row, its columns in the order of `select`'s.
fn submission_of(r: &Row) -> Result<Submission> {
    let json = |i: usize| -> Result<Option<serde_json::Value>> {
        Ok(r.opt_text(i)?.and_then(|s| serde_json::from_str(&s).ok()))
    };
    Ok(Submission {
        id: r.int(0)?,
        name: r.text(1)?,
        benchmark: r.text(2)?,
        by: r.text(3)?,
        token_id: r.int(4)?,
        spec: json(5)?.unwrap_or_default(),
        state: r.text(6)?,
        progress: Progress {
            done: r.int(7)?,
            total: r.int(8)?,
        },
        attempts: r.int(9)?,
        error: r.opt_text(10)?,
        result: json(11)?,
        created: r.text(12)?,
        started: r.opt_text(13)?,
        finished: r.opt_text(14)?,
    })
}

impl Db {
    /// Opens (or makes) the SQLite database at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Db> {
        let db = Db {
            engine: Engine::Sqlite(Sqlite::open(path)?),
        };
        db.migrate()
            .with_context(|| format!("migrating {}", path.display()))?;
        Ok(db)
    }

    /// Connects to the PostgreSQL database `url` names (`postgres://USER@HOST:PORT/DB`)
    /// and brings its schema up to date.
    pub fn connect(url: &str) -> Result<Db> {
        let pg = Postgres::connect(url)?;
        let db = Db {
            engine: Engine::Postgres(pg),
        };
        db.migrate()
            .with_context(|| format!("migrating {}", super::db_postgres::hide_password(url)))?;
        Ok(db)
    }

    pub fn dialect(&self) -> Dialect {
        match self.engine {
            Engine::Sqlite(_) => Dialect::Sqlite,
            Engine::Postgres(_) => Dialect::Postgres,
        }
    }

    /// The rows `template` answers (`sql.rs`: one text for both engines).
    fn query(&self, template: &str, args: &[Arg]) -> Result<Vec<Row>> {
        let sql = self.dialect().sql(template);
        match &self.engine {
            Engine::Sqlite(e) => e.query(&sql, args),
            Engine::Postgres(e) => e.query(&sql, args),
        }
    }

    /// Runs `template`; the rows it changed.
    fn execute(&self, template: &str, args: &[Arg]) -> Result<u64> {
        let sql = self.dialect().sql(template);
        match &self.engine {
            Engine::Sqlite(e) => e.execute(&sql, args),
            Engine::Postgres(e) => e.execute(&sql, args),
        }
    }

    /// The versions of the schema applied, in order.
    pub fn migrations(&self) -> Result<Vec<i64>> {
        self.query("SELECT version FROM migrations ORDER BY version", &[])?
            .iter()
            .map(|r| r.int(0))
            .collect()
    }

    /// Applies every migration not yet applied, each in its own transaction (on
    /// PostgreSQL under a lock, so two services starting at once apply each once).
    fn migrate(&self) -> Result<()> {
        let postgres = self.dialect() == Dialect::Postgres;
        let (a, b) = MIGRATION_LOCK;
        if postgres {
            self.execute(&format!("SELECT pg_advisory_lock({a}, {b})"), &[])?;
        }
        let applied = self.migrate_locked();
        if postgres {
            self.execute(&format!("SELECT pg_advisory_unlock({a}, {b})"), &[])?;
        }
        applied
    }

    fn migrate_locked(&self) -> Result<()> {
        self.execute(
            "CREATE TABLE IF NOT EXISTS migrations (version {int} PRIMARY KEY, applied TEXT NOT NULL)",
            &[],
        )?;
        let have = self
            .query("SELECT COALESCE(MAX(version), 0) FROM migrations", &[])?
            .first()
            .map(|r| r.int(0))
            .transpose()?
            .unwrap_or(0);
        for (i, step) in MIGRATIONS.iter().enumerate() {
            let version = i as i64 + 1;
            if version <= have {
                continue;
            }
            // The version and time are typist's own digits: written into the text, the
            // step and its record are one batch, in one transaction.
            let batch = format!(
                "{};\nINSERT INTO migrations (version, applied) VALUES ({version}, '{}');",
                self.dialect().sql(step).trim_end().trim_end_matches(';'),
                now()
            );
            match &self.engine {
                Engine::Sqlite(e) => e.batch_in_transaction(&batch),
                Engine::Postgres(e) => e.batch_in_transaction(&batch),
            }
            .with_context(|| format!("migration {version}"))?;
        }
        Ok(())
    }

    /// Adds a token called `name` (its sha256 kept); an existing name is refused.
    pub fn add_token(&self, name: &str, token: &str, admin: bool) -> Result<()> {
        let taken = self.query("SELECT 1 FROM tokens WHERE name = $1", &[name.into()])?;
        if !taken.is_empty() {
            bail!("a token named {name:?} exists already: choose another name");
        }
        self.execute(
            "INSERT INTO tokens (name, sha256, admin, created) VALUES ($1, $2, $3, $4)",
            &[
                name.into(),
                crate::digest::sha256_hex(token.as_bytes()).into(),
                admin.into(),
                now().into(),
            ],
        )?;
        Ok(())
    }

    /// The caller a bearer token names, if any.
    pub fn caller(&self, token: &str) -> Result<Option<Caller>> {
        let sha = crate::digest::sha256_hex(token.as_bytes());
        self.query(
            "SELECT id, name, admin FROM tokens WHERE sha256 = $1",
            &[sha.into()],
        )?
        .first()
        .map(|r| {
            Ok(Caller {
                id: r.int(0)?,
                name: r.text(1)?,
                admin: r.bool(2)?,
            })
        })
        .transpose()
    }

    /// Token `id`'s holder and the sha256 it is kept as (a web session is signed for
    /// it: a token removed or made again ends its sessions).
    pub fn token(&self, id: i64) -> Result<Option<(Caller, String)>> {
        self.query(
            "SELECT id, name, admin, sha256 FROM tokens WHERE id = $1",
            &[id.into()],
        )?
        .first()
        .map(|r| {
            Ok((
                Caller {
                    id: r.int(0)?,
                    name: r.text(1)?,
                    admin: r.bool(2)?,
                },
                r.text(3)?,
            ))
        })
        .transpose()
    }

    /// Queues a submission; its id.
    pub fn submit(
        &self,
        caller: &Caller,
        name: &str,
        benchmark: &str,
        spec: &serde_json::Value,
    ) -> Result<i64> {
        let rows = self.query(
            "INSERT INTO submissions (token_id, name, benchmark, spec, state, created)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            &[
                caller.id.into(),
                name.into(),
                benchmark.into(),
                spec.to_string().into(),
                QUEUED.into(),
                now().into(),
            ],
        )?;
        match rows.first() {
            Some(r) => r.int(0),
            None => bail!("the database gave the new submission no id"),
        }
    }

    pub fn submission(&self, id: i64) -> Result<Option<Submission>> {
        Ok(self
            .select("WHERE s.id = $1", &[id.into()])?
            .into_iter()
            .next())
    }

    /// Every submission, in order of submission.
    pub fn submissions(&self) -> Result<Vec<Submission>> {
        self.select("", &[])
    }

    fn select(&self, filter: &str, args: &[Arg]) -> Result<Vec<Submission>> {
        let sql = format!(
            "SELECT s.id, s.name, s.benchmark, t.name, s.token_id, s.spec, s.state, s.done,
                    s.total, s.attempts, s.error, s.result, s.created, s.started, s.finished
             FROM submissions s JOIN tokens t ON t.id = s.token_id {filter} ORDER BY s.id"
        );
        self.query(&sql, args)?.iter().map(submission_of).collect()
    }

    /// Takes the oldest queued submission for a worker: now `running`, one attempt more.
    /// One statement: of two services taking at once, each takes another job (on
    /// PostgreSQL the other's row is skipped, and the job's lock is held by this
    /// service's connection until the job ends).
    pub fn take_queued(&self) -> Result<Option<Submission>> {
        let taken = self.query(
            "UPDATE submissions SET state = $1, attempts = attempts + 1,
                    started = COALESCE(started, $2), error = NULL
             WHERE id = (SELECT id FROM submissions WHERE state = $3
                         ORDER BY id LIMIT 1{skip_locked})
               AND state = $3
             RETURNING id{lock_job}",
            &[RUNNING.into(), now().into(), QUEUED.into()],
        )?;
        match taken.first() {
            Some(r) => self.submission(r.int(0)?),
            None => Ok(None),
        }
    }

    /// Jobs left `running` by a service that stopped (killed, a power cut): queued again,
    /// to resume where their records end, the interrupted attempt not counted (it was
    /// the service's stop, not the job's failure). On PostgreSQL only those whose lock
    /// no live service holds: another service's running jobs stay its own. Their number.
    pub fn requeue_running(&self) -> Result<usize> {
        let n = self.execute(
            "UPDATE submissions SET state = $1,
                    attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END
             WHERE state = $2{unlocked_job}",
            &[QUEUED.into(), RUNNING.into()],
        )?;
        Ok(n as usize)
    }

    /// The job ended (or went back to the queue): its lock let go, on PostgreSQL.
    fn release(&self, id: i64) -> Result<()> {
        if self.dialect() == Dialect::Postgres {
            self.execute("SELECT pg_advisory_unlock($1)", &[id.into()])?;
        }
        Ok(())
    }

    pub fn progress(&self, id: i64, done: i64, total: i64) -> Result<()> {
        self.execute(
            "UPDATE submissions SET done = $1, total = $2 WHERE id = $3",
            &[done.into(), total.into(), id.into()],
        )?;
        Ok(())
    }

    /// Back in the queue after a failed attempt (`why` kept until the next one).
    pub fn retry(&self, id: i64, why: &str) -> Result<()> {
        self.execute(
            "UPDATE submissions SET state = $1, error = $2 WHERE id = $3",
            &[QUEUED.into(), why.into(), id.into()],
        )?;
        self.release(id)
    }

    pub fn fail(&self, id: i64, why: &str) -> Result<()> {
        self.execute(
            "UPDATE submissions SET state = $1, error = $2, finished = $3 WHERE id = $4",
            &[FAILED.into(), why.into(), now().into(), id.into()],
        )?;
        self.release(id)
    }

    pub fn finish(&self, id: i64, result: &serde_json::Value) -> Result<()> {
        self.execute(
            "UPDATE submissions SET state = $1, result = $2, error = NULL, finished = $3
             WHERE id = $4",
            &[
                DONE.into(),
                result.to_string().into(),
                now().into(),
                id.into(),
            ],
        )?;
        self.release(id)
    }
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
        assert_eq!(db.migrations().unwrap(), vec![1]);
        drop(db);
        let db = Db::open(&dir.path().join("hub.sqlite")).unwrap();
        assert_eq!(db.submissions().unwrap().len(), 2);
        assert_eq!(db.migrations().unwrap(), vec![1]);
    }

    /// SQLite's schema is the one its first release made (a database made then is the
    /// same as one made now): the shared text written out in SQLite's words.
    #[test]
    fn sqlite_reads_the_shared_migrations_as_released() {
        let released = "CREATE TABLE tokens (
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
    CREATE INDEX submissions_state ON submissions(state, id);";
        assert_eq!(Dialect::Sqlite.sql(MIGRATIONS[0]), released);
        for step in MIGRATIONS {
            for d in [Dialect::Sqlite, Dialect::Postgres] {
                assert!(!d.sql(step).contains('{'), "{d:?}: {step}");
            }
        }
    }
}
