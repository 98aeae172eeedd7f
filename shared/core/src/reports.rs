//! What the embedded backend's file commands did, as plain values (a layer of its own, below
//! the adapters that make them and the composition that hands them on): `seatclaimctl` prints
//! them (their `Display` is the line an operator reads) or reads their fields.

use std::fmt;
use std::path::PathBuf;

use jiff::Timestamp;
use serde::Serialize;

use crate::domain::{BuyerId, EventId, JobId, JobStatus, NotReapplied, SeatId};

/// What `seatclaimctl backup` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackedUp {
    /// The live database copied.
    pub database: PathBuf,
    /// The backup file written.
    pub destination: PathBuf,
    /// The backup's size.
    pub bytes: u64,
    /// The schema version of the copy.
    pub schema_version: usize,
}

impl fmt::Display for BackedUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "backed up {} to {} ({} bytes, schema version {})",
            self.database.display(),
            self.destination.display(),
            self.bytes,
            self.schema_version
        )
    }
}

/// What `seatclaimctl restore` put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The live database replaced.
    pub database: PathBuf,
    /// The backup it was replaced with.
    pub source: PathBuf,
    /// The backup's schema version.
    pub schema_version: usize,
    /// The version the restore migrated it to, if it was older than this build's (the
    /// published events are re-applied in this build's schema).
    pub migrated_to: Option<usize>,
    /// What the restore re-applied of the events published after the backup's moment.
    pub reapplication: Reapplication,
}

impl fmt::Display for Restored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "restored {} from {} (schema version {})",
            self.database.display(),
            self.source.display(),
            self.schema_version
        )?;
        match self.migrated_to {
            Some(version) => write!(f, "; migrated to version {version}"),
            None => Ok(()),
        }
    }
}

/// The published events a restore found newer than the backup, and what it did with them: a
/// sale, hold, cancel or expiry that buyers were told of is not forgotten.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Reapplication {
    /// The jobs brought to their published state, in the order they were written.
    pub reapplied: Vec<ReappliedJob>,
    /// The jobs whose published state was not re-applied, to reconcile by hand.
    pub not_reapplied: Vec<NotReappliedJob>,
    /// The jobs the log speaks of that the restored database already has in their published
    /// state.
    pub unchanged: usize,
}

/// A job a restore brought to the state its published events left it in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReappliedJob {
    /// The job.
    pub job_id: JobId,
    /// Its event.
    pub event_id: EventId,
    /// Its buyer.
    pub buyer_id: BuyerId,
    /// Its status now, its last published one.
    pub status: JobStatus,
    /// Its seats, written to it (HELD, SOLD) or given back if it still held them (ended).
    pub seat_ids: Vec<SeatId>,
    /// When its last published transition happened.
    pub occurred_at: Timestamp,
    /// Whether the backup lacked the job, so it was recreated (without its idempotency key).
    pub created: bool,
}

/// A job whose published state a restore did not re-apply, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotReappliedJob {
    /// The job.
    pub job_id: JobId,
    /// Its event.
    pub event_id: EventId,
    /// Its last published status.
    pub status: JobStatus,
    /// Why it was left as the backup has it.
    #[serde(flatten)]
    pub why: NotReapplied,
}

impl fmt::Display for ReappliedJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seats: Vec<&str> = self.seat_ids.iter().map(SeatId::as_str).collect();
        write!(
            f,
            "job {} {} seats [{}] of event {} at {} (buyer {}){}",
            self.job_id,
            self.status.as_str(),
            seats.join(", "),
            self.event_id,
            self.occurred_at,
            self.buyer_id,
            if self.created { ", recreated" } else { "" }
        )
    }
}

impl fmt::Display for NotReappliedJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "job {} {} of event {}: {}",
            self.job_id,
            self.status.as_str(),
            self.event_id,
            self.why
        )
    }
}
