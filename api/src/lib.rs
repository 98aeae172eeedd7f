//! seatclaim's admission and status API: takes reservation intents, makes them durable, answers
//! 202 at once, and lets clients follow each job to its outcome.

mod error;
mod extract;
mod routes;
mod settings;
mod startup;

pub use error::ApiError;
pub use routes::router;
pub use settings::ApiSettings;
pub use startup::Application;
