use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};

use super::error::{build_error, classify};
use super::item::{Item, get_n, get_s, n, opt_n, opt_s, s};
use super::{DynamoStore, EventMeta};
use crate::codec::SeatRecord;
use crate::domain::{EventId, NewEvent, Seat, SeatId};
use crate::ports::{BackendError, Catalog, EventCreation};

/// DynamoDB's limit on one BatchWriteItem.
const WRITE_BATCH: usize = 25;
const CREATING: &str = "CREATING";
const READY: &str = "READY";

/// The key attribute that puts a seat in the free-seats index: present exactly while AVAILABLE.
pub(super) fn free_key(event_id: &EventId, section: &str) -> String {
    format!("{event_id}#{section}")
}

/// The key of a seat's item.
pub(super) fn seat_key(event_id: &EventId, seat_id: &SeatId) -> Item {
    Item::from([
        ("event_id".to_owned(), s(event_id.as_str())),
        ("seat_id".to_owned(), s(seat_id.as_str())),
    ])
}

/// Events whose metadata a process keeps at once.
const MAX_CACHED_EVENTS: usize = 64;

/// Reads a seat item into the domain's seat.
pub(super) fn seat_from_item(item: &Item) -> Result<Seat, BackendError> {
    SeatRecord {
        seat_id: get_s(item, "seat_id")?.to_owned(),
        section: get_s(item, "section")?.to_owned(),
        state: get_s(item, "state")?.to_owned(),
        job_id: opt_s(item, "job_id").map(str::to_owned),
        hold_until: opt_n(item, "hold_until")?,
    }
    .into_seat()
}

impl DynamoStore {
    /// The event's hold and sections, from the cache or the table; `None` unless the event is READY.
    pub(super) async fn event_meta(
        &self,
        event_id: &EventId,
    ) -> Result<Option<EventMeta>, BackendError> {
        if let Some(meta) = self.events.lock().map_err(|_| poisoned())?.get(event_id) {
            return Ok(Some(meta.clone()));
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
        let meta = EventMeta {
            hold_ms: get_n(item, "hold_ms")?,
            sections,
            seat_ids: Arc::default(),
        };
        let mut cache = self.events.lock().map_err(|_| poisoned())?;
        if cache.len() >= MAX_CACHED_EVENTS {
            // A process serves few events at once; forgetting one costs one reload.
            if let Some(evicted) = cache.keys().next().cloned() {
                cache.remove(&evicted);
            }
        }
        cache.insert(event_id.clone(), meta.clone());
        Ok(Some(meta))
    }

    /// Every seat id of an event, from a query of the ids alone (an event's seats are all
    /// written before it is READY).
    pub(super) async fn seat_ids(
        &self,
        event_id: &EventId,
    ) -> Result<HashSet<SeatId>, BackendError> {
        let mut ids = HashSet::new();
        self.each_seat_item(event_id, Some("seat_id"), |item| {
            let id = get_s(item, "seat_id")?;
            ids.insert(SeatId::parse(id).map_err(|_| {
                BackendError::permanent(format!("event {event_id} has an invalid seat id"))
            })?);
            Ok(())
        })
        .await?;
        Ok(ids)
    }

    /// Visits every seat item of an event (only `projection`'s attributes, when given), page by
    /// page: an eventually consistent query, for reads the inventory does not decide on.
    async fn each_seat_item(
        &self,
        event_id: &EventId,
        projection: Option<&str>,
        mut visit: impl FnMut(&Item) -> Result<(), BackendError>,
    ) -> Result<(), BackendError> {
        let mut start = None;
        loop {
            let page = self
                .db
                .query()
                .table_name(&self.names.seats_table)
                .key_condition_expression("event_id = :event")
                .expression_attribute_values(":event", s(event_id.as_str()))
                .set_projection_expression(projection.map(str::to_owned))
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Query seats", e))?;
            page.items().iter().try_for_each(&mut visit)?;
            start = page.last_evaluated_key().cloned();
            if start.is_none() {
                return Ok(());
            }
        }
    }

    async fn write_seats(&self, event: &NewEvent) -> Result<(), BackendError> {
        let requests = event
            .seats
            .iter()
            .enumerate()
            .map(|(position, (seat_id, section))| {
                let mut item = seat_key(&event.event_id, seat_id);
                item.insert("section".into(), s(section.as_str()));
                item.insert(
                    "position".into(),
                    n(i64::try_from(position).unwrap_or(i64::MAX)),
                );
                item.insert("state".into(), s("AVAILABLE"));
                item.insert(
                    "free_key".into(),
                    s(free_key(&event.event_id, section.as_str())),
                );
                let put = PutRequest::builder()
                    .set_item(Some(item))
                    .build()
                    .map_err(build_error)?;
                Ok(WriteRequest::builder().put_request(put).build())
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        for chunk in requests.chunks(WRITE_BATCH) {
            let mut pending = chunk.to_vec();
            let mut attempt = 0_u32;
            while !pending.is_empty() {
                let output = self
                    .db
                    .batch_write_item()
                    .request_items(&self.names.seats_table, pending)
                    .send()
                    .await
                    .map_err(|e| classify("BatchWriteItem seats", e))?;
                pending = output
                    .unprocessed_items()
                    .and_then(|left| left.get(&self.names.seats_table))
                    .cloned()
                    .unwrap_or_default();
                attempt += 1;
                if !pending.is_empty() {
                    tokio::time::sleep(Duration::from_millis(50 * u64::from(attempt.min(20))))
                        .await;
                }
            }
        }
        Ok(())
    }
}

fn poisoned() -> BackendError {
    BackendError::permanent("the event cache lock was poisoned")
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
        let claimed = self
            .db
            .put_item()
            .table_name(&self.names.events_table)
            .item("event_id", s(event.event_id.as_str()))
            .item("name", s(event.name.clone()))
            .item(
                "hold_ms",
                n(i64::try_from(event.hold.as_millis()).unwrap_or(i64::MAX)),
            )
            .item(
                "sections",
                aws_sdk_dynamodb::types::AttributeValue::Ss(sections),
            )
            .item(
                "seat_count",
                n(i64::try_from(event.seats.len()).unwrap_or(i64::MAX)),
            )
            .item("status", s(CREATING))
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
        self.write_seats(event).await?;
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
        if self.event_meta(event_id).await?.is_none() {
            return Ok(None);
        }
        let mut seats: Vec<(i64, Seat)> = Vec::new();
        self.each_seat_item(event_id, None, |item| {
            seats.push((get_n(item, "position")?, seat_from_item(item)?));
            Ok(())
        })
        .await?;
        seats.sort_by_key(|(position, _)| *position);
        Ok(Some(seats.into_iter().map(|(_, seat)| seat).collect()))
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
