//! seatclaim's admission and status API: takes reservation intents, makes them durable, answers
//! 202 at once, and lets clients follow each job to its outcome.

pub mod auth;
mod caller;
mod code_key;
mod error;
mod extract;
mod long_poll;
pub mod openapi;
mod prefer;
mod problem;
mod process;
mod rate;
mod readiness;
mod redact;
mod request_metrics;
mod routes;
mod seat_maps;
mod security_headers;
mod server;
mod settings;
mod startup;
mod state;
pub mod stripe;

pub use caller::Caller;
pub use error::ApiError;
pub use long_poll::{LongPolls, NoSlot, Slot};
pub use problem::ProblemType;
pub use process::run;
pub use rate::BuyerRate;
pub use routes::router;
pub use seat_maps::{ReadBudget, SeatMapLimits, SeatMaps};
pub use settings::{ApiSettings, PaymentsMode, ServerLimits};
pub use startup::Application;
pub use state::{Access, AppState};
