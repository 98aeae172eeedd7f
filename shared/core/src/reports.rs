//! What the embedded backend's file commands did, as plain values (a layer of its own, below
//! the adapters that make them and the composition that hands them on): `seatclaimctl` prints
//! them (their `Display` is the line an operator reads) or reads their fields.

use std::fmt;
use std::path::PathBuf;

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
    /// The version the services migrate it to when they start, if it is older than theirs.
    pub migrates_to: Option<usize>,
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
        match self.migrates_to {
            Some(version) => write!(
                f,
                "; the services migrate it to version {version} when they start"
            ),
            None => Ok(()),
        }
    }
}
