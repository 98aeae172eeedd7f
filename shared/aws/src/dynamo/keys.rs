//! Every key value the AWS backend writes, in one place: which item or index partition a seat,
//! a job or an outbox entry lands in. The shard counts here decide how far a sale's writes
//! spread (see "DynamoDB tables" in `docs/aws-resources.md` and the capacity report).

use uuid::Uuid;

use crate::dynamo::item::{Item, s};
use seatclaim_core::domain::{BuyerId, CodeHash, EventId, JobId, SeatId};

/// Seats per block of the `by-block` index: a block is one page of the seat map.
pub(crate) const BLOCK_SEATS: usize = 1_000;
/// Seats per shard of a section's free-seat list: a section of up to this many seats has one
/// `free_key`, a larger one `ceil(seats / FREE_SHARD_SEATS)`.
pub(crate) const FREE_SHARD_SEATS: usize = 1_000;
/// Shards of the outbox's `unpublished` index, each leased by one relay at a time. Fixed: a
/// job's events always land in one shard, which keeps them in order.
pub(crate) const OUTBOX_SHARDS: u32 = 256;
/// Shards of a section's waitlist (`waitlist.rs`): a line's joins spread over this many
/// partitions of the outbox table, and whether a line exists is read from all of them.
pub(crate) const LINE_SHARDS: u32 = 8;
/// Line shards read or written at once (a line's head, all of it, a position, its closing).
pub(crate) const LINE_SHARD_READS: usize = 16;
/// Shards of a sale's pre-queue, and of its late list (`prequeue.rs`): an opening admitted at the
/// target rate writes each under a third of its limit, and the draw reads them all.
pub const PREQUEUE_SHARDS: u32 = 256;
/// The default number of `held-by-deadline` shards (`SEATCLAIM_HELD_SHARDS`).
pub const DEFAULT_HELD_SHARDS: u32 = 128;

/// A seat item's key: one partition key per seat, so a sale's seat writes and reads spread
/// over as many keys as it has seats.
pub(crate) fn seat_key(event_id: &EventId, seat_id: &SeatId) -> Item {
    Item::from([("seat_key".to_owned(), s(format!("{event_id}#{seat_id}")))])
}

/// The `by-block` key of the seat at `position` in its event.
pub(crate) fn block_key(event_id: &EventId, block: usize) -> String {
    format!("{event_id}#{block}")
}

/// The block of the seat at `position`.
pub(crate) fn block_of(position: usize) -> usize {
    position / BLOCK_SEATS
}

/// The block of a new event's seat at `position`: positions dealt over the blocks in turn, so
/// a sale that fills the best rows first (all in the first positions) still spreads its index
/// writes over every block. (Events created before best-available have a block per thousand
/// positions, [`block_of`]; the seat map reads every block either way.)
pub(crate) fn dealt_block(position: usize, seats: usize) -> usize {
    position % block_count(seats)
}

/// The free-list shard of a new event's seat: a row's seats all in one shard, so a block
/// request sees whole rows; a seat with no row by its position.
pub(crate) fn free_shard_of(row: Option<u32>, position: usize, shards: u32) -> u32 {
    let shards = shards.max(1);
    match row {
        Some(row) => row % shards,
        None => u32::try_from(position % shards as usize).unwrap_or(0),
    }
}

/// How many blocks an event of `seats` seats has.
pub(crate) fn block_count(seats: usize) -> usize {
    seats.div_ceil(BLOCK_SEATS).max(1)
}

