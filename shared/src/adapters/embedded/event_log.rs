//! The embedded event publisher: reservation events appended to a JSON-lines file, one envelope
//! per line shaped like the EventBridge entry the AWS backend sends, so tests and local tools can
//! read exactly what downstream consumers would receive.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::Serialize;

use crate::codec::to_json;
use crate::domain::{EVENT_SOURCE, ReservationEvent};
use crate::ports::{BackendError, EventPublisher};

/// Appends published events to a file.
pub struct EventLog {
    file: Arc<Mutex<File>>,
}

#[derive(Serialize)]
struct Envelope<'a> {
    source: &'static str,
    #[serde(rename = "detail-type")]
    detail_type: &'static str,
    detail: &'a ReservationEvent,
}

impl EventLog {
    /// Opens the file for appending, creating it if needed.
    pub fn open(path: &Path) -> Result<Self, BackendError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| BackendError::permanent(format!("cannot open {}: {e}", path.display())))?;
        Ok(Self {
            file: Arc::new(Mutex::new(file)),
        })
    }
}

#[async_trait]
impl EventPublisher for EventLog {
    async fn publish(&self, events: &[ReservationEvent]) -> Result<Vec<usize>, BackendError> {
        let mut text = String::new();
        for event in events {
            let envelope = Envelope {
                source: EVENT_SOURCE,
                detail_type: event.detail_type(),
                detail: event,
            };
            let line = to_json(&envelope)?;
            text.push_str(&line);
            text.push('\n');
        }
        let file = Arc::clone(&self.file);
        tokio::task::spawn_blocking(move || {
            let mut file = file
                .lock()
                .map_err(|_| BackendError::permanent("event log lock poisoned"))?;
            file.write_all(text.as_bytes())
                .and_then(|()| file.flush())
                .map_err(|e| BackendError::transient(format!("cannot append to event log: {e}")))
        })
        .await
        .map_err(|e| BackendError::transient(format!("event log task did not finish: {e}")))??;
        Ok(Vec::new())
    }
}
