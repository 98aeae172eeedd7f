//! The claim decision: which seats an intent gets, or why it gets none.

use jiff::{SignedDuration, Timestamp};

use super::{
    Best, Money, Prices, Reason, ReasonCode, Seat, SeatId, SeatRequest, best_first, block_guards,
    choose_block, no_block_reason,
};

/// What a claim should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimDecision {
    /// Hold exactly these seats until `until`, each on condition that it is still claimable.
    Hold {
        /// The seats to hold.
        seat_ids: Vec<SeatId>,
        /// The hold's deadline.
        until: Timestamp,
        /// What the seats cost by the event's `prices`; `None` when they are free.
        amount_due: Option<Money>,
        /// Seats beside a block that must still be claimable when the hold is written
        /// (`block_guards`): where claims race, the block that commits then strands no more
        /// than one chosen alone. Empty but for seats together.
        guards: Vec<SeatId>,
    },
    /// Hold nothing; the job is rejected for this reason, for good.
    Reject {
        /// Why, for the buyer: its code and its text.
        reason: Reason,
    },
    /// Hold nothing yet: the job waits in its section's line (an event with a waitlist).
    Waitlist,
}

/// Decides a claim from the seats the adapter read. For an exact request `candidates` are the
/// requested seats that exist; for a section request, seats of that section (any state). The
/// adapter then writes the decision conditionally, so a seat that changed since it was read
/// turns a `Hold` into a rejection rather than a double hold.
#[must_use]
pub fn decide_claim(
    request: &SeatRequest,
    candidates: &[Seat],
    now: Timestamp,
    hold: SignedDuration,
    prices: &Prices,
    best: Best,
) -> ClaimDecision {
    let mut guards = Vec::new();
    let chosen: Vec<&Seat> = match request {
        SeatRequest::Seats(wanted) => {
            let mut chosen = Vec::with_capacity(wanted.len());
            for id in wanted {
                match candidates.iter().find(|s| &s.seat_id == id) {
                    None => {
                        let text = format!("seat {id} does not exist");
                        return reject(Reason::new(ReasonCode::SeatUnknown, text));
                    }
                    Some(seat) if !seat.state.is_claimable(now) => {
                        return reject(Reason::seat_unavailable());
                    }
                    Some(seat) => chosen.push(seat),
                }
            }
            chosen
        }
        SeatRequest::Section {
            section,
            quantity,
            together,
        } => {
            let claimable = best_first(
                candidates
                    .iter()
                    .filter(|s| &s.section == section && s.state.is_claimable(now)),
            );
            let wanted = usize::from(*quantity);
            if *together {
                let Some(block) = choose_block(&claimable, wanted, best) else {
                    return reject(no_block_reason(wanted, section.as_str()));
                };
                guards = block_guards(&claimable, &block);
                claimable
                    .into_iter()
                    .filter(|seat| block.contains(&seat.seat_id))
                    .collect()
            } else {
                if claimable.len() < wanted {
                    let text = format!("not enough seats available in section {section}");
                    return reject(Reason::new(ReasonCode::NotEnoughSeats, text));
                }
                claimable.into_iter().take(wanted).collect()
            }
        }
    };
    ClaimDecision::Hold {
        seat_ids: chosen.iter().map(|s| s.seat_id.clone()).collect(),
        until: hold_deadline(now, hold),
        amount_due: prices.due(chosen.iter().map(|s| &s.section)),
        guards,
    }
}

/// When a hold taken at `now` lapses: whole milliseconds, the precision every store keeps, so a
/// job reads the same deadline whether it is handed over as decided or read back.
fn hold_deadline(now: Timestamp, hold: SignedDuration) -> Timestamp {
    let until = now.saturating_add(hold).unwrap_or(Timestamp::MAX);
    Timestamp::from_millisecond(until.as_millisecond()).unwrap_or(until)
}

