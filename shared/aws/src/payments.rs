//! A sale found by its payment on DynamoDB: the sale of a job with a payment writes a marker
//! item `payment#<reference>` in the jobs table, in the same `TransactWriteItems` as the job's
//! transition and its seats, naming the job it sold (`sold_job`). A provider's later report of
//! the same payment that names no job is then recognised by one strongly consistent `GetItem`
//! (`Jobs::sold_by_payment`), never published as unmatched for a refund of a sold seat.
//!
//! The marker has no `event_id` (the audit's scan keeps only its event's jobs) and no
//! `expires_at`: a SOLD job never expires, nor does the record of what paid for it.

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, opt_s, s, update};
use seatclaim_core::domain::{JobId, JobStatus, Transition};
use seatclaim_core::ports::BackendError;

/// The jobs-table key of the marker of the payment `reference`: never a job's key, which is a
/// UUID.
fn payment_key(reference: &str) -> Item {
    Item::from([("job_id".to_owned(), s(format!("payment#{reference}")))])
}

impl DynamoStore {
    /// The marker write of a transition that sells its job with a payment; `None` for any other
    /// (a free sale, a repeat, a release). The first sale a reference paid for keeps the marker:
    /// a payment service reusing a reference for another hold does not move it.
    pub(crate) fn payment_marker(
        &self,
        transition: &Transition,
    ) -> Result<Option<TransactWriteItem>, BackendError> {
        let job = &transition.job;
        let (JobStatus::Sold, Some(reference)) = (job.status, &job.payment_ref) else {
            return Ok(None);
        };
        if transition.from == JobStatus::Sold {
            return Ok(None);
        }
        update(
            &self.names.jobs_table,
            payment_key(reference),
            "SET sold_job = if_not_exists(sold_job, :job)",
            None,
            &[],
            vec![(":job", s(job.job_id.to_string()))],
        )
        .map(Some)
    }

    /// The job the payment `reference` sold, read from its marker (strongly consistent).
    pub(crate) async fn sold_by_payment_ref(
        &self,
        reference: &str,
    ) -> Result<Option<JobId>, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.jobs_table)
            .set_key(Some(payment_key(reference)))
            .projection_expression("sold_job")
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem payment marker", e))?;
        let Some(job) = output.item().and_then(|item| opt_s(item, "sold_job")) else {
            return Ok(None);
        };
        JobId::parse(job)
            .map(Some)
            .ok_or_else(|| BackendError::permanent(format!("payment {reference} names job {job}")))
    }
}
