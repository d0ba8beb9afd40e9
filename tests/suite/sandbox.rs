//! The sandbox for untrusted code (`typist::sandbox`), with the real bubblewrap: no
//! network, a hang and a fork bomb each an outcome with nothing left running, its own
//! HOME and temp with nothing left behind, writes only in the working copy, a memory
//! limit.

use std::path::Path;
use std::time::Duration;

use typist::sandbox::{Ended, Job, Limits, run};

fn job(work: &Path, script: &str, limits: Limits) -> Job {
    Job {
        program: "python3".to_string(),
        args: vec!["-c".to_string(), script.to_string()],
        work: work.to_path_buf(),
        needs: Vec::new(),
        hide: Vec::new(),
        cwd: None,
        env: Vec::new(),
        user: None,
        limits,
    }
}

/// Processes whose command line holds `marker`.
fn running(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .count()
}

#[test]
fn no_network_even_to_a_listener_on_this_machines_loopback() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('connected')\nexcept OSError as e:\n    print('refused', e)\n"
    );
    // The control: the same script outside the sandbox reaches the listener.
    let outside = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&outside.stdout).starts_with("connected"));
    let work = tempfile::tempdir().unwrap();
    let o = run(&job(work.path(), &script, Limits::default())).unwrap();
    assert!(o.success(), "{o:?}");
    assert!(o.stdout.starts_with("refused"), "{o:?}");
    // Nor a name to resolve or a route out.
    let o = run(&job(
        work.path(),
        "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    print('out')\nexcept OSError as e:\n    print('no route', e)\n",
        Limits::default(),
    ))
    .unwrap();
    assert!(o.stdout.starts_with("no route"), "{o:?}");
}

#[test]
fn a_hang_is_timed_out_with_its_children_and_nothing_is_left_running() {
    let marker = format!("typist-sandbox-hang-{}", std::process::id());
    let work = tempfile::tempdir().unwrap();
    // A child that ignores SIGTERM and sleeps, and the parent waiting on it.
    let script = format!(
        "import subprocess, signal, time\nsubprocess.Popen(['sh', '-c', 'trap \"\" TERM; exec sleep 1000 # {marker}'])\ntime.sleep(1000)\n"
    );
    let limits = Limits {
        wall: Duration::from_secs(2),
        ..Limits::default()
    };
    let o = run(&job(work.path(), &script, limits)).unwrap();
    assert_eq!(o.ended, Ended::TimedOut, "{o:?}");
    assert!(o.reason().contains("time limit"), "{}", o.reason());
    assert!(o.wall < Duration::from_secs(10), "{:?}", o.wall);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(running(&marker), 0, "a sleeper outlived its sandbox");
}

