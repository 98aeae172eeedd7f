//! A sale's pre-queue on DynamoDB. An intent admitted before its start (its channel's own, or
//! its event's: an [`OpeningOf`]) is not sent to SQS: its PENDING job is written together with
//! the buyer's entry in that opening's pre-queue (an outbox-table item keyed by the buyer in one of [`PREQUEUE_SHARDS`] partitions,
//! so a buyer has one entry and a second one is refused), under a check that the shard's gate is
//! still open. An intent admitted after the start while the pre-queue is still being released
//! waits the same way in the opening's late list, in admission order. The opening (`opening/state.rs`)
//! closes a list's gates before it reads the list, so an admission lands in the list before the
//! read, or fails its check and is admitted as one after it: none is missed.

use aws_sdk_dynamodb::types::{ConditionCheck, TransactWriteItem};
use futures_util::{StreamExt, TryStreamExt};

use crate::DynamoStore;
use crate::dynamo::error::{build_error, classify};
use crate::dynamo::item::{
    Item, Transacted, count_all, get_n, get_s, n, put_new, query_items, s, transact,
};
use crate::dynamo::keys::{PREQUEUE_SHARDS, buyer_shard, late_key, late_shard, prequeue_key};
use crate::opening::state::OpeningOf;
use seatclaim_core::codec::encode_intent;
use seatclaim_core::domain::{Intent, JobId};
use seatclaim_core::ports::BackendError;

/// The sort key of a list shard's gate item: below every buyer id and every late entry (`#`
/// sorts before the characters ids may hold), so reads of entries (`id > #gate`) skip it.
const GATE: &str = "#gate";
/// List shards read or written at once.
const SHARD_CALLS: usize = 32;

/// Which list of an event an admission waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum List {
    /// Intents admitted before the start, one per buyer, drawn at the opening.
    Prequeue,
    /// Intents admitted after the start while the pre-queue is released, in admission order.
    Late,
}

impl List {
    fn key(self, opening: &OpeningOf, shard: u32) -> String {
        let part = opening.key_part();
        match self {
            Self::Prequeue => prequeue_key(&part, shard),
            Self::Late => late_key(&part, shard),
        }
    }
}

/// How parking an admission in a list ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Parked {
    /// The job and its entry are written.
    Entered,
    /// The job exists already: a retry of its key.
    JobExists,
    /// The buyer already waits in the pre-queue with this job.
    BuyerWaits(JobId),
    /// The list's gate is closed (the opening has read it): admit as after the start.
    GateClosed,
}

fn gate_key(key: String) -> Item {
    Item::from([("job_id".to_owned(), s(key)), ("id".to_owned(), s(GATE))])
}

/// The nanosecond an intent was admitted, which orders a list.
fn admitted_ns(intent: &Intent) -> i64 {
    i64::try_from(intent.accepted_at.as_nanosecond()).unwrap_or(i64::MAX)
}

impl DynamoStore {
    /// Writes the PENDING job `job_item` and `intent`'s entry in `opening`'s `list`, on
    /// condition that the job is new, the buyer has no entry yet (pre-queue) and the list's
    /// shard is open.
    pub(crate) async fn park(
        &self,
        (opening, list): (&OpeningOf, List),
        job_item: Item,
        intent: &Intent,
    ) -> Result<Parked, BackendError> {
        let (shard, sort) = match list {
            List::Prequeue => (buyer_shard(&intent.buyer_id), intent.buyer_id.to_string()),
            List::Late => (
                late_shard(intent.job_id),
                format!("{:020}#{}", admitted_ns(intent), intent.job_id),
            ),
        };
        let key = list.key(opening, shard);
        let entry = Item::from([
            ("job_id".to_owned(), s(key.clone())),
            ("id".to_owned(), s(sort)),
            ("job".to_owned(), s(intent.job_id.to_string())),
            ("intent".to_owned(), s(encode_intent(intent)?)),
            ("admitted".to_owned(), n(admitted_ns(intent))),
        ]);
        let gate = ConditionCheck::builder()
            .table_name(&self.names.outbox_table)
            .set_key(Some(gate_key(key)))
            .condition_expression("attribute_not_exists(id)")
            .build()
            .map_err(build_error)?;
        let writes = vec![
            put_new(&self.names.jobs_table, job_item, "job_id")?,
            put_new(&self.names.outbox_table, entry, "id")?,
            TransactWriteItem::builder().condition_check(gate).build(),
        ];
        let failed = match transact(&self.db, writes).await? {
            Transacted::Committed => return Ok(Parked::Entered),
            Transacted::ConditionFailed(failed) => failed,
        };
        let at = |i: usize| failed.get(i).copied().unwrap_or(false);
        Ok(if at(0) {
            Parked::JobExists
        } else if at(1) {
            Parked::BuyerWaits(self.waiting_job(opening, intent).await?)
        } else {
            Parked::GateClosed
        })
    }

