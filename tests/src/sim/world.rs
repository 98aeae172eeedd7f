//! One seed's world: the sale (one event, two sections, maybe a per-buyer limit), the processes'
//! settings (workers, batch size, attempts, visibility timeout, maximum intent age) and the
//! faults (failure rates, crashes, duplicated messages), all drawn from the seed, so that seeds
//! between them cover calm sales and stormy ones.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use seatclaim_core::app::Limits;
use seatclaim_core::domain::{EventSpec, NewEvent, SeatId, SeatRequest, SectionSpec};
use seatclaim_core::ports::Redelivery;

use super::dice::Dice;
use super::gate::FaultRates;

/// The seat a buyer with a typo asks for: the event has none such, so admission refuses it.
const TYPO: &str = "Z-9-9";

/// The simulated clock's first instant, in seconds since the epoch.
pub const START_SECOND: i64 = 1_900_000_000;

/// Everything a seed decides before the run starts.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The one event on sale.
    pub event: NewEvent,
    /// How many reservations buyers make.
    pub buyers: usize,
    /// How many distinct buyers make them (fewer: some buyers reserve more than once).
    pub distinct_buyers: usize,
    /// Worker claim loops.
    pub workers: usize,
    /// Messages a worker asks for per receive.
    pub batch: usize,
    /// The workers' attempts and maximum intent age.
    pub limits: Limits,
    /// The queue's visibility timeout and redrive limit.
    pub queue: Redelivery,
    /// How often each part fails.
    pub rates: FaultRates,
    /// The chance, per step, that a process crashes.
    pub crash_rate: f64,
    /// How often the queue delivers a copy of a message on its own, if it does.
    pub duplicate_every: Option<Duration>,
    /// Whether an operator replays dead letters during the run.
    pub operator: bool,
}

impl Plan {
    /// Draws a world from `dice`.
    #[must_use]
    pub fn draw(dice: &Dice) -> Self {
        let max_attempts = u32::try_from(dice.between(2..6)).unwrap_or(3);
        let stormy = dice.chance(0.8);
        let rate = |high: f64| if stormy { dice.rate(0.0, high) } else { 0.0 };
        Self {
            event: event(dice),
            buyers: usize::try_from(dice.between(4..16)).unwrap_or(8),
            distinct_buyers: usize::try_from(dice.between(2..8)).unwrap_or(4),
            workers: usize::try_from(dice.between(1..4)).unwrap_or(1),
            batch: usize::try_from(dice.between(1..8)).unwrap_or(4),
            limits: Limits {
                max_attempts,
                max_intent_age: SignedDuration::from_secs(
                    i64::try_from(dice.between(60..900)).unwrap_or(900),
                ),
            },
            queue: Redelivery {
                visibility_timeout: dice.millis(5_000..60_000),
                // As `BackendSettings::max_receive_count`: the worker gives up first.
                max_receive_count: max_attempts + 1,
            },
            rates: FaultRates {
                store: rate(0.2),
                queue: rate(0.15),
                bus: rate(0.3),
            },
            crash_rate: rate(0.03),
            duplicate_every: (stormy && dice.chance(0.7)).then(|| dice.millis(2_000..40_000)),
            operator: dice.chance(0.7),
        }
    }

    /// A buyer's request: exact seats (often the same few, so buyers race), any seats of a
    /// section, or now and then a seat the event does not have.
    #[must_use]
    pub fn request(&self, dice: &Dice) -> SeatRequest {
        if dice.chance(0.03) {
            return SeatRequest::exact(&[TYPO.to_owned()]).unwrap();
        }
        let section = if dice.chance(0.75) { "A" } else { "B" };
        let quantity = if dice.chance(0.7) { 1 } else { 2 };
        if dice.chance(0.5) {
            // Some section requests want their seats side by side.
            if dice.chance(0.4) {
                return SeatRequest::together_in(section, quantity).unwrap();
            }
            return SeatRequest::in_section(section, quantity).unwrap();
        }
        let seats: Vec<&SeatId> = self
            .event
            .seats
            .iter()
            .filter(|(_, s)| s.as_str() == section)
            .map(|(id, _)| id)
            .take(4)
            .collect();
        let mut chosen: Vec<String> = Vec::new();
        while chosen.len() < usize::try_from(quantity).unwrap_or(1).min(seats.len()) {
            let seat = dice.pick(&seats).unwrap().to_string();
            if !chosen.contains(&seat) {
                chosen.push(seat);
            }
        }
        SeatRequest::exact(&chosen).unwrap()
    }

    /// Whether `request` is a typo's, which admission must refuse.
    #[must_use]
    pub fn is_typo(&self, request: &SeatRequest) -> bool {
        matches!(request, SeatRequest::Seats(ids) if ids.iter().any(|id| id.as_str() == TYPO))
    }

    /// The longest hold the event gives.
    #[must_use]
    pub fn hold(&self) -> Duration {
        self.event.hold.unsigned_abs()
    }
}

fn event(dice: &Dice) -> NewEvent {
    let section = |name: &str, seats: u64| SectionSpec {
        section: name.into(),
        rows: 1,
        seats_per_row: u32::try_from(seats).unwrap_or(4),
        price: None,
    };
    NewEvent::parse(EventSpec {
        event_id: "sim".into(),
        name: "simulated sale".into(),
        hold_seconds: Some(u32::try_from(dice.between(20..120)).unwrap_or(60)),
        max_seats_per_buyer: dice
            .chance(0.4)
            .then(|| u32::try_from(dice.between(1..4)).unwrap_or(2)),
        sections: Some(vec![
            section("A", dice.between(3..9)),
            section("B", dice.between(2..5)),
        ]),
        hold_extension_seconds: Some(u32::try_from(dice.between(0..60)).unwrap_or(0)),
        max_hold_extensions: Some(u32::try_from(dice.between(0..3)).unwrap_or(1)),
        waitlist: Some(dice.chance(0.5)),
        // Now and then the sale opens a while into the run: the buyers who come first wait in
        // its pre-queue.
        sale_starts_at: dice.chance(0.3).then(|| {
            let opens = SignedDuration::from_secs(dice.between(1..40).try_into().unwrap_or(10));
            (Timestamp::from_second(START_SECOND).unwrap() + opens).to_string()
        }),
        ..EventSpec::default()
    })
    .unwrap()
}
