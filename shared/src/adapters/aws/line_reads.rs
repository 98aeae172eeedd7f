//! Reading a section's waitlist on DynamoDB (`waitlist.rs` says how it is kept): its head in
//! admission order, all of it, and a job's position in it, each read from every line shard.

use futures_util::{StreamExt, TryStreamExt};

use super::DynamoStore;
use super::error::classify;
use super::item::{all_pages, get_s, s};
use super::keys::{LINE_SHARDS, line_key};
use super::waitlist::section_of;
use crate::domain::{EventId, Job, JobId, JobStatus};
use crate::ports::BackendError;
use aws_sdk_dynamodb::types::Select;

/// The lowest sort key of a place in line.
const FIRST_PLACE: &str = "0";
/// Line shards read or written at once.
pub(super) const SHARD_READS: usize = 16;
/// The sort key of `job`'s place: its admission instant, then its id.
pub(super) fn place_id(job: &Job) -> String {
    format!("{:013}#{}", job.accepted_at.as_millisecond(), job.job_id)
}

/// The job a place's sort key names.
fn placed_job(place: &str) -> Option<JobId> {
    place.split_once('#').and_then(|(_, job)| JobId::parse(job))
}
impl DynamoStore {
    /// The places (sort keys) of one line shard in order: the first `limit`, or all of them.
    async fn places(
        &self,
        key: String,
        limit: Option<i32>,
        consistent: bool,
    ) -> Result<Vec<String>, BackendError> {
        let items = all_pages(|start| {
            let key = key.clone();
            async move {
                let page = self
                    .db
                    .query()
                    .table_name(&self.names.outbox_table)
                    .key_condition_expression("job_id = :key AND id >= :first")
                    .expression_attribute_values(":key", s(key))
                    .expression_attribute_values(":first", s(FIRST_PLACE))
                    .projection_expression("id")
                    .consistent_read(consistent)
                    .set_limit(limit)
                    .set_exclusive_start_key(start)
                    .send()
                    .await
                    .map_err(|e| classify("Query line", e))?;
                let next = limit.is_none().then(|| page.last_evaluated_key().cloned());
                Ok((page.items().to_vec(), next.flatten()))
            }
        })
        .await?;
        items
            .iter()
            .map(|item| get_s(item, "id").map(str::to_owned))
            .collect()
    }

    /// How many places of one line shard come up to `place` (included), as the line stood a
    /// moment ago: an eventually consistent count, half the price of a strong one.
    async fn places_upto(&self, key: String, place: &str) -> Result<usize, BackendError> {
        let (mut counted, mut start) = (0, None);
        loop {
            let page = self
                .db
                .query()
                .table_name(&self.names.outbox_table)
                .key_condition_expression("job_id = :key AND id BETWEEN :first AND :place")
                .expression_attribute_values(":key", s(key.clone()))
                .expression_attribute_values(":first", s(FIRST_PLACE))
                .expression_attribute_values(":place", s(place))
                .select(Select::Count)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Query line position", e))?;
            counted += usize::try_from(page.count()).unwrap_or(0);
            start = page.last_evaluated_key().cloned();
            if start.is_none() {
                return Ok(counted);
            }
        }
    }

    /// The first `limit` job ids of a section's line, in admission order (every shard read,
    /// then merged).
    pub(super) async fn line_head(
        &self,
        event_id: &EventId,
        section: &str,
        limit: usize,
        consistent: bool,
    ) -> Result<Vec<JobId>, BackendError> {
        let per_shard = Some(i32::try_from(limit).unwrap_or(i32::MAX));
        let shards = futures_util::stream::iter(0..LINE_SHARDS)
            .map(|shard| self.places(line_key(event_id, section, shard), per_shard, consistent))
            .buffer_unordered(SHARD_READS)
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
    pub(super) async fn whole_line(
        &self,
        event_id: &EventId,
        section: &str,
    ) -> Result<Vec<JobId>, BackendError> {
        let shards = futures_util::stream::iter(0..LINE_SHARDS)
            .map(|shard| self.places(line_key(event_id, section, shard), None, true))
            .buffer_unordered(SHARD_READS)
            .try_collect::<Vec<_>>()
            .await?;
        Ok(shards
            .into_iter()
            .flatten()
            .filter_map(|place| placed_job(&place))
            .collect())
    }

    /// A WAITLISTED job's place in its line, from 1: the places up to its own, counted in
    /// every shard.
    pub(super) async fn line_position(&self, job: &Job) -> Result<Option<u64>, BackendError> {
        if job.status != JobStatus::Waitlisted {
            return Ok(None);
        }
        let section = section_of(job)?.as_str();
        let place = place_id(job);
        let counts = futures_util::stream::iter(0..LINE_SHARDS)
            .map(|shard| {
                let key = line_key(&job.event_id, section, shard);
                self.places_upto(key, &place)
            })
            .buffer_unordered(SHARD_READS)
            .try_collect::<Vec<_>>()
            .await?;
        let position: usize = counts.iter().sum();
        Ok(Some(u64::try_from(position.max(1)).unwrap_or(u64::MAX)))
    }
}
