//! Sales channels: an event may set sections aside for a channel (a fan club, a card holder, a
//! partner) until the channel's `release_at`. A seat of a channel's section is claimed only by an
//! intent admitted under that channel (an access code of it, or a partner's scope); every other
//! seat is public, and a channel's intent takes only its channel's seats. At `release_at` the
//! channel's seats become public in every decision at once: the rule is read at the decision's
//! own instant, inside the claim's atomic step, so no claim sees half a release.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Deserialize;

use super::{ChannelName, Section, ValidationError};

/// Channels one event may name.
pub const MAX_CHANNELS: usize = 16;

/// A channel as the organiser describes it in `POST /v1/events`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ChannelSpec {
    /// The channel's name, `[A-Za-z0-9._:-]`, 1 to 32 characters.
    pub name: String,
    /// When its sale starts (RFC 3339); intents admitted under it before then wait in its
    /// pre-queue. Absent: with the event's sale.
    pub sale_starts_at: Option<String>,
    /// When its seats not held or sold become public (RFC 3339). Absent: never.
    pub release_at: Option<String>,
}

/// One channel of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    /// Its name.
    pub name: ChannelName,
    /// When its sale starts, if not with the event's.
    pub sale_starts_at: Option<Timestamp>,
    /// When its seats become public, if ever.
    pub release_at: Option<Timestamp>,
    /// How many seats its sections hold.
    pub seats: usize,
}

/// An event's channels and which sections each holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Channels {
    /// The channels, in the organiser's order.
    pub channels: Vec<Channel>,
    /// The sections set aside, by section.
    pub sections: BTreeMap<Section, ChannelName>,
}

impl Channels {
    /// Checks the organiser's channels and the channel each section names (`sections`: a
    /// section and the channel its seats were given, one pair per seat or section spec). Every
    /// seat of a section must name the same channel, and every channel named must exist.
    pub fn parse<'a>(
        specs: Option<&[ChannelSpec]>,
        sections: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> Result<Self, ValidationError> {
        let specs = specs.unwrap_or_default();
        if specs.len() > MAX_CHANNELS {
            return Err(ValidationError::new(
                "channels",
                format!("at most {MAX_CHANNELS} channels"),
            ));
        }
        let mut channels: Vec<Channel> = Vec::with_capacity(specs.len());
        for spec in specs {
            let channel = Channel::parse(spec)?;
            if channels.iter().any(|c| c.name == channel.name) {
                return Err(ValidationError::new(
                    "channels",
                    format!("name {} twice", channel.name),
                ));
            }
            channels.push(channel);
        }
        let mut given: BTreeMap<Section, Option<ChannelName>> = BTreeMap::new();
        for (section, channel) in sections {
            let section = Section::parse(section)?;
            let channel = channel.map(ChannelName::parse).transpose()?;
            if let Some(name) = &channel
                && !channels.iter().any(|c| &c.name == name)
            {
                return Err(ValidationError::new(
                    "channel",
                    format!("{name} is not one of the event's channels"),
                ));
            }
            match given.get(&section) {
                Some(before) if *before != channel => {
                    return Err(ValidationError::new(
                        "channel",
                        format!("every seat of section {section} must name the same channel"),
                    ));
                }
                _ => {
                    given.insert(section, channel);
                }
            }
        }
        let sections = (given.into_iter())
            .filter_map(|(section, channel)| Some((section, channel?)))
            .collect();
        Ok(Self { channels, sections })
    }

