//! The embedded event publisher: reservation events appended to a JSON-lines file, one envelope
//! per line shaped like the EventBridge entry the AWS backend sends, so tests and local tools can
//! read exactly what downstream consumers would receive.
//!
//! Every append is fsynced before `publish` returns, so an event the relay marks published is
//! on disk; so is the folder's entry of a file just created or rotated (a power cut would
//! otherwise take the new file, and the events appended to it, with its unsynced entry). The
//! file is rotated by size: past [`MAX_BYTES`] it becomes `events.jsonl.1` (the
//! older ones shift up to `.5`, and the oldest is deleted), under a lock file that the API and
//! a separate worker appending to the same log share.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::Serialize;

use super::durable::sync_folder;
use seatclaim_core::codec::to_json;
use seatclaim_core::domain::{EVENT_SOURCE, Notice, ReservationEvent};
use seatclaim_core::ports::{BackendError, EventPublisher};

/// The size past which the log is rotated.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Rotated files kept beside the log (`events.jsonl.1` is the newest).
pub const KEPT_FILES: u32 = 5;

/// Appends published events to a file.
pub struct EventLog {
    file: Arc<Mutex<Appender>>,
}

/// The open log and where it lives.
struct Appender {
    path: PathBuf,
    file: File,
    /// `events.jsonl.lock`: held while appending, so no process rotates under another.
    lock: File,
    max_bytes: u64,
}

#[derive(Serialize)]
struct Envelope<'a, T> {
    source: &'static str,
    #[serde(rename = "detail-type")]
    detail_type: &'static str,
    detail: &'a T,
}

impl EventLog {
    /// Opens the file for appending, creating it if needed.
    pub fn open(path: &Path) -> Result<Self, BackendError> {
        Self::rotating_at(path, MAX_BYTES)
    }

    /// Opens the file for appending, rotated past `max_bytes`.
    pub fn rotating_at(path: &Path, max_bytes: u64) -> Result<Self, BackendError> {
        let open = |path: &Path| {
            append_to(path).map_err(|e| {
                BackendError::permanent(format!("cannot open {}: {e}", path.display()))
            })
        };
        let appender = Appender {
            path: path.to_owned(),
            file: open(path)?,
            lock: open(&path.with_extension("jsonl.lock"))?,
            max_bytes,
        };
        sync_folder(path).map_err(|e| {
            BackendError::permanent(format!("cannot sync the folder of {}: {e}", path.display()))
        })?;
        Ok(Self {
            file: Arc::new(Mutex::new(appender)),
        })
    }
}

/// The `n`th newest rotated file of the log at `path` (`events.jsonl.1` is the newest).
pub(super) fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

