//! Rejections on DynamoDB: most intents of a flash sale end rejected, so a rejection costs two
//! plain writes instead of a transaction. The job's conditional update comes first, and its
//! event goes back to the worker (`Claims::unrecorded`), which publishes it and records it here:
//! as published, or as pending (the relay's work) if EventBridge refused it. The worker deletes
//! the queued intent only after both, so a crash in between is mended by the redelivery: it
//! finds the job REJECTED without its record and hands the event back again (a duplicate event
//! only after a crash, as with the relay).

use jiff::Timestamp;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::s;
use seatclaim_core::domain::JobId;
use seatclaim_core::ports::BackendError;

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
}
