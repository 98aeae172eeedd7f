//! The waitlist on DynamoDB. A WAITLISTED job's place in line is an item of the outbox table in
//! one of [`LINE_SHARDS`] partitions of its section's line (`line#event#section#shard`), sorted
//! by the domain's `line_place`: its intent's admission instant (to the millisecond; then by job
//! id, which orders intents admitted within one millisecond arbitrarily, as no two API tasks'
//! clocks could do better), or, for a pre-queue's job that lost the draw, the sale's start and
//! its drawn ticket. The job's item records the place's key (`line_place`) when it joins.
//! Joining is one transaction: the job's move to WAITLISTED, its event, its place, under a seat
//! limit its quantity added to the buyer's count (`seat_counts.rs`), and a check that the
//! shard's closed marker is absent, so a
//! join racing the waitlist's closing either lands before it (and is closed with the rest) or
//! fails. Whether a section has a line is its flag's (`line/flags.rs`); who heads it is a
//! strongly consistent read of every shard; a place is deleted in the transaction that ends the job's wait. Seats freed by a settlement go
//! to the line right after it commits (the core's optimistic step), and the sweeper serves every open line on
//! each pass, so a process that died between the two leaves the seats for seconds, not for good.

use aws_sdk_dynamodb::types::{ConditionCheck, Delete, Put, TransactWriteItem};
use futures_util::{StreamExt, TryStreamExt};

use crate::DynamoStore;
use crate::dynamo::error::{build_error, classify};
use crate::dynamo::item::{Item, s};
use crate::dynamo::keys::{LINE_SHARD_READS, LINE_SHARDS, line_key, line_shard};
use crate::events::catalog::WAITLIST;
use seatclaim_core::domain::{EventId, Job, Reason, Section, Waitlist};
use seatclaim_core::ports::BackendError;
use seatclaim_core::step::optimistic;

/// The sort key of a line shard's closed marker: below every job id (`#` sorts before digits
/// and letters), so reads of places (`id >= "0"`) never see it.
const MARKER: &str = "#closed";

/// The key of `job`'s place (`place`, its sort key) in its section's line.
fn place_key(job: &Job, section: &str, place: String) -> Item {
    Item::from([
        (
            "job_id".to_owned(),
            s(line_key(&job.event_id, section, line_shard(job.job_id))),
        ),
        ("id".to_owned(), s(place)),
    ])
}

fn marker_key(event_id: &EventId, section: &str, shard: u32) -> Item {
    Item::from([
        ("job_id".to_owned(), s(line_key(event_id, section, shard))),
        ("id".to_owned(), s(MARKER)),
    ])
}

/// The section whose line a waiting job stands in.
pub(crate) fn section_of(job: &Job) -> Result<&Section, BackendError> {
    job.request.section().ok_or_else(|| {
        BackendError::permanent(format!("job {} waits without a section", job.job_id))
    })
}

impl DynamoStore {
    /// The deletion of `job`'s place in line, in the transaction that ends its wait.
    pub(crate) async fn leave_line(&self, job: &Job) -> Result<TransactWriteItem, BackendError> {
        let place = self.joined_place(job).await?;
        let key = place_key(job, section_of(job)?.as_str(), place);
        let delete = Delete::builder()
            .table_name(&self.names.outbox_table)
            .set_key(Some(key))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().delete(delete).build())
    }

    /// The put of `job`'s place (`place`, its sort key) in the line of `section`.
    pub(crate) fn place_write(
        &self,
        job: &Job,
        section: &str,
        place: String,
    ) -> Result<TransactWriteItem, BackendError> {
        let place = Put::builder()
            .table_name(&self.names.outbox_table)
            .set_item(Some(place_key(job, section, place)))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().put(place).build())
    }

    /// The check that the shard of the line `job` joins has no closed marker.
    pub(crate) fn open_check(
        &self,
        job: &Job,
        section: &str,
    ) -> Result<TransactWriteItem, BackendError> {
        let open = ConditionCheck::builder()
            .table_name(&self.names.outbox_table)
            .set_key(Some(marker_key(
                &job.event_id,
                section,
                line_shard(job.job_id),
            )))
            .condition_expression("attribute_not_exists(id)")
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().condition_check(open).build())
    }

    /// Marks this process's cached terms of `event_id` with `waitlist`.
    pub(crate) fn set_cached_waitlist(
        &self,
        event_id: &EventId,
        waitlist: Waitlist,
    ) -> Result<(), BackendError> {
        let now = self.clock.now();
        if let Some(mut meta) = self.events.get(event_id, now)? {
            meta.waitlist = waitlist;
            self.events.insert(event_id.clone(), meta, now)?;
        }
        Ok(())
    }

    /// Closes `event_id`'s waitlist: the event item says so, every line shard gets its closed
    /// marker (after which no join commits), and then every job still in a line is REJECTED
    /// ("waitlist closed"), each with its event. Returns how many were waiting.
    pub(crate) async fn close_lines(
        &self,
        event_id: &EventId,
        sections: &[String],
    ) -> Result<usize, BackendError> {
        self.db
            .update_item()
            .table_name(&self.names.events_table)
            .key("event_id", s(event_id.as_str()))
            .update_expression("SET #waitlist = :closed")
            .expression_attribute_names("#waitlist", WAITLIST)
            .expression_attribute_values(":closed", s(Waitlist::Closed.as_str()))
            .send()
            .await
            .map_err(|e| classify("UpdateItem event waitlist", e))?;
        self.set_cached_waitlist(event_id, Waitlist::Closed)?;
        let mut markers = Vec::new();
        for section in sections {
            for shard in 0..LINE_SHARDS {
                let put = self
                    .db
                    .put_item()
                    .table_name(&self.names.outbox_table)
                    .set_item(Some(marker_key(event_id, section, shard)));
                markers.push(put.send());
            }
        }
        futures_util::stream::iter(markers)
            .buffer_unordered(LINE_SHARD_READS)
            .map_err(|e| classify("PutItem line marker", e))
            .try_collect::<Vec<_>>()
            .await?;
        let mut closed = 0;
        for section in sections {
            for job_id in self.whole_line(event_id, section).await? {
                if optimistic::end_wait(self, job_id, &Reason::waitlist_closed()).await? {
                    closed += 1;
                }
            }
        }
        Ok(closed)
    }
}
