//! The listener of `crawl --metrics ADDR`: `/metrics` (Prometheus text, or OpenMetrics
//! when the `Accept` header asks for it), `/status.json` (the status page's figures) and
//! `/` (the status page itself, one self-contained HTML file that reads `/status.json`).

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::Metrics;

/// The status page: HTML, CSS and script in one file, nothing fetched from elsewhere.
pub(crate) const STATUS_PAGE: &str = include_str!("status.html");

/// The routes of the watch listener, for any server (the sidecar merges them too).
pub(crate) fn routes(metrics: Arc<Metrics>, with_page: bool) -> Router {
    let router = Router::new()
        .route("/metrics", get(scrape))
        .route("/status.json", get(status));
    let router = if with_page {
        router.route("/", get(page))
    } else {
        router
    };
    router.with_state(metrics)
}

/// `/metrics` in the format the request asks for.
async fn scrape(
    axum::extract::State(metrics): axum::extract::State<Arc<Metrics>>,
    headers: HeaderMap,
) -> Response {
    super::respond(&metrics, &headers)
}

async fn status(axum::extract::State(metrics): axum::extract::State<Arc<Metrics>>) -> Response {
    (
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(metrics.status_json()),
    )
        .into_response()
}

async fn page() -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        STATUS_PAGE,
    )
        .into_response()
}

/// Serves the watch routes on `listener` until `stop` resolves.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    stop: impl Future<Output = ()> + Send + 'static,
) {
    let app = routes(metrics, true).fallback(|| async {
        (
            StatusCode::NOT_FOUND,
            "not found: this listener serves /, /status.json and /metrics\n",
        )
    });
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await
    {
        tracing::error!("metrics listener: {e}");
    }
}