fn reject(reason: Reason) -> ClaimDecision {
    ClaimDecision::Reject { reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{JobId, SeatState, Section};

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(secs).unwrap()
    }

    fn seat(id: &str, section: &str, state: SeatState) -> Seat {
        Seat {
            seat_id: SeatId::parse(id).unwrap(),
            section: Section::parse(section).unwrap(),
            state,
            place: None,
        }
    }

    const HOLD: SignedDuration = SignedDuration::from_secs(60);
    const FREE: Prices = Prices {
        currency: None,
        sections: std::collections::BTreeMap::new(),
    };

    #[test]
    fn a_hold_lapses_on_a_whole_millisecond() {
        let request = SeatRequest::exact(&["a".into()]).unwrap();
        let seats = [seat("a", "A", SeatState::Available)];
        let now = Timestamp::new(100, 817_596_413).unwrap();
        let ClaimDecision::Hold { until, .. } =
            decide_claim(&request, &seats, now, HOLD, &FREE, Best::FrontCenter)
        else {
            panic!("the free seat is held");
        };
        assert_eq!(until, Timestamp::new(160, 817_000_000).unwrap());
    }

    #[test]
    fn an_exact_claim_is_all_or_none() {
        let request = SeatRequest::exact(&["a".into(), "b".into()]).unwrap();
        let taken = SeatState::Sold {
            job_id: JobId::new(),
        };
        let seats = [seat("a", "A", SeatState::Available), seat("b", "A", taken)];
        assert_eq!(
            decide_claim(&request, &seats, at(0), HOLD, &FREE, Best::FrontCenter),
            ClaimDecision::Reject {
                reason: Reason::seat_unavailable()
            }
        );
    }

    #[test]
    fn an_exact_claim_of_a_missing_seat_names_it() {
        let request = SeatRequest::exact(&["zz".into()]).unwrap();
        let ClaimDecision::Reject { reason } =
            decide_claim(&request, &[], at(0), HOLD, &FREE, Best::FrontCenter)
        else {
            panic!("expected a rejection");
        };
        assert!(reason.text.contains("zz"));
        assert_eq!(reason.code, ReasonCode::SeatUnknown);
    }

    #[test]
    fn a_section_claim_takes_free_and_lapsed_seats_of_that_section_only() {
        let request = SeatRequest::in_section("A", 2).unwrap();
        let lapsed = SeatState::Held {
            job_id: JobId::new(),
            until: at(5),
        };
        let seats = [
            seat("b1", "B", SeatState::Available),
            seat(
                "a1",
                "A",
                SeatState::Sold {
                    job_id: JobId::new(),
                },
            ),
            seat("a2", "A", lapsed),
            seat("a3", "A", SeatState::Available),
        ];
        assert_eq!(
            decide_claim(&request, &seats, at(10), HOLD, &FREE, Best::FrontCenter),
            ClaimDecision::Hold {
                seat_ids: vec![SeatId::parse("a2").unwrap(), SeatId::parse("a3").unwrap()],
                until: at(70),
                amount_due: None,
                guards: Vec::new(),
            }
        );
        let three = SeatRequest::in_section("A", 3).unwrap();
        let ClaimDecision::Reject { reason } =
            decide_claim(&three, &seats, at(10), HOLD, &FREE, Best::FrontCenter)
        else {
            panic!("two seats are free, three were asked for");
        };
        assert_eq!(reason.code, ReasonCode::NotEnoughSeats);
        assert_eq!(reason.text, "not enough seats available in section A");
    }

    #[test]
    fn every_rejection_reads_back_with_its_code_from_its_text_alone() {
        let free = [seat("a1", "A", SeatState::Available)];
        let requests = [
            SeatRequest::exact(&["zz".into()]).unwrap(),
            SeatRequest::in_section("A", 2).unwrap(),
            SeatRequest::together_in("A", 2).unwrap(),
        ];
        for request in requests {
            let ClaimDecision::Reject { reason } =
                decide_claim(&request, &free, at(0), HOLD, &FREE, Best::FrontCenter)
            else {
                panic!("{request:?} cannot be served");
            };
            assert_eq!(ReasonCode::of_legacy_text(&reason.text), Some(reason.code));
        }
    }

    #[test]
    fn a_hold_owes_the_prices_of_the_seats_it_takes() {
        let prices = Prices::parse(
            Some("EUR"),
            [
                (Section::parse("A").unwrap(), 700),
                (Section::parse("B").unwrap(), 300),
            ],
        )
        .unwrap();
        let seats = [
            seat("a1", "A", SeatState::Available),
            seat("b1", "B", SeatState::Available),
        ];
        let exact = SeatRequest::exact(&["a1".into(), "b1".into()]).unwrap();
        let ClaimDecision::Hold { amount_due, .. } =
            decide_claim(&exact, &seats, at(0), HOLD, &prices, Best::FrontCenter)
        else {
            panic!("both seats are free");
        };
        assert_eq!(amount_due.map(|m| m.amount), Some(1000));
    }
}