/// A migrated seat's place in its free list (schema version 1's seats, `migrate.rs`): its
/// position scrambled (a bijection of the position, so neighbours land far apart), as events were
/// created before best-available. New events rank their seats by preference instead, and deal
/// positions over the blocks ([`dealt_block`]) so that filling the best rows first keeps no
/// block's index key hot.
pub(crate) fn free_rank(position: usize) -> i64 {
    let scrambled = (position as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 12;
    i64::try_from(scrambled).unwrap_or(i64::MAX)
}

/// How many free-list shards a section of `seats` seats has.
pub(crate) fn free_shard_count(seats: usize) -> u32 {
    u32::try_from(seats.div_ceil(FREE_SHARD_SEATS).max(1)).unwrap_or(u32::MAX)
}

/// The `free-by-section` key of one shard of a section. A section with one shard keeps the
/// unsharded key `event#section`.
pub(crate) fn free_key(event_id: &EventId, section: &str, shard: u32, shards: u32) -> String {
    if shards <= 1 {
        format!("{event_id}#{section}")
    } else {
        format!("{event_id}#{section}#{shard}")
    }
}

/// The low bits of a job id, which spread a job's index entries over shards.
fn job_bits(job_id: JobId) -> u128 {
    Uuid::parse_str(&job_id.to_string()).map_or(0, |u| u.as_u128())
}

fn shard_of(job_id: JobId, shards: u32) -> u128 {
    job_bits(job_id) % u128::from(shards.max(1))
}

/// The `held-by-deadline` key of a HELD job.
pub(crate) fn held_shard(job_id: JobId, shards: u32) -> String {
    format!("held#{}", shard_of(job_id, shards))
}

/// The `held-by-deadline` key of shard `shard`.
pub(crate) fn held_shard_key(shard: u32) -> String {
    format!("held#{shard}")
}

/// The outbox-table partition of shard `shard` of a section's waitlist.
pub(crate) fn line_key(event_id: &EventId, section: &str, shard: u32) -> String {
    format!("line#{event_id}#{section}#{shard}")
}

/// The waitlist shard a job's place in line lands in.
pub(crate) fn line_shard(job_id: JobId) -> u32 {
    u32::try_from(shard_of(job_id, LINE_SHARDS)).unwrap_or(0)
}

/// The outbox-table partition of shard `shard` of an opening's pre-queue (one entry per buyer);
/// `opening` is [`OpeningOf::key_part`](crate::opening::state::OpeningOf::key_part).
pub(crate) fn prequeue_key(opening: &str, shard: u32) -> String {
    format!("prequeue#{opening}#{shard}")
}

/// The outbox-table partition of shard `shard` of an opening's late list (intents admitted after
/// the start while the pre-queue was being released).
pub(crate) fn late_key(opening: &str, shard: u32) -> String {
    format!("late#{opening}#{shard}")
}

/// The pre-queue shard of a buyer: the buyer keys its entry, so one buyer has one.
pub(crate) fn buyer_shard(buyer: &BuyerId) -> u32 {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(buyer.as_str().as_bytes());
    u32::from_le_bytes([hash[0], hash[1], hash[2], hash[3]]) % PREQUEUE_SHARDS
}

/// The late-list shard of a job.
pub(crate) fn late_shard(job_id: JobId) -> u32 {
    u32::try_from(shard_of(job_id, PREQUEUE_SHARDS)).unwrap_or(0)
}

/// The `unpublished` shard of a job's events.
pub(crate) fn outbox_shard(job_id: JobId) -> u32 {
    u32::try_from(shard_of(job_id, OUTBOX_SHARDS)).unwrap_or(0)
}

/// The `unpublished` key of shard `shard`.
pub(crate) fn pending_key(shard: u32) -> String {
    format!("pending#{shard}")
}

/// Partitions of the `by-block` index an event's code items are spread over, by their hash's
/// first two hex digits: every change of a code's count is written to its partition of the
/// index too, so a presale claiming at the target rate puts a sixteenth of a partition's writes
/// on each, not a whole one (`docs/capacity.md`).
pub(crate) const CODE_SHARDS: u32 = 256;

/// The `block` (the `by-block` index's key) of the event's code `hash`.
pub(crate) fn code_block(event_id: &EventId, hash: &CodeHash) -> String {
    let shard = (hash.as_str().get(..2))
        .and_then(|digits| u32::from_str_radix(digits, 16).ok())
        .unwrap_or(0);
    code_shard_block(event_id, shard)
}

/// The `block` of the event's code shard `shard`.
pub(crate) fn code_shard_block(event_id: &EventId, shard: u32) -> String {
    format!("{event_id}#codes#{shard}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_section_keeps_the_unsharded_free_key() {
        let event = EventId::parse("e1").unwrap();
        assert_eq!(free_shard_count(1), 1);
        assert_eq!(free_shard_count(1_000), 1);
        assert_eq!(free_shard_count(1_001), 2);
        assert_eq!(free_key(&event, "A", 0, 1), "e1#A");
        assert_eq!(free_key(&event, "A", 1, 2), "e1#A#1");
    }

    #[test]
    fn free_ranks_scatter_neighbouring_seats() {
        let ranks: Vec<i64> = (0..1_000).map(free_rank).collect();
        let distinct: std::collections::HashSet<_> = ranks.iter().collect();
        assert_eq!(distinct.len(), ranks.len());
        // The hundred lowest ranks come from all over the thousand positions.
        let mut order: Vec<usize> = (0..1_000).collect();
        order.sort_by_key(|p| free_rank(*p));
        let first: Vec<usize> = order[..100].to_vec();
        assert!(first.iter().any(|p| *p < 250) && first.iter().any(|p| *p >= 750));
    }

    #[test]
    fn blocks_cover_every_position() {
        assert_eq!(block_count(0), 1);
        assert_eq!(block_count(1_000), 1);
        assert_eq!(block_count(1_001), 2);
        assert_eq!(block_of(999), 0);
        assert_eq!(block_of(1_000), 1);
    }

    #[test]
    fn job_shards_spread_and_stay_in_range() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..2_000 {
            let job = JobId::new();
            let shard = outbox_shard(job);
            assert!(shard < OUTBOX_SHARDS);
            seen.insert(shard);
            assert_eq!(outbox_shard(job), shard, "a job's shard is stable");
        }
        assert!(seen.len() > 200, "2,000 jobs used {} shards", seen.len());
    }
}
