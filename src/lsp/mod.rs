//! The `lsp` layer: a language-server client over any byte stream (a child's stdio, a
//! TCP or Unix socket: [`Transport`]). Owns framing, JSON-RPC ids, deadlines and
//! cancellation, the table of typed handlers server→client requests are answered from
//! (filled by the editor), ordered notifications, the child process and the transcript
//! tap. Knows nothing of editors, datasets or scoring: no editor policy (which answer a
//! server gets, whether to start or attach) lives here.

pub mod client;
mod connection;
mod error;
mod event;
pub mod framing;
pub mod handlers;
pub mod process;
pub mod stderr;
pub mod transcript;
pub mod transport;
pub mod uri;

pub use client::{Client, ClientOptions, ClientStats};
pub use error::LspError;
pub use event::Event;
pub use handlers::{Handlers, RpcError};
pub use process::ExitInfo;
pub use transport::{Address, Transport};
