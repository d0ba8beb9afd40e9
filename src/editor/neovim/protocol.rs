//! The contract with `driver.lua`, typed both ways. Typist sends the [`Setup`] once
//! (the argument `driver.lua` is run with); `driver.lua` sends back notifications
//! ([`Note`]: a request Neovim sent, its answer with what was drawn, a cancellation,
//! the server's detach) and answers typist's calls (`typist.state`, `typist.ready`,
//! `typist.readiness`, `typist.popup`). What comes back is decoded with serde from the
//! msgpack value (converted to JSON); anything malformed is an error naming the
//! notification or call and the field ([`decode`]), never a default taken in silence.

use std::collections::BTreeMap;

use rmpv::Value as Mp;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::shown::Shown;

/// Neovim's inline-completion request.
pub(super) const INLINE: &str = "textDocument/inlineCompletion";
/// Neovim's completion request (its popup).
pub(super) const COMPLETION: &str = "textDocument/completion";

/// What `driver.lua` is run with: typist's channel, the server to start and how, the
/// namespaces and highlights read, and the user's folders the servers get back.
#[derive(Debug, Serialize)]
pub(super) struct Setup {
    /// Typist's RPC channel (notifications go there).
    pub chan: i64,
    /// The profile's name (the client's name).
    pub name: String,
    /// The server's command line; `None`: a plugin with no server.
    pub cmd: Option<Vec<String>>,
    pub cmd_env: BTreeMap<String, String>,
    pub root: String,
    pub settings: Value,
    pub init_options: Value,
    /// The extmark namespaces the ghost text is read from.
    pub namespaces: Vec<String>,
    /// The highlight groups read (empty: every chunk).
    pub highlights: Vec<String>,
    /// Neovim's own inline completion is turned on.
    pub inline: bool,
    /// Neovim's completion popup, if the profile's dialect uses it.
    pub popup: Option<PopupMode>,
    /// The LSP client's log file (in the session's folder).
    pub lsp_log: String,
    /// The user's folders, given back to the servers (`None`: unset).
    pub xdg_state_home: Option<String>,
    pub tmpdir: Option<String>,
    pub xdg_runtime_dir: Option<String>,
    /// The plugin's configuration file.
    pub config: Option<String>,
}

/// How Neovim's completion popup is asked for.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum PopupMode {
    /// Asked again as keys are typed while the list is incomplete (completion lists).
    Auto,
    /// Asked once per case, never on typed keys (lsp-ai).
    Manual,
}

impl Setup {
    /// The setup as the msgpack argument of `driver.lua`.
    pub fn to_mp(&self) -> Result<Mp, String> {
        serde_json::to_value(self)
            .map(|v| json_to_mp(&v))
            .map_err(|e| format!("neovim: the driver's setup: {e}"))
    }
}

/// A notification of `driver.lua`.
#[derive(Debug)]
pub(super) enum Note {
    /// `typist_request`: Neovim sent a watched request.
    Request(Request),
    /// `typist_answer`: its answer, with what was drawn right after.
    Answer(Answer),
    /// `typist_cancel`: Neovim cancelled it.
    Cancel { seq: u64 },
    /// `typist_detach`: the server left (`LspDetach`).
    Detach,
}

/// What Neovim told typist about one request it sent.
#[derive(Debug, Deserialize)]
pub(super) struct Request {
    pub seq: u64,
    pub method: String,
    /// The buffer of the document it asks about.
    pub buf: i64,
    /// The placement (case) it was sent in.
    pub epoch: u64,
    /// The buffer's version (`-1`: none yet).
    pub version: i64,
    /// The cursor's 0-based row in the request.
    pub row: i64,
    /// The request's parameters as sent.
    pub params: Value,
}

/// The server's answer to a request, as Neovim handled it.
#[derive(Debug)]
pub(super) struct Answer {
    pub seq: u64,
    /// The server's error (or the client's refusal).
    pub error: Option<String>,
    /// The result was `null`.
    pub null: bool,
    /// The number of items answered.
    pub items: u64,
    /// A completion list marked incomplete.
    pub incomplete: bool,
    pub shown: Drawn,
    /// Neovim's handler of the answer failed with this error.
    pub handler_error: Option<String>,
}

