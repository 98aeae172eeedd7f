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

/// Installs the Prometheus recorder once per process and returns the handle that renders
/// `/metrics`. Histograms named `*_seconds` get latency buckets from 1 ms to 30 s.
pub fn metrics() -> metrics_exporter_prometheus::PrometheusHandle {
    static HANDLE: std::sync::OnceLock<metrics_exporter_prometheus::PrometheusHandle> =
        std::sync::OnceLock::new();
    HANDLE
        .get_or_init(|| {
            const SECONDS: &[f64] = &[
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
            ];
            const SIZES: &[f64] = &[1.0, 2.0, 3.0, 5.0, 8.0, 10.0];
            let builder = metrics_exporter_prometheus::PrometheusBuilder::new()
                .set_buckets_for_metric(
                    metrics_exporter_prometheus::Matcher::Suffix("_seconds".into()),
                    SECONDS,
                )
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        metrics_exporter_prometheus::Matcher::Full("seatclaim_batch_size".into()),
                        SIZES,
                    )
                });
            match builder.and_then(metrics_exporter_prometheus::PrometheusBuilder::install_recorder)
            {
                Ok(handle) => handle,
                Err(error) => {
                    // Another recorder is installed: metrics go there; ours renders empty.
                    tracing::warn!(%error, "cannot install the Prometheus recorder");
                    metrics_exporter_prometheus::PrometheusBuilder::new()
                        .build_recorder()
                        .handle()
                }
            }
        })
        .clone()
}
