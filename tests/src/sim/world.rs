//! One seed's world: the sale (one event, two sections, maybe a per-buyer limit), the processes'
//! settings (workers, batch size, attempts, visibility timeout, maximum intent age) and the
//! faults (failure rates, crashes, duplicated messages), all drawn from the seed, so that seeds
//! between them cover calm sales and stormy ones.

use std::time::Duration;

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use seatclaim_core::app::Limits;
use seatclaim_core::domain::{
    EventSpec, NewEvent, SaleTerms, SeatId, SeatRequest, SectionSpec, Tender,
};
use seatclaim_core::ports::Redelivery;

use super::dice::Dice;
use super::gate::FaultRates;
use super::presale::Presale;

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
    /// Whether payments are required (a priced hold is sold by its payment alone), or waived
    /// as a deployment without payments does (a confirm sells it free).
    pub payments: bool,
    /// The adversaries of this seed (`adversary.rs`).
    pub adversaries: Adversaries,
    /// The presale, if the seed draws one (`presale.rs`).
    pub presale: Option<Presale>,
}

/// How many of each adversary a seed runs: they attack the rules the honest buyers never test.
#[derive(Debug, Clone, Copy, Default)]
pub struct Adversaries {
    /// Buyers who confirm at every step of their job's life.
    pub confirmers: usize,
    /// Buyers who ask for what their section can never serve.
    pub unservable: usize,
    /// Buyers who pay wrong amounts, or the right one twice.
    pub payers: usize,
    /// Buyers who cancel, extend and pay at once.
    pub racers: usize,
}

impl Plan {
    /// Draws a world from `dice`.
    #[must_use]
    pub fn draw(dice: &Dice) -> Self {
        let max_attempts = u32::try_from(dice.between(2..6)).unwrap_or(3);
        let stormy = dice.chance(0.8);
        let rate = |high: f64| if stormy { dice.rate(0.0, high) } else { 0.0 };
        let mut plan = Self {
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
            payments: dice.chance(0.7),
            adversaries: Adversaries {
                confirmers: usize::try_from(dice.between(0..3)).unwrap_or(1),
                unservable: usize::from(dice.chance(0.5)),
                payers: usize::from(dice.chance(0.6)),
                racers: usize::from(dice.chance(0.6)),
            },
            presale: None,
        };
        // Drawn last, so that the draws before it stay what each seed drew without presales.
        if dice.chance(0.4) {
            let start = Timestamp::from_second(START_SECOND).unwrap_or(Timestamp::UNIX_EPOCH);
            plan.presale = Some(Presale::draw(dice, &mut plan.event, start));
        }
        plan
    }

    /// What a confirm without a payment brings: nothing where payments are required (a priced
    /// hold is then refused), the deployment's waiver where they are not.
    #[must_use]
    pub fn tender(&self) -> Tender {
        if self.payments {
            Tender::Nothing
        } else {
            Tender::Waived
        }
    }

    /// Whether any sale of the event waits for a start: its own, or a channel's.
    #[must_use]
    pub fn has_openings(&self) -> bool {
        let channels = &self.event.channels.channels;
        self.event.sale_starts_at.is_some() || channels.iter().any(|c| c.sale_starts_at.is_some())
    }

    /// The event's terms as a claim reads them, for the line's checks (`lines.rs`).
    #[must_use]
    pub fn terms(&self) -> SaleTerms {
        let event = &self.event;
        SaleTerms {
            channels: Arc::new(event.channels.clone()),
            hold: event.hold,
            limit: event.max_seats_per_buyer,
            prices: Arc::new(event.prices.clone()),
            extension: event.extension,
            waitlist: event.waitlist,
            opens_at: event.sale_starts_at,
            best: event.best,
        }
    }

    /// A request `section` can never serve: more seats than it has, or more together than its
    /// longest row holds (a section of one row gets the former).
    #[must_use]
    pub fn unservable(&self, dice: &Dice) -> SeatRequest {
        let section = if dice.chance(0.5) { "A" } else { "B" };
        let seats = self
            .event
            .seats
            .iter()
            .filter(|(_, s)| s.as_str() == section)
            .count();
        let row = self
            .event
            .seats
            .iter()
            .filter(|(id, s)| {
                s.as_str() == section && id.as_str().starts_with(&format!("{section}-1-"))
            })
            .count();
        let wide = |n: usize| i64::try_from(n).unwrap_or(10).min(10);
        if row < seats && dice.chance(0.5) {
            return SeatRequest::together_in(section, wide(row + 1)).unwrap();
        }
        SeatRequest::in_section(section, wide(seats + 1)).unwrap()
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
    // Some sections cost something (then a priced hold is sold by its payment where payments
    // are required); section A sometimes has two rows, so a block can be longer than a row and
    // still no more seats than the section has.
    let section = |name: &str, rows: u64, seats: u64| SectionSpec {
        channel: None,
        section: name.into(),
        rows: u32::try_from(rows).unwrap_or(1),
        seats_per_row: u32::try_from(seats).unwrap_or(4),
        price: dice.chance(0.6).then(|| dice.between(100..10_000)),
    };
    let a = if dice.chance(0.3) {
        section("A", 2, dice.between(2..5))
    } else {
        section("A", 1, dice.between(3..9))
    };
    let b = section("B", 1, dice.between(2..5));
    NewEvent::parse(EventSpec {
        event_id: "sim".into(),
        name: "simulated sale".into(),
        hold_seconds: Some(u32::try_from(dice.between(20..120)).unwrap_or(60)),
        max_seats_per_buyer: dice
            .chance(0.4)
            .then(|| u32::try_from(dice.between(1..4)).unwrap_or(2)),
        currency: Some("EUR".into()),
        sections: Some(vec![a, b]),
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
