//! typist: a headless IDE driver that replays typing into language servers and AI
//! coding assistants over LSP, captures what they suggest, and scores it.
//!
//! Layers, lowest first; a module uses only lower ones (`ARCHITECTURE.md`, kept by
//! `tests/suite/module_graph.rs`): the shared leaves ([`digest`], [`lang`], [`os`],
//! [`secrets`]); [`lsp`], [`dataset`], [`score`], the sign-in [`vault`] and Copilot's
//! sign-in files; [`editor`];
//! [`host`], [`service`] and `typist login`; [`replay`], [`doctor`]; [`report`],
//! [`config`], [`drill`], [`bench`]; the CLI in `main.rs`.

pub mod bench;
pub mod check;
pub mod config;
pub mod copilot;
pub mod dataset;
pub mod digest;
pub mod doctor;
pub mod drill;
pub mod editor;
pub mod host;
pub mod hub;
pub mod jail;
pub mod lang;
pub mod lines;
pub mod lsp;
pub mod os;
pub mod replay;
pub mod report;
pub mod sandbox;
pub mod score;
pub mod secrets;
pub mod service;
pub mod vault;
