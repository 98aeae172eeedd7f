//! The operators' use cases on the dead-letter queue: list, replay, purge. Replay's order is the
//! rule that makes it safe: each job is reopened (FAILED -> PENDING) before its intent moves, so
//! no worker can receive the intent while its job still looks decided and drop it.

use std::time::Duration;

use jiff::SignedDuration;

use crate::domain::{Intent, Job, JobId};
use crate::ports::{Backend, BackendError, DeadLetter, Message};

/// The most dead letters one command reads.
const MAX_LETTERS: usize = 10_000;
/// How long the letters a command is about to act on stay reserved (SQS hides what it lists).
const ACTING_HOLD: Duration = Duration::from_secs(120);
/// A mere listing hides nothing.
const LISTING_HOLD: Duration = Duration::ZERO;

/// A dead letter with what its intent and job say about it.
#[derive(Debug, Clone)]
pub struct DeadLetterView {
    /// The letter as the queue holds it.
    pub letter: DeadLetter,
    /// Its intent, if the body decodes.
    pub intent: Option<Intent>,
    /// Its job, if the letter names one that exists.
    pub job: Option<Job>,
}

/// Every dead letter (up to a large limit), described; reserves nothing.
pub async fn list(backend: &Backend) -> Result<Vec<DeadLetterView>, BackendError> {
    let letters = backend
        .queue
        .dead_letters(MAX_LETTERS, LISTING_HOLD)
        .await?;
    let mut views = Vec::with_capacity(letters.len());
    for letter in letters {
        let job = match letter.job_id {
            Some(id) => super::jobs::job(backend, id).await?,
            None => None,
        };
        let intent = match &letter.message {
            Message::Intent(intent) => Some(intent.clone()),
            Message::Undecodable { .. } => None,
        };
        views.push(DeadLetterView {
            letter,
            intent,
            job,
        });
    }
    Ok(views)
}

/// Which dead letters a replay takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Every one.
    All,
    /// Those of these jobs; each must be in the queue.
    Jobs(Vec<JobId>),
}

/// What a replay did (or, dry, would do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// The jobs whose intents were (or would be) moved back, in queue order.
    pub jobs: Vec<Option<JobId>>,
    /// How many FAILED jobs were reopened as PENDING.
    pub reopened: usize,
}

/// Why a replay did nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// Some named jobs have no dead letter.
    #[error("not in the dead-letter queue: {0:?}")]
    NotDeadLettered(Vec<JobId>),
    /// The backend failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// Replays the selected dead letters: reopens their jobs, then moves them back to the queue.
/// A dry run reserves and changes nothing. Letters not selected are released at once.
pub async fn replay(
    backend: &Backend,
    selection: &Selection,
    dry_run: bool,
) -> Result<Replayed, ReplayError> {
    let hold = if dry_run { LISTING_HOLD } else { ACTING_HOLD };
    let letters = backend.queue.dead_letters(MAX_LETTERS, hold).await?;
    let chosen_by = |letter: &DeadLetter| match selection {
        Selection::All => true,
        Selection::Jobs(ids) => letter.job_id.is_some_and(|id| ids.contains(&id)),
    };
    let (chosen, others): (Vec<DeadLetter>, Vec<DeadLetter>) =
        letters.into_iter().partition(chosen_by);
    backend.queue.release(&others).await?;
    if let Selection::Jobs(ids) = selection {
        let missing: Vec<JobId> = ids
            .iter()
            .filter(|id| !chosen.iter().any(|l| l.job_id == Some(**id)))
            .copied()
            .collect();
        if !missing.is_empty() {
            backend.queue.release(&chosen).await?;
            return Err(ReplayError::NotDeadLettered(missing));
        }
    }
    let mut reopened = 0;
    if !dry_run {
        let now = backend.clock.now();
        for job_id in chosen.iter().filter_map(|l| l.job_id) {
            reopened += usize::from(backend.jobs.reopen(job_id, now).await?);
        }
        backend.queue.redrive(&chosen).await?;
    }
    Ok(Replayed {
        jobs: chosen.iter().map(|l| l.job_id).collect(),
        reopened,
    })
}

/// What a purge found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Purged {
    /// Dead letters older than the limit.
    pub old: usize,
    /// Whether they were deleted (only when confirmed).
    pub deleted: bool,
}

/// Deletes, for good, the dead letters older than `older_than`, but only when `confirmed`;
/// otherwise only counts them. Younger ones are left (and released) as they were.
pub async fn purge(
    backend: &Backend,
    older_than: SignedDuration,
    confirmed: bool,
) -> Result<Purged, BackendError> {
    let hold = if confirmed { ACTING_HOLD } else { LISTING_HOLD };
    let letters = backend.queue.dead_letters(MAX_LETTERS, hold).await?;
    let now = backend.clock.now();
    let (old, recent): (Vec<DeadLetter>, Vec<DeadLetter>) = letters
        .into_iter()
        .partition(|l| now.duration_since(l.dead_lettered_at) > older_than);
    backend.queue.release(&recent).await?;
    if confirmed {
        backend.queue.purge(&old).await?;
    }
    Ok(Purged {
        old: old.len(),
        deleted: confirmed,
    })
}
