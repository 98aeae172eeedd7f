//! How a test's requests reach the app: over a real socket (reqwest to the port the app bound), or
//! in-process (the API's router called directly through tower's `oneshot`, no port at all).
//! `SEATCLAIM_TEST_TRANSPORT` chooses. The contract must hold both ways: the socket run covers
//! hyper's parsing and the listener, the in-process run shows the handlers alone answer it.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, header};
use serde_json::Value;
use tower::ServiceExt;

/// The transports a suite can run over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// HTTP over a TCP socket to the app's bound port (the default).
    Socket,
    /// The router called in-process, through `tower::ServiceExt::oneshot`.
    InProcess,
}

/// The transport the suites use: `SEATCLAIM_TEST_TRANSPORT=in-process` calls the router directly;
/// unset or `socket` goes over TCP.
pub fn test_transport() -> TransportKind {
    match std::env::var("SEATCLAIM_TEST_TRANSPORT").as_deref() {
        Ok("socket") | Err(_) => TransportKind::Socket,
        Ok("in-process") => TransportKind::InProcess,
        Ok(other) => {
            panic!("SEATCLAIM_TEST_TRANSPORT must be socket or in-process, not {other:?}")
        }
    }
}

/// Where one app's requests go.
#[derive(Clone)]
pub enum Transport {
    /// `base` is `http://127.0.0.1:PORT`; the client keeps a connection pool.
    Socket {
        /// The app's address, with the scheme.
        base: String,
        /// A pooled HTTP client.
        client: reqwest::Client,
    },
    /// The app's router, state applied.
    InProcess(axum::Router),
}

impl Transport {
    /// Starts a request to `path` (with any query string).
    pub fn request(&self, method: Method, path: &str) -> Call<'_> {
        Call {
            transport: self,
            method,
            path: path.to_owned(),
            headers: HeaderMap::new(),
            body: None,
        }
    }
}

/// A request being built; [`Call::send`] sends it over the app's transport.
pub struct Call<'a> {
    transport: &'a Transport,
    method: Method,
    path: String,
    headers: HeaderMap,
    body: Option<Bytes>,
}

impl Call<'_> {
    /// Adds a header (tests send malformed values on purpose, so anything `http` accepts goes).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("a valid header name");
        let value = HeaderValue::from_str(value).expect("a valid header value");
        self.headers.append(name, value);
        self
    }

    /// Sends `body` as JSON, declared as such.
    pub fn json(self, body: &Value) -> Self {
        self.header(header::CONTENT_TYPE.as_str(), "application/json")
            .body(body.to_string())
    }

    /// Sends these bytes as the body, with whatever content type the test declared (or none).
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Sends the request and reads the whole answer.
    pub async fn send(self) -> Reply {
        let what = format!("{} {}", self.method, self.path);
        match self.transport {
            Transport::Socket { base, client } => {
                let mut request = client
                    .request(self.method, format!("{base}{}", self.path))
                    .headers(self.headers);
                if let Some(body) = self.body {
                    request = request.body(body);
                }
                let response = request
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let status = response.status();
                let headers = response.headers().clone();
                let body = response
                    .bytes()
                    .await
                    .unwrap_or_else(|e| panic!("{what}: reading the body: {e}"));
                Reply {
                    status,
                    headers,
                    body,
                }
            }
            Transport::InProcess(router) => {
                let request = in_process_request(self.method, &self.path, self.headers, self.body);
                let response = match router.clone().oneshot(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                };
                let (parts, body) = response.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX)
                    .await
                    .unwrap_or_else(|e| panic!("{what}: reading the body: {e}"));
                Reply {
                    status: parts.status,
                    headers: parts.headers,
                    body,
                }
            }
        }
    }
}

/// The request as hyper would hand it to the router: the content length a client on the wire
/// sends is set, since the router sees no connection to read it from.
fn in_process_request(
    method: Method,
    path: &str,
    mut headers: HeaderMap,
    body: Option<Bytes>,
) -> Request<Body> {
    if let Some(body) = &body {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    }
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .body(body.map_or_else(Body::empty, Body::from))
        .unwrap_or_else(|e| panic!("a request for {path}: {e}"));
    *request.headers_mut() = headers;
    request
}

/// An answer read whole, the same whichever transport carried it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body's bytes.
    pub body: Bytes,
}

impl Reply {
    /// The body as JSON; fails the test if it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("a JSON body ({e}), not {:?}", self.text()))
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A header's value as text; fails the test if the header is missing or not text.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("no {name} header in {:?}", self.headers))
    }
}
