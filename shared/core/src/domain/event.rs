//! Creating an event: the organiser's description of the seats, checked and expanded into seat ids.

use std::collections::{BTreeMap, HashSet};

use jiff::{SignedDuration, Timestamp};
use serde::Deserialize;

use super::{
    Best, ChannelSpec, Channels, EventId, HoldExtension, MAX_HOLD_EXTENSIONS, Place, Prices,
    SeatId, SeatLimit, Seating, Section, ValidationError, Waitlist, places,
};

/// The most seats one event may have; bounds the memory and time of creating and listing it.
pub const MAX_SEATS_PER_EVENT: usize = 200_000;
/// How long a hold lasts when the organiser does not say.
pub const DEFAULT_HOLD_SECONDS: u32 = 300;
const MAX_HOLD_SECONDS: u32 = 86_400;

/// A block of seats laid out as rows, named `section-row-number`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SectionSpec {
    /// The section's name, the first part of each generated seat id.
    pub section: String,
    /// How many rows, numbered from 1.
    pub rows: u32,
    /// How many seats in each row, numbered from 1.
    pub seats_per_row: u32,
    /// Each seat's price in the currency's minor units, 0 (the default) to 10^9.
    pub price: Option<u64>,
    /// The sales channel its seats are set aside for (one of the event's `channels`); absent:
    /// public.
    pub channel: Option<String>,
}

/// One explicitly named seat.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SeatSpec {
    /// The seat's id as the organiser names it.
    pub seat_id: String,
    /// The section the seat belongs to.
    pub section: String,
    /// The seat's price in minor units, the same for every seat of its section (default 0).
    pub price: Option<u64>,
    /// Its row's label ("1", "AA"); with `position`, it makes the seat adjacent to the seats of
    /// its row at the next positions. Rows labelled by numbers come first, by value.
    pub row: Option<String>,
    /// Its position in the row.
    pub position: Option<i64>,
    /// Its rank in the event's preference, lower is better (with `"best": "rank"`).
    pub rank: Option<i64>,
    /// The sales channel it is set aside for, the same for every seat of its section; absent:
    /// public.
    #[serde(default)]
    pub channel: Option<String>,
}

/// The organiser's request as it arrived, before any checks: the body of `POST /v1/events` and
/// of `seatclaimctl events create`, one shape for both. `Default` is an empty request, for
/// building one field by field.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    /// The event's id.
    pub event_id: String,
    /// A human name, shown back but never interpreted.
    pub name: String,
    /// Hold length in seconds; `None` takes the default.
    pub hold_seconds: Option<u32>,
    /// The most seats one buyer may hold, buy or wait for, 1 to 100; 0 sets no limit. Absent,
    /// the API and `seatclaimctl` apply the deployment's default
    /// (`SEATCLAIM_DEFAULT_MAX_SEATS_PER_BUYER`, 10); [`NewEvent::parse`] alone reads it as none.
    pub max_seats_per_buyer: Option<u32>,
    /// How many seconds each extension adds to a live hold; `None` or 0 allows no extension.
    pub hold_extension_seconds: Option<u32>,
    /// How many times one hold may be extended (default 1, at most 10).
    pub max_hold_extensions: Option<u32>,
    /// Whether section requests that find too few seats wait in line (default false).
    pub waitlist: Option<bool>,
    /// The prices' ISO 4217 currency ("EUR"); required when any price is above 0.
    pub currency: Option<String>,
    /// Which seats section requests get first: `"front-center"` (the default: the lowest row,
    /// then closest to the row's middle) or `"rank"` (the seats' ranks, lower first; every seat
    /// must have one). An explicit seat list whose seats all have ranks defaults to `"rank"`.
    pub best: Option<String>,
    /// When the sale starts (RFC 3339): intents admitted before it wait in the pre-queue and
    /// are decided from then on, in a random order (`None`: the sale is open at once).
    pub sale_starts_at: Option<String>,
    /// Seats as generated blocks.
    pub sections: Option<Vec<SectionSpec>>,
    /// Seats listed one by one.
    pub seats: Option<Vec<SeatSpec>>,
    /// The sales channels whose sections are set aside for them (`docs/presales.md`).
    pub channels: Option<Vec<ChannelSpec>>,
}

