//! The release of a sale's opening on DynamoDB (`opening/state.rs` says when it runs): under the
//! lease of the event's opening item, the pre-queue's gates close, the whole pre-queue is read
//! and drawn (the seed recorded before anything is sent), and the intents go to SQS in the drawn
//! order, a window of [`WINDOW_BATCHES`] batches at a time, each job's place written as its
//! ticket before its intent is sent and the count released recorded after each window; then the
//! late list, in admission order.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::ReturnValue;
use futures_util::{StreamExt, TryStreamExt};
use jiff::Timestamp;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, n, opt_n, s};
use crate::opening::prequeue::List;
use crate::opening::state::{OpeningOf, opening_key, recorded_draw};
use seatclaim_core::codec::decode_message;
use seatclaim_core::domain::{Draw, Intent, JobId, Seed};
use seatclaim_core::ports::{BackendError, IntentQueue, Message};

/// How long an opening's lease lasts unless renewed: the delay before another process resumes
/// the release of one that died.
const LEASE_MS: i64 = 5_000;
/// Batches of ten a release sends side by side: a window of 320 intents.
pub const WINDOW_BATCHES: usize = 32;
/// Job tickets a release writes side by side (while its batches are sent).
pub const TICKET_WRITES: usize = 160;

/// A waiting intent as its list entry holds it.
fn decode(text: &str) -> Result<Intent, BackendError> {
    match decode_message(text.to_owned()) {
        Message::Intent(intent) => Ok(intent),
        Message::Undecodable { error, .. } => Err(BackendError::permanent(format!(
            "a waiting intent does not decode: {error}"
        ))),
    }
}