/// What Neovim drew once it handled an answer.
#[derive(Debug)]
pub(super) enum Drawn {
    /// Nothing was read (the client refused the request).
    Nothing,
    /// Inline completion: the ghost text at the cursor's row.
    Ghost(Shown),
    /// Completion: the popup as shown.
    Popup(Popup),
}

impl Drawn {
    /// The popup's items (none for ghost text).
    pub fn items(&self) -> &[Value] {
        match self {
            Drawn::Popup(p) => &p.items,
            Drawn::Nothing | Drawn::Ghost(_) => &[],
        }
    }
}

/// `typist_answer` as sent: `shown` is read by the request's method.
#[derive(Deserialize)]
struct AnswerWire {
    seq: u64,
    method: String,
    #[serde(deserialize_with = "present")]
    error: Option<String>,
    null: bool,
    items: u64,
    incomplete: bool,
    shown: Value,
    #[serde(deserialize_with = "present")]
    handler_error: Option<String>,
}

#[derive(Deserialize)]
struct Seq {
    seq: u64,
}

#[derive(Deserialize)]
struct Detach {
    #[allow(dead_code)]
    client_id: i64,
}

impl Note {
    /// Decodes a notification; `Ok(None)`: not one of `driver.lua`'s (Neovim's own,
    /// such as `nvim_error_event`, are not read).
    pub fn decode(method: &str, params: &[Mp]) -> Result<Option<Note>, String> {
        let data = params.first().unwrap_or(&Mp::Nil);
        Ok(Some(match method {
            "typist_request" => Note::Request(decode(method, data)?),
            "typist_answer" => Note::Answer(decode::<AnswerWire>(method, data)?.typed()?),
            "typist_cancel" => Note::Cancel {
                seq: decode::<Seq>(method, data)?.seq,
            },
            "typist_detach" => {
                decode::<Detach>(method, data)?;
                Note::Detach
            }
            _ => return Ok(None),
        }))
    }
}

impl AnswerWire {
    fn typed(self) -> Result<Answer, String> {
        let shown = if self.shown.is_null() {
            Drawn::Nothing
        } else if self.method == COMPLETION {
            Drawn::Popup(from_json("typist_answer", "shown", self.shown)?)
        } else {
            Drawn::Ghost(from_json("typist_answer", "shown", self.shown)?)
        };
        Ok(Answer {
            seq: self.seq,
            error: self.error,
            null: self.null,
            items: self.items,
            incomplete: self.incomplete,
            shown,
            handler_error: self.handler_error,
        })
    }
}

/// Where typing stands (`typist.state`).
#[derive(Debug, Deserialize)]
pub(super) struct State {
    pub mode: String,
    /// The buffer's version (`-1`: none yet).
    pub version: i64,
    /// 0-based row and byte column of the cursor.
    pub row: i64,
    pub col: i64,
    /// The cursor's line.
    pub line: String,
    /// The buffer's number of lines.
    pub lines: i64,
    /// Error messages shown since the case was placed.
    pub errors: Vec<String>,
    /// The completion popup is shown.
    pub pum: bool,
}

/// Where Neovim's LSP client stands (`typist.ready`).
#[derive(Debug, Deserialize)]
pub(super) struct Ready {
    pub state: ClientState,
    /// The server's name and version (once initialized, when it says them).
    #[serde(deserialize_with = "present")]
    pub name: Option<String>,
    #[serde(deserialize_with = "present")]
    pub version: Option<String>,
    /// The server's completion trigger characters.
    pub triggers: Vec<String>,
}

/// The phases of Neovim's LSP client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum ClientState {
    /// The client is gone (the server exited).
    Gone,
    /// The server is not initialized yet.
    Starting,
    Initialized,
}

/// What the profile's readiness rules look at (`typist.readiness`).
#[derive(Debug, Deserialize)]
pub(super) struct Readiness {
    /// The server began a `$/progress`.
    pub seen: bool,
    /// The `$/progress` still running.
    pub active: u64,
    /// rust-analyzer's last `quiescent` (none yet: `None`).
    #[serde(deserialize_with = "present")]
    pub quiescent: Option<bool>,
}

