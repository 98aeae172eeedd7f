//! The catalog on DynamoDB: events (cached per process once READY) and their seat maps.

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;

use crate::dynamo::error::classify;
use crate::dynamo::item::{all_pages, get_n, get_s, n, opt_n, opt_s, s};
use crate::events::capacity;
use crate::seats::seat_items::{seat_from_item, section_shards};
use crate::{DynamoStore, EventMeta};
use jiff::Timestamp;
use seatclaim_core::codec::{
    decode_channels, decode_extension, decode_prices, encode_channels, encode_extension,
    encode_prices, event_info, from_ms, seat_limit,
};
use seatclaim_core::domain::{
    Best, ChannelName, CodeHash, CodeRecord, EventId, NewEvent, SaleOpened, Seat, SeatId, Waitlist,
};
use seatclaim_core::ports::{
    BackendError, Catalog, CodeStanding, CodesCreation, EventCreation, EventInfo, EventTallies,
    Opening,
};

const CREATING: &str = "CREATING";
const READY: &str = "READY";
/// The event item's per-buyer seat limit, absent when the event has none.
const LIMIT: &str = "max_seats_per_buyer";

/// The event item's announced start in milliseconds, absent when the event has none.
const SALE_STARTS_AT: &str = "sale_starts_at";
/// The event item's waitlist (`open` or `closed`), absent when the event has none.
pub(crate) const WAITLIST: &str = "waitlist";
/// The event item's preference (`rank`), absent for the default, front and centre.
const BEST: &str = "best";
/// An event's sales channels, JSON (`codec::encode_channels`); absent without channels.
const CHANNELS: &str = "channels";

/// The waitlist an event item names; an item without one (every event before waitlists) has
/// none.
fn waitlist_of(item: &crate::dynamo::item::Item) -> Waitlist {
    opt_s(item, WAITLIST)
        .and_then(Waitlist::parse)
        .unwrap_or_default()
}

