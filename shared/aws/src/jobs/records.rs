use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use futures_util::{StreamExt, TryStreamExt};
use jiff::Timestamp;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{
    Item, Transacted, all_pages, get_n, get_s, n, opt_n, opt_s, s, transact, update,
};
use crate::dynamo::keys::held_shard;
use seatclaim_core::codec::{JobRecord, decode_event, encode_payment, from_ms, to_json, to_ms};
use seatclaim_core::domain::{
    Closure, EventId, Job, JobId, JobStatus, Line, ReservationEvent, Transition,
};
use seatclaim_core::ports::{BackendError, Jobs};

/// Segments of the audit's parallel scan of the jobs table, all read at once.
const AUDIT_SEGMENTS: i32 = 16;

/// The key of a job's item.
pub(crate) fn job_key(job_id: JobId) -> Item {
    Item::from([("job_id".to_owned(), s(job_id.to_string()))])
}

/// A new PENDING job's item.
pub(crate) fn job_item(job: &Job, now: Timestamp) -> Result<Item, BackendError> {
    let record = JobRecord::of(job)?;
    Ok(Item::from([
        ("job_id".to_owned(), s(record.job_id)),
        ("event_id".to_owned(), s(record.event_id)),
        ("buyer_id".to_owned(), s(record.buyer_id)),
        ("request".to_owned(), s(record.request)),
        ("status".to_owned(), s(record.status)),
        ("seat_ids".to_owned(), s(record.seat_ids)),
        ("accepted_at".to_owned(), n(record.accepted_at)),
        ("updated_at".to_owned(), n(to_ms(now))),
    ])
    .into_iter()
    .chain(
        record
            .payment
            .map(|payment| ("payment".to_owned(), s(payment))),
    )
    .chain(record.access.map(|access| ("access".to_owned(), s(access))))
    .collect())
}

fn job_from_item(item: &Item) -> Result<Job, BackendError> {
    let text = |name: &str| opt_s(item, name).map(str::to_owned);
    JobRecord {
        job_id: get_s(item, "job_id")?.to_owned(),
        event_id: get_s(item, "event_id")?.to_owned(),
        buyer_id: get_s(item, "buyer_id")?.to_owned(),
        request: get_s(item, "request")?.to_owned(),
        status: get_s(item, "status")?.to_owned(),
        seat_ids: get_s(item, "seat_ids")?.to_owned(),
        hold_until: opt_n(item, "hold_until")?,
        reason: text("reason"),
        reason_code: text("reason_code"),
        accepted_at: get_n(item, "accepted_at")?,
        first_error: text("first_error"),
        last_error: text("last_error"),
        payment: text("payment"),
        hold_extensions: opt_n(item, "hold_extensions")?.unwrap_or(0),
        access: text("access"),
    }
    .into_job()
}

impl DynamoStore {
    /// Reads a job with a strongly consistent read: decisions must see the latest state.
    pub(crate) async fn load_job(&self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        Ok(self.load_job_at(job_id).await?.map(|(job, _)| job))
    }

    /// A job (strongly consistent) and when it last changed: its last transition's instant.
    pub(crate) async fn load_job_at(
        &self,
        job_id: JobId,
    ) -> Result<Option<(Job, Timestamp)>, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.jobs_table)
            .set_key(Some(job_key(job_id)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem job", e))?;
        output
            .item()
            // An alias (a version 2 key, `admissions.rs`) names a job; it is none itself.
            .filter(|item| !item.contains_key("alias_of"))
            .map(|item| Ok((job_from_item(item)?, from_ms(get_n(item, "updated_at")?)?)))
            .transpose()
    }

    /// The writes that persist a decided transition and record its reservation event: the job
    /// update is conditioned, as the domain names, on the job still having the status it moved from.
    pub(crate) fn transition(
        &self,
        transition: &Transition,
    ) -> Result<Vec<TransactWriteItem>, BackendError> {
        Ok(vec![
            self.job_write(transition)?,
            self.outbox_put(&transition.event, transition.event.occurred_at)?,
        ])
    }

    /// The writes of a job's move into its section's line: as [`Self::transition`]'s, with the
    /// sort key of its place in line (`place`) recorded on the job, which its leaving then names
    /// (`waitlist.rs`).
    pub(crate) fn joining(
        &self,
        waiting: &Transition,
        place: &str,
    ) -> Result<Vec<TransactWriteItem>, BackendError> {
        Ok(vec![
            self.job_update(waiting, Some(place))?,
            self.outbox_put(&waiting.event, waiting.event.occurred_at)?,
        ])
    }

    /// The job's update of a transition, conditioned on the status it moved from; its
    /// `updated_at` is the event's instant (which a rejection's record is named by).
    pub(crate) fn job_write(
        &self,
        transition: &Transition,
    ) -> Result<TransactWriteItem, BackendError> {
        self.job_update(transition, None)
    }

    /// [`Self::job_write`], recording `place` as the job's `line_place` when it joins a line.
    fn job_update(
        &self,
        transition: &Transition,
        place: Option<&str>,
    ) -> Result<TransactWriteItem, BackendError> {
        let (job, from, now) = (
            &transition.job,
            transition.from,
            transition.event.occurred_at,
        );
        let mut set = vec![
            "#status = :status",
            "seat_ids = :seats",
            "updated_at = :now",
        ];
        let mut remove = Vec::new();
        let mut values = vec![
            (":status", s(job.status.as_str())),
            (":from", s(from.as_str())),
            (":seats", s(to_json(&job.seat_ids)?)),
            (":now", n(now.as_millisecond())),
        ];
        if let Some(place) = place {
            set.push("line_place = :place");
            values.push((":place", s(place)));
        }
        match (job.status, job.hold_expires_at) {
            (JobStatus::Held, Some(until)) => {
                set.extend(["hold_until = :until", "held_shard = :shard"]);
                values.push((":until", n(until.as_millisecond())));
                values.push((
                    ":shard",
                    s(held_shard(job.job_id, self.settings.held_shards)),
                ));
            }
            _ => remove.push("held_shard"),
        }
        match &job.reason {
            Some(reason) => {
                set.push("reason = :reason");
                values.push((":reason", AttributeValue::S(reason.clone())));
            }
            None => remove.push("reason"),
        }
        match job.reason_code {
            Some(code) => {
                set.push("reason_code = :reason_code");
                values.push((":reason_code", s(code.as_str())));
            }
            None => remove.push("reason_code"),
        }
        match encode_payment(job)? {
            Some(payment) => {
                set.push("payment = :payment");
                values.push((":payment", s(payment)));
            }
            None => remove.push("payment"),
        }
        if job.hold_extensions > 0 {
            set.push("hold_extensions = :extensions");
            values.push((":extensions", n(i64::from(job.hold_extensions))));
        }
        // The jobs table's TTL deletes a decided job once the domain's retention has passed
        // (a replay's reopen removes it again).
        match self.settings.retention.expires_at(job.status, now) {
            Some(expires) => {
                set.push("expires_at = :expires");
                values.push((":expires", n(expires.as_second())));
            }
            None => remove.push("expires_at"),
        }
        let mut expression = format!("SET {}", set.join(", "));
        if !remove.is_empty() {
            expression.push_str(&format!(" REMOVE {}", remove.join(", ")));
        }
        update(
            &self.names.jobs_table,
            job_key(job.job_id),
            &expression,
            Some("#status = :from"),
            &[("#status", "status")],
            values,
        )
    }
}

