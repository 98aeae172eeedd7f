//! A seed's presale, when it draws one: section B set aside for channel `fanclub` (until a
//! release some minutes into the run, or for good; its sale opening with the event's, or a few
//! seconds into the run with a pre-queue of its own), and one access code of a few seats that the
//! fans' section requests for B carry; the other buyers' section requests for B wait in its line
//! (where the event keeps one) and exact requests for B come from the public, refused until the
//! release. Its invariants, after every step: the code never counts more than its seats, and no
//! public job holds or bought a seat of B before the release; the line's own invariants
//! (`lines.rs`) hold the release to serving B's line first, in line order.

use jiff::{SignedDuration, Timestamp};
use seatclaim_core::domain::{
    Access, AccessCode, BuyerId, ChannelName, ChannelSpec, Channels, CodeHash, CodeKey, CodeRecord,
    CodeTerms, EventId, JobStatus, NewEvent, SeatRequest,
};
use seatclaim_core::memory::State;

use super::dice::Dice;

/// The channel's name.
const CHANNEL: &str = "fanclub";
/// The channel's section.
const SECTION: &str = "B";

/// A seed's presale.
#[derive(Debug, Clone)]
pub struct Presale {
    /// The code's seats.
    pub code_seats: u32,
    /// When B becomes public, if it does.
    pub release_at: Option<Timestamp>,
    /// The code's hash, as the store keeps it.
    pub hash: CodeHash,
}

impl Presale {
    /// Draws a presale for `event`, which it sets B aside in, starting at `start`.
    pub fn draw(dice: &Dice, event: &mut NewEvent, start: Timestamp) -> Self {
        let release_at = dice.chance(0.6).then(|| {
            start + SignedDuration::from_secs(dice.between(10..150).try_into().unwrap_or(60))
        });
        let code_seats = u32::try_from(dice.between(1..4)).unwrap_or(2);
        // Most channels with a release open a pre-queue of their own, a tenth of the way to it:
        // derived from what is drawn already, so every seed draws what it drew before.
        let starts_at = release_at
            .filter(|_| code_seats % 2 == 1)
            .map(|at| start + (at.duration_since(start) / 10).max(SignedDuration::from_secs(1)));
        let spec = ChannelSpec {
            name: CHANNEL.into(),
            sale_starts_at: starts_at.map(|at| at.to_string()),
            release_at: release_at.map(|at| at.to_string()),
        };
        let sections = [("A", None), (SECTION, Some(CHANNEL))];
        let mut channels = Channels::parse(Some(&[spec]), sections).expect("a valid channel");
        channels.count(event.seats.iter().map(|(_, section)| section));
        event.channels = channels;
        let key = CodeKey::new(vec![7; 32]).expect("a long key");
        let code = AccessCode::parse("SIM-FAN-CODE").expect("a valid code");
        Self {
            code_seats,
            release_at,
            hash: key.hash(&event.event_id, &code),
        }
    }

    /// The code as the store keeps it.
    pub fn record(&self) -> CodeRecord {
        CodeRecord {
            hash: self.hash.clone(),
            terms: CodeTerms {
                channel: channel(),
                max_seats: self.code_seats,
                valid_from: None,
                valid_until: None,
                bind: false,
            },
            bound_to: None,
            revoked: false,
        }
    }

    /// The access a request is admitted under: the code for a fan's section request of B, none
    /// otherwise (the same for every retry of the request). Half the buyers are fans; the
    /// others' section requests for B wait in its line until the release, where the event keeps
    /// one, and are served from it in line order after.
    pub fn access(&self, buyer: &BuyerId, request: &SeatRequest) -> Option<Access> {
        let fan = buyer.as_str().bytes().map(u32::from).sum::<u32>() % 2 == 0;
        let for_b = request.section().map(|s| s.as_str()) == Some(SECTION);
        (fan && for_b).then(|| Access {
            channel: channel(),
            code: Some(self.hash.clone()),
        })
    }

    /// The presale's invariants on the tables at `now`.
    pub fn check(&self, state: &State, event_id: &EventId, now: Timestamp) -> Result<(), String> {
        let coded = state
            .jobs()
            .filter(|job| &job.event_id == event_id && job.code() == Some(&self.hash));
        let used: usize = coded.map(|job| job.counted_seats(now)).sum();
        if used > self.code_seats as usize {
            return Err(format!(
                "the code counts {used} seats, over its {}",
                self.code_seats
            ));
        }
        if self.release_at.is_some_and(|at| at <= now) {
            return Ok(());
        }
        let public = state.jobs().filter(|job| job.access.is_none());
        let taken = public.filter(|job| matches!(job.status, JobStatus::Held | JobStatus::Sold));
        for job in taken {
            if let Some(seat) = job.seat_ids.iter().find(|s| s.as_str().starts_with("B-")) {
                return Err(format!(
                    "public job {} took seat {seat} of the channel's section before its release",
                    job.job_id
                ));
            }
        }
        Ok(())
    }
}

fn channel() -> ChannelName {
    ChannelName::parse(CHANNEL).expect("a valid channel name")
}
