//! A sale's openings on DynamoDB: an event's own start, and each channel's that announced one
//! ([`OpeningOf`]). The first receive of any worker at or after a start (`SqsQueue::receive`)
//! opens it, under a lease on its opening item (in the outbox table, key `opening#<event>` or
//! `opening#<event>#<channel>`, so that no task role writes the events table) so that one
//! process does:
//! it draws the pre-queue's order and releases it to SQS (`release.rs`). A process taking over a
//! lapsed lease draws the same order from the recorded seed and goes on where the release
//! stopped. This module keeps each process's view of the openings (which starts there are,
//! which are opened and published) and answers the catalog's questions about them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, all_pages, get_s, n, opt_n, opt_s, s};
use seatclaim_core::codec::{decode_channels, from_ms};
use seatclaim_core::domain::{ChannelName, EventId, Intent, SALE_OPENED, SaleOpened, Start};
use seatclaim_core::ports::BackendError;

/// One opening: an event's own start, or a channel's own (`docs/presales.md`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct OpeningOf {
    /// The event.
    pub(crate) event_id: EventId,
    /// Its start: the event's (no channel) or a channel's.
    pub(crate) start: Start,
}

impl OpeningOf {
    /// How its items' keys name it: the event, then `#` and the channel for a channel's (ids
    /// hold no `#`, so no two openings share a name).
    pub(crate) fn key_part(&self) -> String {
        key_part(&self.event_id, self.start.channel.as_ref())
    }
}

/// [`OpeningOf::key_part`] of `event_id`'s own opening, or `channel`'s.
fn key_part(event_id: &EventId, channel: Option<&ChannelName>) -> String {
    match channel {
        None => event_id.to_string(),
        Some(channel) => format!("{event_id}#{channel}"),
    }
}

/// How long a read of the events with an opening to make answers.
const READ_EVERY: Duration = Duration::from_secs(1);

/// Where an event's opening stands, as its opening item says.
#[derive(Debug, Clone, Default)]
struct State {
    opened: bool,
    published: bool,
    draw: Option<SaleOpened>,
}

/// The openings announced.
type Starts = Vec<OpeningOf>;

/// This process's view of the openings: the events with a start (read at most once a
/// [`READ_EVERY`]), and each due event's state (re-read after the same time, until its
/// opening is made and published, which never changes again).
#[derive(Debug, Default)]
pub(crate) struct Openings {
    starts: Mutex<Option<(Instant, Starts)>>,
    states: Mutex<HashMap<String, (Instant, State)>>,
}

/// How far back an event's start is still looked at: the outbox's retention, past which no
/// opening is left to make or publish.
const LOOK_BACK: jiff::SignedDuration = jiff::SignedDuration::from_hours(7 * 24);

/// The key of an opening's item in the outbox table (`part`: [`OpeningOf::key_part`]).
pub(crate) fn opening_key(part: &str) -> Item {
    Item::from([
        ("job_id".to_owned(), s(format!("opening#{part}"))),
        ("id".to_owned(), s("opening")),
    ])
}

/// The draw an opening item records, if any.
pub(crate) fn recorded_draw(
    opening: &OpeningOf,
    item: &Item,
) -> Result<Option<SaleOpened>, BackendError> {
    let (Some(seed), Some(digest)) = (opt_s(item, "seed"), opt_s(item, "digest")) else {
        return Ok(None);
    };
    Ok(Some(SaleOpened {
        kind: SALE_OPENED.to_owned(),
        event_id: opening.event_id.clone(),
        channel: opening.start.channel.clone(),
        sale_starts_at: opening.start.at,
        seed: seed.to_owned(),
        shuffled: opt_n(item, "prequeued")?.map_or(0, |n| u64::try_from(n).unwrap_or(0)),
        digest: digest.to_owned(),
        occurred_at: from_ms(opt_n(item, "drawn_at")?.unwrap_or(0))?,
    }))
}

fn state_of(opening: &OpeningOf, item: &Item) -> Result<State, BackendError> {
    Ok(State {
        opened: item.contains_key("opened"),
        published: item.contains_key("published"),
        draw: recorded_draw(opening, item)?,
    })
}