#[async_trait]
impl Jobs for DynamoStore {
    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        self.load_job(job_id).await
    }

    async fn line(&self, job: &Job) -> Result<Line, BackendError> {
        self.line_of(job).await
    }

    async fn waitlist_position(&self, job: &Job) -> Result<Option<u64>, BackendError> {
        self.line_position(job).await
    }

    async fn close(
        &self,
        job_id: JobId,
        closure: &Closure,
        now: Timestamp,
    ) -> Result<bool, BackendError> {
        let Some(Ok(transition)) = self.load_job(job_id).await?.map(|j| j.close(closure, now))
        else {
            return Ok(false);
        };
        let writes = self.transition(&transition)?;
        let closed = matches!(transact(&self.db, writes).await?, Transacted::Committed);
        if closed {
            self.process.lines.decided(&transition.job.event_id, 1);
        }
        Ok(closed)
    }

    async fn note_failure(&self, job_id: JobId, error: &str) -> Result<(), BackendError> {
        self.db
            .update_item()
            .table_name(&self.names.jobs_table)
            .set_key(Some(job_key(job_id)))
            .update_expression(
                "SET first_error = if_not_exists(first_error, :error), last_error = :error",
            )
            .condition_expression("attribute_exists(job_id)")
            .expression_attribute_values(":error", s(error))
            .send()
            .await
            .map_err(|e| classify("UpdateItem job failure", e))?;
        Ok(())
    }

    async fn reopen(&self, job_id: JobId, now: Timestamp) -> Result<bool, BackendError> {
        let Some(Ok(Some(transition))) = self.load_job(job_id).await?.map(|j| j.reopen(now)) else {
            return Ok(false);
        };
        let writes = self.transition(&transition)?;
        let closed = matches!(transact(&self.db, writes).await?, Transacted::Committed);
        if closed {
            self.process.lines.decided(&transition.job.event_id, 1);
        }
        Ok(closed)
    }

    async fn sold_by_payment(&self, reference: &str) -> Result<Option<JobId>, BackendError> {
        self.sold_by_payment_ref(reference).await
    }

    async fn history(&self, job_id: JobId) -> Result<Vec<ReservationEvent>, BackendError> {
        let output = self
            .db
            .query()
            .table_name(&self.names.outbox_table)
            .key_condition_expression("job_id = :job")
            .expression_attribute_values(":job", s(job_id.to_string()))
            .send()
            .await
            .map_err(|e| classify("Query job history", e))?;
        output
            .items()
            .iter()
            .map(|item| decode_event(get_s(item, "body")?))
            .collect()
    }

    /// The event's jobs, by a parallel scan of the jobs table (the audit's read; no index of
    /// jobs by event is kept, as every job write would pay for it): it reads the whole table,
    /// [`AUDIT_SEGMENTS`] segments at once, and keeps the event's jobs.
    async fn of_event(&self, event_id: &EventId) -> Result<Vec<Job>, BackendError> {
        let segments = futures_util::stream::iter(0..AUDIT_SEGMENTS)
            .map(|segment| self.jobs_in_segment(event_id, segment))
            .buffer_unordered(usize::try_from(AUDIT_SEGMENTS).unwrap_or(1))
            .try_collect::<Vec<_>>()
            .await?;
        Ok(segments.into_iter().flatten().collect())
    }
}

impl DynamoStore {
    async fn jobs_in_segment(
        &self,
        event_id: &EventId,
        segment: i32,
    ) -> Result<Vec<Job>, BackendError> {
        let items = all_pages(|start| async {
            let page = self
                .db
                .scan()
                .table_name(&self.names.jobs_table)
                .segment(segment)
                .total_segments(AUDIT_SEGMENTS)
                .filter_expression("event_id = :event")
                .expression_attribute_values(":event", s(event_id.to_string()))
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Scan jobs of event", e))?;
            Ok((page.items().to_vec(), page.last_evaluated_key().cloned()))
        })
        .await?;
        items.iter().map(job_from_item).collect()
    }
}
