//! `typist bench run --large-repo` on a small folder of real code (the bundled
//! dataset's Python files): the repositories it builds and the table's structure,
//! never its timings.

use std::path::{Path, PathBuf};

use crate::common::{DATASET, ok, typist};

/// Every file under `dir`, relative to it, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for e in std::fs::read_dir(dir.join(&rel)).unwrap() {
            let e = e.unwrap();
            let rel = rel.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                stack.push(rel);
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// The numbers of a table row, from its `skip`th cell on.
fn numbers(row: &str, skip: usize) -> Vec<f64> {
    row.trim()
        .trim_matches('|')
        .split(" | ")
        .skip(skip)
        .map(|c| {
            c.trim()
                .trim_end_matches('×')
                .parse::<f64>()
                .unwrap_or_else(|e| panic!("{c:?} in {row}: {e}"))
        })
        .collect()
}

/// At 300 and 1,500 lines: each repository holds whole files of the source, the first
/// ones in sorted order, just enough of them for the size; the table has a row of
/// positive figures per size, assistant and cache, then the ratios, the growth, the
/// goals and the two-pass run.
#[test]
fn bench_run_large_repo_measures_each_size_assistant_and_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let out = typist()
        .args(["bench", "run", "--large-repo", DATASET])
        .args(["--sizes", "300,1500", "--runs", "1", "--dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);

    let source: Vec<PathBuf> = files(Path::new(DATASET))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    for n in [300, 1500] {
        let dir = tmp.path().join(format!("large-{n}"));
        let made = files(&dir);
        assert!(!made.is_empty(), "{}", dir.display());
        assert_eq!(
            made,
            source[..made.len()],
            "the first files in sorted order"
        );
        let lines: Vec<usize> = made
            .iter()
            .map(|rel| {
                let text = std::fs::read_to_string(dir.join(rel)).unwrap();
                assert_eq!(
                    text,
                    std::fs::read_to_string(Path::new(DATASET).join(rel)).unwrap(),
                    "{} is a whole file of the source",
                    rel.display()
                );
                text.lines().count()
            })
            .collect();
        let total: usize = lines.iter().sum();
        assert!(total >= n, "{total} lines at size {n}");
        assert!(total - lines[lines.len() - 1] < n, "one file too many");

        for assistant in ["typist-previous-line", "typist-ngram"] {
            for cache in ["cold", "warm"] {
                let row = text
                    .lines()
                    .find(|l| {
                        l.starts_with(&format!("| {n}: {total} ("))
                            && l.contains(&format!(" | {assistant} | {cache} | "))
                    })
                    .unwrap_or_else(|| panic!("no row for {n} {assistant} {cache}:\n{text}"));
                // wall s, mean session start ms, server peak MiB, typist peak MiB.
                let figures = numbers(row, 3);
                assert_eq!(figures.len(), 4, "{row}");
                assert!(figures.iter().all(|f| *f > 0.0), "{row}");
            }
        }
        let ratio = text
            .lines()
            .find(|l| l.starts_with(&format!("| {n} | ")))
            .unwrap_or_else(|| panic!("no ratios at {n}:\n{text}"));
        assert_eq!(numbers(ratio, 1).len(), 4, "{ratio}");
    }
    for assistant in ["typist-previous-line", "typist-ngram"] {
        for cache in ["cold", "warm"] {
            let row = format!("| {assistant} | {cache} | ");
            let growth = text
                .lines()
                .find(|l| l.starts_with(&row))
                .unwrap_or_else(|| panic!("no growth for {assistant} {cache}:\n{text}"));
            assert!(numbers(growth, 2).iter().all(|f| *f > 0.0), "{growth}");
        }
    }
    assert!(text.contains("load average at the start: "), "{text}");
    assert!(text.contains("issue 47's goals at 1500 lines"), "{text}");
    assert!(
        text.contains("typist-ngram, 2 passes of the "),
        "the two-pass figure:\n{text}"
    );
}

/// `typist bench serve`: each pair of runs (the command line's and the service's) timed
/// and shown with its ratio, and the median against the limit (a figure, never
/// asserted: speed is read from the table).
#[test]
fn bench_serve_times_a_job_both_ways() {
    let o = typist()
        .args([
            "bench", "serve", "--runs", "2", "--rate", "0.05", "--jobs", "1",
        ])
        .arg("--dataset")
        .arg(DATASET)
        .output()
        .unwrap();
    ok(&o);
    let table = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("| 1 ") || l.starts_with("| 2 "))
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    for r in rows {
        let n = numbers(r, 1);
        assert_eq!(n.len(), 3, "{r}");
        assert!(n.iter().all(|x| *x > 0.0), "{r}");
    }
    assert!(table.contains("median service / run"), "{table}");
}
