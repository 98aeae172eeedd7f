//! A sale's opening on DynamoDB. The first receive of any worker at or after an event's start
//! (`SqsQueue::receive`) opens it, under a lease on the event item so that one process does:
//! it closes the pre-queue's gates, reads the whole pre-queue, draws the order (a fresh seed,
//! recorded on the event item before anything is sent, so that a process taking over a lapsed
//! lease draws the same order), and releases the intents to SQS in it: windows of
//! [`WINDOW_BATCHES`] batches of ten sent side by side, each job's place written as its ticket
//! (its queue position), the count released recorded after each window (renewing the lease).
//! Then the late list (intents admitted after the start meanwhile) follows in admission order,
//! and the event is marked opened. SQS keeps no strict order: decisions follow the draw to
//! within a window (160 intents).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::ReturnValue;
use futures_util::{StreamExt, TryStreamExt};
use jiff::Timestamp;

use super::DynamoStore;
use super::error::classify;
use super::item::{Item, all_pages, get_s, n, opt_n, opt_s, s};
use super::prequeue::List;
use crate::codec::{decode_message, from_ms};
use crate::domain::{Draw, EventId, Intent, JobId, SALE_OPENED, SaleOpened, Seed};
use crate::ports::{BackendError, IntentQueue, Message};

/// How long an opening's lease lasts unless renewed: the delay before another process resumes
/// the release of one that died.
const LEASE_MS: i64 = 5_000;
/// Batches of ten a release sends side by side.
const WINDOW_BATCHES: usize = 16;
/// Job tickets a release writes side by side.
const TICKET_WRITES: usize = 32;
/// How long a read of the events with an opening to make answers.
const READ_EVERY: Duration = Duration::from_secs(1);

/// An event whose opening is still to make or to publish, as its item says.
#[derive(Debug, Clone)]
struct Pending {
    event_id: EventId,
    starts: Timestamp,
    opened: bool,
    published: bool,
    draw: Option<SaleOpened>,
}

/// This process's view of the openings: the pending ones, and which events' sales are open.
#[derive(Debug, Default)]
pub(super) struct Openings {
    pending: Mutex<Option<(Instant, Vec<Pending>)>>,
    opened: Mutex<HashMap<EventId, (Instant, bool)>>,
}

/// The draw an event item records, if any.
fn recorded_draw(
    event_id: &EventId,
    starts: Timestamp,
    item: &Item,
) -> Result<Option<SaleOpened>, BackendError> {
    let (Some(seed), Some(digest)) = (opt_s(item, "seed"), opt_s(item, "digest")) else {
        return Ok(None);
    };
    Ok(Some(SaleOpened {
        kind: SALE_OPENED.to_owned(),
        event_id: event_id.clone(),
        sale_starts_at: starts,
        seed: seed.to_owned(),
        shuffled: opt_n(item, "prequeued")?.map_or(0, |n| u64::try_from(n).unwrap_or(0)),
        digest: digest.to_owned(),
        occurred_at: from_ms(opt_n(item, "drawn_at")?.unwrap_or(0))?,
    }))
}

