//! The service's database in SQLite (`rusqlite`, the library built in): a file of the data
//! folder, nothing to start. Statements in SQLite's words (`sql::Dialect::Sqlite`), run
//! under one lock; what the tables are is `db.rs`'s.

use std::path::Path;
use std::sync::Mutex;

use anyhow::{Context, Result, anyhow};
use rusqlite::Connection;
use rusqlite::types::{Value, ValueRef};

use super::sql::{Arg, Cell, Row};

pub struct Sqlite {
    conn: Mutex<Connection>,
}

fn value(a: &Arg) -> Value {
    match a {
        Arg::Int(v) => Value::Integer(*v),
        Arg::Text(v) => Value::Text(v.clone()),
        Arg::Bool(v) => Value::Integer(i64::from(*v)),
    }
}

fn cell(i: usize, v: ValueRef<'_>) -> rusqlite::Result<Cell> {
    Ok(match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Text(t) => Cell::Text(
            String::from_utf8(t.to_vec())
                .map_err(|e| rusqlite::Error::Utf8Error(i, e.utf8_error()))?,
        ),
        ValueRef::Real(_) | ValueRef::Blob(_) => {
            return Err(rusqlite::Error::InvalidColumnType(
                i,
                "a number or text".into(),
                v.data_type(),
            ));
        }
    })
}

impl Sqlite {
    /// Opens (or makes) the database file at `path`.
    pub fn open(path: &Path) -> Result<Sqlite> {
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open the database {}", path.display()))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        Ok(Sqlite {
            conn: Mutex::new(conn),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| anyhow!("the database lock was poisoned"))?;
        Ok(f(&conn)?)
    }

    /// The rows `sql` answers.
    pub fn query(&self, sql: &str, args: &[Arg]) -> Result<Vec<Row>> {
        self.with(|c| {
            let mut st = c.prepare(sql)?;
            let n = st.column_count();
            let rows = st.query_map(rusqlite::params_from_iter(args.iter().map(value)), |r| {
                (0..n)
                    .map(|i| cell(i, r.get_ref(i)?))
                    .collect::<rusqlite::Result<Vec<Cell>>>()
                    .map(Row)
            })?;
            rows.collect()
        })
    }

    /// Runs `sql`; the rows it changed.
    pub fn execute(&self, sql: &str, args: &[Arg]) -> Result<u64> {
        self.with(|c| c.execute(sql, rusqlite::params_from_iter(args.iter().map(value))))
            .map(|n| n as u64)
    }

    /// Runs the statements of `sql` in one transaction: all of them, or none.
    pub fn batch_in_transaction(&self, sql: &str) -> Result<()> {
        self.with(|c| {
            let tx = c.unchecked_transaction()?;
            tx.execute_batch(sql)?;
            tx.commit()
        })
    }
}
