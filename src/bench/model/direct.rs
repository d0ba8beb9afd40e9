//! The direct pass: the captured requests sent in order straight to a fresh server,
//! `jobs` at a time, a stream its caller left early read only as far as it was read.

use std::io::BufRead;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::Captured;
use super::answers::events;
use super::upstream::{Upstream, agent, open};

/// What the direct pass measured.
#[derive(Debug, Clone)]
pub struct Direct {
    pub seconds: f64,
    /// (status, answer) of each request, in the captured order.
    pub answers: Vec<(u16, String)>,
}

/// Sends one request as it was captured; (status, answer body). A captured stream that
/// its caller left before its end is read as far as the caller read it (as many
/// events), then dropped, as the caller did.
fn send(agent: &ureq::Agent, base: &str, c: &Captured) -> (u16, String) {
    match open(agent, base, c) {
        Upstream::Whole(status, text) => (status, text),
        Upstream::Stream(status, body) => {
            let left_early = !c.answer.contains("data: [DONE]");
            let limit = if left_early {
                events(&c.answer)
            } else {
                usize::MAX
            };
            let mut reader = std::io::BufReader::new(body.into_reader());
            let (mut text, mut line, mut seen) = (String::new(), String::new(), 0);
            while seen < limit {
                line.clear();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                seen += usize::from(line.starts_with("data:"));
                text.push_str(&line);
            }
            (status, text)
        }
    }
}

/// Sends `requests` in order to `base`, `jobs` at a time (each worker takes the next
/// one when its answer has come), and times the whole.
pub fn send_direct(base: &str, requests: &[Captured], jobs: usize) -> Direct {
    let next = AtomicUsize::new(0);
    let answers: Mutex<Vec<Option<(u16, String)>>> = Mutex::new(vec![None; requests.len()]);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                let agent = agent();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(c) = requests.get(i) else { break };
                    let a = send(&agent, base, c);
                    answers.lock().expect("answers lock")[i] = Some(a);
                }
            });
        }
    });
    let seconds = t0.elapsed().as_secs_f64();
    Direct {
        seconds,
        answers: answers
            .into_inner()
            .expect("answers lock")
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect(),
    }
}
