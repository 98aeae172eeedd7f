//! A sale's opening: the pre-queue and late list admissions wait in (`prequeue`), each
//! process's view of the openings (`state`) and the draw and release (`release`).

pub(crate) mod prequeue;
pub(crate) mod release;
pub(crate) mod state;
