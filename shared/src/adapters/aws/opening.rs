//! A sale's opening on DynamoDB. The first receive of any worker at or after an event's start
//! (`SqsQueue::receive`) opens it, under a lease on the event's opening item (in the outbox
//! table, key `opening#<event>`, so that no task role writes the events table) so that one
//! process does:
//! it closes the pre-queue's gates, reads the whole pre-queue, draws the order (a fresh seed,
//! recorded on the opening item before anything is sent, so that a process taking over a lapsed
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

/// Where an event's opening stands, as its opening item says.
#[derive(Debug, Clone, Default)]
struct State {
    opened: bool,
    published: bool,
    draw: Option<SaleOpened>,
}

/// Events and their announced starts.
type Starts = Vec<(EventId, Timestamp)>;

/// This process's view of the openings: the events with a start (read at most once a
/// [`READ_EVERY`]), and each due event's state (re-read after the same time, until its
/// opening is made and published, which never changes again).
#[derive(Debug, Default)]
pub(super) struct Openings {
    starts: Mutex<Option<(Instant, Starts)>>,
    states: Mutex<HashMap<EventId, (Instant, State)>>,
}

/// How far back an event's start is still looked at: the outbox's retention, past which no
/// opening is left to make or publish.
const LOOK_BACK: jiff::SignedDuration = jiff::SignedDuration::from_hours(7 * 24);

/// The key of `event_id`'s opening item in the outbox table.
fn opening_key(event_id: &EventId) -> Item {
    Item::from([
        ("job_id".to_owned(), s(format!("opening#{event_id}"))),
        ("id".to_owned(), s("opening")),
    ])
}

/// The draw an opening item records, if any.
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

fn state_of(event_id: &EventId, starts: Timestamp, item: &Item) -> Result<State, BackendError> {
    Ok(State {
        opened: item.contains_key("opened"),
        published: item.contains_key("published"),
        draw: recorded_draw(event_id, starts, item)?,
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
    /// The events with an announced start in the last [`LOOK_BACK`] or later: a scan of the
    /// events table (a few items per event) at most once a [`READ_EVERY`].
    async fn starts(&self) -> Result<Starts, BackendError> {
        if let Some((at, starts)) = lock(&self.openings.starts).as_ref()
            && at.elapsed() < READ_EVERY
        {
            return Ok(starts.clone());
        }
        let since = (self.clock.now() - LOOK_BACK).as_millisecond();
        let items = all_pages(|start| async {
            let page = self
                .db
                .scan()
                .table_name(&self.names.events_table)
                .filter_expression("sale_starts_at >= :since AND #status = :ready")
                .expression_attribute_names("#status", "status")
                .expression_attribute_values(":since", n(since))
                .expression_attribute_values(":ready", s("READY"))
                .projection_expression("event_id, sale_starts_at")
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Scan events with openings", e))?;
            Ok((page.items().to_vec(), page.last_evaluated_key().cloned()))
        })
        .await?;
        let starts = items
            .iter()
            .map(|item| {
                let event_id = EventId::parse(get_s(item, "event_id")?)
                    .map_err(|e| BackendError::permanent(e.to_string()))?;
                Ok((
                    event_id,
                    from_ms(opt_n(item, "sale_starts_at")?.unwrap_or(0))?,
                ))
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        *lock(&self.openings.starts) = Some((Instant::now(), starts.clone()));
        Ok(starts)
    }

    /// The state of `event_id`'s opening, from this process's view unless it is stale.
    async fn state(&self, event_id: &EventId, starts: Timestamp) -> Result<State, BackendError> {
        if let Some((at, state)) = lock(&self.openings.states).get(event_id)
            && ((state.opened && state.published) || at.elapsed() < READ_EVERY)
        {
            return Ok(state.clone());
        }
        let item = self.opening_item(event_id).await?.unwrap_or_default();
        let state = state_of(event_id, starts, &item)?;
        lock(&self.openings.states).insert(event_id.clone(), (Instant::now(), state.clone()));
        Ok(state)
    }

    async fn opening_item(&self, event_id: &EventId) -> Result<Option<Item>, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(opening_key(event_id)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem opening", e))?;
        Ok(output.item().cloned())
    }

    fn forget_state(&self, event_id: &EventId) {
        lock(&self.openings.states).remove(event_id);
    }

    /// Whether `event_id`'s opening is made (its pre-queue and late list released).
    pub(super) async fn sale_opened(&self, event_id: &EventId) -> Result<bool, BackendError> {
        let Some(starts) = self.event_meta(event_id).await?.and_then(|m| m.opens_at) else {
            return Ok(true);
        };
        Ok(self.state(event_id, starts).await?.opened)
    }

    /// Opens every event whose start has come and whose opening is not made.
    pub(super) async fn open_due_sales(&self) -> Result<(), BackendError> {
        let now = self.clock.now();
        for (event_id, starts) in self.starts().await? {
            if starts <= now && !self.state(&event_id, starts).await?.opened {
                self.open_sale(&event_id, starts).await?;
            }
        }
        Ok(())
    }

    /// Takes (or renews) the lease on `event_id`'s opening; its opening item as it now stands,
    /// or `None` while another process holds it or the opening is made.
    async fn lease_opening(&self, event_id: &EventId) -> Result<Option<Item>, BackendError> {
        let now = self.clock.now().as_millisecond();
        let taken = self
            .db
            .update_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(opening_key(event_id)))
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

    /// Records on the opening item, while this process holds the lease, `set` (with `values`).
    async fn record_opening(
        &self,
        event_id: &EventId,
        set: &str,
        values: Vec<(&str, aws_sdk_dynamodb::types::AttributeValue)>,
    ) -> Result<(), BackendError> {
        let mut update = self
            .db
            .update_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(opening_key(event_id)))
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
        self.forget_state(event_id);
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

    /// Where `event_id`'s opening stands (its items read strongly consistent); before the draw
    /// the pre-queue is counted.
    pub(super) async fn opening_of(
        &self,
        event_id: &EventId,
    ) -> Result<Option<crate::ports::Opening>, BackendError> {
        let Some(starts) = self.event_meta(event_id).await?.and_then(|m| m.opens_at) else {
            return Ok(None);
        };
        let item = self.opening_item(event_id).await?.unwrap_or_default();
        let draw = recorded_draw(event_id, starts, &item)?;
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
        let now = self.clock.now();
        let mut draws = Vec::new();
        for (event_id, starts) in self.starts().await? {
            if starts > now {
                continue;
            }
            let state = self.state(&event_id, starts).await?;
            if !state.published {
                draws.extend(state.draw);
            }
        }
        Ok(draws)
    }

    /// Marks `event_id`'s draw published.
    pub(super) async fn draw_published(&self, event_id: &EventId) -> Result<(), BackendError> {
        self.db
            .update_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(opening_key(event_id)))
            .update_expression("SET published = :yes")
            .expression_attribute_values(":yes", n(1))
            .send()
            .await
            .map_err(|e| classify("UpdateItem opening published", e))?;
        self.forget_state(event_id);
        Ok(())
    }
}
