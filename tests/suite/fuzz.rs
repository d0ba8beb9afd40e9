//! Property-based fuzzing on stable Rust (proptest with arbitrary bytes) of what reads
//! untrusted input: the frame decoder, the client's message handling, and the records
//! readers. Each property runs `PROPTEST_CASES` cases (256 by default, a few seconds in
//! CI); run longer by hand with, for example,
//! `PROPTEST_CASES=200000 cargo nextest run --test suite fuzz::`. A failure is shrunk
//! and its seed saved in `tests/suite/fuzz.proptest-regressions`, which is committed:
//! it then runs first, every time (the first entry is a records file with a byte that
//! is not UTF-8, which `read_for_resume` reported without naming the file).

use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use typist::editor::answers::{editor_handlers, workspace_folders};
use typist::lsp::framing::{FrameReader, FramingError, encode};
use typist::lsp::{Client, ClientOptions};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Every frame the reader returns from `bytes`, and how it ended.
fn decode(bytes: &[u8]) -> (Vec<Vec<u8>>, Option<String>) {
    rt().block_on(async {
        let mut r = FrameReader::new(BufReader::new(bytes));
        let mut frames = Vec::new();
        // Each call consumes at least one byte or ends the stream: more calls than
        // bytes would be a loop that never ends.
        for _ in 0..bytes.len() + 2 {
            match r.read_frame().await {
                Ok(Some(f)) => frames.push(f),
                Ok(None) => return (frames, None),
                Err(FramingError::UnexpectedEof) => return (frames, Some("eof".into())),
                Err(FramingError::Io(e)) => return (frames, Some(e.to_string())),
                Err(_) => continue,
            }
        }
        panic!(
            "the frame reader did not reach the end of {} bytes",
            bytes.len()
        );
    })
}

/// A header-free junk line: what servers print to stdout by mistake.
fn junk_line() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(b"abc xyz_.[]{}#\t".to_vec()), 1..60).prop_map(
        |mut l| {
            l.push(b'\n');
            l
        },
    )
}

/// Bytes that look like the wire: frames (right or lying lengths), header fragments,
/// junk and raw noise.
fn wire() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200).prop_map(|b| encode(&b)),
        (any::<u64>(), prop::collection::vec(any::<u8>(), 0..64)).prop_map(|(n, b)| {
            let mut f = format!("Content-Length: {n}\r\n\r\n").into_bytes();
            f.extend(b);
            f
        }),
        prop::sample::select(vec![
            b"Content-Length: \r\n\r\n".to_vec(),
            b"Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello".to_vec(),
            b"Content-Type: x\r\n\r\n".to_vec(),
            b"content-length:3\n\nabc".to_vec(),
            b"Content-Length: 999999999999\r\n\r\n".to_vec(),
            b"Content-Length: -1\r\n\r\n".to_vec(),
            b"\r\n\r\n".to_vec(),
            vec![b'x'; 20_000],
        ]),
        junk_line(),
        prop::collection::vec(any::<u8>(), 0..100),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

proptest! {
    /// Any bytes at all: no panic, no endless loop, no frame over the limit.
    #[test]
    fn the_frame_reader_survives_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let (frames, _) = decode(&bytes);
        for f in frames {
            prop_assert!(f.len() <= typist::lsp::framing::MAX_BODY);
        }
    }

    /// Bytes shaped like the wire, with lies and noise.
    #[test]
    fn the_frame_reader_survives_wire_shaped_noise(bytes in wire()) {
        decode(&bytes);
    }

    /// Good frames with junk lines between them all come back, in order, whole.
    #[test]
    fn frames_between_junk_lines_come_back_whole(
        items in prop::collection::vec(
            (prop::collection::vec(any::<u8>(), 0..300), prop::option::of(junk_line())),
            0..10,
        )
    ) {
        let mut bytes = Vec::new();
        for (body, junk) in &items {
            if let Some(j) = junk {
                bytes.extend_from_slice(j);
            }
            bytes.extend(encode(body));
        }
        let (frames, end) = decode(&bytes);
        prop_assert_eq!(end, None);
        let bodies: Vec<Vec<u8>> = items.into_iter().map(|(b, _)| b).collect();
        prop_assert_eq!(frames, bodies);
    }
}