impl EventSpec {
    /// The spec with `default` as its per-buyer limit when it names none: the rule by which the
    /// API and `seatclaimctl` apply the deployment's default (`None`: no limit), so an event is
    /// limited unless its organiser or operator says otherwise.
    #[must_use]
    pub fn with_default_limit(mut self, default: Option<SeatLimit>) -> Self {
        self.max_seats_per_buyer
            .get_or_insert(default.map_or(0, SeatLimit::seats));
        self
    }
}

/// A checked event, ready to store: every seat id is valid and unique.
#[derive(Debug, Clone)]
pub struct NewEvent {
    /// The event's id.
    pub event_id: EventId,
    /// Its human name.
    pub name: String,
    /// How long a claim holds its seats before they return to sale.
    pub hold: SignedDuration,
    /// The most seats one buyer may count at once, if the organiser limits it.
    pub max_seats_per_buyer: Option<SeatLimit>,
    /// Every seat with its section, in the order the organiser gave them.
    pub seats: Vec<(SeatId, Section)>,
    /// What each section's seats cost.
    pub prices: Prices,
    /// How a buyer may extend a hold.
    pub extension: HoldExtension,
    /// Whether its sections keep lines.
    pub waitlist: Waitlist,
    /// When its sale starts, if the organiser announced it.
    pub sale_starts_at: Option<Timestamp>,
    /// Which seats it prefers.
    pub best: Best,
    /// Where each seat of `seats` sits, in the same order.
    pub places: Vec<Place>,
    /// Its sales channels and the sections set aside for them.
    pub channels: Channels,
}

