//! One logging set-up for both binaries and the tests.

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global subscriber: `RUST_LOG` filters (default `info`), `format` shapes the lines.
/// Installing twice (tests start many apps in one process) keeps the first and is not an error.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init(),
    };
}