/// JSON-RPC-shaped values: answers to real and unknown ids, requests, notifications,
/// and values of the wrong shape.
fn message() -> impl Strategy<Value = Value> {
    let id = prop_oneof![
        (0i64..4).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[0-9a-z]{0,5}".prop_map(Value::from),
        Just(Value::Null),
        Just(json!([1])),
    ];
    let payload = prop_oneof![
        Just(Value::Null),
        Just(json!({"items": [{"insertText": "x"}]})),
        Just(json!([1, "two", {"three": null}])),
        any::<f64>().prop_map(|f| json!(f)),
        "\\PC{0,20}".prop_map(Value::from),
    ];
    let method = prop_oneof![
        Just("workspace/configuration"),
        Just("workspace/workspaceFolders"),
        Just("window/workDoneProgress/create"),
        Just("client/registerCapability"),
        Just("window/logMessage"),
        Just("$/progress"),
        Just("textDocument/publishDiagnostics"),
        Just("unknown/method"),
    ];
    prop_oneof![
        (id.clone(), payload.clone())
            .prop_map(|(id, r)| json!({"jsonrpc": "2.0", "id": id, "result": r})),
        (id.clone(), any::<i64>(), "\\PC{0,20}").prop_map(
            |(id, c, m)| json!({"jsonrpc": "2.0", "id": id, "error": {"code": c, "message": m}})
        ),
        (id.clone(), payload.clone())
            .prop_map(|(id, e)| json!({"jsonrpc": "2.0", "id": id, "error": e})),
        (id, method.clone(), payload.clone())
            .prop_map(|(id, m, p)| json!({"jsonrpc": "2.0", "id": id, "method": m, "params": p})),
        (method, payload.clone())
            .prop_map(|(m, p)| json!({"jsonrpc": "2.0", "method": m, "params": p})),
        payload,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: ProptestConfig::default().cases / 4, ..ProptestConfig::default() })]

    /// Whatever a server sends (messages of any shape, garbage between them) and however
    /// it ends: the client never panics, answers its requests, and every pending
    /// request ends, with an answer or an error, once the stream closes.
    #[test]
    fn the_client_survives_any_server_output(
        stream in prop::collection::vec(
            prop_oneof![
                message().prop_map(|m| encode(&serde_json::to_vec(&m).unwrap())),
                wire(),
            ],
            0..20,
        )
    ) {
        rt().block_on(async {
            let (a, b) = tokio::io::duplex(1 << 16);
            let (ar, aw) = tokio::io::split(a);
            let (mut br, mut bw) = tokio::io::split(b);
            let client = Client::connect(
                BufReader::new(ar),
                aw,
                ClientOptions {
                    name: "fuzz".into(),
                    transcript: None,
                    handlers: editor_handlers(json!({"typist": {"x": 1}}), workspace_folders("file:///ws")),
                },
            );
            // Drain what the client writes so it never blocks on a full pipe.
            let drain = tokio::spawn(async move {
                let mut sink = tokio::io::sink();
                let _ = tokio::io::copy(&mut br, &mut sink).await;
            });
            let pending: Vec<_> = (0..3)
                .map(|_| client.request("test/ask", Some(json!({})), Duration::from_secs(30)))
                .collect();
            for chunk in &stream {
                let _ = bw.write_all(chunk).await;
            }
            let _ = bw.shutdown().await;
            drop(bw);
            for p in pending {
                let r = tokio::time::timeout(Duration::from_secs(10), p).await;
                assert!(r.is_ok(), "a request outlived the stream by 10 s");
            }
            drop(client);
            drain.abort();
        });
    }
}

fn record_line() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            "suggestion",
            "empty",
            "error",
            "timeout",
            "completion",
            "weird",
        ]),
        "\\PC{0,30}",
        "\\PC{0,30}",
        0u32..200,
        any::<bool>(),
    )
        .prop_map(|(outcome, expected, predicted, line, typed)| {
            let mut v = json!({
                "case": format!("r/a.py:{line}"), "repo": "r", "file": "a.py", "line": line,
                "language": "python", "assistant": "x", "pass": 1, "outcome": outcome,
                "expected": expected, "predicted": predicted, "latency_ms": 3,
            });
            if typed {
                v["typed"] = json!(2);
            }
            v.to_string()
        })
}

/// A records file as a crash, a bad disk or a hand edit leaves it.
fn records_file() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        4 => record_line().prop_map(|l| l.into_bytes()),
        1 => (record_line(), any::<prop::sample::Index>()).prop_map(|(l, i)| {
            let b = l.into_bytes();
            b[..i.index(b.len() + 1)].to_vec()
        }),
        1 => (record_line(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(l, i, x)| {
            let mut b = l.into_bytes();
            let at = i.index(b.len());
            b[at] = x;
            b
        }),
        1 => prop::collection::vec(any::<u8>(), 0..80),
    ];
    (prop::collection::vec(line, 0..12), any::<bool>()).prop_map(|(lines, newline_at_end)| {
        let mut out = lines.join(&b'\n');
        if newline_at_end {
            out.push(b'\n');
        }
        out
    })
}

proptest! {
    /// Damaged records files: the readers return records or an error naming the file,
    /// never a panic.
    #[test]
    fn records_readers_survive_damaged_files(bytes in records_file()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        let name = path.display().to_string();
        for strict in [false, true] {
            if let Err(e) = typist::score::records::read_records(std::slice::from_ref(&path), strict, 1) {
                let e = format!("{e:#}");
                prop_assert!(e.contains(&name), "score reader: {}", e);
            }
        }
        if let Err(e) = typist::replay::records::read_all(&path) {
            let e = format!("{e:#}");
            prop_assert!(e.contains(&name), "read_all: {}", e);
        }
        if let Err(e) = typist::replay::records::read_for_resume(&path) {
            let e = format!("{e:#}");
            prop_assert!(e.contains(&name), "read_for_resume: {}", e);
        }
    }
}
