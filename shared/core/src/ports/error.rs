use std::fmt;

/// What the caller should do about a failed backend call; the worker's retry policy is built on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Busy, throttled, unreachable: the same call may succeed later.
    Transient,
    /// Retrying cannot help (data this build cannot read, a broken invariant): give up on the item.
    Permanent,
}

/// A backend call that did not complete. Its message carries the adapter's own error text for the
/// logs; it is never shown to HTTP clients. `Clone` so one failed batch can report each item.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct BackendError {
    /// What to do next.
    pub kind: ErrorKind,
    /// What went wrong, for operators.
    pub message: String,
}

impl BackendError {
    /// A failure worth retrying.
    pub fn transient(message: impl fmt::Display) -> Self {
        Self {
            kind: ErrorKind::Transient,
            message: message.to_string(),
        }
    }

    /// A failure that no retry will cure.
    pub fn permanent(message: impl fmt::Display) -> Self {
        Self {
            kind: ErrorKind::Permanent,
            message: message.to_string(),
        }
    }

    /// Whether a retry might succeed.
    #[must_use]
    pub fn is_transient(&self) -> bool {
        matches!(self.kind, ErrorKind::Transient)
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ErrorKind::Transient => "transient",
            ErrorKind::Permanent => "permanent",
        };
        write!(f, "{kind} backend error: {}", self.message)
    }
}
