//! The page stage over HTTP/JSON (`crawldedup serve`): a sidecar for crawlers written in any
//! language.
//!
//! | route | what it does |
//! | --- | --- |
//! | `POST /v1/urls/check` | `{"urls": [...]}` -> `{"results": [{"url", "canonical", "verdict"}]}`, each URL checked and recorded in one step (`new`, `seen` or `invalid`, with `error` for invalid ones) |
//! | `POST /v1/pages/check` | `{"url", "content_type", "body" \| "body_base64" \| "text"}` -> the page verdict, with the field names of `crawldedup dedup --json` (`verdict`, `of`, `distance`) plus `url`, and `id`, `simhash`, `digest` for unique pages |
//! | `GET /v1/stats` | the stage's counters ([`crate::DedupStats`]) |
//! | `POST /v1/checkpoint` | saves the URL filter and flushes the index |
//! | `GET /healthz` | `{"status": "ok"}` (no token needed) |
//!
//! The routes, their requests and responses are described in `src/adapters/openapi.json`
//! ([`OPENAPI`]), and a test checks that file against the running routes.
//!
//! Every error is JSON, `{"error": "..."}`, with a 4xx status for bad input (400 malformed
//! JSON or fields, 401 a missing or wrong token, 404 an unknown route, 405 a wrong method,
//! 413 a request over [`ServeOptions::max_request_bytes`] or over
//! [`ServeOptions::max_urls`] URLs) and 500 when the state directory fails.
//!
//! Page checks decode, extract and fingerprint on tokio's blocking pool, so a slow page
//! never stalls the other requests. The stage's own atomicity holds across clients: of
//! identical pages posted at the same moment, exactly one is `unique`.
//!
//! Durability ([`Durability`]): by default a check answers only once what it recorded is
//! durable. A page check that stores a page waits for the index (written, sled flushed,
//! manifest rewritten), so a `unique` the client has received survives a kill -9 and the
//! same page is a duplicate after the restart; a URL check that answers `new` waits for the
//! URL journal ([`crate::urls::journal`]), so the URL is `seen` after the restart.
//! Concurrent checks share one flush (group commit: the first waiter runs it, the others
//! queue behind it and are covered by it or by the next). `Durability::Checkpoint` answers
//! at once and leaves durability to the checkpoints, for a client that can redo its recent
//! work after a crash. Either way the server checkpoints every
//! [`ServeOptions::checkpoint_every`], on `POST /v1/checkpoint`, and once more when it
//! shuts down (the future passed to [`serve`], which `crawldedup serve` ties to SIGINT and
//! SIGTERM).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::dedup::{Dedup, DedupError, UrlVerdict};
use requests::{Input, PageCheck, read_page_check, read_url_check};

mod requests;
pub use requests::read_request;

/// The OpenAPI 3.1 description of the routes, as served at `GET /v1/openapi.json`.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// Default address: loopback only; another host must be asked for explicitly.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";

/// Largest request body by default: a page at the crawler's default body cap (10 MiB),
/// base64-encoded (x 4/3), with room for the JSON around it.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// Most URLs in one `POST /v1/urls/check` by default: a batch answers in milliseconds and a
/// client cannot hold the stage's locks with one giant request.
pub const DEFAULT_MAX_URLS: usize = 10_000;

/// Time between the server's checkpoints, unless told otherwise (`--checkpoint-every`).
pub const DEFAULT_CHECKPOINT_EVERY: Duration = Duration::from_secs(30);

/// Settings of the sidecar.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// When set, every route but `/healthz` requires `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Largest request body accepted (413 above it).
    pub max_request_bytes: usize,
    /// Most URLs in one URL check (413 above it).
    pub max_urls: usize,
    /// Checkpoint this often while serving (`None`: only on request and at shutdown).
    pub checkpoint_every: Option<Duration>,
    /// When a stored page becomes durable: before its answer (the default) or at the next
    /// checkpoint.
    pub durability: Durability,
}

