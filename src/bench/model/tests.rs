//! The relay, the direct pass and the table against upstreams made here.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::answers::events;
use super::upstream::agent;
use super::*;

#[test]
fn relay_records_and_direct_replays_in_order() {
    // An upstream that echoes the body with changing timings.
    let up = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let up_port = up.server_addr().to_ip().unwrap().port();
    std::thread::spawn(move || {
        for (i, mut req) in up.incoming_requests().enumerate() {
            let mut body = String::new();
            let _ = req.as_reader().read_to_string(&mut body);
            let answer = serde_json::json!({
                "path": req.url(), "body": body, "id": i,
                "timings": {"prompt_n": 10, "prompt_ms": 100.0 + i as f64, "predicted_n": 5, "predicted_ms": 50.0},
            });
            let _ = req.respond(tiny_http::Response::from_string(answer.to_string()));
        }
    });
    let base = format!("http://127.0.0.1:{up_port}");
    let relay = Relay::start(&base).unwrap();
    let a = agent();
    let via = format!("http://127.0.0.1:{}", relay.port());
    for i in 0..3 {
        let mut r = a
            .post(format!("{via}/v1/completions"))
            .header("Content-Type", "application/json")
            .send(format!("{{\"prompt\":\"{i}\"}}").as_bytes())
            .unwrap();
        let text = r.body_mut().read_to_string().unwrap();
        assert!(
            text.contains(&format!("{{\\\"prompt\\\":\\\"{i}\\\"}}")),
            "{text}"
        );
    }
    a.get(format!("{via}/health")).call().unwrap();
    let captured = relay.finish();
    assert_eq!(captured.len(), 4);
    assert_eq!(captured[0].body, "{\"prompt\":\"0\"}");
    assert_eq!(captured[3].path, "/health");
    let direct = send_direct(&base, &captured, 2);
    let row = Row::new("x", 2, 3, 3, 1.0, &captured, &direct);
    assert_eq!(row.direct_requests, 4);
    assert_eq!(row.identical_answers, 4, "ids and timings are left out");
    assert_eq!(row.typist_timings.answers, 4);
    assert!((row.typist_timings.predicted_per_second() - 100.0).abs() < 1e-9);
    assert!(table(&[row]).contains("| x | 2 | 3 | 3 | 4 |"));
}

/// With one job the server starts come out of typist's time for the second ratio;
/// with two they overlap other requests and no such ratio is given.
#[test]
fn server_starts_are_set_aside_with_one_job_only() {
    let captured: Vec<Captured> = (0..10)
        .map(|seq| Captured {
            seq,
            method: "POST".into(),
            path: "/v1/completions".into(),
            content_type: None,
            body: String::new(),
            status: 200,
            answer: "{}".into(),
            start: 0.0,
            seconds: 0.5,
        })
        .collect();
    let direct = Direct {
        seconds: 5.0,
        answers: vec![(200, "{}".into()); 10],
    };
    let row = Row::new("x", 1, 10, 10, 8.0, &captured, &direct).with_server_starts(2.5);
    assert!((row.ratio - 5.0 / 8.0).abs() < 1e-9);
    assert!((row.ratio_starts_aside.unwrap() - 5.0 / 5.5).abs() < 1e-9);
    assert!(table(&[row]).contains("| 0.62 | 2.5 | 0.91 |"));
    let two = Row::new("x", 2, 10, 10, 8.0, &captured, &direct).with_server_starts(2.5);
    assert_eq!(two.ratio_starts_aside, None);
    assert!(table(&[two]).contains("| 0.62 | 2.5 | – |"));
}

/// An upstream that streams `n` events, one every `gap`, on the raw connection, and
/// counts those it could write before its caller left.
fn streaming_upstream(n: usize, gap: Duration) -> (String, Arc<AtomicUsize>) {
    let up = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = up.server_addr().to_ip().unwrap().port();
    let written = Arc::new(AtomicUsize::new(0));
    let w = written.clone();
    std::thread::spawn(move || {
        for mut req in up.incoming_requests() {
            let mut body = String::new();
            let _ = req.as_reader().read_to_string(&mut body);
            let mut out = req.into_writer();
            let _ = out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
            w.store(0, Ordering::SeqCst);
            for i in 0..n {
                let ev = format!(
                    "data: {}\n\n",
                    serde_json::json!({"choices": [{"text": format!("t{i} ")}], "id": i})
                );
                let chunk = format!("{:x}\r\n{ev}\r\n", ev.len());
                if out
                    .write_all(chunk.as_bytes())
                    .and_then(|_| out.flush())
                    .is_err()
                {
                    break;
                }
                w.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(gap);
            }
            let _ = out.write_all(b"0\r\n\r\n");
        }
    });
    (format!("http://127.0.0.1:{port}"), written)
}

#[test]
fn a_stream_left_early_reaches_the_upstream_and_the_direct_pass_leaves_it_alike() {
    let (base, written) = streaming_upstream(200, Duration::from_millis(20));
    let relay = Relay::start(&base).unwrap();
    let via = format!("http://127.0.0.1:{}", relay.port());
    let mut r = agent()
        .post(format!("{via}/v1/completions"))
        .header("Content-Type", "application/json")
        .send(b"{\"stream\":true}".as_slice())
        .unwrap();
    // The caller reads three events and leaves.
    let mut reader = std::io::BufReader::new(r.body_mut().as_reader());
    let (mut line, mut seen) = (String::new(), 0);
    while seen < 3 {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0);
        seen += usize::from(line.starts_with("data:"));
    }
    drop(reader);
    drop(r);
    let captured = relay.finish();
    assert_eq!(captured.len(), 1);
    let forwarded = events(&captured[0].answer);
    assert!(
        (3..200).contains(&forwarded),
        "{forwarded} events forwarded"
    );
    assert!(!captured[0].answer.contains("[DONE]"));
    let upstream_wrote = written.load(Ordering::SeqCst);
    assert!(
        upstream_wrote < 200,
        "the upstream was left early too ({upstream_wrote})"
    );
    // The direct pass reads as many events as were forwarded, and they are the same
    // but for ids.
    let direct = send_direct(&base, &captured, 1);
    assert_eq!(events(&direct.answers[0].1), forwarded);
    let row = Row::new("x", 1, 1, 1, 1.0, &captured, &direct);
    assert_eq!(row.identical_answers, 1);
    assert_eq!(
        row.typist_timings.answers, 0,
        "a stream left early has no timings"
    );
}
