//! Answers to server→client requests, registered by whoever drives the client (the
//! editor) as typed handlers: the `lsp` layer only looks a method up, decodes its
//! params, encodes the answer, and says "method not found" when nobody registered it.
//!
//! The table is keyed by `ls_types` request types.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::ls_types::request::Request;

/// JSON-RPC "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC "invalid params".
pub const INVALID_PARAMS: i64 = -32602;

/// A JSON-RPC error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

type Handler = Arc<dyn Fn(Value) -> Result<Value, RpcError> + Send + Sync>;

/// The server→client requests a client answers, by method.
#[derive(Clone, Default)]
pub struct Handlers {
    map: HashMap<&'static str, Handler>,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut methods: Vec<_> = self.map.keys().collect();
        methods.sort();
        f.debug_set().entries(methods).finish()
    }
}

impl Handlers {
    /// Answers `R` with `f` of its params, decoded strictly (params that do not decode
    /// are answered with "invalid params").
    pub fn on<R, F>(mut self, f: F) -> Self
    where
        R: Request,
        F: Fn(R::Params) -> Result<R::Result, RpcError> + Send + Sync + 'static,
    {
        let handler = move |params: Value| {
            let params = serde_json::from_value(params).map_err(|e| RpcError {
                code: INVALID_PARAMS,
                message: format!("invalid params for {}: {e}", R::METHOD),
            })?;
            Ok(serde_json::to_value(f(params)?).unwrap_or(Value::Null))
        };
        self.map.insert(R::METHOD, Arc::new(handler));
        self
    }

    /// Answers `R` with `f()` whatever its params say; they are not decoded (servers
    /// disagree on some spellings, `unregisterations`, and the answer does not need them).
    pub fn answer<R, F>(mut self, f: F) -> Self
    where
        R: Request,
        F: Fn() -> R::Result + Send + Sync + 'static,
    {
        let handler = move |_: Value| Ok(serde_json::to_value(f()).unwrap_or(Value::Null));
        self.map.insert(R::METHOD, Arc::new(handler));
        self
    }

    /// The answer to `method`: its handler's, or "method not found".
    pub fn answer_to(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        match self.map.get(method) {
            Some(h) => h(params),
            None => Err(RpcError {
                code: METHOD_NOT_FOUND,
                message: format!("method not found: {method}"),
            }),
        }
    }
}