/// When a page the sidecar stores becomes durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Before the answer goes out: every `unique` and every `new` answered survives a
    /// kill -9.
    #[default]
    Answered,
    /// At the next checkpoint: faster, and a kill -9 forgets the pages and URLs recorded
    /// since the last checkpoint (they come back `unique` and `new`). `crawldedup serve`
    /// then opens the stage without the URL journal
    /// ([`crate::DedupBuilder::url_journal`]), which only durable answers need.
    Checkpoint,
}

impl std::str::FromStr for Durability {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "answered" => Ok(Durability::Answered),
            "checkpoint" => Ok(Durability::Checkpoint),
            other => Err(format!(
                "unknown durability `{other}`: use `answered` or `checkpoint`"
            )),
        }
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            token: None,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            max_urls: DEFAULT_MAX_URLS,
            checkpoint_every: Some(DEFAULT_CHECKPOINT_EVERY),
            durability: Durability::default(),
        }
    }
}

/// What stops the sidecar.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The listening socket failed.
    #[error("listening on {addr}: {source}")]
    Listen {
        /// The address.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The final checkpoint failed.
    #[error("checkpoint at shutdown: {0}")]
    Checkpoint(String),
}

struct AppState {
    dedup: Arc<Dedup>,
    options: ServeOptions,
    metrics: Arc<crate::metrics::Metrics>,
}

/// An error answer: a status and one line of explanation, sent as `{"error": "..."}`.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    /// A 400; a line break or other control character that the client sent and the
    /// message quotes is escaped, so the message stays one line.
    fn bad_request(message: impl Into<String>) -> ApiError {
        let message: String = message.into();
        let message = if message.chars().any(char::is_control) {
            message
                .chars()
                .map(|c| {
                    if c.is_control() {
                        c.escape_default().to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect()
        } else {
            message
        };
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(json!({"error": self.message}))).into_response()
    }
}

impl From<DedupError> for ApiError {
    fn from(e: DedupError) -> ApiError {
        tracing::error!("page stage: {e}");
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("page stage: {e}"),
        }
    }
}

impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> ApiError {
        let status = rejection.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "request body too large".to_string()
        } else {
            format!("request body: {}", rejection.body_text())
        };
        ApiError { status, message }
    }
}

/// Parses a JSON request body, naming the field at fault on error, in the words of the
/// API (a JSON object, a field), never of the types behind it.
fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    // serde reads a struct from an array too ("expected struct X with 6 elements").
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Err(ApiError::bad_request(
            "invalid JSON: the request body must be a JSON object",
        ));
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = api_words(&e.into_inner().to_string());
        // `.` is the whole body; `?` a place serde could not name.
        if path == "." || path.contains('?') {
            ApiError::bad_request(format!("invalid JSON: {inner}"))
        } else {
            ApiError::bad_request(format!("invalid JSON at {path}: {inner}"))
        }
    })
}

/// A serde message with the names of Rust types replaced by what a client sent or should.
fn api_words(message: &str) -> String {
    static TYPE_NAME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:struct|enum) [A-Za-z_][A-Za-z0-9_]*(?: with \d+ elements?)?")
            .expect("a valid pattern")
    });
    TYPE_NAME.replace_all(message, "a JSON object").into_owned()
}

/// The router with every route, for embedding in a server of one's own (see [`serve`]).
pub fn router(dedup: Arc<Dedup>, options: ServeOptions) -> Router {
    let max_request_bytes = options.max_request_bytes;
    let metrics = Arc::new(crate::metrics::Metrics::for_stage(dedup.clone()));
    let state = Arc::new(AppState {
        dedup,
        options,
        metrics,
    });
    let api = Router::new()
        .route("/v1/urls/check", post(check_urls))
        .route("/v1/pages/check", post(check_page))
        .route("/v1/stats", get(stats))
        .route("/v1/checkpoint", post(checkpoint))
        .route("/v1/openapi.json", get(openapi))
        .route("/metrics", get(scrape))
        .route_layer(middleware::from_fn_with_state(state.clone(), authorize));
    Router::new()
        .route("/healthz", get(healthz))
        .merge(api)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_request_bytes))
        .with_state(state)
}