    /// Counts each channel's seats, from the section of every seat of the event.
    pub fn count<'a>(&mut self, seat_sections: impl IntoIterator<Item = &'a Section>) {
        for section in seat_sections {
            let name = self.sections.get(section);
            if let Some(channel) = self.channels.iter_mut().find(|c| Some(&c.name) == name) {
                channel.seats += 1;
            }
        }
    }

    /// The channel named `name`.
    #[must_use]
    pub fn get(&self, name: &ChannelName) -> Option<&Channel> {
        self.channels.iter().find(|c| &c.name == name)
    }

    /// The channel whose seats `section` holds at `now`: `None` for a public section, and for a
    /// channel's section from its `release_at` on.
    #[must_use]
    pub fn of(&self, section: &Section, now: Timestamp) -> Option<&ChannelName> {
        let name = self.sections.get(section)?;
        let released = (self.get(name)).is_some_and(|c| c.release_at.is_some_and(|at| at <= now));
        (!released).then_some(name)
    }

    /// The start of `channel`'s own sale when it is still to come at `now`: an intent admitted
    /// under it takes no seat before then.
    #[must_use]
    pub fn not_open(&self, channel: &ChannelName, now: Timestamp) -> Option<Timestamp> {
        self.get(channel)?
            .sale_starts_at
            .filter(|starts| now < *starts)
    }

    /// Whether `section` was a channel's and is public from its `release_at` at `now`: its
    /// seats go to the section's line first.
    #[must_use]
    pub fn released(&self, section: &Section, now: Timestamp) -> bool {
        self.sections.contains_key(section) && self.of(section, now).is_none()
    }

    /// When `section`'s channel releases it, if it belongs to a channel that does.
    #[must_use]
    pub fn released_at(&self, section: &Section) -> Option<Timestamp> {
        let name = self.sections.get(section)?;
        self.get(name)?.release_at
    }

    /// The sections of channels released at `now`, whose lines the release serves.
    pub fn released_sections(&self, now: Timestamp) -> impl Iterator<Item = &Section> {
        (self.sections.keys()).filter(move |section| self.released(section, now))
    }

    /// Whether an intent admitted under `channel` (`None`: a public one) may take seats of
    /// `section` at `now`: only a section of its own channel, or a public one for a public
    /// intent.
    #[must_use]
    pub fn admits(&self, channel: Option<&ChannelName>, section: &Section, now: Timestamp) -> bool {
        self.of(section, now) == channel
    }

    /// The sections of `channel` (unreleased or not), for the counts of `GET /v1/events`.
    pub fn sections_of<'a>(
        &'a self,
        channel: &'a ChannelName,
    ) -> impl Iterator<Item = &'a Section> {
        (self.sections.iter())
            .filter(move |(_, name)| *name == channel)
            .map(|(section, _)| section)
    }
}

impl Channel {
    fn parse(spec: &ChannelSpec) -> Result<Self, ValidationError> {
        let instant = |field: &'static str, text: Option<&String>| {
            text.map(|at| {
                at.parse::<Timestamp>().map_err(|_| {
                    ValidationError::new(field, "must be an RFC 3339 timestamp with an offset")
                })
            })
            .transpose()
        };
        let channel = Self {
            name: ChannelName::parse(&spec.name)?,
            sale_starts_at: instant("channels.sale_starts_at", spec.sale_starts_at.as_ref())?,
            release_at: instant("channels.release_at", spec.release_at.as_ref())?,
            seats: 0,
        };
        if let (Some(starts), Some(release)) = (channel.sale_starts_at, channel.release_at)
            && release <= starts
        {
            return Err(ValidationError::new(
                "channels.release_at",
                "must come after the channel's sale_starts_at",
            ));
        }
        Ok(channel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, release_at: Option<&str>) -> ChannelSpec {
        ChannelSpec {
            name: name.to_owned(),
            sale_starts_at: None,
            release_at: release_at.map(str::to_owned),
        }
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn a_channels_section_is_its_own_until_the_release_and_public_after() {
        let specs = [spec("fanclub", Some("2030-01-01T10:00:00Z"))];
        let sections = [("A", Some("fanclub")), ("B", None)];
        let channels = Channels::parse(Some(&specs), sections).unwrap();
        let fan = ChannelName::parse("fanclub").unwrap();
        let (a, b) = (Section::parse("A").unwrap(), Section::parse("B").unwrap());
        let before = at("2030-01-01T09:59:59Z");
        assert!(channels.admits(Some(&fan), &a, before));
        assert!(!channels.admits(None, &a, before));
        assert!(!channels.admits(Some(&fan), &b, before));
        assert!(channels.admits(None, &b, before));
        let after = at("2030-01-01T10:00:00Z");
        assert!(channels.admits(None, &a, after));
        assert!(!channels.admits(Some(&fan), &a, after));
    }

    #[test]
    fn a_section_names_one_channel_and_only_one_the_event_has() {
        let specs = [spec("fanclub", None)];
        let mixed = [("A", Some("fanclub")), ("A", None)];
        assert!(Channels::parse(Some(&specs), mixed).is_err());
        let unknown = [("A", Some("partner"))];
        assert!(Channels::parse(Some(&specs), unknown).is_err());
        let twice = [spec("fanclub", None), spec("fanclub", None)];
        assert!(Channels::parse(Some(&twice), []).is_err());
    }
}
