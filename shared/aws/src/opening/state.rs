//! A sale's opening on DynamoDB. The first receive of any worker at or after an event's start
//! (`SqsQueue::receive`) opens it, under a lease on the event's opening item (in the outbox
//! table, key `opening#<event>`, so that no task role writes the events table) so that one
//! process does:
//! it draws the pre-queue's order and releases it to SQS (`release.rs`). A process taking over a
//! lapsed lease draws the same order from the recorded seed and goes on where the release
//! stopped. This module keeps each process's view of the openings (which events have a start,
//! which are opened and published) and answers the catalog's questions about them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, all_pages, get_s, n, opt_n, opt_s, s};
use seatclaim_core::codec::from_ms;
use seatclaim_core::domain::{EventId, SALE_OPENED, SaleOpened};
use seatclaim_core::ports::BackendError;

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
pub(crate) struct Openings {
    starts: Mutex<Option<(Instant, Starts)>>,
    states: Mutex<HashMap<EventId, (Instant, State)>>,
}

/// How far back an event's start is still looked at: the outbox's retention, past which no
/// opening is left to make or publish.
const LOOK_BACK: jiff::SignedDuration = jiff::SignedDuration::from_hours(7 * 24);

/// The key of `event_id`'s opening item in the outbox table.
pub(crate) fn opening_key(event_id: &EventId) -> Item {
    Item::from([
        ("job_id".to_owned(), s(format!("opening#{event_id}"))),
        ("id".to_owned(), s("opening")),
    ])
}

/// The draw an opening item records, if any.
pub(crate) fn recorded_draw(
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

impl DynamoStore {
    /// The events with an announced start in the last [`LOOK_BACK`] or later: a scan of the
    /// events table (a few items per event) at most once a [`READ_EVERY`].
    async fn starts(&self) -> Result<Starts, BackendError> {
        if let Some((at, starts)) = lock(&self.process.openings.starts).as_ref()
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
        *lock(&self.process.openings.starts) = Some((Instant::now(), starts.clone()));
        Ok(starts)
    }

    /// The state of `event_id`'s opening, from this process's view unless it is stale.
    async fn state(&self, event_id: &EventId, starts: Timestamp) -> Result<State, BackendError> {
        if let Some((at, state)) = lock(&self.process.openings.states).get(event_id)
            && ((state.opened && state.published) || at.elapsed() < READ_EVERY)
        {
            return Ok(state.clone());
        }
        let item = self.opening_item(event_id).await?.unwrap_or_default();
        let state = state_of(event_id, starts, &item)?;
        lock(&self.process.openings.states)
            .insert(event_id.clone(), (Instant::now(), state.clone()));
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

    pub(crate) fn forget_state(&self, event_id: &EventId) {
        lock(&self.process.openings.states).remove(event_id);
    }

    /// Whether `event_id`'s opening is made (its pre-queue and late list released).
    pub(crate) async fn sale_opened(&self, event_id: &EventId) -> Result<bool, BackendError> {
        let Some(starts) = self.event_meta(event_id).await?.and_then(|m| m.opens_at) else {
            return Ok(true);
        };
        Ok(self.state(event_id, starts).await?.opened)
    }

    /// Opens every event whose start has come and whose opening is not made.
    pub(crate) async fn open_due_sales(&self) -> Result<(), BackendError> {
        let now = self.clock.now();
        for (event_id, starts) in self.starts().await? {
            if starts <= now && !self.state(&event_id, starts).await?.opened {
                self.open_sale(&event_id, starts).await?;
            }
        }
        Ok(())
    }

    /// Where `event_id`'s opening stands (its items read strongly consistent); before the draw
    /// the pre-queue is counted.
    pub(crate) async fn opening_of(
        &self,
        event_id: &EventId,
    ) -> Result<Option<seatclaim_core::ports::Opening>, BackendError> {
        let Some(starts) = self.event_meta(event_id).await?.and_then(|m| m.opens_at) else {
            return Ok(None);
        };
        let item = self.opening_item(event_id).await?.unwrap_or_default();
        let draw = recorded_draw(event_id, starts, &item)?;
        let prequeued = match &draw {
            Some(draw) => draw.shuffled,
            None => self.prequeued_count(event_id).await?,
        };
        Ok(Some(seatclaim_core::ports::Opening {
            sale_starts_at: starts,
            prequeued,
            draw,
        }))
    }

    /// The draws made and not yet published.
    pub(crate) async fn unpublished_draws(&self) -> Result<Vec<SaleOpened>, BackendError> {
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
    pub(crate) async fn draw_published(&self, event_id: &EventId) -> Result<(), BackendError> {
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
