//! Protocol corners of the LSP client against an in-memory peer: the peer is a script
//! in the test, reading and writing frames on a duplex pipe, so that out-of-order
//! answers, late answers after a cancel and server→client requests happen on demand.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use typist::editor::answers::{editor_handlers, workspace_folders};
use typist::lsp::framing::{FrameReader, encode};
use typist::lsp::{Client, ClientOptions, Event, LspError};

struct Peer {
    reader: FrameReader<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
}

impl Peer {
    async fn recv(&mut self) -> Value {
        let frame = tokio::time::timeout(Duration::from_secs(5), self.reader.read_frame())
            .await
            .expect("peer waited too long for a message")
            .expect("frame")
            .expect("stream open");
        serde_json::from_slice(&frame).unwrap()
    }
    async fn send(&mut self, v: Value) {
        self.writer
            .write_all(&encode(&serde_json::to_vec(&v).unwrap()))
            .await
            .unwrap();
    }
}

fn pair(settings: Value) -> (Client, Peer) {
    pair_with(settings, None)
}

fn pair_with(settings: Value, transcript: Option<std::path::PathBuf>) -> (Client, Peer) {
    let (a, b) = tokio::io::duplex(1 << 16);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let client = Client::connect(
        BufReader::new(ar),
        aw,
        ClientOptions {
            name: "peer".into(),
            transcript,
            handlers: editor_handlers(settings, workspace_folders("file:///ws")),
        },
    );
    let peer = Peer {
        reader: FrameReader::new(BufReader::new(br)),
        writer: bw,
    };
    (client, peer)
}

const T: Duration = Duration::from_secs(5);

#[tokio::test]
async fn wire_order_equals_call_order() {
    let (client, mut peer) = pair(json!({}));
    client.notify("textDocument/didChange", Some(json!({"v": 2})));
    let fut = client.request("textDocument/completion", Some(json!({})), T);
    client.notify("textDocument/didChange", Some(json!({"v": 3})));
    let m1 = peer.recv().await;
    let m2 = peer.recv().await;
    let m3 = peer.recv().await;
    assert_eq!(m1["params"]["v"], 2);
    assert_eq!(m2["method"], "textDocument/completion");
    assert_eq!(m3["params"]["v"], 3);
    peer.send(json!({"jsonrpc": "2.0", "id": m2["id"], "result": [1]}))
        .await;
    assert_eq!(fut.await.unwrap(), json!([1]));
}