fn pending_of(item: &Item) -> Result<Pending, BackendError> {
    let event_id = EventId::parse(get_s(item, "event_id")?)
        .map_err(|e| BackendError::permanent(e.to_string()))?;
    let starts = from_ms(opt_n(item, "sale_starts_at")?.unwrap_or(0))?;
    Ok(Pending {
        draw: recorded_draw(&event_id, starts, item)?,
        event_id,
        starts,
        opened: item.contains_key("opened"),
        published: item.contains_key("opening_published"),
    })
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn decode(text: &str) -> Result<Intent, BackendError> {
    match decode_message(text.to_owned()) {
        Message::Intent(intent) => Ok(intent),
        Message::Undecodable { error, .. } => Err(BackendError::permanent(format!(
            "a waiting intent does not decode: {error}"
        ))),
    }
}

impl DynamoStore {
    /// The events with an opening to make or publish: a scan of the events table (a few items
    /// per event) at most once a [`READ_EVERY`].
    async fn pending_openings(&self) -> Result<Vec<Pending>, BackendError> {
        if let Some((at, pending)) = lock(&self.openings.pending).as_ref()
            && at.elapsed() < READ_EVERY
        {
            return Ok(pending.clone());
        }
        let items = all_pages(|start| async {
            let page = self
                .db
                .scan()
                .table_name(&self.names.events_table)
                .filter_expression(
                    "attribute_exists(sale_starts_at) AND #status = :ready AND \
                     (attribute_not_exists(opened) OR attribute_not_exists(opening_published))",
                )
                .expression_attribute_names("#status", "status")
                .expression_attribute_values(":ready", s("READY"))
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Scan events with openings", e))?;
            Ok((page.items().to_vec(), page.last_evaluated_key().cloned()))
        })
        .await?;
        let pending = items
            .iter()
            .map(pending_of)
            .collect::<Result<Vec<_>, _>>()?;
        *lock(&self.openings.pending) = Some((Instant::now(), pending.clone()));
        Ok(pending)
    }

    fn forget_openings(&self) {
        *lock(&self.openings.pending) = None;
    }

    /// Whether `event_id`'s opening is made (its pre-queue and late list released): read at
    /// most once a [`READ_EVERY`] per event, and never again once it is.
    pub(super) async fn sale_opened(&self, event_id: &EventId) -> Result<bool, BackendError> {
        if let Some((at, opened)) = lock(&self.openings.opened).get(event_id)
            && (*opened || at.elapsed() < READ_EVERY)
        {
            return Ok(*opened);
        }
        let output = self
            .db
            .get_item()
            .table_name(&self.names.events_table)
            .key("event_id", s(event_id.as_str()))
            .projection_expression("opened")
            .send()
            .await
            .map_err(|e| classify("GetItem event opened", e))?;
        let opened = output
            .item()
            .is_some_and(|item| item.contains_key("opened"));
        lock(&self.openings.opened).insert(event_id.clone(), (Instant::now(), opened));
        Ok(opened)
    }

    /// Opens every event whose start has come and whose opening is not made.
    pub(super) async fn open_due_sales(&self) -> Result<(), BackendError> {
        let now = self.clock.now();
        for pending in self.pending_openings().await? {
            if !pending.opened && pending.starts <= now {
                self.open_sale(&pending.event_id, pending.starts).await?;
            }
        }
        Ok(())
    }

    /// Takes (or renews) the lease on `event_id`'s opening; the event item as it now stands,
    /// or `None` while another process holds it or the opening is made.
    async fn lease_opening(&self, event_id: &EventId) -> Result<Option<Item>, BackendError> {
        let now = self.clock.now().as_millisecond();
        let taken = self
            .db
            .update_item()
            .table_name(&self.names.events_table)
            .key("event_id", s(event_id.as_str()))
            .update_expression("SET opener = :me, opener_until = :until")
            .condition_expression(
                "attribute_not_exists(opened) AND (attribute_not_exists(opener_until) \
                 OR opener_until <= :now OR opener = :me)",
            )
            .expression_attribute_values(":me", s(self.relay_id.clone()))
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

    /// Records on the event item, while this process holds the lease, `set` (with `values`).
    async fn record_opening(
        &self,
        event_id: &EventId,
        set: &str,
        values: Vec<(&str, aws_sdk_dynamodb::types::AttributeValue)>,
    ) -> Result<(), BackendError> {
        let mut update = self
            .db
            .update_item()
            .table_name(&self.names.events_table)
            .key("event_id", s(event_id.as_str()))
            .update_expression(set)
            .condition_expression("opener = :me")
            .expression_attribute_values(":me", s(self.relay_id.clone()));
        for (name, value) in values {
            update = update.expression_attribute_values(name, value);
        }
        update
            .send()
            .await
            .map_err(|e| classify("UpdateItem opening", e))?;
        Ok(())
    }

    /// The draw of `event_id`'s pre-queue `queued` (in admission order): the one its item
    /// records (a release taken over), or a fresh one, recorded before anything is sent.
    async fn draw(
        &self,
        event_id: &EventId,
        starts: Timestamp,
        item: &Item,
        queued: Vec<JobId>,
    ) -> Result<Draw, BackendError> {
        if let Some(recorded) = recorded_draw(event_id, starts, item)? {
            let seed = Seed::parse(&recorded.seed)
                .ok_or_else(|| BackendError::permanent("a recorded seed does not parse"))?;
            return Ok(Draw::new(
                event_id.clone(),
                starts,
                seed,
                queued,
                recorded.occurred_at,
            ));
        }
        let seed =
            Seed::fresh().ok_or_else(|| BackendError::transient("no randomness for the draw"))?;
        let now = Timestamp::from_millisecond(self.clock.now().as_millisecond())
            .map_err(|e| BackendError::permanent(e.to_string()))?;
        let draw = Draw::new(event_id.clone(), starts, seed, queued, now);
        let opened = &draw.opened;
        self.record_opening(
            event_id,
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

    /// Makes `event_id`'s opening, or resumes it, if this process gets the lease.
    async fn open_sale(&self, event_id: &EventId, starts: Timestamp) -> Result<(), BackendError> {
        let Some(item) = self.lease_opening(event_id).await? else {
            return Ok(());
        };
        self.close_gates(event_id, List::Prequeue).await?;
        let intents = self
            .entries(event_id, List::Prequeue)
            .await?
            .iter()
            .map(|(_, text)| decode(text))
            .collect::<Result<Vec<_>, _>>()?;
        let queued = intents.iter().map(|intent| intent.job_id).collect();
        let draw = self.draw(event_id, starts, &item, queued).await?;
        let mut by_job: HashMap<JobId, Intent> =
            intents.into_iter().map(|i| (i.job_id, i)).collect();
        let order: Vec<Intent> = draw
            .order
            .iter()
            .filter_map(|job| by_job.remove(job))
            .collect();
        let done = opt_n(&item, "released")?.map_or(0, |n| usize::try_from(n).unwrap_or(0));
        self.release_in_order(event_id, &order, done).await?;
        self.close_gates(event_id, List::Late).await?;
        let late = self
            .entries(event_id, List::Late)
            .await?
            .iter()
            .map(|(_, text)| decode(text))
            .collect::<Result<Vec<_>, _>>()?;
        for batch in late.chunks(10) {
            self.queue.send(batch).await?;
        }
        self.record_opening(
            event_id,
            "SET opened = :yes REMOVE opener_until",
            vec![(":yes", n(1))],
        )
        .await?;
        tracing::info!(
            event = %event_id,
            prequeued = draw.opened.shuffled,
            seed = %draw.opened.seed,
            digest = %draw.opened.digest,
            "the sale opened: its pre-queue is drawn and released in that order"
        );
        self.forget_openings();
        Ok(())
    }

    /// Sends `order` from place `done` on, a window at a time: each window's tickets (the
    /// place, from 1) and its batches of ten side by side, then its count recorded.
    async fn release_in_order(
        &self,
        event_id: &EventId,
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
                event_id,
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

    /// A drawn job's ticket: its place in the drawn order, from 1 (`line_counts.rs`).
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

    /// Where `event_id`'s opening stands, from its item (strongly consistent); before the draw
    /// the pre-queue is counted.
    pub(super) async fn opening_of(
        &self,
        event_id: &EventId,
    ) -> Result<Option<crate::ports::Opening>, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.events_table)
            .key("event_id", s(event_id.as_str()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem event opening", e))?;
        let Some(item) = output.item() else {
            return Ok(None);
        };
        let Some(starts) = opt_n(item, "sale_starts_at")? else {
            return Ok(None);
        };
        let starts = from_ms(starts)?;
        let draw = recorded_draw(event_id, starts, item)?;
        let prequeued = match &draw {
            Some(draw) => draw.shuffled,
            None => self.prequeued_count(event_id).await?,
        };
        Ok(Some(crate::ports::Opening {
            sale_starts_at: starts,
            prequeued,
            draw,
        }))
    }

    /// The draws made and not yet published.
    pub(super) async fn unpublished_draws(&self) -> Result<Vec<SaleOpened>, BackendError> {
        Ok(self
            .pending_openings()
            .await?
            .into_iter()
            .filter(|pending| !pending.published)
            .filter_map(|pending| pending.draw)
            .collect())
    }

    /// Marks `event_id`'s draw published.
    pub(super) async fn draw_published(&self, event_id: &EventId) -> Result<(), BackendError> {
        self.db
            .update_item()
            .table_name(&self.names.events_table)
            .key("event_id", s(event_id.as_str()))
            .update_expression("SET opening_published = :yes")
            .expression_attribute_values(":yes", n(1))
            .send()
            .await
            .map_err(|e| classify("UpdateItem opening published", e))?;
        self.forget_openings();
        Ok(())
    }
}
