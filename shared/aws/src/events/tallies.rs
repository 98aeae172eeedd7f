//! An event's tallies for the operator's summary on DynamoDB, read from the items the claim
//! already keeps, never from the seats: each code item's count (the code items of an event are
//! spread over `CODE_SHARDS` partitions of the seats table's `by-block` index, so a summary
//! queries them and no write of a sale lands on one hot partition), each line shard's places
//! (counted), and the held jobs' deadline index (counted, the holds lapsing before the horizon).

use futures_util::{StreamExt, TryStreamExt};
use jiff::Timestamp;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, all_pages, count_all, n, opt_n, s};
use crate::dynamo::keys::{
    CODE_SHARDS, LINE_SHARD_READS, LINE_SHARDS, code_shard_block, held_shard_key, line_key,
};
use crate::setup::names::{HELD_JOBS_INDEX, SEATS_BY_BLOCK_INDEX};
use seatclaim_core::domain::{EventId, Waitlist};
use seatclaim_core::ports::{BackendError, EventTallies};

impl DynamoStore {
    /// The event's tallies at `now`; `None` for an unknown event.
    pub(crate) async fn tallies(
        &self,
        event_id: &EventId,
        now: Timestamp,
        horizon: Timestamp,
    ) -> Result<Option<EventTallies>, BackendError> {
        let Some(meta) = self.event_meta(event_id).await? else {
            return Ok(None);
        };
        let mut tallies = self.code_tallies(event_id).await?;
        if meta.waitlist != Waitlist::None {
            tallies.waitlisted = self.waitlisted(event_id, &meta.sections).await?;
        }
        tallies.holds_expiring = self.holds_expiring(event_id, now, horizon).await?;
        Ok(Some(tallies))
    }

    /// The codes of the event and their seats: the seats a code counts (held, waited for and
    /// sold; a lapsed hold until it is expired) less those sold are held.
    async fn code_tallies(&self, event_id: &EventId) -> Result<EventTallies, BackendError> {
        let shards = futures_util::stream::iter(0..CODE_SHARDS)
            .map(|shard| self.code_items(code_shard_block(event_id, shard)))
            .buffer_unordered(LINE_SHARD_READS)
            .try_collect::<Vec<_>>()
            .await?;
        let mut tallies = EventTallies::default();
        for item in shards.iter().flatten() {
            let count = |name| -> Result<u64, BackendError> {
                Ok(u64::try_from(opt_n(item, name)?.unwrap_or(0)).unwrap_or(0))
            };
            let (seats, sold) = (count("seats")?, count("sold")?);
            tallies.codes_issued += 1;
            tallies.code_seats_held += seats.saturating_sub(sold);
            tallies.code_seats_sold += sold;
        }
        Ok(tallies)
    }

    async fn code_items(&self, block: String) -> Result<Vec<Item>, BackendError> {
        all_pages(|start| async {
            let page = (self.db.query())
                .table_name(&self.names.seats_table)
                .index_name(SEATS_BY_BLOCK_INDEX)
                .key_condition_expression("#block = :block")
                .expression_attribute_names("#block", "block")
                .expression_attribute_values(":block", s(block.clone()))
                .projection_expression("seats, sold")
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Query code items", e))?;
            Ok((page.items().to_vec(), page.last_evaluated_key().cloned()))
        })
        .await
    }

    /// The jobs waiting in the event's lines: every shard of every section's line, counted.
    async fn waitlisted(
        &self,
        event_id: &EventId,
        sections: &[String],
    ) -> Result<u64, BackendError> {
        let mut keys = Vec::with_capacity(sections.len() * LINE_SHARDS as usize);
        for section in sections {
            keys.extend((0..LINE_SHARDS).map(|shard| line_key(event_id, section, shard)));
        }
        let counts = futures_util::stream::iter(keys)
            .map(|key| {
                let query = (self.db.query())
                    .table_name(&self.names.outbox_table)
                    // Places sort from "0"; the closed marker ("#closed") below them.
                    .key_condition_expression("job_id = :key AND id >= :first")
                    .expression_attribute_values(":key", s(key))
                    .expression_attribute_values(":first", s("0"));
                count_all(query, "Query line length")
            })
            .buffer_unordered(LINE_SHARD_READS)
            .try_collect::<Vec<u64>>()
            .await?;
        Ok(counts.iter().sum())
    }

    /// The event's holds lapsing in `(now, horizon]`: each shard of the deadline index, counted
    /// in that range and filtered to the event.
    async fn holds_expiring(
        &self,
        event_id: &EventId,
        now: Timestamp,
        horizon: Timestamp,
    ) -> Result<u64, BackendError> {
        if horizon <= now {
            return Ok(0);
        }
        let counts = futures_util::stream::iter(0..self.settings.held_shards)
            .map(|shard| {
                let query = (self.db.query())
                    .table_name(&self.names.jobs_table)
                    .index_name(HELD_JOBS_INDEX)
                    .key_condition_expression(
                        "held_shard = :shard AND hold_until BETWEEN :after AND :horizon",
                    )
                    .filter_expression("event_id = :event")
                    .expression_attribute_values(":shard", s(held_shard_key(shard)))
                    .expression_attribute_values(":after", n(now.as_millisecond() + 1))
                    .expression_attribute_values(":horizon", n(horizon.as_millisecond()))
                    .expression_attribute_values(":event", s(event_id.as_str()));
                count_all(query, "Query expiring holds")
            })
            .buffer_unordered(LINE_SHARD_READS)
            .try_collect::<Vec<u64>>()
            .await?;
        Ok(counts.iter().sum())
    }
}
