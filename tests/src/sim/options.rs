//! How a seeded run is made: its step budget, its trace, the mutant it runs and the shape of
//! its decisions.

use super::mutants::Mutant;

/// How a run is made.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Steps of the storm.
    pub steps: usize,
    /// Keep a trace of every step (for replaying one seed).
    pub verbose: bool,
    /// A rule broken on purpose, to show the invariants catch it (`mutants.rs`).
    pub mutant: Option<Mutant>,
    /// Decide as the AWS backend does: the core's optimistic step, each read and each commit of
    /// its plans a step of its own (`plans.rs`), instead of the interactive step under one lock.
    pub optimistic: bool,
}
