//! The integration tests, one binary (each test binary links the whole crate: one link
//! instead of seventeen keeps the suite's build short on two cores). One module per
//! subject; `tests/services.rs` stays a binary of its own.

#[path = "../common/mod.rs"]
mod common;

mod agents;
mod bad_input;
mod bench;
mod blocks;
mod compare;
mod completion;
mod completion_native;
mod connect;
mod copilot;
mod datasets;
mod drill;
mod edits;
mod fuzz;
mod golf;
mod help;
mod host;
mod hub;
mod module_graph;
mod neovim;
mod pg_server;
mod protocol;
mod ranking_fixtures;
mod readme;
mod real_servers;
mod record;
mod replay;
mod report;
mod sample;
mod sandbox;
mod score;
mod secrets;
mod serve_web;
mod signin_neovim;
mod signin_vscode;
mod slurm;
mod tests_after;
mod vscode;
