//! A request log for the emulator: a small HTTP proxy in front of it that counts every AWS
//! request by service and operation, then forwards it. It measures what the real code sends,
//! which is how the AWS cost of one reservation is counted. An [`Observer`] may also see each
//! request and answer whole (the capacity tool's ledger), and have DynamoDB requests ask for
//! their consumed capacity.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

/// Counts of requests by `Service.Operation`.
pub type Counts = BTreeMap<String, usize>;

/// Sees every request and its answer, after the answer came back.
pub trait Observer: Send + Sync {
    /// `operation` is `Service.Operation`; the bodies are as sent and as answered. `status` is
    /// the answer's HTTP status.
    fn observe(&self, operation: &str, request: &[u8], status: u16, answer: &[u8]);
}

#[derive(Clone)]
struct Proxy {
    upstream: String,
    /// Where DynamoDB requests go, when DynamoDB has an emulator of its own.
    dynamodb: Option<String>,
    client: reqwest::Client,
    counts: Arc<Mutex<Counts>>,
    observer: Option<Arc<dyn Observer>>,
}

/// A running counting proxy.
pub struct RequestLog {
    /// The proxy's address, to use as the AWS endpoint.
    pub endpoint: String,
    counts: Arc<Mutex<Counts>>,
}

impl RequestLog {
    /// Starts a proxy on a free local port in front of `upstream`, sending DynamoDB requests to
    /// `dynamodb` instead when given (DynamoDB Local beside moto). With an observer, DynamoDB
    /// requests also ask for their consumed capacity by table and index
    /// (`ReturnConsumedCapacity: INDEXES`; the emulator does not check signatures, so the changed
    /// body is accepted).
    pub async fn observed(
        upstream: &str,
        dynamodb: Option<&str>,
        observer: Option<Arc<dyn Observer>>,
    ) -> Self {
        let counts = Arc::new(Mutex::new(Counts::new()));
        let proxy = Proxy {
            upstream: upstream.trim_end_matches('/').to_owned(),
            dynamodb: dynamodb.map(|d| d.trim_end_matches('/').to_owned()),
            client: reqwest::Client::new(),
            counts: Arc::clone(&counts),
            observer,
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let endpoint = format!("http://{}", listener.local_addr().expect("an address"));
        let app = axum::Router::new().fallback(forward).with_state(proxy);
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { endpoint, counts }
    }

    /// The counts since the last call, and a fresh start.
    pub fn take(&self) -> Counts {
        std::mem::take(&mut *self.counts.lock().expect("counts lock"))
    }
}

/// `DynamoDB_20120810.GetItem` -> `DynamoDB.GetItem`, `AmazonSQS.ReceiveMessage` -> `SQS.ReceiveMessage`,
/// `AWSEvents.PutEvents` -> `EventBridge.PutEvents`.
fn operation(headers: &HeaderMap) -> String {
    let target = headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("unknown.unknown");
    let (service, op) = target.split_once('.').unwrap_or((target, ""));
    let service = match service {
        s if s.starts_with("DynamoDB") => "DynamoDB",
        "AmazonSQS" => "SQS",
        "AWSEvents" => "EventBridge",
        other => other,
    };
    format!("{service}.{op}")
}

async fn forward(State(proxy): State<Proxy>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let operation = operation(&parts.headers);
    let upstream = match &proxy.dynamodb {
        Some(dynamodb) if operation.starts_with("DynamoDB.") => dynamodb,
        _ => &proxy.upstream,
    };
    let mut body: Bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    *proxy
        .counts
        .lock()
        .expect("counts lock")
        .entry(counted_as(&operation, &body))
        .or_default() += 1;
    if proxy.observer.is_some() && operation.starts_with("DynamoDB.") {
        body = with_consumed_capacity(&body);
    }
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut upstream = proxy
        .client
        .request(parts.method, format!("{upstream}{path}"))
        .body(body.clone());
    for (name, value) in &parts.headers {
        if name != "host" && name != "content-length" {
            upstream = upstream.header(name, value);
        }
    }
    let Ok(answer) = upstream.send().await else {
        return Response::builder()
            .status(StatusCode::BAD_GATEWAY)
            .body(Body::empty())
            .unwrap_or_default();
    };
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if name != "content-length" && name != "transfer-encoding" {
            response = response.header(name, value);
        }
    }
    let status = answer.status().as_u16();
    let bytes = answer.bytes().await.unwrap_or_default();
    if let Some(observer) = &proxy.observer {
        observer.observe(&operation, &body, status, &bytes);
    }
    response.body(Body::from(bytes)).unwrap_or_default()
}

/// What a request counts as: its operation, except that the additions of a process's queue
/// counts to an event item ([`LINE_COUNTS`]) are counted apart. They are made once a second per
/// process, not per request, so they fall into whichever step a test happens to be counting.
fn counted_as(operation: &str, body: &[u8]) -> String {
    let adds_line_counts = operation == "DynamoDB.UpdateItem"
        && serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|request| {
            request["UpdateExpression"]
                .as_str()
                .is_some_and(|update| update.starts_with("ADD admitted"))
        });
    if adds_line_counts {
        LINE_COUNTS.to_owned()
    } else {
        operation.to_owned()
    }
}

/// The name under which the additions of queue counts to event items are counted.
pub const LINE_COUNTS: &str = "DynamoDB.UpdateItem (line counts)";

/// The request with `ReturnConsumedCapacity: INDEXES` (unchanged if it is not a JSON object).
fn with_consumed_capacity(body: &Bytes) -> Bytes {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(mut request)) => {
            request.insert("ReturnConsumedCapacity".into(), "INDEXES".into());
            serde_json::to_vec(&request).map_or_else(|_| body.clone(), Bytes::from)
        }
        _ => body.clone(),
    }
}