#[test]
fn a_fork_bomb_cannot_fork_past_the_limit_and_leaves_nothing() {
    let marker = format!("typist-sandbox-bomb-{}", std::process::id());
    let work = tempfile::tempdir().unwrap();
    // Fork children that sleep, up to 5,000, counting the forks that succeeded; the
    // children are left running when the parent exits.
    let script = format!(
        "import os, sys, time\nmade = 0\nfor _ in range(5000):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        time.sleep(1000)\n        os._exit(0)\n    made += 1\nprint(made)\nsys.stdout.flush()\n# {marker}\n"
    );
    let limits = Limits {
        processes: 64,
        wall: Duration::from_secs(60),
        ..Limits::default()
    };
    let o = run(&job(work.path(), &script, limits)).unwrap();
    assert!(o.success(), "{o:?}");
    let made: u64 = o.stdout.trim().parse().unwrap();
    assert!(made < 64 + 8, "{made} forks past a limit of 64");
    assert!(made >= 16, "the limit let too few through: {made}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(running(&marker), 0, "forks outlived their sandbox");
}

#[test]
fn own_home_and_temp_writes_only_in_the_working_copy_nothing_left_behind() {
    let work = tempfile::tempdir().unwrap();
    // Outside the sandbox's /tmp (which is its own): the build's scratch folder.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::write(work.path().join("in.txt"), "given").unwrap();
    let name = format!("typist-sandbox-{}", std::process::id());
    // A file of the user's HOME, which the sandbox must not see.
    let home = std::env::var("HOME").unwrap();
    let secret = Path::new(&home).join(format!(".{name}-secret"));
    std::fs::write(&secret, "s").unwrap();
    let script = format!(
        r#"import os, sys
home, tmp = os.environ['HOME'], os.environ['TMPDIR']
open(os.path.join(home, '{name}'), 'w').write('h')
open(os.path.join(tmp, '{name}'), 'w').write('t')
open('out.txt', 'w').write(open('in.txt').read() + ' and written')
try:
    open(os.path.join('{outside}', 'escaped'), 'w').write('x')
    print('escaped')
except OSError:
    print('read-only outside')
print(home, tmp)
print('secret seen' if os.path.exists('{secret}') else 'home hidden')
"#,
        outside = outside.path().display(),
        secret = secret.display()
    );
    let o = run(&job(work.path(), &script, Limits::default())).unwrap();
    std::fs::remove_file(&secret).unwrap();
    assert!(o.success(), "{o:?}");
    assert!(o.stdout.starts_with("read-only outside"), "{o:?}");
    assert!(o.stdout.contains("home hidden"), "{o:?}");
    assert!(o.stdout.contains("/tmp/home /tmp"), "{o:?}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("out.txt")).unwrap(),
        "given and written"
    );
    assert!(!outside.path().join("escaped").exists());
    assert!(!Path::new("/tmp/home").join(&name).exists());
    assert!(!Path::new("/tmp").join(&name).exists());
    if let Some(home) = std::env::var_os("HOME") {
        assert!(!Path::new(&home).join(&name).exists());
    }
}

#[test]
fn the_memory_limit_stops_a_greedy_process() {
    let work = tempfile::tempdir().unwrap();
    let limits = Limits {
        memory_mib: 256,
        ..Limits::default()
    };
    let o = run(&job(
        work.path(),
        "b = bytearray(1 << 30)\nprint('allocated')",
        limits,
    ))
    .unwrap();
    assert!(!o.success(), "{o:?}");
    assert!(o.stderr.contains("MemoryError"), "{o:?}");
    // The control: the same with the default limit.
    let o = run(&job(
        work.path(),
        "b = bytearray(1 << 30)\nprint('allocated')",
        Limits::default(),
    ))
    .unwrap();
    assert!(o.success() && o.stdout.starts_with("allocated"), "{o:?}");
}

/// The host's sockets under /run (a session bus, a container engine's) cannot be
/// reached: a read-only mount does not stop a connect(), so the sandbox has its own
/// /run. The control connects from outside.
#[test]
fn no_socket_of_the_hosts_run_folder_is_reachable() {
    let path = std::path::PathBuf::from(format!("/run/typist-sandbox-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = std::os::unix::net::UnixListener::bind(&path)
        .expect("a socket in /run (the suite runs as root, as CI does)");
    let script = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('{}')\n    print('connected')\nexcept OSError as e:\n    print('unreachable', e)\n",
        path.display()
    );
    let outside = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let o = run(&job(work.path(), &script, Limits::default())).unwrap();
    drop(listener);
    std::fs::remove_file(&path).unwrap();
    assert!(String::from_utf8_lossy(&outside.stdout).starts_with("connected"));
    assert!(o.stdout.starts_with("unreachable"), "{o:?}");
}

/// With a user of its own (as the benchmark service runs each job), the sandbox runs as
/// that user, named in its `/etc/passwd`, with no capability and no way to gain one: a
/// file of typist's user that only it may read stays unread even where the sandbox
/// sees it; the working copy (a file of typist's in it too) is the sandbox user's, and
/// what it writes there is.
#[test]
fn a_sandbox_with_a_user_of_its_own_runs_as_it_without_privileges() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("given.txt"), "given").unwrap();
    let shown = tempfile::tempdir().unwrap();
    std::fs::set_permissions(shown.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let secret = shown.path().join("secret");
    std::fs::write(&secret, "s").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let script = format!(
        r#"import os, pwd, json
status = dict(l.split(':\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\t' in l)
try:
    open('{secret}').read()
    secret = 'read'
except OSError as e:
    secret = e.strerror
open('given.txt', 'a').write(' and more')
open('mine.txt', 'w').write('x')
os.makedirs(os.path.join(os.environ['HOME'], '.cache'))
print(json.dumps({{'uid': os.getuid(), 'gid': os.getgid(), 'groups': os.getgroups(),
  'name': pwd.getpwuid(os.getuid()).pw_name, 'eff': status['CapEff'].strip(),
  'prm': status['CapPrm'].strip(), 'nnp': status['NoNewPrivs'].strip(), 'secret': secret}}))
"#,
        secret = secret.display()
    );
    let uid = 1_500_004_242;
    let mut j = job(work.path(), &script, Limits::default());
    j.needs = vec![shown.path().to_path_buf()];
    j.user = Some(uid);
    let o = run(&j).unwrap();
    assert!(o.success(), "{o:?}");
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"uid": uid, "gid": uid, "groups": [], "name": format!("typist-job-{uid}"),
            "eff": "0000000000000000", "prm": "0000000000000000", "nnp": "1",
            "secret": "Permission denied"}),
        "{o:?}"
    );
    for f in ["given.txt", "mine.txt"] {
        let m = std::fs::metadata(work.path().join(f)).unwrap();
        assert_eq!((m.uid(), m.gid()), (uid, uid), "{f}");
    }
    assert_eq!(
        std::fs::read_to_string(work.path().join("given.txt")).unwrap(),
        "given and more"
    );
    // Root itself is refused as a sandbox's own user.
    j.user = Some(0);
    assert!(run(&j).is_err());
}

