//! Faults as production meets them: injected store and bus failures, duplicated and reordered
//! delivery, killed processes, and a shutdown under load; and no fault injection in what ships.

mod channel_opening;
mod channel_release;
mod crash;
mod duplicates;
mod injected;
mod shipped;
mod shutdown;
