//! An event's sales channels as stored (one JSON value; `NULL` or absent for an event without
//! channels, which every event created before them reads back as).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{from_json, from_ms, to_json, to_ms};
use crate::domain::{Channel, ChannelName, Channels, Section};
use crate::ports::BackendError;

#[derive(Serialize, Deserialize)]
struct StoredChannel {
    name: ChannelName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sale_starts_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    release_at: Option<i64>,
    seats: usize,
}

#[derive(Serialize, Deserialize)]
struct StoredChannels {
    channels: Vec<StoredChannel>,
    sections: BTreeMap<Section, ChannelName>,
}

/// An event's channels to store: JSON, or `None` for an event without channels.
pub fn encode_channels(channels: &Channels) -> Result<Option<String>, BackendError> {
    if channels.channels.is_empty() {
        return Ok(None);
    }
    let stored = StoredChannels {
        channels: (channels.channels.iter())
            .map(|c| StoredChannel {
                name: c.name.clone(),
                sale_starts_at: c.sale_starts_at.map(to_ms),
                release_at: c.release_at.map(to_ms),
                seats: c.seats,
            })
            .collect(),
        sections: channels.sections.clone(),
    };
    to_json(&stored).map(Some)
}

/// Reads an event's stored channels back (none stored: no channels).
pub fn decode_channels(stored: Option<&str>) -> Result<Channels, BackendError> {
    let Some(text) = stored else {
        return Ok(Channels::default());
    };
    let stored: StoredChannels = from_json(text)?;
    let channels = (stored.channels.into_iter())
        .map(|c| {
            Ok(Channel {
                name: c.name,
                sale_starts_at: c.sale_starts_at.map(from_ms).transpose()?,
                release_at: c.release_at.map(from_ms).transpose()?,
                seats: c.seats,
            })
        })
        .collect::<Result<_, BackendError>>()?;
    Ok(Channels {
        channels,
        sections: stored.sections,
    })
}