/// The completion popup as shown (`typist.popup`): the LSP items of the entries that
/// match what is typed, in display order.
#[derive(Debug, Deserialize)]
pub(super) struct Popup {
    pub items: Vec<Value>,
}

/// An `Option` field that must be sent (as `nil` when there is none): a missing one
/// is an error, not `None`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

/// Decodes what `driver.lua` sent in `what` (a notification or a call's answer): an
/// error names `what` and the field.
pub(super) fn decode<T: DeserializeOwned>(what: &str, v: &Mp) -> Result<T, String> {
    let fields = match mp_to_json(v) {
        Value::Object(m) => m,
        other => return Err(format!("neovim: malformed {what}: not a table: {other}")),
    };
    T::deserialize(Fields(fields)).map_err(|e| format!("neovim: malformed {what}: {e}"))
}

/// [`decode`] of one field already read as JSON.
fn from_json<T: DeserializeOwned>(what: &str, field: &str, v: Value) -> Result<T, String> {
    let named = match v {
        Value::Object(m) => T::deserialize(Fields(m)),
        other => T::deserialize(other),
    };
    named.map_err(|e| format!("neovim: malformed {what}: field `{field}`: {e}"))
}

/// A table's fields, deserialized so that an error names its field (serde_json's own
/// say only the type for a value of the wrong type).
struct Fields(serde_json::Map<String, Value>);

impl<'de> Deserializer<'de> for Fields {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_map(FieldAccess {
            fields: self.0.into_iter(),
            current: None,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        enum identifier ignored_any
    }
}

struct FieldAccess {
    fields: serde_json::map::IntoIter,
    /// The field whose value is read next.
    current: Option<(String, Value)>,
}

impl<'de> MapAccess<'de> for FieldAccess {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some((name, value)) = self.fields.next() else {
            return Ok(None);
        };
        let de: de::value::StrDeserializer<'_, serde_json::Error> =
            name.as_str().into_deserializer();
        let key = seed.deserialize(de)?;
        self.current = Some((name, value));
        Ok(Some(key))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let (name, value) = self
            .current
            .take()
            .ok_or_else(|| de::Error::custom("a value read before its field"))?;
        seed.deserialize(value)
            .map_err(|e| de::Error::custom(format!("field `{name}`: {e}")))
    }
}

/// JSON as msgpack (what typist sends Neovim).
pub(super) fn json_to_mp(v: &Value) -> Mp {
    match v {
        Value::Null => Mp::Nil,
        Value::Bool(b) => Mp::from(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Mp::from(i),
            (_, Some(u), _) => Mp::from(u),
            (_, _, Some(f)) => Mp::from(f),
            _ => Mp::Nil,
        },
        Value::String(s) => Mp::from(s.as_str()),
        Value::Array(a) => Mp::Array(a.iter().map(json_to_mp).collect()),
        Value::Object(o) => Mp::Map(
            o.iter()
                .map(|(k, v)| (Mp::from(k.as_str()), json_to_mp(v)))
                .collect(),
        ),
    }
}

