//! Reading a section's waitlist on DynamoDB (`waitlist.rs` says how it is kept): its head in
//! line order, all of it, and a job's position in it, each read from every line shard; and the
//! place a job takes in it or took.

use futures_util::{StreamExt, TryStreamExt};

use jiff::Timestamp;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{count_all, get_s, opt_s, query_items, s};
use crate::dynamo::keys::{LINE_SHARD_READS, LINE_SHARDS, line_key};
use crate::line::waitlist::section_of;
use seatclaim_core::codec::from_ms;
use seatclaim_core::domain::{EventId, Job, JobId, JobStatus, Section, line_place};
use seatclaim_core::ports::BackendError;

/// Jobs of a line read at once.
const JOB_READS: usize = 16;

/// The lowest sort key of a place in line.
const FIRST_PLACE: &str = "0";
/// The sort key of `job`'s place: the domain's `line_place` (its admission instant and id, or
/// for a pre-queue's job the sale's start and its place in the draw, `drawn`), then, for a drawn
/// place, its id, so that every place names its job after its last `#`.
pub(crate) fn place_id(job: &Job, drawn: Option<(Timestamp, u64)>) -> String {
    let place = line_place(job, drawn);
    match drawn {
        Some(_) => format!("{place}#{}", job.job_id),
        None => place,
    }
}

/// The job a place's sort key names.
fn placed_job(place: &str) -> Option<JobId> {
    place
        .rsplit_once('#')
        .and_then(|(_, job)| JobId::parse(job))
}

impl DynamoStore {
    /// The places (sort keys) of one line shard in order: the first `limit`, or all of them.
    async fn places(
        &self,
        key: String,
        limit: Option<i32>,
        consistent: bool,
    ) -> Result<Vec<String>, BackendError> {
        let query = self
            .db
            .query()
            .table_name(&self.names.outbox_table)
            .key_condition_expression("job_id = :key AND id >= :first")
            .expression_attribute_values(":key", s(key))
            .expression_attribute_values(":first", s(FIRST_PLACE))
            .projection_expression("id")
            .consistent_read(consistent)
            .set_limit(limit);
        let items = query_items(query, "Query line", limit.is_none()).await?;
        items
            .iter()
            .map(|item| get_s(item, "id").map(str::to_owned))
            .collect()
    }

    /// How many places of one line shard come up to `place` (included), as the line stood a
    /// moment ago: an eventually consistent count, half the price of a strong one.
    async fn places_upto(&self, key: String, place: &str) -> Result<u64, BackendError> {
        let query = self
            .db
            .query()
            .table_name(&self.names.outbox_table)
            .key_condition_expression("job_id = :key AND id BETWEEN :first AND :place")
            .expression_attribute_values(":key", s(key))
            .expression_attribute_values(":first", s(FIRST_PLACE))
            .expression_attribute_values(":place", s(place));
        count_all(query, "Query line position").await
    }

    /// The first `limit` job ids of a section's line, in admission order (every shard read,
    /// then merged).
    pub(crate) async fn line_head(
        &self,
        event_id: &EventId,
        section: &str,
        limit: usize,
        consistent: bool,
    ) -> Result<Vec<JobId>, BackendError> {
        let per_shard = Some(i32::try_from(limit).unwrap_or(i32::MAX));
        let shards = futures_util::stream::iter(0..LINE_SHARDS)
            .map(|shard| self.places(line_key(event_id, section, shard), per_shard, consistent))
            .buffer_unordered(LINE_SHARD_READS)
            .try_collect::<Vec<_>>()
            .await?;
        let mut places: Vec<String> = shards.into_iter().flatten().collect();
        places.sort();
        Ok(places
            .iter()
            .take(limit)
            .filter_map(|place| placed_job(place))
            .collect())
    }

    /// Every job id of a section's line (the closing's read).
    pub(crate) async fn whole_line(
        &self,
        event_id: &EventId,
        section: &str,
    ) -> Result<Vec<JobId>, BackendError> {
        let shards = futures_util::stream::iter(0..LINE_SHARDS)
            .map(|shard| self.places(line_key(event_id, section, shard), None, true))
            .buffer_unordered(LINE_SHARD_READS)
            .try_collect::<Vec<_>>()
            .await?;
        Ok(shards
            .into_iter()
            .flatten()
            .filter_map(|place| placed_job(&place))
            .collect())
    }

    /// The sort key of the place a job about to join its line takes: drawn order for a
    /// pre-queue's job whose ticket the opening wrote (before it sent the intent, `release.rs`),
    /// admission order for any other.
    pub(crate) async fn joining_place(&self, job: &Job) -> Result<String, BackendError> {
        let drawn = match self.job_ticket(job.job_id, true).await? {
            (Some(ticket), Some(opens_at)) => Some((from_ms(opens_at)?, ticket)),
            _ => None,
        };
        Ok(place_id(job, drawn))
    }

    /// The sort key of the place a WAITLISTED job took when it joined (`line_place` on its item;
    /// a job that joined before places were recorded stands in admission order).
    pub(crate) async fn joined_place(&self, job: &Job) -> Result<String, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.jobs_table)
            .key("job_id", s(job.job_id.to_string()))
            .projection_expression("line_place")
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem job place", e))?;
        let stored = output.item().and_then(|item| opt_s(item, "line_place"));
        Ok(stored.map_or_else(|| place_id(job, None), str::to_owned))
    }

    /// A WAITLISTED job's place in its line, from 1: the places up to its own, counted in
    /// every shard.
    pub(crate) async fn line_position(&self, job: &Job) -> Result<Option<u64>, BackendError> {
        if job.status != JobStatus::Waitlisted {
            return Ok(None);
        }
        let section = section_of(job)?.as_str();
        let place = self.joined_place(job).await?;
        let counts = futures_util::stream::iter(0..LINE_SHARDS)
            .map(|shard| {
                let key = line_key(&job.event_id, section, shard);
                self.places_upto(key, &place)
            })
            .buffer_unordered(LINE_SHARD_READS)
            .try_collect::<Vec<_>>()
            .await?;
        let position: u64 = counts.iter().sum();
        Ok(Some(position.max(1)))
    }

    /// The first `depth` WAITLISTED jobs of the line, in order.
    pub(crate) async fn waiting_jobs(
        &self,
        event_id: &EventId,
        section: &Section,
        depth: usize,
    ) -> Result<Vec<Job>, BackendError> {
        let ids = self
            .line_head(event_id, section.as_str(), depth, true)
            .await?;
        let jobs = futures_util::stream::iter(ids)
            .map(|job_id| self.load_job(job_id))
            .buffered(JOB_READS)
            .try_collect::<Vec<_>>()
            .await?;
        Ok(jobs
            .into_iter()
            .flatten()
            .filter(|job| job.status == JobStatus::Waitlisted)
            .collect())
    }
}
