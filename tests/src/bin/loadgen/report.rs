//! The end-of-run report: text for people, JSON for scripts, and an SVG of time to decision.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use plotters::prelude::*;
use serde_json::{Value, json};

use super::buyer::Shared;

/// What a run measured.
pub struct Report {
    /// Intents admitted (a job each); those not decided by the end count as undecided.
    admitted: u64,
    admitted_per_sec: f64,
    decided_per_sec: f64,
    latency_ms: BTreeMap<&'static str, f64>,
    decided: u64,
    outcomes: BTreeMap<String, u64>,
    http_errors: BTreeMap<String, u64>,
    invariants_ok: bool,
    seconds: f64,
    /// `poll`, or `prefer-wait=N` (`--prefer-wait`).
    mode: String,
    /// Reservation POSTs and status GETs per decision.
    requests_per_decision: f64,
}

impl Report {
    /// Summarises the tallies over the `generating` time.
    pub fn new(shared: &Shared, generating: Duration, invariants_ok: bool) -> Self {
        let seconds = generating.as_secs_f64().max(0.001);
        let histogram = shared.latency_us.lock().expect("lock");
        let ms = |us: u64| us as f64 / 1_000.0;
        let latency_ms = BTreeMap::from([
            ("p50", ms(histogram.value_at_quantile(0.50))),
            ("p90", ms(histogram.value_at_quantile(0.90))),
            ("p99", ms(histogram.value_at_quantile(0.99))),
            ("max", ms(histogram.max())),
        ]);
        let decided = shared.decided.load(Ordering::Relaxed);
        let requests = shared.requests.load(Ordering::Relaxed);
        Self {
            mode: shared
                .prefer_wait
                .map_or_else(|| "poll".to_owned(), |s| format!("prefer-wait={s}")),
            requests_per_decision: requests as f64 / decided.max(1) as f64,
            admitted: shared.admitted.load(Ordering::Relaxed),
            admitted_per_sec: shared.admitted.load(Ordering::Relaxed) as f64 / seconds,
            decided_per_sec: decided as f64 / seconds,
            latency_ms,
            decided,
            outcomes: shared.outcomes.lock().expect("lock").clone(),
            http_errors: shared.http_errors.lock().expect("lock").clone(),
            invariants_ok,
            seconds,
        }
    }

    /// The report for scripts: the fields the benchmarks read.
    pub fn json(&self) -> Value {
        json!({
            "seconds": self.seconds,
            "mode": self.mode,
            "http_requests_per_decision": self.requests_per_decision,
            "admitted": self.admitted,
            "admitted_per_sec": self.admitted_per_sec,
            "decided_per_sec": self.decided_per_sec,
            "decided": self.decided,
            "latency_ms": self.latency_ms,
            "outcomes": self.outcomes,
            "http_errors": self.http_errors,
            "invariants_ok": self.invariants_ok,
        })
    }

    /// The report for people.
    pub fn text(&self) -> String {
        let l = &self.latency_ms;
        format!(
            "ran {:.1} s ({} mode: {:.2} HTTP requests per decision)\nadmitted  {:>10.0} intents/s\ndecided   {:>10.0} intents/s ({} decisions)\ntime from POST to decision: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms\noutcomes  {:?}\nhttp errors {:?}\ninvariants {}",
            self.seconds,
            self.mode,
            self.requests_per_decision,
            self.admitted_per_sec,
            self.decided_per_sec,
            self.decided,
            l["p50"],
            l["p90"],
            l["p99"],
            l["max"],
            self.outcomes,
            self.http_errors,
            if self.invariants_ok {
                "hold (no seat held twice, held seats = seat map)"
            } else {
                "BROKEN"
            },
        )
    }
}

/// Windows the run is cut into for the plot.
const PLOT_WINDOWS: usize = 200;

/// Draws time to decision (ms) against time into the run (s): the median, p99 and maximum of
/// each of [`PLOT_WINDOWS`] windows, so the file stays small however many decisions there were.
pub fn plot(shared: &Shared, path: &Path) -> anyhow::Result<()> {
    let points = shared.timeline.lock().expect("lock").clone();
    let max_x = points.iter().map(|p| p.0).fold(1.0, f64::max);
    let width = max_x / PLOT_WINDOWS as f64;
    let mut windows: Vec<Vec<f64>> = vec![Vec::new(); PLOT_WINDOWS + 1];
    for (x, y) in &points {
        windows[((x / width) as usize).min(PLOT_WINDOWS)].push(*y);
    }
    let mut lines: [Vec<(f64, f64)>; 3] = Default::default();
    for (index, window) in windows.iter_mut().enumerate() {
        if window.is_empty() {
            continue;
        }
        window.sort_by(f64::total_cmp);
        let at = |q: f64| window[((window.len() - 1) as f64 * q).round() as usize];
        let x = (index as f64 + 0.5) * width;
        for (line, q) in lines.iter_mut().zip([0.5, 0.99, 1.0]) {
            line.push((x, at(q)));
        }
    }
    let max_y = points.iter().map(|p| p.1).fold(1.0, f64::max);
    let root = SVGBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).context("cannot draw")?;
    let mut chart = ChartBuilder::on(&root)
        .caption("time from POST to decision", ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..max_x * 1.02, 0.0..max_y * 1.05)
        .context("cannot lay out the chart")?;
    chart
        .configure_mesh()
        .x_desc("seconds into the run")
        .y_desc("milliseconds")
        .draw()
        .context("cannot draw the axes")?;
    for (line, (label, colour)) in
        lines
            .into_iter()
            .zip([("p50", BLUE), ("p99", RED), ("max", BLACK)])
    {
        chart
            .draw_series(LineSeries::new(line, colour))
            .context("cannot draw a line")?
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .context("cannot draw the legend")?;
    root.present()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
