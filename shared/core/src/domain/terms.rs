//! An event's terms of sale, as every claim reads them inside its atomic step: how long a hold
//! lasts and how it may be extended, how many seats one buyer may count, and what the seats
//! cost. Each backend stores them its own way and reads them into this one shape.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

use super::{
    Best, ChannelName, Channels, ClaimDecision, Intent, Prices, Reason, ReasonCode, Seat,
    SeatLimit, SeatRequest, SeatState, Section, Start, decide_claim,
};

/// The terms a claim decides under.
#[derive(Debug, Clone)]
pub struct SaleTerms {
    /// How long a hold lasts.
    pub hold: SignedDuration,
    /// The per-buyer seat limit, if the event has one.
    pub limit: Option<SeatLimit>,
    /// What the seats cost (shared: terms are copied per admission and per claim).
    pub prices: Arc<Prices>,
    /// How a buyer may extend a hold.
    pub extension: HoldExtension,
    /// Whether section requests that find too few seats wait in line.
    pub waitlist: Waitlist,
    /// When the sale starts, if it was announced: intents admitted before it wait for it.
    pub opens_at: Option<Timestamp>,
    /// Which seats the event prefers, for section requests.
    pub best: Best,
    /// Its sales channels and the sections set aside for them (shared, as `prices`).
    pub channels: Arc<Channels>,
}

/// Whether an event keeps a waitlist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Waitlist {
    /// No waitlist: a claim that finds too few seats is rejected.
    #[default]
    None,
    /// Section requests that find too few seats wait in line.
    Open,
    /// Closed by an operator: the event behaves as one without a waitlist.
    Closed,
}

impl Waitlist {
    /// Every state, for parsing and exhaustive tests.
    pub const ALL: [Self; 3] = [Self::None, Self::Open, Self::Closed];

    /// The storage spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Open => "open",
            Self::Closed => "closed",
        }
    }

    /// Reads the storage spelling back.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|w| w.as_str() == text)
    }

    /// Whether section requests may wait in line.
    #[must_use]
    pub fn is_open(self) -> bool {
        self == Self::Open
    }
}

/// The most extensions an event may allow one hold.
pub const MAX_HOLD_EXTENSIONS: u32 = 10;

/// How the buyer of a live hold may extend it: by `step` from its current deadline, at most
/// `max` times, so no hold outlasts `hold + max * step`. A zero step allows no extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldExtension {
    /// How much later each extension moves the deadline.
    pub step: SignedDuration,
    /// How many extensions one hold may have.
    pub max: u32,
}

impl HoldExtension {
    /// No extension: the default of an event that does not say.
    pub const NONE: Self = Self {
        step: SignedDuration::ZERO,
        max: 1,
    };

    /// Whether the event allows extending a hold at all.
    #[must_use]
    pub fn allowed(self) -> bool {
        self.step.is_positive() && self.max > 0
    }
}

impl SaleTerms {
    /// The claim's decision on `candidates` at `now` under these terms: with an open waitlist,
    /// a section request that finds too few seats joins its section's line, and exact requests
    /// for the seats of a section that has a line (`has_line`) are refused; otherwise
    /// [`decide_claim`]. A section request takes AVAILABLE seats of a section with a line when
    /// they fit it: the line is handed every release first fit in the release's own step, so
    /// seats given back there fit nobody ahead of a newcomer, who is last in line. A lapsed hold
    /// not yet expired is not given back yet: the release that expires it hands it to the line
    /// first, so a newcomer never takes it.
    #[must_use]
    pub fn decide(
        &self,
        request: &SeatRequest,
        candidates: &[Seat],
        now: Timestamp,
        has_line: impl Fn(&Section) -> bool,
    ) -> ClaimDecision {
        if !self.waitlist.is_open() {
            return self.decide_freely(request, candidates, now);
        }
        match request {
            SeatRequest::Seats(_) if candidates.iter().any(|seat| has_line(&seat.section)) => {
                ClaimDecision::Reject {
                    reason: Reason::reserved_for_waitlist(),
                }
            }
            SeatRequest::Section { section, .. } => {
                let given_back: Vec<Seat>;
                let seats = if has_line(section) {
                    given_back = candidates
                        .iter()
                        .filter(|seat| seat.state == SeatState::Available)
                        .cloned()
                        .collect();
                    &given_back
                } else {
                    candidates
                };
                match self.decide_freely(request, seats, now) {
                    ClaimDecision::Reject { .. } => ClaimDecision::Waitlist,
                    decided => decided,
                }
            }
            SeatRequest::Seats(_) => self.decide_freely(request, candidates, now),
        }
    }

