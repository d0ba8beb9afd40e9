//! What a server sends that is not an answer: notifications and (already answered)
//! server→client requests, handed to the editor in arrival order.

use serde_json::Value;

/// Something the server sent that is not an answer, in arrival order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Notification {
        method: String,
        params: Value,
    },
    /// A server→client request; it has already been answered.
    Request {
        method: String,
        params: Value,
    },
}