/// Serves the stage on `listener` until `shutdown` resolves, then lets requests in flight
/// finish and takes a checkpoint.
pub async fn serve(
    dedup: Arc<Dedup>,
    listener: tokio::net::TcpListener,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let periodic = options.checkpoint_every.map(|every| {
        let dedup = dedup.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                tick.tick().await;
                let dedup = dedup.clone();
                match tokio::task::spawn_blocking(move || dedup.checkpoint()).await {
                    Ok(Ok(())) => tracing::debug!("checkpoint"),
                    Ok(Err(e)) => tracing::error!("checkpoint: {e}"),
                    Err(e) => tracing::error!("checkpoint task: {e}"),
                }
            }
        })
    });
    // The time windows (dedup.retention, url_filter.recrawl_after) are swept meanwhile.
    let sweeper = crate::dedup::Sweeper::start(dedup.clone());
    let app = router(dedup.clone(), options);
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await;
    if let Some(task) = periodic {
        task.abort();
    }
    tokio::task::spawn_blocking(move || drop(sweeper))
        .await
        .unwrap_or_default();
    // Checkpoint even when the socket failed: what was recorded must not be lost.
    // Closed when no request holds the stage any more (the index's snapshot written for
    // the next start); checkpointed otherwise.
    let saved = tokio::task::spawn_blocking(move || match Arc::try_unwrap(dedup) {
        Ok(dedup) => dedup.close().map(|_| ()).map_err(|e| e.to_string()),
        Err(shared) => shared.checkpoint().map_err(|e| e.to_string()),
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()));
    served.map_err(|source| ServeError::Listen { addr, source })?;
    saved.map_err(ServeError::Checkpoint)
}

/// Resolves on Ctrl-C (SIGINT) or, on Unix, SIGTERM: what a service manager or container
/// runtime sends to stop a process.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate => {}
        }
    }
    #[cfg(not(unix))]
    interrupt.await;
}

/// True when `addr` only accepts connections from this machine.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

async fn authorize(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    if let Some(token) = &state.options.token {
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_credentials);
        let ok = presented.is_some_and(|p| constant_time_eq(p.as_bytes(), token.as_bytes()));
        if !ok {
            return Err(ApiError {
                status: StatusCode::UNAUTHORIZED,
                message: "missing or wrong bearer token".into(),
            });
        }
    }
    Ok(next.run(request).await)
}

/// The credentials of an `Authorization: Bearer <token>` value; the scheme is matched
/// without regard to case (RFC 9110, 11.1), and spaces after it are skipped.
fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim_start_matches(' '))
}

/// Compares without stopping at the first difference, so response times do not reveal how
/// much of a guessed token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn not_found(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        message: format!("no route {method} {}", uri.path()),
    }
}

async fn method_not_allowed(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        message: format!("{} does not take {method}", uri.path()),
    }
}