    /// The claim's decision on `candidates` with no line to respect ([`decide_claim`]): an
    /// event without a waitlist, or the line's own hand-out.
    #[must_use]
    pub fn decide_freely(
        &self,
        request: &SeatRequest,
        candidates: &[Seat],
        now: Timestamp,
    ) -> ClaimDecision {
        decide_claim(request, candidates, now, self.hold, &self.prices, self.best)
    }

    /// The most seats the intent's buyer may already count for this claim to be allowed
    /// (`None`: no limit), or the rejection's reason if the request alone is over the limit: the
    /// condition a backend that keeps a count writes the count under.
    pub fn ceiling(&self, intent: &Intent) -> Result<Option<u32>, Reason> {
        let Some(limit) = self.limit else {
            return Ok(None);
        };
        limit
            .ceiling_for(intent.request.quantity())
            .map(Some)
            .ok_or_else(|| limit.reason())
    }

    /// The start `intent` waits for, if its sale has one: [`Self::start_of`] its channel.
    #[must_use]
    pub fn start_for(&self, intent: &Intent) -> Option<Start> {
        self.start_of(intent.access.as_ref().map(|access| &access.channel))
    }

    /// The start an intent admitted under `channel` (`None`: a public one) waits for, if its
    /// sale announced one: its channel's own `sale_starts_at` when the channel has one, else the
    /// event's. An intent admitted before it waits in that start's pre-queue, and none is
    /// decided before it.
    #[must_use]
    pub fn start_of(&self, channel: Option<&ChannelName>) -> Option<Start> {
        let own = channel.and_then(|name| Some((name, self.channels.get(name)?.sale_starts_at?)));
        match own {
            Some((name, at)) => Some(Start {
                channel: Some(name.clone()),
                at,
            }),
            None => self.opens_at.map(|at| Start { channel: None, at }),
        }
    }

    /// The claim's decision for `intent` on `candidates` (the seats read for it), with every
    /// rule of its channel: nothing before the channel's own start, seats outside the channel
    /// refused or waited for, a channel's intent decided on its seats alone, and a public one
    /// under its lines ([`Self::decide`]).
    #[must_use]
    pub fn decide_intent(
        &self,
        intent: &Intent,
        candidates: &[Seat],
        now: Timestamp,
        has_line: impl Fn(&Section) -> bool,
    ) -> ClaimDecision {
        let channel = intent.access.as_ref().map(|access| &access.channel);
        if let Some(starts) = channel.and_then(|name| self.channels.not_open(name, now)) {
            let text = format!("the channel's sale starts at {starts}");
            return ClaimDecision::Reject {
                reason: Reason::new(ReasonCode::ChannelNotOpen, text),
            };
        }
        let sections =
            (intent.request.section().into_iter()).chain(candidates.iter().map(|s| &s.section));
        if let Some(decision) = self.refuse_channel(intent, sections, now) {
            return decision;
        }
        if !self.waits_in_lines(intent) {
            return self.decide_freely(&intent.request, candidates, now);
        }
        self.decide(&intent.request, candidates, now, has_line)
    }