/// `typist run --assistant-sandbox`: a language server built to find the truth
/// (`fixtures/hostile-server`: it walks the file system for the original of the first
/// file it is shown, a dataset found nowhere else) finds that file without the
/// assistants' sandbox and answers with it, and with the sandbox finds nothing; the run
/// goes on the same either way.
#[test]
fn the_assistants_sandbox_hides_the_dataset_from_a_server_that_looks_for_it() {
    use super::common::{ok, typist, unique_dataset};
    let tmp = tempfile::tempdir().unwrap();
    let dataset = unique_dataset(tmp.path());
    let editors = tmp.path().join("editors");
    std::fs::create_dir_all(&editors).unwrap();
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hostile-server/bin/server");
    let profile = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hostile-server/profile.toml"),
    )
    .unwrap()
    .replace(
        "\"bin/server\"",
        &format!("{:?}", server.display().to_string()),
    );
    std::fs::write(editors.join("hostile-server.toml"), profile).unwrap();
    let probe = |jailed: bool| -> serde_json::Value {
        let out = tmp.path().join(if jailed { "jailed" } else { "plain" });
        let mut c = typist();
        c.args(["run", "--quiet", "--dataset"])
            .arg(&dataset)
            .args([
                "--rate",
                "0.01",
                "--seed",
                "1",
                "--assistant",
                "hostile-server",
            ])
            .arg("--editors")
            .arg(&editors)
            .arg("--out")
            .arg(&out);
        if jailed {
            c.arg("--assistant-sandbox");
        }
        let o = c.output().unwrap();
        ok(&o);
        let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
        records
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find_map(|r| {
                r["predicted"]
                    .as_str()
                    .and_then(|p| p.strip_prefix("PROBE "))
                    .and_then(|p| serde_json::from_str(p).ok())
            })
            .unwrap_or_else(|| panic!("the server said nothing: {records}"))
    };
    let plain = probe(false);
    let found = plain["dataset"].as_str().unwrap();
    assert!(
        found.starts_with(&format!("found {}", dataset.display())),
        "{plain}"
    );
    assert!(found.ends_with(": read 16 bytes"), "{plain}");
    let jailed = probe(true);
    assert!(
        jailed["dataset"].as_str().unwrap().starts_with("not found"),
        "{jailed}"
    );
}
