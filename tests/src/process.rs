use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

/// The path of a workspace binary, built once per test process so tests always run the current
/// code: the shipped ones, or the test crate's `seatclaim-faulty-api` and
/// `seatclaim-faulty-worker`, the same processes with fault injection (`crate::faults`).
/// It is built as part of the whole workspace's tests, so that every crate has the features
/// `cargo test --workspace` gave it: after that run this build only links the binaries, where a
/// narrower one would compile the libraries again under other features.
pub fn binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    // target/debug/deps/<test> -> target/debug
    let exe = std::env::current_exe().expect("the test's own path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the target folder")
        .to_owned();
    BUILT.get_or_init(|| {
        let status = cargo()
            .args(["build", "--quiet", "--workspace", "--bins", "--tests"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the binaries failed");
    });
    dir.join(name)
}

/// A cargo command run at the workspace root, as a developer's would be, without the variables
/// of the crate under test. Cargo gives a test the variables of the crate it tests
/// (CARGO_MANIFEST_DIR and such); handed on, they would change what build scripts see (ring's
/// reads CARGO_MANIFEST_DIR): a build, and the next `cargo test` after it, would each compile
/// ring and all that depends on it again.
pub fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(is_crate_variable) {
            command.env_remove(name);
        }
    }
    command.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    command
}

/// Whether `name` is one of the variables cargo sets for the crate it compiles or tests, rather
/// than one of cargo's own settings (`CARGO_HOME`, `CARGO_TARGET_DIR`, ...).
fn is_crate_variable(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_BIN_EXE_")
        || matches!(
            name,
            "CARGO_MANIFEST_DIR"
                | "CARGO_MANIFEST_PATH"
                | "CARGO_MANIFEST_LINKS"
                | "CARGO_CRATE_NAME"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_TARGET_TMPDIR"
                | "CARGO_RUSTC_CURRENT_DIR"
        )
}

/// A seatclaim binary running as a child process, killed when dropped.
pub struct ChildProcess {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl ChildProcess {
    /// Starts `name` with JSON logs and these extra environment variables.
    pub fn start(name: &str, env: &[(&str, String)]) -> Self {
        let mut command = Command::new(binary(name));
        command
            .env("SEATCLAIM_LOG_FORMAT", "json")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("the binary starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (send, lines) = mpsc::channel();
        // Set to echo every child's log lines (with `--nocapture`) while a test is looked into.
        let echo = std::env::var_os("SEATCLAIM_TEST_CHILD_LOGS").map(|_| name.to_owned());
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(name) = &echo {
                    eprintln!("[{name}] {line}");
                }
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, lines }
    }

    /// Waits for a log line containing `needle` and returns it.
    pub fn wait_for_log(&self, needle: &str, within: Duration) -> String {
        let deadline = std::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(error) => panic!("no log line with {needle:?}: {error}"),
            }
        }
    }

    /// The base URL (`http://` and the bound address) of a server started with
    /// `SEATCLAIM_LISTEN=127.0.0.1:0`, from its "listening" log line.
    pub fn listening_url(&self, within: Duration) -> String {
        let line = self.wait_for_log("listening", within);
        let log: serde_json::Value = serde_json::from_str(&line).expect("JSON logs");
        let address = log["address"]
            .as_str()
            .expect("the bound address is logged");
        format!("http://{address}")
    }

    /// Counts the log lines received so far that contain `needle`, consuming them.
    pub fn count_logs(&self, needle: &str) -> usize {
        self.lines
            .try_iter()
            .filter(|line| line.contains(needle))
            .count()
    }

    /// The OS process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: the process dies at once, mid-whatever.
    pub fn kill(mut self) {
        self.child.kill().expect("SIGKILL is delivered");
        self.child.wait().expect("the killed child is reaped");
    }

    /// Waits for the process to exit on its own (one that refuses to start); returns its status
    /// and every line it wrote to stderr. Fails if it still runs after `within` (a server that
    /// started instead), killing it.
    pub fn exit_within(mut self, within: Duration) -> (ExitStatus, String) {
        let deadline = std::time::Instant::now() + within;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("the child can be polled") {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the process still runs after {within:?}: {}",
                self.lines.try_iter().collect::<Vec<_>>().join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread ends at the pipe's end, once the rest of stderr is read.
        let said: Vec<String> = self.lines.iter().collect();
        (status, said.join("\n"))
    }

    /// SIGTERM, then waits for the process to exit on its own.
    pub fn terminate(mut self, within: Duration) -> ExitStatus {
        let sent = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("the child can be polled") {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the process did not exit after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
