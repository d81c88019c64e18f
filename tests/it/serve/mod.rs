//! The sidecar (`crawldedup serve`): its routes against the OpenAPI file, verdicts, errors,
//! the bearer token, concurrency, and the checkpoint at shutdown.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;

use crawldedup::adapters::serve::{self, OPENAPI, ServeOptions};
use crawldedup::fixture::{Reply, Site};
use crawldedup::{Config, Dedup};
use serde_json::{Value, json};

use crate::common;
use common::KillOnDrop;

mod process;
mod routes;

struct Sidecar {
    base: String,
    client: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), serve::ServeError>>,
    _state: tempfile::TempDir,
}

impl Sidecar {
    async fn start(options: ServeOptions) -> Sidecar {
        let state = tempfile::tempdir().unwrap();
        let dedup = Arc::new(Dedup::open(state.path(), &Config::default()).unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(serve::serve(dedup, listener, options, async {
            let _ = stopped.await;
        }));
        Sidecar {
            base,
            client: reqwest::Client::new(),
            stop: Some(stop),
            task,
            _state: state,
        }
    }

    async fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(body);
        }
        answer(request).await
    }

    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap().unwrap();
    }
}

async fn answer(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("status {status}: the answer is not JSON ({e}): {text}"));
    (status, value)
}

fn page(site: &Site, path: &str) -> String {
    match site.respond(path) {
        Reply::Full { body, .. } => String::from_utf8(body).unwrap(),
        other => panic!("{path}: {other:?}"),
    }
}

/// A page check of `body` at `url`; a path is taken as one on the fixture site's host.
fn page_request(url: &str, body: &str) -> Value {
    let url = if url.starts_with('/') {
        format!("http://site.test{url}")
    } else {
        url.to_string()
    };
    json!({"url": url, "content_type": "text/html; charset=utf-8", "body": body})
}

/// The routes the server registers, read from its source, as "METHOD /path".
fn routes_in_source() -> BTreeSet<String> {
    let source = include_str!("../../../src/adapters/serve/mod.rs");
    let mut routes = BTreeSet::new();
    for line in source.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix(".route(\"") else {
            continue;
        };
        let (path, handler) = rest.split_once("\", ").unwrap();
        let method = handler.split('(').next().unwrap().to_uppercase();
        routes.insert(format!("{method} {path}"));
    }
    routes
}
