//! The presale shape of run 1 (`--presale`): the event sets its last two sections aside (a fifth
//! of its seats, 20,000 of the target's 100,000) for channel `presale`, with `--codes` access
//! codes of four seats each (100,000 by default), created before the run (their puts are not
//! booked). The first half of the run's buyers are code holders, each with a code of its own,
//! claiming in the channel's sections (`presale_phase.rs`: booked apart and modelled at the
//! presale's own rate, every code holder within a minute); the second half is the public sale,
//! outside them.
//! Every code claim also moves its code's count item and that item's entry in the `by-block`
//! index, which is what the model checks against a partition's limits.

use seatclaim_core::Backend;
use seatclaim_core::domain::{
    Access, AccessCode, ChannelName, ChannelSpec, CodeKey, CodeRecord, CodeTerms, EventId,
    MAX_CODES_PER_REQUEST, SeatRequest,
};
use seatclaim_core::ports::CodesCreation;

/// The channel's name.
pub const CHANNEL: &str = "presale";
/// Sections of the event set aside for the channel: the last ones.
pub const CHANNEL_SECTIONS: u32 = 2;
/// The seats one code may take.
const SEATS_PER_CODE: u32 = 4;

/// The channel as the event names it.
pub fn channel_spec() -> ChannelSpec {
    ChannelSpec {
        name: CHANNEL.into(),
        sale_starts_at: None,
        release_at: None,
    }
}

/// The key the run hashes its codes with (the deployment's, in production).
fn key() -> CodeKey {
    CodeKey::new(b"seatclaim-capacity-presale-code-key-0123".to_vec()).expect("a long key")
}

fn code_text(n: usize) -> AccessCode {
    AccessCode::parse(&format!("CAP-{n:07}")).expect("a valid code")
}

fn channel() -> ChannelName {
    ChannelName::parse(CHANNEL).expect("a valid channel")
}

/// Creates `count` codes of the channel, a request's worth at a time.
pub async fn create_codes(backend: &Backend, event: &EventId, count: usize) -> anyhow::Result<()> {
    let key = key();
    let records: Vec<CodeRecord> = (0..count)
        .map(|n| CodeRecord {
            hash: key.hash(event, &code_text(n)),
            terms: CodeTerms {
                channel: channel(),
                max_seats: SEATS_PER_CODE,
                valid_from: None,
                valid_until: None,
                bind: false,
            },
            bound_to: None,
            revoked: false,
        })
        .collect();
    for chunk in records.chunks(MAX_CODES_PER_REQUEST) {
        let created = backend.catalog.create_codes(event, chunk).await?;
        anyhow::ensure!(
            created == CodesCreation::Created(chunk.len()),
            "codes not created: {created:?}"
        );
    }
    Ok(())
}

/// Buyer `n`'s presale claim: one seat of a random channel section (a random seat, or the best
/// available), under its own code.
pub fn claim(
    n: usize,
    event: &EventId,
    sections: u32,
    section_seat: impl Fn(u32, u32) -> String,
    section_name: impl Fn(u32) -> String,
    (per_section, rng): (u32, &mut fastrand::Rng),
) -> (SeatRequest, Access) {
    let section = sections - CHANNEL_SECTIONS + rng.u32(..CHANNEL_SECTIONS);
    let request = if rng.bool() {
        SeatRequest::exact(&[section_seat(section, rng.u32(..per_section))])
    } else {
        SeatRequest::in_section(&section_name(section), 1)
    }
    .expect("a valid request");
    let access = Access {
        channel: channel(),
        code: Some(key().hash(event, &code_text(n))),
    };
    (request, access)
}