/// Characters a name shown back to buyers may not carry: controls (a name is one line) and the
/// bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) that make text display
/// in another order than it reads (the "Trojan Source" trick).
fn is_disallowed_in_names(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

impl NewEvent {
    /// Checks the organiser's request and expands sections into seats.
    pub fn parse(spec: EventSpec) -> Result<Self, ValidationError> {
        let event_id = EventId::parse(&spec.event_id)?;
        let name = spec.name.trim().to_owned();
        if name.is_empty() || name.chars().count() > 200 {
            return Err(ValidationError::new(
                "name",
                "must be 1 to 200 characters long",
            ));
        }
        if name.chars().any(is_disallowed_in_names) {
            return Err(ValidationError::new(
                "name",
                "must not contain control or bidirectional-override characters",
            ));
        }
        let hold_seconds = spec.hold_seconds.unwrap_or(DEFAULT_HOLD_SECONDS);
        if !(1..=MAX_HOLD_SECONDS).contains(&hold_seconds) {
            return Err(ValidationError::new(
                "hold_seconds",
                format!("must be between 1 and {MAX_HOLD_SECONDS}"),
            ));
        }
        let max_seats_per_buyer = match spec.max_seats_per_buyer {
            Some(seats) => SeatLimit::optional(seats)?,
            None => None,
        };
        let extension = hold_extension(spec.hold_extension_seconds, spec.max_hold_extensions)?;
        let specs = spec.channels.as_deref();
        let (seats, prices, seating, channels) = match (spec.sections, spec.seats) {
            (Some(sections), None) => (
                expand_sections(&sections)?,
                section_prices(sections.iter().map(|s| (&s.section, s.price)))?,
                generated_seating(&sections),
                Channels::parse(
                    specs,
                    (sections.iter()).map(|s| (s.section.as_str(), s.channel.as_deref())),
                )?,
            ),
            (None, Some(seats)) => (
                list_seats(&seats)?,
                section_prices(seats.iter().map(|s| (&s.section, s.price)))?,
                listed_seating(&seats)?,
                Channels::parse(
                    specs,
                    (seats.iter()).map(|s| (s.section.as_str(), s.channel.as_deref())),
                )?,
            ),
            _ => {
                return Err(ValidationError::new(
                    "sections",
                    "or seats must be given, but not both",
                ));
            }
        };
        check_unique(&seats)?;
        let best = match spec.best.as_deref() {
            Some(text) => Best::parse(text)?,
            None if seating.iter().all(|seat| seat.rank.is_some()) => Best::Rank,
            None => Best::FrontCenter,
        };
        if best == Best::Rank && seating.iter().any(|seat| seat.rank.is_none()) {
            return Err(ValidationError::new(
                "best",
                "\"rank\" needs a rank on every seat",
            ));
        }
        let mut channels = channels;
        channels.count(seats.iter().map(|(_, section)| section));
        let sections: Vec<&str> = seats.iter().map(|(_, section)| section.as_str()).collect();
        let places = places(&sections, &seating, best);
        Ok(Self {
            best,
            places,
            channels,
            event_id,
            name,
            hold: SignedDuration::from_secs(i64::from(hold_seconds)),
            max_seats_per_buyer,
            seats,
            prices: Prices::parse(spec.currency.as_deref(), prices)?,
            extension,
            waitlist: if spec.waitlist == Some(true) {
                Waitlist::Open
            } else {
                Waitlist::None
            },
            sale_starts_at: spec
                .sale_starts_at
                .map(|at| {
                    at.parse::<Timestamp>().map_err(|_| {
                        ValidationError::new(
                            "sale_starts_at",
                            "must be an RFC 3339 timestamp with an offset",
                        )
                    })
                })
                .transpose()?,
        })
    }
}

/// The extension terms the organiser gave: each extension at most a hold's own longest length.
fn hold_extension(
    seconds: Option<u32>,
    max: Option<u32>,
) -> Result<HoldExtension, ValidationError> {
    let seconds = seconds.unwrap_or(0);
    if seconds > MAX_HOLD_SECONDS {
        return Err(ValidationError::new(
            "hold_extension_seconds",
            format!("must be between 0 and {MAX_HOLD_SECONDS}"),
        ));
    }
    let max = max.unwrap_or(HoldExtension::NONE.max);
    if max > MAX_HOLD_EXTENSIONS {
        return Err(ValidationError::new(
            "max_hold_extensions",
            format!("must be between 0 and {MAX_HOLD_EXTENSIONS}"),
        ));
    }
    Ok(HoldExtension {
        step: SignedDuration::from_secs(i64::from(seconds)),
        max,
    })
}

/// Each section's one price, from the organiser's sections or seats (a section named twice must
/// give the same price each time).
fn section_prices<'a>(
    given: impl Iterator<Item = (&'a String, Option<u64>)>,
) -> Result<Vec<(Section, u64)>, ValidationError> {
    let mut prices: BTreeMap<Section, u64> = BTreeMap::new();
    for (section, price) in given {
        let section = Section::parse(section)?;
        let price = price.unwrap_or(0);
        if *prices.entry(section.clone()).or_insert(price) != price {
            return Err(ValidationError::new(
                "price",
                format!("must be the same for every seat of section {section}"),
            ));
        }
    }
    Ok(prices.into_iter().collect())
}

fn too_many() -> ValidationError {
    ValidationError::new(
        "seats",
        format!("an event has 1 to {MAX_SEATS_PER_EVENT} seats"),
    )
}

fn expand_sections(sections: &[SectionSpec]) -> Result<Vec<(SeatId, Section)>, ValidationError> {
    let total = sections.iter().try_fold(0_u64, |sum, s| {
        sum.checked_add(u64::from(s.rows) * u64::from(s.seats_per_row))
    });
    match total {
        Some(n) if n >= 1 && n <= MAX_SEATS_PER_EVENT as u64 => {}
        _ => return Err(too_many()),
    }
    let mut seats = Vec::new();
    for spec in sections {
        let section = Section::parse(&spec.section)?;
        for row in 1..=spec.rows {
            for number in 1..=spec.seats_per_row {
                let seat_id = SeatId::parse(&format!("{section}-{row}-{number}"))?;
                seats.push((seat_id, section.clone()));
            }
        }
    }
    Ok(seats)
}

/// Generated seats sit in their rows: `S-r-n` is row `r`, position `n`.
fn generated_seating(sections: &[SectionSpec]) -> Vec<Seating> {
    sections
        .iter()
        .flat_map(|spec| {
            (1..=spec.rows).flat_map(move |row| {
                (1..=spec.seats_per_row).map(move |number| Seating {
                    row: Some((row.to_string(), i64::from(number))),
                    rank: None,
                })
            })
        })
        .collect()
}

/// Listed seats sit where the organiser says: a row and a position, both or neither.
fn listed_seating(seats: &[SeatSpec]) -> Result<Vec<Seating>, ValidationError> {
    seats
        .iter()
        .map(|seat| {
            let row = match (&seat.row, seat.position) {
                (Some(row), Some(position)) if !row.trim().is_empty() && row.len() <= 32 => {
                    Some((row.trim().to_owned(), position))
                }
                (None, None) => None,
                _ => {
                    return Err(ValidationError::new(
                        "seats",
                        format!(
                            "seat {} must give both row (1 to 32 characters) and position, or neither",
                            seat.seat_id
                        ),
                    ));
                }
            };
            Ok(Seating {
                row,
                rank: seat.rank,
            })
        })
        .collect()
}

fn list_seats(seats: &[SeatSpec]) -> Result<Vec<(SeatId, Section)>, ValidationError> {
    if seats.is_empty() || seats.len() > MAX_SEATS_PER_EVENT {
        return Err(too_many());
    }
    seats
        .iter()
        .map(|s| Ok((SeatId::parse(&s.seat_id)?, Section::parse(&s.section)?)))
        .collect()
}

fn check_unique(seats: &[(SeatId, Section)]) -> Result<(), ValidationError> {
    let mut seen = HashSet::with_capacity(seats.len());
    match seats.iter().find(|(id, _)| !seen.insert(id)) {
        Some((id, _)) => Err(ValidationError::new(
            "seats",
            format!("name seat {id} more than once"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> EventSpec {
        EventSpec {
            event_id: "e1".into(),
            name: "Night show".into(),
            sections: Some(vec![SectionSpec {
                channel: None,
                section: "A".into(),
                rows: 10,
                seats_per_row: 20,
                price: None,
            }]),
            ..EventSpec::default()
        }
    }

    #[test]
    fn sections_expand_to_section_row_number_ids() {
        let event = NewEvent::parse(spec()).unwrap();
        assert_eq!(event.seats.len(), 200);
        assert_eq!(event.seats[0].0.as_str(), "A-1-1");
        assert_eq!(event.seats[199].0.as_str(), "A-10-20");
        assert_eq!(event.hold, SignedDuration::from_secs(300));
    }

    #[test]
    fn extension_terms_default_to_none_and_are_bounded() {
        assert_eq!(
            NewEvent::parse(spec()).unwrap().extension,
            HoldExtension::NONE
        );
        assert!(!HoldExtension::NONE.allowed());
        let mut extendable = spec();
        extendable.hold_extension_seconds = Some(120);
        extendable.max_hold_extensions = Some(10);
        let extension = NewEvent::parse(extendable).unwrap().extension;
        assert_eq!(extension.step, SignedDuration::from_secs(120));
        assert_eq!(extension.max, 10);
        assert!(extension.allowed());
        for (seconds, max, field) in [
            (Some(86_401), None, "hold_extension_seconds"),
            (Some(60), Some(11), "max_hold_extensions"),
        ] {
            let mut bad = spec();
            bad.hold_extension_seconds = seconds;
            bad.max_hold_extensions = max;
            assert_eq!(NewEvent::parse(bad).unwrap_err().field, field);
        }
    }

    #[test]
    fn a_name_with_control_or_bidi_override_characters_is_rejected() {
        for bad in [
            "Night\nshow",
            "Night\u{0007}show",
            "evil\u{202E}txt.exe",
            "a\u{2066}b",
        ] {
            let mut named = spec();
            named.name = bad.into();
            assert_eq!(NewEvent::parse(named).unwrap_err().field, "name", "{bad:?}");
        }
        let mut plain = spec();
        plain.name = "Nuit blanche \u{2014} \u{65e5}\u{672c}".into();
        assert!(
            NewEvent::parse(plain).is_ok(),
            "other non-ASCII text is fine"
        );
    }

    #[test]
    fn an_event_without_seats_or_with_too_many_is_rejected() {
        let mut empty = spec();
        empty.sections = Some(vec![]);
        assert_eq!(NewEvent::parse(empty).unwrap_err().field, "seats");
        let mut huge = spec();
        huge.sections = Some(vec![SectionSpec {
            channel: None,
            section: "A".into(),
            rows: 1_000,
            seats_per_row: 201,
            price: None,
        }]);
        assert_eq!(NewEvent::parse(huge).unwrap_err().field, "seats");
    }

    #[test]
    fn duplicate_listed_seats_are_named_in_the_error() {
        let mut dup = spec();
        dup.sections = None;
        dup.seats = Some(vec![
            SeatSpec {
                channel: None,
                seat_id: "x".into(),
                section: "A".into(),
                price: None,
                position: None,
                rank: None,
                row: None,
            },
            SeatSpec {
                channel: None,
                seat_id: "x".into(),
                section: "B".into(),
                price: None,
                position: None,
                rank: None,
                row: None,
            },
        ]);
        let err = NewEvent::parse(dup).unwrap_err();
        assert!(err.message.contains("seat x"), "{err}");
    }

    #[test]
    fn hold_seconds_outside_one_second_to_one_day_is_rejected() {
        for bad in [0, 86_401] {
            let mut s = spec();
            s.hold_seconds = Some(bad);
            assert_eq!(NewEvent::parse(s).unwrap_err().field, "hold_seconds");
        }
    }

    #[test]
    fn a_seat_limit_outside_one_to_a_hundred_is_rejected_and_zero_is_none() {
        let mut limited = spec();
        limited.max_seats_per_buyer = Some(101);
        assert_eq!(
            NewEvent::parse(limited.clone()).unwrap_err().field,
            "max_seats_per_buyer"
        );
        limited.max_seats_per_buyer = Some(0);
        assert_eq!(
            NewEvent::parse(limited.clone())
                .unwrap()
                .max_seats_per_buyer,
            None
        );
        limited.max_seats_per_buyer = Some(4);
        let event = NewEvent::parse(limited).unwrap();
        assert_eq!(event.max_seats_per_buyer.map(SeatLimit::seats), Some(4));
    }

    #[test]
    fn the_default_limit_applies_only_where_the_spec_names_none() {
        let ten = SeatLimit::optional(super::super::DEFAULT_SEAT_LIMIT).unwrap();
        let limit = |spec: EventSpec| NewEvent::parse(spec).unwrap().max_seats_per_buyer;
        assert_eq!(limit(spec().with_default_limit(ten)), ten);
        assert_eq!(limit(spec().with_default_limit(None)), None);
        let mut own = spec();
        own.max_seats_per_buyer = Some(4);
        assert_eq!(
            limit(own.with_default_limit(ten)).map(SeatLimit::seats),
            Some(4)
        );
        let mut unlimited = spec();
        unlimited.max_seats_per_buyer = Some(0);
        assert_eq!(limit(unlimited.with_default_limit(ten)), None);
    }

    #[test]
    fn giving_both_sections_and_seats_is_rejected() {
        let mut both = spec();
        both.seats = Some(vec![SeatSpec {
            channel: None,
            seat_id: "x".into(),
            section: "A".into(),
            price: None,
            position: None,
            rank: None,
            row: None,
        }]);
        assert!(NewEvent::parse(both).is_err());
    }

    #[test]
    fn prices_are_per_section_and_need_a_currency() {
        let mut priced = spec();
        priced.sections.as_mut().unwrap()[0].price = Some(4500);
        assert_eq!(
            NewEvent::parse(priced.clone()).unwrap_err().field,
            "currency"
        );
        priced.currency = Some("EUR".into());
        let event = NewEvent::parse(priced).unwrap();
        let a = Section::parse("A").unwrap();
        assert_eq!(event.prices.due([&a, &a]).map(|m| m.amount), Some(9000));
        let mut listed = spec();
        listed.sections = None;
        listed.currency = Some("EUR".into());
        listed.seats = Some(vec![
            SeatSpec {
                channel: None,
                seat_id: "x".into(),
                section: "A".into(),
                price: Some(100),
                position: None,
                rank: None,
                row: None,
            },
            SeatSpec {
                channel: None,
                seat_id: "y".into(),
                section: "A".into(),
                price: Some(200),
                position: None,
                rank: None,
                row: None,
            },
        ]);
        let err = NewEvent::parse(listed).unwrap_err();
        assert!(err.message.contains("section A"), "{err}");
    }
}
