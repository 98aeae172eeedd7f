//! Rejections on DynamoDB: most intents of a flash sale end rejected, so a rejection costs two
//! plain writes instead of a transaction. The job's conditional update comes first, and its
//! event goes back to the worker (`Claims::unrecorded`), which publishes it and records it here:
//! as published, or as pending (the relay's work) if EventBridge refused it. The worker deletes
//! the queued intent only after both, so a crash in between is mended by the redelivery: it
//! finds the job REJECTED without its record and hands the event back again (a duplicate event
//! only after a crash, as with the relay).

use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
use jiff::Timestamp;

use super::DynamoStore;
use super::error::{build_error, classify};
use super::item::{n, s};
use super::outbox::{PUBLISHED_TTL_SECONDS, WRITE_BATCH, outbox_item};
use crate::domain::{JobId, ReservationEvent};
use crate::ports::BackendError;

/// The outbox id of an event recorded after its transition. It is named by the transition's
/// instant (a rejection's is the job's `updated_at`), so a redelivery finds, or rewrites, that
/// same record.
fn record_id(at: Timestamp) -> String {
    format!("{:013}-recorded", at.as_millisecond())
}

impl DynamoStore {
    /// Whether the job's event of the transition at `at` is recorded (a strongly consistent read).
    pub(super) async fn is_recorded(
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

    /// Puts the records of events decided without an entry, 25 to a `BatchWriteItem`: published
    /// ones with `expires_at` (the TTL of history), refused ones marked pending for the relay.
    pub(super) async fn put_records(
        &self,
        events: &[ReservationEvent],
        refused: &[usize],
    ) -> Result<(), BackendError> {
        let expires = n(self.clock.now().as_second() + PUBLISHED_TTL_SECONDS);
        let requests = events
            .iter()
            .enumerate()
            .map(|(i, event)| {
                let pending = refused.contains(&i);
                let mut item = outbox_item(event, record_id(event.occurred_at), pending)?;
                if !pending {
                    item.insert("expires_at".to_owned(), expires.clone());
                }
                let put = PutRequest::builder()
                    .set_item(Some(item))
                    .build()
                    .map_err(build_error)?;
                Ok(WriteRequest::builder().put_request(put).build())
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        let writes = requests
            .chunks(WRITE_BATCH)
            .map(|chunk| self.batch_write(&self.names.outbox_table, chunk.to_vec()));
        futures_util::future::try_join_all(writes).await?;
        Ok(())
    }
}