    /// The job of the buyer's pre-queue entry.
    async fn waiting_job(
        &self,
        opening: &OpeningOf,
        intent: &Intent,
    ) -> Result<JobId, BackendError> {
        let key = List::Prequeue.key(opening, buyer_shard(&intent.buyer_id));
        let output = self
            .db
            .get_item()
            .table_name(&self.names.outbox_table)
            .key("job_id", s(key))
            .key("id", s(intent.buyer_id.as_str()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem pre-queue entry", e))?;
        output
            .item()
            .and_then(|item| get_s(item, "job").ok())
            .and_then(JobId::parse)
            .ok_or_else(|| BackendError::transient("a pre-queue entry vanished"))
    }

    /// Closes every gate of an opening's `list`: from now on no admission enters it.
    pub(crate) async fn close_gates(
        &self,
        opening: &OpeningOf,
        list: List,
    ) -> Result<(), BackendError> {
        let mut puts = Vec::new();
        for shard in 0..PREQUEUE_SHARDS {
            let put = self
                .db
                .put_item()
                .table_name(&self.names.outbox_table)
                .set_item(Some(gate_key(list.key(opening, shard))));
            puts.push(put.send());
        }
        futures_util::stream::iter(puts)
            .buffer_unordered(SHARD_CALLS)
            .map_err(|e| classify("PutItem list gate", e))
            .try_collect::<Vec<_>>()
            .await?;
        Ok(())
    }

    /// Every entry of an opening's `list` (strongly consistent), as `(admitted, intent)` in
    /// admission order.
    pub(crate) async fn entries(
        &self,
        opening: &OpeningOf,
        list: List,
    ) -> Result<Vec<(i64, String)>, BackendError> {
        let shards = futures_util::stream::iter(0..PREQUEUE_SHARDS)
            .map(|shard| self.shard_entries(list.key(opening, shard)))
            .buffer_unordered(SHARD_CALLS)
            .try_collect::<Vec<_>>()
            .await?;
        let mut entries: Vec<(i64, String)> = shards.into_iter().flatten().collect();
        entries.sort();
        Ok(entries)
    }

    /// The query of a list shard's entries (past its gate).
    fn list_query(
        &self,
        key: String,
    ) -> aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder {
        self.db
            .query()
            .table_name(&self.names.outbox_table)
            .key_condition_expression("job_id = :key AND id > :gate")
            .expression_attribute_values(":key", s(key))
            .expression_attribute_values(":gate", s(GATE))
    }

    async fn shard_entries(&self, key: String) -> Result<Vec<(i64, String)>, BackendError> {
        let query = self
            .list_query(key)
            .projection_expression("admitted, intent")
            .consistent_read(true);
        let items = query_items(query, "Query list", true).await?;
        items
            .iter()
            .map(|item| {
                let admitted = get_n(item, "admitted")?;
                Ok((admitted, get_s(item, "intent")?.to_owned()))
            })
            .collect()
    }

    /// How many buyers wait in an opening's pre-queue now (a count of every shard).
    pub(crate) async fn prequeued_count(&self, opening: &OpeningOf) -> Result<u64, BackendError> {
        let counts = futures_util::stream::iter(0..PREQUEUE_SHARDS)
            .map(|shard| self.shard_count(List::Prequeue.key(opening, shard)))
            .buffer_unordered(SHARD_CALLS)
            .try_collect::<Vec<_>>()
            .await?;
        Ok(counts.iter().sum())
    }

    async fn shard_count(&self, key: String) -> Result<u64, BackendError> {
        count_all(self.list_query(key), "Query pre-queue count").await
    }
}