#[tokio::test]
async fn out_of_order_answers_reach_their_own_callers() {
    let (client, mut peer) = pair(json!({}));
    let a = client.request("a", None, T);
    let b = client.request("b", None, T);
    let ma = peer.recv().await;
    let mb = peer.recv().await;
    assert!(ma.get("params").is_none(), "omitted params stay omitted");
    peer.send(json!({"jsonrpc": "2.0", "id": mb["id"], "result": "B"}))
        .await;
    peer.send(
        json!({"jsonrpc": "2.0", "id": ma["id"], "error": {"code": -32603, "message": "boom"}}),
    )
    .await;
    assert_eq!(b.await.unwrap(), json!("B"));
    match a.await {
        Err(LspError::Rpc { code, message, .. }) => {
            assert_eq!((code, message.as_str()), (-32603, "boom"))
        }
        other => panic!("expected an rpc error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_timeout_sends_cancel_and_the_late_answer_is_discarded() {
    let (client, mut peer) = pair(json!({}));
    let fut = client.request("slow", None, Duration::from_millis(50));
    let m = peer.recv().await;
    let err = fut.await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let cancel = peer.recv().await;
    assert_eq!(cancel["method"], "$/cancelRequest");
    assert_eq!(cancel["params"]["id"], m["id"]);
    peer.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": "late"}))
        .await;
    // A request after the late answer still works, and the late one was counted.
    let next = client.request("next", None, T);
    let mn = peer.recv().await;
    peer.send(json!({"jsonrpc": "2.0", "id": mn["id"], "result": 7}))
        .await;
    assert_eq!(next.await.unwrap(), json!(7));
    assert_eq!(client.stats().late_answers, 1);
}

#[tokio::test]
async fn dropping_a_request_future_cancels_it() {
    let (client, mut peer) = pair(json!({}));
    let fut = client.request("dropped", None, T);
    let m = peer.recv().await;
    // Poll it once so it is started, then drop it.
    let _ = tokio::time::timeout(Duration::from_millis(10), fut).await;
    let cancel = peer.recv().await;
    assert_eq!(cancel["method"], "$/cancelRequest");
    assert_eq!(cancel["params"]["id"], m["id"]);
}

#[tokio::test]
async fn a_request_future_dropped_before_its_first_poll_is_cancelled() {
    let (client, mut peer) = pair(json!({}));
    let fut = client.request("never polled", None, T);
    let m = peer.recv().await;
    drop(fut);
    let cancel = peer.recv().await;
    assert_eq!(cancel["method"], "$/cancelRequest");
    assert_eq!(cancel["params"]["id"], m["id"]);
    // Its answer, arriving now, is late: discarded and counted.
    peer.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": null}))
        .await;
    let ok = client.request("after", None, T);
    let m2 = peer.recv().await;
    peer.send(json!({"jsonrpc": "2.0", "id": m2["id"], "result": 1}))
        .await;
    assert_eq!(ok.await.unwrap(), json!(1));
    assert_eq!(client.stats().late_answers, 1);
}

/// Requests made while the stream is ending fail at once with the server's exit, never
/// after their whole timeout: "closed" and "pending" are one state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_racing_the_end_of_the_stream_fail_at_once() {
    for _ in 0..50 {
        let (client, peer) = pair(json!({}));
        let client = std::sync::Arc::new(client);
        let closer = tokio::spawn(async move {
            tokio::task::yield_now().await;
            drop(peer);
        });
        let mut waits = Vec::new();
        for i in 0..200 {
            waits.push(client.request(&format!("r{i}"), None, Duration::from_secs(60)));
        }
        closer.await.unwrap();
        for w in waits {
            let r = tokio::time::timeout(Duration::from_secs(5), w)
                .await
                .expect("a request waited for its deadline on a closed stream");
            match r {
                Err(e) => assert!(e.is_exit(), "{e}"),
                Ok(v) => panic!("answer from nobody: {v}"),
            }
        }
    }
}

#[tokio::test]
async fn server_requests_are_all_answered() {
    let settings =
        json!({"python": {"analysis": {"typeCheckingMode": "off"}}, "files.exclude": ["x"]});
    let (client, mut peer) = pair(settings);
    let mut events = client.take_events().unwrap();
    let asks = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "workspace/configuration", "params": {"items": [
            {"section": "python.analysis"}, {"section": "files.exclude"}, {"section": "nope"}, {}]}}),
        json!({"jsonrpc": "2.0", "id": "r2", "method": "client/registerCapability", "params": {"registrations": []}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "window/workDoneProgress/create", "params": {"token": "t"}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "window/showMessageRequest", "params": {"type": 1, "message": "m"}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "window/showDocument", "params": {"uri": "https://x"}}),
        json!({"jsonrpc": "2.0", "id": 6, "method": "copilot/weird", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "workspace/workspaceFolders"}),
    ];
    for a in &asks {
        peer.send(a.clone()).await;
    }
    let mut answers = Vec::new();
    for _ in &asks {
        answers.push(peer.recv().await);
    }
    assert_eq!(
        answers[0]["result"],
        json!([{"typeCheckingMode": "off"}, ["x"], null, {"python": {"analysis": {"typeCheckingMode": "off"}}, "files.exclude": ["x"]}])
    );
    assert_eq!(
        answers[1],
        json!({"jsonrpc": "2.0", "id": "r2", "result": null})
    );
    assert_eq!(answers[2]["result"], Value::Null);
    assert_eq!(answers[3]["result"], Value::Null);
    assert_eq!(answers[4]["result"], json!({"success": false}));
    assert_eq!(answers[5]["error"]["code"], -32601);
    // The folders the client declared, not null.
    assert_eq!(
        answers[6]["result"],
        json!([{"uri": "file:///ws", "name": "workspace"}])
    );
    // The requests are also visible to the editor, in order.
    let first = events.recv().await.unwrap();
    assert!(
        matches!(first, Event::Request { ref method, .. } if method == "workspace/configuration")
    );
}