    /// The decision on `intent` when a seat it would take is not its channel's at `now`
    /// (`sections`: its section, or the sections of the seats it names): a public intent takes
    /// no seat set aside for a channel, and a channel's intent only its channel's seats. A public
    /// section request for a channel's seats waits in the section's line when the event has a
    /// waitlist, to be served at the channel's release; anything else is rejected.
    fn refuse_channel<'a>(
        &self,
        intent: &Intent,
        mut sections: impl Iterator<Item = &'a Section>,
        now: Timestamp,
    ) -> Option<ClaimDecision> {
        let channel = intent.access.as_ref().map(|access| &access.channel);
        if !sections.any(|section| !self.channels.admits(channel, section, now)) {
            return None;
        }
        let waits = channel.is_none() && self.waitlist.is_open();
        if waits && let Some(section) = intent.request.section() {
            return (self.channels.of(section, now).is_some()).then_some(ClaimDecision::Waitlist);
        }
        Some(ClaimDecision::Reject {
            reason: channel_seats(channel),
        })
    }

    /// Whether `intent` respects the lines and may wait in one: a line is the public's, so an
    /// intent admitted under a channel takes its channel's seats as they are, or is rejected.
    #[must_use]
    pub fn waits_in_lines(&self, intent: &Intent) -> bool {
        intent.access.is_none()
    }

    /// Whether `section`'s line may be served at `now`: with seats the public may take, so not
    /// while they are a channel's (the channel's release serves it).
    #[must_use]
    pub fn serves_line(&self, section: &Section, now: Timestamp) -> bool {
        self.channels.of(section, now).is_none()
    }

    /// The rejection's reason when the buyer's count leaves no room: `buyer_limit` (with an
    /// empty text without a limit, where no count is kept to leave no room).
    #[must_use]
    pub fn limit_reason(&self) -> Reason {
        self.limit.map_or_else(
            || Reason::new(super::ReasonCode::BuyerLimit, ""),
            SeatLimit::reason,
        )
    }
}

/// The reason a claim outside its channel is rejected with.
fn channel_seats(channel: Option<&ChannelName>) -> Reason {
    match channel {
        Some(name) => Reason::new(
            ReasonCode::ChannelSeats,
            format!("seats not in channel {name}"),
        ),
        None => Reason::new(ReasonCode::ChannelSeats, "seats set aside for a channel"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ChannelSpec;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::UNIX_EPOCH + SignedDuration::from_secs(seconds)
    }

    /// Terms of an event starting at 100 s with channels `early` (its own start at 50 s) and
    /// `with-event` (none of its own).
    fn terms() -> SaleTerms {
        let spec = |name: &str, starts: Option<i64>| ChannelSpec {
            name: name.into(),
            sale_starts_at: starts.map(|s| at(s).to_string()),
            release_at: None,
        };
        let specs = [spec("early", Some(50)), spec("with-event", None)];
        let sections: [(&str, Option<&str>); 0] = [];
        SaleTerms {
            hold: SignedDuration::from_secs(60),
            limit: None,
            prices: Arc::default(),
            extension: HoldExtension::NONE,
            waitlist: Waitlist::None,
            opens_at: Some(at(100)),
            best: Best::FrontCenter,
            channels: Arc::new(Channels::parse(Some(&specs), sections).unwrap()),
        }
    }

    #[test]
    fn a_channel_with_a_start_of_its_own_waits_for_it_and_every_other_intent_for_the_events() {
        let terms = terms();
        let name = |n: &str| ChannelName::parse(n).unwrap();
        let start = |channel: Option<ChannelName>, s| Some(Start { channel, at: at(s) });
        assert_eq!(
            terms.start_of(Some(&name("early"))),
            start(Some(name("early")), 50)
        );
        assert_eq!(terms.start_of(Some(&name("with-event"))), start(None, 100));
        assert_eq!(terms.start_of(None), start(None, 100));
        let open = SaleTerms {
            opens_at: None,
            ..terms
        };
        assert_eq!(open.start_of(None), None, "a sale open from the start");
        assert_eq!(
            open.start_of(Some(&name("early"))),
            start(Some(name("early")), 50)
        );
    }
}