async fn healthz() -> axum::Json<Value> {
    axum::Json(json!({"status": "ok"}))
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

async fn check_urls(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<axum::Json<Value>, ApiError> {
    let request = read_url_check(&body?, state.options.max_urls)?;
    let dedup = state.dedup.clone();
    let durability = state.options.durability;
    let results = tokio::task::spawn_blocking(move || -> Result<Vec<Value>, DedupError> {
        let mut results = Vec::with_capacity(request.urls.len());
        let mut any_new = false;
        for url in request.urls {
            let verdict = dedup.check_url(&url)?;
            any_new |= matches!(verdict, UrlVerdict::New(_));
            let mut result = json!({"url": url, "verdict": verdict.label()});
            match verdict {
                UrlVerdict::New(canonical) | UrlVerdict::Seen(canonical) => {
                    result["canonical"] = canonical.as_str().into();
                }
                UrlVerdict::Invalid(e) => {
                    result["canonical"] = Value::Null;
                    result["error"] = e.to_string().into();
                }
            }
            results.push(result);
        }
        // A URL answered `new` is durable before the answer goes out.
        if durability == Durability::Answered && any_new {
            dedup.sync_urls()?;
        }
        Ok(results)
    })
    .await
    .map_err(|e| ApiError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        message: format!("URL check task: {e}"),
    })??;
    Ok(axum::Json(json!({ "results": results })))
}

async fn check_page(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<axum::Json<Value>, ApiError> {
    let PageCheck {
        url,
        content_type,
        input,
        include_text,
    } = read_page_check(&body?, state.dedup.canonicalizer())?;
    let dedup = state.dedup.clone();
    let durability = state.options.durability;
    let metrics = state.metrics.clone();
    let answer = tokio::task::spawn_blocking(move || -> Result<Value, DedupError> {
        let checking = std::time::Instant::now();
        let (verdict, title, text) = match input {
            Input::Html(bytes) => {
                let (verdict, extracted) =
                    dedup.check_page_extracted(&url, &bytes, content_type.as_deref())?;
                (verdict, extracted.title, extracted.text)
            }
            Input::Text(text) => (dedup.check_text(&url, &text)?, None, text),
        };
        let host = crate::dedup::template::host_of(&url).unwrap_or_default();
        metrics.decided(&host, &url, &verdict, checking.elapsed());
        // A stored page is durable before it is answered; a duplicate changed nothing
        // (its original was made durable when it was answered).
        if durability == Durability::Answered
            && matches!(verdict, crate::dedup::PageVerdict::Unique { .. })
        {
            dedup.sync_pages()?;
        }
        let mut answer = serde_json::Map::new();
        answer.insert("url".into(), url.into());
        answer.extend(verdict.json_fields());
        if include_text {
            answer.insert("title".into(), title.into());
            answer.insert("text".into(), text.into());
        }
        Ok(Value::Object(answer))
    })
    .await
    .map_err(|e| ApiError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        message: format!("page check task: {e}"),
    })??;
    Ok(axum::Json(answer))
}

/// `/metrics`: the Prometheus text format, or OpenMetrics when the `Accept` header asks.
async fn scrape(State(state): State<Arc<AppState>>, headers: axum::http::HeaderMap) -> Response {
    crate::metrics::respond(&state.metrics, &headers)
}

async fn stats(State(state): State<Arc<AppState>>) -> Result<axum::Json<Value>, ApiError> {
    let stats = state.dedup.stats();
    serde_json::to_value(stats)
        .map(axum::Json)
        .map_err(|e| ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("stats: {e}"),
        })
}

async fn checkpoint(State(state): State<Arc<AppState>>) -> Result<axum::Json<Value>, ApiError> {
    let dedup = state.dedup.clone();
    let stats = tokio::task::spawn_blocking(move || dedup.checkpoint().map(|()| dedup.stats()))
        .await
        .map_err(|e| ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("checkpoint task: {e}"),
        })??;
    state.metrics.checkpointed();
    Ok(axum::Json(json!({
        "checkpointed": true,
        "indexed_documents": stats.indexed_documents,
        "seen_urls": stats.seen_urls,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `sidecar_request` fuzz target: a URL with a line break in it was quoted
    /// raw in the 400's message.
    #[test]
    fn a_refused_request_is_one_line_whatever_it_quotes() {
        let crash = include_bytes!("../../../tests/fixtures/fuzz/sidecar-newline-in-url");
        let (status, message) = read_request("/v1/pages/check", &crash[1..]).unwrap_err();
        assert_eq!(status, 400);
        assert!(!message.contains('\n'), "{message}");
        assert!(
            message.contains("\\n"),
            "the line break is shown escaped: {message}"
        );
        let (status, message) = read_request(
            "/v1/pages/check",
            b"{\"url\": \"a\\u0000\\r\\nb\", \"text\": \"x\"}",
        )
        .unwrap_err();
        assert_eq!(status, 400);
        assert!(!message.contains(['\n', '\r', '\0']), "{message:?}");
    }

    #[test]
    fn the_bearer_scheme_is_matched_in_any_case() {
        for value in ["Bearer abc", "bearer abc", "BEARER abc", "Bearer   abc"] {
            assert_eq!(bearer_credentials(value), Some("abc"), "{value}");
        }
        assert_eq!(bearer_credentials("Basic abc"), None);
        assert_eq!(bearer_credentials("Bearerabc"), None);
    }

    #[test]
    fn token_comparison_needs_every_byte() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
