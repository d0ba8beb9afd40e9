//! `typist bench model`: the model server's limit under the replay. A [`Relay`] in
//! front of each model service records every HTTP request that reaches it during a
//! `typist run` (path, body, answer, when and how long); [`send_direct`] then sends
//! exactly those requests, in order, straight to a fresh server with the same settings,
//! with as many in flight as the run had jobs. [`Row`] holds what the table prints:
//! suggestions per hour through typist, requests per hour both ways and their ratio,
//! the server's own prompt and generation tokens per second (from llama.cpp's
//! `timings`), and how many direct answers differ from the captured ones.
//!
//! llama.cpp's `timings` are summed over the requests; answers are compared without ids,
//! times and `timings`.

mod answers;
mod captured;
mod direct;
mod relay;
mod table;
mod upstream;

#[cfg(test)]
mod tests;

pub use answers::{Timings, normalized};
pub use captured::Captured;
pub use direct::{Direct, send_direct};
pub use relay::Relay;
pub use table::{Row, table};