impl DynamoStore {
    /// The event's hold and sections, from the cache or the table; `None` unless the event is READY.
    pub(crate) async fn event_meta(
        &self,
        event_id: &EventId,
    ) -> Result<Option<EventMeta>, BackendError> {
        if let Some(meta) = self.events.get(event_id, self.clock.now())? {
            return Ok(Some(meta));
        }
        let output = self
            .db
            .get_item()
            .table_name(&self.names.events_table)
            .key("event_id", s(event_id.as_str()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem event", e))?;
        let Some(item) = output
            .item()
            .filter(|item| opt_s(item, "status") == Some(READY))
        else {
            return Ok(None);
        };
        let sections = item
            .get("sections")
            .and_then(|v| v.as_ss().ok())
            .cloned()
            .unwrap_or_default();
        // Events of schema version 1 have no shard map: each of their sections has one shard.
        let free_shards = item
            .get("free_shards")
            .and_then(|v| v.as_m().ok())
            .map(|shards| {
                shards
                    .iter()
                    .filter_map(|(section, count)| {
                        let count = count.as_n().ok()?.parse::<u32>().ok()?;
                        Some((section.clone(), count))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let seat_limit = seat_limit(event_id.as_str(), opt_n(item, LIMIT)?)?;
        let meta = EventMeta {
            hold_ms: get_n(item, "hold_ms")?,
            seat_limit,
            prices: Arc::new(decode_prices(opt_s(item, "prices"))?),
            extension: decode_extension(opt_s(item, "extension"))?,
            waitlist: waitlist_of(item),
            opens_at: opt_n(item, SALE_STARTS_AT)?.map(from_ms).transpose()?,
            capacities: capacity::decode(item)?,
            sections,
            free_shards,
            seat_count: usize::try_from(get_n(item, "seat_count")?).unwrap_or(0),
            // Events before best-available have no `best`: they preferred nothing.
            best: opt_s(item, BEST)
                .map(Best::parse)
                .transpose()
                .map_err(|_| {
                    BackendError::permanent(format!("event {event_id} has an invalid best"))
                })?
                .unwrap_or_default(),
            seat_ids: Arc::default(),
            channels: Arc::new(decode_channels(opt_s(item, CHANNELS))?),
        };
        self.events
            .insert(event_id.clone(), meta.clone(), self.clock.now())?;
        Ok(Some(meta))
    }

    /// The events whose waitlist is open, from a paginated scan of the events table (a few
    /// items per event): the sweeper's list of lines to serve.
    pub(crate) async fn events_with_open_waitlists(&self) -> Result<Vec<EventId>, BackendError> {
        let items = all_pages(|start| async {
            let page = self
                .db
                .scan()
                .table_name(&self.names.events_table)
                .filter_expression("#waitlist = :open AND #status = :ready")
                .expression_attribute_names("#waitlist", WAITLIST)
                .expression_attribute_names("#status", "status")
                .expression_attribute_values(":open", s(Waitlist::Open.as_str()))
                .expression_attribute_values(":ready", s(READY))
                .projection_expression("event_id")
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Scan events with waitlists", e))?;
            Ok((page.items().to_vec(), page.last_evaluated_key().cloned()))
        })
        .await?;
        items
            .iter()
            .map(|item| {
                EventId::parse(get_s(item, "event_id")?)
                    .map_err(|e| BackendError::permanent(e.to_string()))
            })
            .collect()
    }

    /// Every seat id of an event, from a read of the ids alone (an event's seats are all
    /// written before it is READY).
    pub(crate) async fn seat_ids(
        &self,
        event_id: &EventId,
        seats: usize,
    ) -> Result<HashSet<SeatId>, BackendError> {
        self.event_seat_items(event_id, seats, Some("seat_id"))
            .await?
            .iter()
            .map(|item| {
                SeatId::parse(get_s(item, "seat_id")?).map_err(|_| {
                    BackendError::permanent(format!("event {event_id} has an invalid seat id"))
                })
            })
            .collect()
    }
}

#[async_trait]
impl Catalog for DynamoStore {
    /// The event item is written first as CREATING (claiming the id), then the seats, then the
    /// item flips to READY: readers ignore an event until it is READY, so a half-created event
    /// is never visible. An event left CREATING by a crash keeps its id taken (409).
    async fn create_event(&self, event: &NewEvent) -> Result<EventCreation, BackendError> {
        let mut sections: Vec<String> = event
            .seats
            .iter()
            .map(|(_, section)| section.as_str().to_owned())
            .collect();
        sections.sort();
        sections.dedup();
        let shards = section_shards(event);
        let shard_map = shards
            .iter()
            .map(|(section, count)| (section.clone(), n(i64::from(*count))))
            .collect();
        let mut put = self
            .db
            .put_item()
            .table_name(&self.names.events_table)
            .item("event_id", s(event.event_id.as_str()))
            .item("name", s(event.name.clone()))
            .item(
                "hold_ms",
                n(i64::try_from(event.hold.as_millis()).unwrap_or(i64::MAX)),
            )
            .item("sections", AttributeValue::Ss(sections))
            .item(
                "seat_count",
                n(i64::try_from(event.seats.len()).unwrap_or(i64::MAX)),
            )
            .item("free_shards", AttributeValue::M(shard_map))
            .item(capacity::CAPACITY, capacity::encode(event)?)
            .item("status", s(CREATING));
        if let Some(limit) = event.max_seats_per_buyer {
            put = put.item(LIMIT, n(i64::from(limit.seats())));
        }
        if let Some(extension) = encode_extension(event.extension)? {
            put = put.item("extension", s(extension));
        }
        if let Some(starts) = event.sale_starts_at {
            put = put.item(SALE_STARTS_AT, n(starts.as_millisecond()));
        }
        if event.waitlist != Waitlist::None {
            put = put.item(WAITLIST, s(event.waitlist.as_str()));
        }
        if event.best != Best::default() {
            put = put.item(BEST, s(event.best.as_str()));
        }
        if let Some(prices) = encode_prices(&event.prices)? {
            put = put.item("prices", s(prices));
        }
        if let Some(channels) = encode_channels(&event.channels)? {
            put = put.item(CHANNELS, s(channels));
        }
        let claimed = put
            .condition_expression("attribute_not_exists(event_id)")
            .send()
            .await;
        if let Err(error) = claimed {
            if error
                .as_service_error()
                .is_some_and(|e| e.is_conditional_check_failed_exception())
            {
                return Ok(EventCreation::AlreadyExists);
            }
            return Err(classify("PutItem event", error));
        }
        self.write_seats(event, &shards).await?;
        self.db
            .update_item()
            .table_name(&self.names.events_table)
            .key("event_id", s(event.event_id.as_str()))
            .update_expression("SET #status = :ready")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":ready", s(READY))
            .send()
            .await
            .map_err(|e| classify("UpdateItem event", e))?;
        Ok(EventCreation::Created(event.seats.len()))
    }

    async fn seat_map(&self, event_id: &EventId) -> Result<Option<Vec<Seat>>, BackendError> {
        let Some(meta) = self.event_meta(event_id).await? else {
            return Ok(None);
        };
        let mut seats = self
            .event_seat_items(event_id, meta.seat_count, None)
            .await?
            .iter()
            .map(|item| Ok((get_n(item, "position")?, seat_from_item(item)?)))
            .collect::<Result<Vec<(i64, Seat)>, BackendError>>()?;
        seats.sort_by_key(|(position, _)| *position);
        Ok(Some(seats.into_iter().map(|(_, seat)| seat).collect()))
    }

    /// A paginated, eventually consistent `Scan` of the events table (a few items per event):
    /// the list is advisory, like the seat map. Ordered by id, as DynamoDB keeps no order.
    async fn events(&self) -> Result<Vec<EventInfo>, BackendError> {
        let items = all_pages(|start| async {
            let page = self
                .db
                .scan()
                .table_name(&self.names.events_table)
                .filter_expression("#status = :ready")
                .expression_attribute_names("#status", "status")
                .expression_attribute_values(":ready", s(READY))
                .projection_expression(
                    "event_id, #name, hold_ms, max_seats_per_buyer, prices, extension, waitlist, sale_starts_at, channels",
                )
                .expression_attribute_names("#name", "name")
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Scan events", e))?;
            Ok((page.items().to_vec(), page.last_evaluated_key().cloned()))
        })
        .await?;
        let mut events = items
            .iter()
            .map(|item| {
                let mut info = event_info(
                    get_s(item, "event_id")?,
                    get_s(item, "name")?.to_owned(),
                    get_n(item, "hold_ms")?,
                    opt_n(item, LIMIT)?,
                    opt_s(item, "prices"),
                    opt_s(item, "extension"),
                    waitlist_of(item),
                )?;
                info.sale_starts_at = opt_n(item, SALE_STARTS_AT)?.map(from_ms).transpose()?;
                info.channels = decode_channels(opt_s(item, CHANNELS))?;
                Ok::<_, BackendError>(info)
            })
            .collect::<Result<Vec<_>, _>>()?;
        events.sort_by(|a, b| a.event_id.as_str().cmp(b.event_id.as_str()));
        Ok(events)
    }

    async fn opening(
        &self,
        event_id: &EventId,
        channel: Option<&ChannelName>,
    ) -> Result<Option<Opening>, BackendError> {
        self.opening_of(event_id, channel).await
    }

    async fn create_codes(
        &self,
        event_id: &EventId,
        codes: &[CodeRecord],
    ) -> Result<CodesCreation, BackendError> {
        DynamoStore::create_codes(self, event_id, codes).await
    }

    async fn code(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<Option<CodeStanding>, BackendError> {
        self.code_standing(event_id, hash, now).await
    }

    async fn revoke_code(&self, event_id: &EventId, hash: &CodeHash) -> Result<bool, BackendError> {
        self.revoke(event_id, hash).await
    }

    async fn tallies(
        &self,
        event_id: &EventId,
        now: Timestamp,
        horizon: Timestamp,
    ) -> Result<Option<EventTallies>, BackendError> {
        DynamoStore::tallies(self, event_id, now, horizon).await
    }

    async fn unpublished_openings(&self) -> Result<Vec<SaleOpened>, BackendError> {
        self.unpublished_draws().await
    }

    async fn opening_published(
        &self,
        event_id: &EventId,
        channel: Option<&ChannelName>,
    ) -> Result<(), BackendError> {
        self.draw_published(event_id, channel).await
    }

    async fn ping(&self) -> Result<(), BackendError> {
        self.db
            .describe_table()
            .table_name(&self.names.jobs_table)
            .send()
            .await
            .map_err(|e| classify("DescribeTable", e))?;
        Ok(())
    }
}