#[tokio::test]
async fn notifications_arrive_in_order_and_junk_is_tolerated() {
    let (client, mut peer) = pair(json!({}));
    let mut events = client.take_events().unwrap();
    peer.writer
        .write_all(b"some log line on stdout\n")
        .await
        .unwrap();
    for i in 0..50 {
        peer.send(json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "t", "value": {"i": i}}}))
            .await;
    }
    peer.writer.write_all(b"{not json}\n").await.unwrap();
    peer.writer
        .write_all(&encode(b"{\"broken\": "))
        .await
        .unwrap();
    peer.send(
        json!({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"message": "done"}}),
    )
    .await;
    for i in 0..50 {
        match events.recv().await.unwrap() {
            Event::Notification { method, params } => {
                assert_eq!(method, "$/progress");
                assert_eq!(params["value"]["i"], i);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    match events.recv().await.unwrap() {
        Event::Notification { method, .. } => assert_eq!(method, "window/logMessage"),
        other => panic!("unexpected {other:?}"),
    }
    let s = client.stats();
    assert_eq!((s.junk_lines, s.bad_frames), (2, 1));
}

#[tokio::test]
async fn end_of_stream_fails_every_pending_request() {
    let (client, mut peer) = pair(json!({}));
    let a = client.request("a", None, T);
    let b = client.request("b", None, T);
    peer.recv().await;
    peer.recv().await;
    drop(peer);
    for r in [a.await, b.await] {
        match r {
            Err(LspError::ServerExited { status, .. }) => assert_eq!(status, "stream closed"),
            other => panic!("expected server exited, got {other:?}"),
        }
    }
    // Later requests fail at once with the same reason.
    let late = client.request("c", None, T).await.unwrap_err();
    assert!(late.is_exit(), "{late}");
}

#[tokio::test]
async fn transcripts_redact_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let (client, mut peer) = pair_with(json!({}), Some(path.clone()));
    let fut = client.request(
        "initialize",
        Some(json!({"initializationOptions": {"apiToken": "hf_secret", "model": "m"}})),
        T,
    );
    let m = peer.recv().await;
    assert_eq!(
        m["params"]["initializationOptions"]["apiToken"],
        "hf_secret"
    );
    peer.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": {"capabilities": {}}}))
        .await;
    fut.await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("hf_secret"), "{text}");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["dir"], "send");
    assert_eq!(lines[0]["method"], "initialize");
    assert_eq!(
        lines[0]["body"]["params"]["initializationOptions"]["apiToken"],
        "[redacted]"
    );
    assert_eq!(
        lines[0]["body"]["params"]["initializationOptions"]["model"],
        "m"
    );
    assert_eq!(lines[1]["dir"], "recv");
    assert_eq!(lines[1]["id"], m["id"]);
}

/// Attached over TCP: requests go over the socket as over stdio, `shutdown` sends
/// `shutdown` and `exit` and closes our side; a server that drops the connection fails
/// the waiting request at once with an error naming the address.
#[tokio::test]
async fn an_attached_connection_frames_like_stdio_and_names_its_address_when_dropped() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("tcp://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (s, _) = listener.accept().await.unwrap();
        let (r, mut w) = s.into_split();
        let mut frames = FrameReader::new(BufReader::new(r));
        let first: Value =
            serde_json::from_slice(&frames.read_frame().await.unwrap().unwrap()).unwrap();
        let answer = json!({"jsonrpc": "2.0", "id": first["id"], "result": {"ok": 1}});
        w.write_all(&encode(&serde_json::to_vec(&answer).unwrap()))
            .await
            .unwrap();
        // The second request is never answered: the server goes away.
        let _ = frames.read_frame().await;
    });
    let a = typist::lsp::Address::parse(&address).unwrap();
    let opts = ClientOptions {
        name: "attached".into(),
        ..Default::default()
    };
    let client = Client::attach(&a, Duration::from_secs(5), opts)
        .await
        .unwrap();
    assert_eq!(client.address(), Some(&a));
    assert_eq!(client.pid(), None);
    let got = client
        .request("x/one", None, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(got, json!({"ok": 1}));
    let t0 = std::time::Instant::now();
    let err = client
        .request("x/two", None, Duration::from_secs(30))
        .await
        .unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(5), "{err}");
    assert!(err.is_exit(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&address) && text.contains("dropped"),
        "{text}"
    );
    server.await.unwrap();
    assert_eq!(client.shutdown().await, None);
    // Nobody listens there any more: a clear error naming the address.
    let err = Client::attach(&a, Duration::from_secs(5), ClientOptions::default())
        .await
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains(&format!("cannot connect to {address}")),
        "{err}"
    );
}
