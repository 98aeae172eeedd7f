//! Request metrics per route and status, in the style of OpenTelemetry's HTTP server
//! conventions: how many requests each route answered, how many of them failed on the server's
//! side, and how long they took. The route is the matched path template (`/v1/jobs/{job_id}`),
//! never the raw path, and a method outside HTTP's registered set is `_OTHER`, so a client
//! cannot grow the number of series. Each series' handles are registered once and reused: a
//! request records into them without building its labels again.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use metrics::{Counter, Histogram};

/// The label of a request no route matched (a 404 of the fallback).
const UNMATCHED: &str = "unmatched";

/// The handles of one series: route, method and status.
#[derive(Clone)]
struct Series {
    requests: Counter,
    /// Only for 5xx answers.
    errors: Option<Counter>,
    duration: Histogram,
}

/// Route, then (method, status), to the series' handles.
type Registered = HashMap<String, HashMap<(&'static str, u16), Series>>;

static REGISTERED: LazyLock<Mutex<Registered>> = LazyLock::new(Mutex::default);

/// Records `http_server_requests_total`, `http_server_errors_total` (5xx answers, the API's
/// own refusals past its bounds among them) and `http_server_request_duration_seconds`, each
/// labelled `method`, `route` and `status`.
pub(crate) async fn record(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    let matched = request.extensions().get::<MatchedPath>().cloned();
    let response = next.run(request).await;
    let route = matched.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
    let series = series(route, method, response.status());
    series.requests.increment(1);
    if let Some(errors) = &series.errors {
        errors.increment(1);
    }
    series.duration.record(started.elapsed().as_secs_f64());
    response
}

/// The handles of a series, registered on its first request.
fn series(route: &str, method: &'static str, status: StatusCode) -> Series {
    let mut registered = REGISTERED.lock().unwrap_or_else(PoisonError::into_inner);
    let of_route = match registered.get_mut(route) {
        Some(of_route) => of_route,
        None => registered.entry(route.to_owned()).or_default(),
    };
    of_route
        .entry((method, status.as_u16()))
        .or_insert_with(|| {
            let labels = [
                ("method", method.to_owned()),
                ("route", route.to_owned()),
                ("status", status.as_u16().to_string()),
            ];
            Series {
                requests: metrics::counter!("http_server_requests_total", &labels),
                errors: status
                    .is_server_error()
                    .then(|| metrics::counter!("http_server_errors_total", &labels)),
                duration: metrics::histogram!("http_server_request_duration_seconds", &labels),
            }
        })
        .clone()
}

/// The method's label: its name if HTTP registers it, else `_OTHER`.
fn method_label(method: &Method) -> &'static str {
    const REGISTERED_METHODS: [&str; 9] = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
    ];
    REGISTERED_METHODS
        .into_iter()
        .find(|known| *known == method.as_str())
        .unwrap_or("_OTHER")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_outside_the_registered_set_is_one_label() {
        assert_eq!(method_label(&Method::POST), "POST");
        assert_eq!(method_label(&Method::PATCH), "PATCH");
        for custom in ["BREW", "X-ANYTHING-1", "post"] {
            let method = Method::from_bytes(custom.as_bytes()).expect("a token");
            assert_eq!(method_label(&method), "_OTHER", "{custom}");
        }
    }
}