impl DynamoStore {
    /// Takes (or renews) the lease on an opening; its opening item as it now stands, or `None`
    /// while another process holds it or the opening is made.
    async fn lease_opening(&self, opening: &OpeningOf) -> Result<Option<Item>, BackendError> {
        let now = self.clock.now().as_millisecond();
        let taken = self
            .db
            .update_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(opening_key(&opening.key_part())))
            .update_expression("SET opener = :me, opener_until = :until")
            .condition_expression(
                "attribute_not_exists(opened) AND (attribute_not_exists(opener_until) \
                 OR opener_until <= :now OR opener = :me)",
            )
            .expression_attribute_values(":me", s(self.process.id.clone()))
            .expression_attribute_values(":until", n(now + LEASE_MS))
            .expression_attribute_values(":now", n(now))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match taken {
            Ok(output) => Ok(output.attributes().cloned()),
            Err(error)
                if error
                    .as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(None)
            }
            Err(error) => Err(classify("UpdateItem opening lease", error)),
        }
    }

    /// Records on the opening item, while this process holds the lease, `set` (with `values`).
    async fn record_opening(
        &self,
        opening: &OpeningOf,
        set: &str,
        values: Vec<(&str, aws_sdk_dynamodb::types::AttributeValue)>,
    ) -> Result<(), BackendError> {
        let mut update = self
            .db
            .update_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(opening_key(&opening.key_part())))
            .update_expression(set)
            .condition_expression("opener = :me")
            .expression_attribute_values(":me", s(self.process.id.clone()));
        for (name, value) in values {
            update = update.expression_attribute_values(name, value);
        }
        update
            .send()
            .await
            .map_err(|e| classify("UpdateItem opening", e))?;
        Ok(())
    }

    /// The draw of an opening's pre-queue `queued` (in admission order): the one its item
    /// records (a release taken over), or a fresh one, recorded before anything is sent.
    async fn draw(
        &self,
        opening: &OpeningOf,
        item: &Item,
        queued: Vec<JobId>,
    ) -> Result<Draw, BackendError> {
        let event_id = opening.event_id.clone();
        if let Some(recorded) = recorded_draw(opening, item)? {
            let seed = Seed::parse(&recorded.seed)
                .ok_or_else(|| BackendError::permanent("a recorded seed does not parse"))?;
            let start = opening.start.clone();
            return Ok(Draw::new(
                event_id,
                start,
                seed,
                queued,
                recorded.occurred_at,
            ));
        }
        let seed =
            Seed::fresh().ok_or_else(|| BackendError::transient("no randomness for the draw"))?;
        let now = Timestamp::from_millisecond(self.clock.now().as_millisecond())
            .map_err(|e| BackendError::permanent(e.to_string()))?;
        let draw = Draw::new(event_id, opening.start.clone(), seed, queued, now);
        let opened = &draw.opened;
        self.record_opening(
            opening,
            "SET seed = :seed, prequeued = :count, digest = :digest, drawn_at = :at, released = :zero",
            vec![
                (":seed", s(opened.seed.clone())),
                (":count", n(i64::try_from(opened.shuffled).unwrap_or(i64::MAX))),
                (":digest", s(opened.digest.clone())),
                (":at", n(now.as_millisecond())),
                (":zero", n(0)),
            ],
        )
        .await?;
        Ok(draw)
    }

    /// Makes an opening, or resumes it, if this process gets the lease.
    pub(crate) async fn open_sale(&self, opening: &OpeningOf) -> Result<(), BackendError> {
        if self.lease_opening(opening).await?.is_none() {
            return Ok(());
        }
        self.close_gates(opening, List::Prequeue).await?;
        // The item as the last renewal returned it: a lapsed lease taken back finds the draw
        // another process may have recorded meanwhile.
        let listed = self.list_under_lease(opening, List::Prequeue).await?;
        let Some((item, intents)) = listed else {
            return Ok(());
        };
        let queued = intents.iter().map(|intent| intent.job_id).collect();
        let draw = self.draw(opening, &item, queued).await?;
        let mut by_job: HashMap<JobId, Intent> =
            intents.into_iter().map(|i| (i.job_id, i)).collect();
        let order: Vec<Intent> = draw
            .order
            .iter()
            .filter_map(|job| by_job.remove(job))
            .collect();
        let done = opt_n(&item, "released")?.map_or(0, |n| usize::try_from(n).unwrap_or(0));
        tracing::info!(
            opening = %opening.key_part(),
            prequeued = draw.opened.shuffled,
            released = done,
            "the pre-queue is drawn; releasing it in that order"
        );
        self.release_in_order(opening, &order, done).await?;
        if self.lease_opening(opening).await?.is_none() {
            return Ok(());
        }
        self.close_gates(opening, List::Late).await?;
        let Some((_, late)) = self.list_under_lease(opening, List::Late).await? else {
            return Ok(());
        };
        for batch in late.chunks(10) {
            self.queue.send(batch).await?;
        }
        self.record_opening(
            opening,
            "SET opened = :yes REMOVE opener_until",
            vec![(":yes", n(1))],
        )
        .await?;
        tracing::info!(
            opening = %opening.key_part(),
            prequeued = draw.opened.shuffled,
            seed = %draw.opened.seed,
            digest = %draw.opened.digest,
            "the sale opened: its pre-queue is drawn and released in that order"
        );
        self.forget_state(opening);
        Ok(())
    }

    /// The intents of an opening's `list` (its gates closed), read with the opening's lease
    /// renewed before and after, since closing and reading every shard of a list can outlast
    /// one lease on a slow store; with the opening item as the last renewal returned it, or
    /// `None` if another process has taken the opening over.
    async fn list_under_lease(
        &self,
        opening: &OpeningOf,
        list: List,
    ) -> Result<Option<(Item, Vec<Intent>)>, BackendError> {
        if self.lease_opening(opening).await?.is_none() {
            return Ok(None);
        }
        let intents = self
            .entries(opening, list)
            .await?
            .iter()
            .map(|(_, text)| decode(text))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self
            .lease_opening(opening)
            .await?
            .map(|item| (item, intents)))
    }

    /// Sends `order` from place `done` on, a window at a time: each window's tickets (the
    /// place, from 1) first, so a job that loses the draw finds its place when it joins the line
    /// (`waitlist.rs`), then its batches of ten side by side, then its count recorded.
    async fn release_in_order(
        &self,
        opening: &OpeningOf,
        order: &[Intent],
        done: usize,
    ) -> Result<(), BackendError> {
        let mut released = done;
        for window in order
            .get(done..)
            .unwrap_or_default()
            .chunks(10 * WINDOW_BATCHES)
        {
            // Futures made up front: the streams then hold no closure over borrowed intents.
            let tickets: Vec<_> = (released + 1..)
                .zip(window)
                .map(|(place, intent)| self.write_ticket(intent.job_id, place))
                .collect();
            futures_util::stream::iter(tickets)
                .buffer_unordered(TICKET_WRITES)
                .try_collect::<Vec<_>>()
                .await?;
            let sends: Vec<_> = window
                .chunks(10)
                .map(|batch| self.queue.send(batch))
                .collect();
            futures_util::stream::iter(sends)
                .buffer_unordered(WINDOW_BATCHES)
                .try_collect::<Vec<_>>()
                .await?;
            released += window.len();
            let until = self.clock.now().as_millisecond() + LEASE_MS;
            self.record_opening(
                opening,
                "SET released = :released, opener_until = :until",
                vec![
                    (":released", n(i64::try_from(released).unwrap_or(i64::MAX))),
                    (":until", n(until)),
                ],
            )
            .await?;
        }
        Ok(())
    }

    /// A drawn job's ticket: its place in the drawn order, from 1 (`line/counts.rs`).
    async fn write_ticket(&self, job_id: JobId, place: usize) -> Result<(), BackendError> {
        self.db
            .update_item()
            .table_name(&self.names.jobs_table)
            .key("job_id", s(job_id.to_string()))
            .update_expression("SET ticket = :place")
            .condition_expression("attribute_exists(job_id)")
            .expression_attribute_values(":place", n(i64::try_from(place).unwrap_or(i64::MAX)))
            .send()
            .await
            .map_err(|e| classify("UpdateItem job ticket", e))?;
        Ok(())
    }
}