/// The openings of one events-table item: its own start and its channels' own, each from
/// `since` on.
fn starts_of(item: &Item, since: i64) -> Result<Starts, BackendError> {
    let event_id = EventId::parse(get_s(item, "event_id")?)
        .map_err(|e| BackendError::permanent(e.to_string()))?;
    let own = opt_n(item, "sale_starts_at")?.map(|at| (None, at));
    let channels = decode_channels(opt_s(item, "channels"))?;
    let of_channels = (channels.channels.into_iter())
        .filter_map(|c| Some((Some(c.name), c.sale_starts_at?.as_millisecond())));
    own.into_iter()
        .chain(of_channels)
        .filter(|(_, at)| *at >= since)
        .map(|(channel, at)| {
            Ok(OpeningOf {
                event_id: event_id.clone(),
                start: Start {
                    channel,
                    at: from_ms(at)?,
                },
            })
        })
        .collect()
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
                .filter_expression(
                    "(sale_starts_at >= :since OR attribute_exists(channels)) AND #status = :ready",
                )
                .expression_attribute_names("#status", "status")
                .expression_attribute_values(":since", n(since))
                .expression_attribute_values(":ready", s("READY"))
                .projection_expression("event_id, sale_starts_at, channels")
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Scan events with openings", e))?;
            Ok((page.items().to_vec(), page.last_evaluated_key().cloned()))
        })
        .await?;
        let mut starts = Vec::new();
        for item in &items {
            starts.extend(starts_of(item, since)?);
        }
        *lock(&self.process.openings.starts) = Some((Instant::now(), starts.clone()));
        Ok(starts)
    }

    /// The state of an opening, from this process's view unless it is stale.
    async fn state(&self, opening: &OpeningOf) -> Result<State, BackendError> {
        let part = opening.key_part();
        if let Some((at, state)) = lock(&self.process.openings.states).get(&part)
            && ((state.opened && state.published) || at.elapsed() < READ_EVERY)
        {
            return Ok(state.clone());
        }
        let item = self.opening_item(opening).await?.unwrap_or_default();
        let state = state_of(opening, &item)?;
        lock(&self.process.openings.states).insert(part, (Instant::now(), state.clone()));
        Ok(state)
    }

    async fn opening_item(&self, opening: &OpeningOf) -> Result<Option<Item>, BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(opening_key(&opening.key_part())))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem opening", e))?;
        Ok(output.item().cloned())
    }

    pub(crate) fn forget_state(&self, opening: &OpeningOf) {
        self.forget(&opening.key_part());
    }

    fn forget(&self, part: &str) {
        lock(&self.process.openings.states).remove(part);
    }

    /// The opening `intent` waits for, if its sale announced a start (its channel's own, or its
    /// event's: [`SaleTerms::start_for`](seatclaim_core::domain::SaleTerms::start_for)).
    pub(crate) async fn opening_for(
        &self,
        intent: &Intent,
    ) -> Result<Option<OpeningOf>, BackendError> {
        let meta = self.event_meta(&intent.event_id).await?;
        Ok(meta
            .and_then(|meta| meta.terms().start_for(intent))
            .map(|start| OpeningOf {
                event_id: intent.event_id.clone(),
                start,
            }))
    }

    /// Whether an opening is made (its pre-queue and late list released).
    pub(crate) async fn sale_opened(&self, opening: &OpeningOf) -> Result<bool, BackendError> {
        Ok(self.state(opening).await?.opened)
    }

    /// Opens every sale whose start has come and whose opening is not made.
    pub(crate) async fn open_due_sales(&self) -> Result<(), BackendError> {
        let now = self.clock.now();
        for opening in self.starts().await? {
            if opening.start.at <= now && !self.state(&opening).await?.opened {
                self.open_sale(&opening).await?;
            }
        }
        Ok(())
    }

    /// Where an opening of `event_id` stands (the event's own, or `channel`'s; its items read
    /// strongly consistent); before the draw the pre-queue is counted.
    pub(crate) async fn opening_of(
        &self,
        event_id: &EventId,
        channel: Option<&ChannelName>,
    ) -> Result<Option<seatclaim_core::ports::Opening>, BackendError> {
        let Some(meta) = self.event_meta(event_id).await? else {
            return Ok(None);
        };
        let at = match channel {
            None => meta.opens_at,
            Some(name) => meta.channels.get(name).and_then(|c| c.sale_starts_at),
        };
        let Some(at) = at else {
            return Ok(None);
        };
        let opening = OpeningOf {
            event_id: event_id.clone(),
            start: Start {
                channel: channel.cloned(),
                at,
            },
        };
        let item = self.opening_item(&opening).await?.unwrap_or_default();
        let draw = recorded_draw(&opening, &item)?;
        let prequeued = match &draw {
            Some(draw) => draw.shuffled,
            None => self.prequeued_count(&opening).await?,
        };
        Ok(Some(seatclaim_core::ports::Opening {
            sale_starts_at: at,
            prequeued,
            draw,
        }))
    }

    /// The draws made and not yet published.
    pub(crate) async fn unpublished_draws(&self) -> Result<Vec<SaleOpened>, BackendError> {
        let now = self.clock.now();
        let mut draws = Vec::new();
        for opening in self.starts().await? {
            if opening.start.at > now {
                continue;
            }
            let state = self.state(&opening).await?;
            if !state.published {
                draws.extend(state.draw);
            }
        }
        Ok(draws)
    }

    /// Marks an opening's draw published: the event's own, or `channel`'s.
    pub(crate) async fn draw_published(
        &self,
        event_id: &EventId,
        channel: Option<&ChannelName>,
    ) -> Result<(), BackendError> {
        let part = key_part(event_id, channel);
        self.db
            .update_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(opening_key(&part)))
            .update_expression("SET published = :yes")
            .expression_attribute_values(":yes", n(1))
            .send()
            .await
            .map_err(|e| classify("UpdateItem opening published", e))?;
        self.forget(&part);
        Ok(())
    }
}
