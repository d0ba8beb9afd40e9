//! typist: a headless IDE driver that replays typing into language servers and AI
//! coding assistants over LSP, captures what they suggest, and scores it.
//!
//! Layers (each uses only those listed before it): [`lsp`] → [`editor`] → `main.rs`;
//! [`score`] stands alone. See `ARCHITECTURE.md`.

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
pub mod lang;
pub mod lsp;
pub mod replay;
pub mod report;
pub mod score;
pub mod secrets;
pub mod service;