/// Msgpack as JSON (what Neovim sends typist).
pub(super) fn mp_to_json(v: &Mp) -> Value {
    match v {
        Mp::Nil => Value::Null,
        Mp::Boolean(b) => Value::Bool(*b),
        Mp::Integer(i) => i
            .as_i64()
            .map(Value::from)
            .or_else(|| i.as_u64().map(Value::from))
            .unwrap_or(Value::Null),
        Mp::F32(f) => {
            serde_json::Number::from_f64(f64::from(*f)).map_or(Value::Null, Value::Number)
        }
        Mp::F64(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Mp::String(s) => Value::String(s.as_str().unwrap_or("").to_string()),
        Mp::Binary(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        Mp::Array(a) => Value::Array(a.iter().map(mp_to_json).collect()),
        Mp::Map(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Mp::String(s) => s.as_str().unwrap_or("").to_string(),
                        other => other.to_string(),
                    };
                    (key, mp_to_json(v))
                })
                .collect(),
        ),
        Mp::Ext(_, _) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn note(method: &str, data: Value) -> Result<Option<Note>, String> {
        Note::decode(method, &[json_to_mp(&data)])
    }

    fn request() -> Value {
        json!({"seq": 3, "method": INLINE, "buf": 1, "epoch": 2, "version": 7, "row": 4,
               "params": {"position": {"line": 4}}})
    }

    #[test]
    fn a_request_is_read_with_every_field() {
        let Ok(Some(Note::Request(r))) = note("typist_request", request()) else {
            panic!("not a request");
        };
        assert_eq!((r.seq, r.epoch, r.version, r.row), (3, 2, 7, 4));
        assert_eq!(r.method, INLINE);
    }

    #[test]
    fn a_malformed_notification_is_refused_naming_it_and_the_field() {
        let mut bad = request();
        bad["version"] = json!("seven");
        let e = note("typist_request", bad).err().unwrap_or_default();
        assert!(e.contains("typist_request"), "{e}");
        assert!(e.contains("field `version`"), "{e}");
        let mut missing = request();
        missing.as_object_mut().map(|m| m.remove("row"));
        let e = note("typist_request", missing).err().unwrap_or_default();
        assert!(e.contains("typist_request") && e.contains("`row`"), "{e}");
        // An answer's error must be sent, even as nil.
        let answer = json!({"seq": 1, "method": INLINE, "null": true, "items": 0,
                            "incomplete": false, "shown": null, "handler_error": null});
        let e = note("typist_answer", answer).err().unwrap_or_default();
        assert!(e.contains("typist_answer") && e.contains("`error`"), "{e}");
        let e = note("typist_cancel", json!({"seq": -1}))
            .err()
            .unwrap_or_default();
        assert!(
            e.contains("typist_cancel") && e.contains("field `seq`"),
            "{e}"
        );
    }

    #[test]
    fn an_answers_shown_is_read_by_its_method() {
        let answer = |method: &str, shown: Value| {
            json!({"seq": 1, "method": method, "error": null, "null": false, "items": 1,
                   "incomplete": true, "shown": shown, "handler_error": null})
        };
        let popup = json!({"items": [{"label": "x"}], "visible": true, "selected": -1});
        let Ok(Some(Note::Answer(a))) = note("typist_answer", answer(COMPLETION, popup)) else {
            panic!("not an answer");
        };
        assert_eq!(a.shown.items().len(), 1);
        assert!(a.incomplete);
        let ghost = json!({"line": "ab", "row": 0, "marks": []});
        let Ok(Some(Note::Answer(a))) = note("typist_answer", answer(INLINE, ghost)) else {
            panic!("not an answer");
        };
        assert!(matches!(a.shown, Drawn::Ghost(_)));
        let bad = json!({"items": "none", "visible": true, "selected": -1});
        let e = note("typist_answer", answer(COMPLETION, bad))
            .err()
            .unwrap_or_default();
        assert!(
            e.contains("field `shown`") && e.contains("field `items`"),
            "{e}"
        );
    }

    #[test]
    fn other_notifications_are_not_read() {
        assert!(matches!(
            note("nvim_error_event", json!([1, "x"])),
            Ok(None)
        ));
    }

    #[test]
    fn the_setup_leaves_nothing_out() {
        let setup = Setup {
            chan: 1,
            name: "p".into(),
            cmd: None,
            cmd_env: BTreeMap::new(),
            root: "/r".into(),
            settings: Value::Null,
            init_options: Value::Null,
            namespaces: vec![],
            highlights: vec![],
            inline: true,
            popup: Some(PopupMode::Manual),
            lsp_log: "/l".into(),
            xdg_state_home: None,
            tmpdir: None,
            xdg_runtime_dir: None,
            config: None,
        };
        let v = serde_json::to_value(&setup).unwrap_or_default();
        assert_eq!(v["popup"], "manual");
        assert_eq!(v.as_object().map(|m| m.len()), Some(16));
        assert!(v["cmd"].is_null() && v.get("cmd").is_some());
    }
}
