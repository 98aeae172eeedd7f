//! What the operator's commands did, as values: `seatclaimctl` prints them (their `Display` is
//! the line an operator reads) or reads their fields; the library returns no text.

use std::fmt;
use std::path::PathBuf;

/// What `seatclaimctl init` made ready.
#[derive(Debug, Clone)]
pub enum Ready {
    /// The AWS resources of these names.
    #[cfg(feature = "aws")]
    Aws(crate::adapters::aws::AwsNames),
    /// The embedded backend in this data folder, its database migrated.
    #[cfg(feature = "embedded")]
    Embedded(PathBuf),
}

impl fmt::Display for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "aws")]
            Self::Aws(names) => write!(f, "{names}"),
            #[cfg(feature = "embedded")]
            Self::Embedded(folder) => {
                write!(f, "ready: embedded backend in {}", folder.display())
            }
            #[allow(
                unreachable_patterns,
                reason = "reached only when every backend is compiled out"
            )]
            _ => Ok(()),
        }
    }
}

/// What `seatclaimctl migrate` did.
#[derive(Debug, Clone)]
pub enum Migration {
    /// The AWS resources brought to this build's schema, and what was copied.
    #[cfg(feature = "aws")]
    Aws(crate::adapters::aws::Migration),
    /// A backend that migrates itself when it opens: it was opened.
    Opened(Ready),
}

impl fmt::Display for Migration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "aws")]
            Self::Aws(migration) => write!(f, "{migration}"),
            Self::Opened(ready) => write!(f, "{ready}"),
        }
    }
}

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
