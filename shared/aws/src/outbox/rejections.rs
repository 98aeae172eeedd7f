//! Rejections on DynamoDB: most intents of a flash sale end rejected, so a rejection costs two
//! plain writes instead of a transaction. The job's conditional update comes first, and its
//! event goes back to the worker (`Claims::unrecorded`), which publishes it and records it here:
//! as published, or as pending (the relay's work) if EventBridge refused it. The worker deletes
//! the queued intent only after both, so a crash in between is mended by the redelivery: it
//! finds the job REJECTED without its record and hands the event back again (a duplicate event
//! only after a crash, as with the relay).

use jiff::{SignedDuration, Timestamp};

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::s;
use seatclaim_core::domain::{JobId, JobStatus, ReservationEvent};
use seatclaim_core::ports::{BackendError, ClaimOutcome};
use seatclaim_core::step::Decided;

/// How long a rejection's deciding delivery has to record its event. A delivery of the same
/// job within that time (a duplicate) waits for that record instead of taking the event over, so
/// that only a crash, never a duplicate, publishes a rejection twice; a crashed worker's intent
/// comes back only after the visibility timeout, by when the grace has usually passed.
const RECORD_GRACE: SignedDuration = SignedDuration::from_secs(5);

/// How often a duplicate delivery looks for the deciding delivery's record during the grace.
const RECORD_POLL: SignedDuration = SignedDuration::from_millis(100);

/// The outbox id of an event recorded after its transition. It is named by the transition's
/// instant (a rejection's is the job's `updated_at`), so a redelivery finds, or rewrites, that
/// same record.
pub(crate) fn record_id(at: Timestamp) -> String {
    format!("{:013}-recorded", at.as_millisecond())
}

impl DynamoStore {
    /// Whether the job's event of the transition at `at` is recorded (a strongly consistent read).
    pub(crate) async fn is_recorded(
        &self,
        job_id: JobId,
        at: Timestamp,
    ) -> Result<bool, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.outbox_table)
            .key("job_id", s(job_id.to_string()))
            .key("id", s(record_id(at)))
            .consistent_read(true)
            .projection_expression("id")
            .send()
            .await
            .map_err(|e| classify("GetItem outbox record", e))?;
        Ok(output.item().is_some())
    }

    /// How another delivery decided the job. A rejection whose event is not recorded gets it
    /// recorded now if a crash kept it from being recorded. Within [`RECORD_GRACE`] of the
    /// rejection its deciding delivery may still be recording it, so this one waits for that
    /// record first. It waits rather than failing: a failure would spend one of the intent's
    /// attempts, and an intent whose attempts ran out on a decided job would be dead-lettered
    /// with its rejection never published.
    pub(crate) async fn already_decided(
        &self,
        job_id: JobId,
        now: Timestamp,
    ) -> Result<Decided, BackendError> {
        let (job, at) = self
            .load_job_at(job_id)
            .await?
            .ok_or_else(|| BackendError::permanent(format!("job {job_id} vanished")))?;
        let decided = ClaimOutcome::AlreadyDecided(job.status);
        if job.status != JobStatus::Rejected {
            return Ok((decided, None));
        }
        // The polls are counted, not timed against the store's clock, which a test may hold.
        let left = (RECORD_GRACE - now.duration_since(at)).max(SignedDuration::ZERO);
        let polls = left.as_millis() / RECORD_POLL.as_millis();
        for poll in 0..=polls {
            if self.is_recorded(job_id, at).await? {
                return Ok((decided, None));
            }
            if poll < polls {
                tokio::time::sleep(RECORD_POLL.unsigned_abs()).await;
            }
        }
        Ok((decided, Some(ReservationEvent::of(&job, at))))
    }
}