fn append_to(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

impl Appender {
    /// Appends `text` durably, first rotating the log if it is full, or reopening it if another
    /// process rotated it away from under this one.
    fn append(&mut self, text: &[u8]) -> std::io::Result<()> {
        self.lock.lock()?;
        let appended = self.append_locked(text);
        let unlocked = self.lock.unlock();
        appended.and(unlocked)
    }

    fn append_locked(&mut self, text: &[u8]) -> std::io::Result<()> {
        if self.is_full()? {
            self.rotate()?;
        }
        if !self.is_current()? {
            self.file = append_to(&self.path)?;
            sync_folder(&self.path)?;
        }
        self.file.write_all(text)?;
        self.file.sync_data()
    }

    fn is_full(&self) -> std::io::Result<bool> {
        match std::fs::metadata(&self.path) {
            Ok(meta) => Ok(meta.len() >= self.max_bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Whether the open file is the one at the path (not a rotated one).
    fn is_current(&self) -> std::io::Result<bool> {
        let open = self.file.metadata()?;
        match std::fs::metadata(&self.path) {
            Ok(at_path) => Ok(open.dev() == at_path.dev() && open.ino() == at_path.ino()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `events.jsonl.4` -> `.5`, ..., `events.jsonl` -> `.1`; the oldest is replaced.
    fn rotate(&mut self) -> std::io::Result<()> {
        let numbered = |n: u32| rotated(&self.path, n);
        for n in (1..KEPT_FILES).rev() {
            match std::fs::rename(numbered(n), numbered(n + 1)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        std::fs::rename(&self.path, numbered(1))?;
        self.file = append_to(&self.path)?;
        sync_folder(&self.path)
    }
}

#[async_trait]
impl EventPublisher for EventLog {
    async fn publish(&self, events: &[ReservationEvent]) -> Result<Vec<usize>, BackendError> {
        let mut text = String::new();
        for event in events {
            text.push_str(&line(event.detail_type(), event)?);
        }
        self.append(text).await?;
        Ok(Vec::new())
    }

    async fn publish_notice(&self, notice: &Notice) -> Result<(), BackendError> {
        self.append(line(notice.detail_type(), notice)?).await
    }
}

/// One line of the log: `detail` in its envelope, newline-terminated.
fn line<T: Serialize>(detail_type: &'static str, detail: &T) -> Result<String, BackendError> {
    let mut line = to_json(&Envelope {
        source: EVENT_SOURCE,
        detail_type,
        detail,
    })?;
    line.push('\n');
    Ok(line)
}

impl EventLog {
    /// Appends whole lines, off the async threads.
    async fn append(&self, text: String) -> Result<(), BackendError> {
        let file = Arc::clone(&self.file);
        tokio::task::spawn_blocking(move || {
            let mut log = file
                .lock()
                .map_err(|_| BackendError::permanent("event log lock poisoned"))?;
            log.append(text.as_bytes())
                .map_err(|e| BackendError::transient(format!("cannot append to event log: {e}")))
        })
        .await
        .map_err(|e| BackendError::transient(format!("event log task did not finish: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event() -> ReservationEvent {
        let intent = seatclaim_core::domain::Intent {
            access: None,
            job_id: seatclaim_core::domain::JobId::new(),
            event_id: seatclaim_core::domain::EventId::parse("e1").unwrap(),
            buyer_id: seatclaim_core::domain::BuyerId::parse("b1").unwrap(),
            request: seatclaim_core::domain::SeatRequest::Section {
                section: seatclaim_core::domain::Section::parse("A").unwrap(),
                quantity: 1,
                together: false,
            },
            accepted_at: jiff::Timestamp::UNIX_EPOCH,
            opens_at: None,
        };
        let job = seatclaim_core::domain::Job::pending(&intent);
        ReservationEvent::of(&job, jiff::Timestamp::UNIX_EPOCH)
    }

    fn lines(path: &Path) -> usize {
        std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
    }

    #[tokio::test]
    async fn the_log_rotates_by_size_and_keeps_five_older_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        // Each publish is one line of a few hundred bytes: every second one rotates.
        let log = EventLog::rotating_at(&path, 300).unwrap();
        // A second writer on the same log, as a separate worker process would be.
        let other = EventLog::rotating_at(&path, 300).unwrap();
        for n in 0..20 {
            let writer = if n % 3 == 0 { &other } else { &log };
            writer.publish(&[event()]).await.unwrap();
        }
        let rotated = |n: u32| dir.path().join(format!("events.jsonl.{n}"));
        assert!(lines(&path) <= 2, "the live file stays small");
        assert!(rotated(KEPT_FILES).exists(), "five rotated files are kept");
        assert!(!rotated(KEPT_FILES + 1).exists(), "and no more");
        for file in std::iter::once(path.clone()).chain((1..=KEPT_FILES).map(rotated)) {
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(
                !text.is_empty() || file == path,
                "{} is empty",
                file.display()
            );
            for line in text.lines() {
                let envelope: serde_json::Value = serde_json::from_str(line).unwrap();
                assert_eq!(envelope["source"], EVENT_SOURCE, "no line is torn");
            }
        }
    }
}
