//! A Redis Cluster of three `redis-server` processes on loopback, for the cluster tests.
//!
//! The binaries come from the system (Debian's `redis-server` package, which CI installs).
//! The tests that start one are `#[ignore = "needs redis-server ..."]`: `cargo test` lists
//! them as ignored, and `cargo test --test it -- --ignored` (as
//! CI does) runs them, failing if the binaries are missing.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Three cluster nodes (masters, no replicas), killed when dropped.
pub struct RedisCluster {
    nodes: Vec<Child>,
    pub ports: Vec<u16>,
    _dir: tempfile::TempDir,
}

fn found(binary: &str) -> bool {
    Command::new(binary)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A port free on loopback whose cluster bus port (port + 10000) is free too, and that no
/// other cluster of this test process was given: tests run clusters side by side, and a
/// port handed out here is free only until its node binds it, so two clusters starting at
/// once could otherwise get one port (the second node then fails to start, its PING is
/// answered by the other cluster's node, and `--cluster create` fails).
fn free_port(taken: &[u16]) -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|p| p.into_inner());
    for _ in 0..1000 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let clashes = |p: u16| {
            given
                .iter()
                .chain(taken)
                .any(|&q| q == p || q + 10_000 == p || q == p + 10_000)
        };
        if port >= 55_000 || clashes(port) {
            continue;
        }
        if TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            given.push(port);
            return port;
        }
    }
    panic!("no free pair of ports for a cluster node");
}

pub fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .output()
        .expect("redis-cli runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl RedisCluster {
    /// Starts the cluster and waits until every node says `cluster_state:ok`. The tests
    /// that need it are `#[ignore]`d (so a machine without Redis says they did not run)
    /// and fail, when asked to run, if the Redis binaries are missing.
    pub fn start() -> RedisCluster {
        RedisCluster::start_with(0)
    }

    /// Three masters with `replicas` replicas each (nodes `0..3` are the masters).
    pub fn start_with(replicas: usize) -> RedisCluster {
        assert!(
            found("redis-server") && found("redis-cli"),
            "redis-server and redis-cli must be installed (apt-get install redis-server)"
        );
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut ports = Vec::new();
        let mut nodes = Vec::new();
        for _ in 0..3 * (1 + replicas) {
            let port = free_port(&ports);
            ports.push(port);
            nodes.push(start_node(dir.path(), port));
        }
        let cluster = RedisCluster {
            nodes,
            ports,
            _dir: dir,
        };
        for &port in &cluster.ports {
            wait_for(
                || cli(port, &["PING"]).trim() == "PONG",
                "a node to answer PING",
            );
        }
        let addresses: Vec<String> = cluster
            .ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        let created = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli --cluster create runs");
        assert!(created.success(), "redis-cli --cluster create failed");
        for &port in &cluster.ports {
            wait_for(
                || cli(port, &["CLUSTER", "INFO"]).contains("cluster_state:ok"),
                "the cluster to be ok",
            );
        }
        // Replicas in sync with their masters (a replica that never synced does not take
        // over).
        for &port in &cluster.ports[3..] {
            wait_for(
                || cli(port, &["INFO", "replication"]).contains("master_link_status:up"),
                "a replica to sync with its master",
            );
        }
        cluster
    }

    /// Kills node `i` (SIGKILL), as a machine that goes away.
    pub fn kill_node(&mut self, i: usize) {
        let _ = self.nodes[i].kill();
        let _ = self.nodes[i].wait();
    }

    /// The node addresses as the library takes them.
    pub fn urls(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|p| format!("redis://127.0.0.1:{p}/"))
            .collect()
    }
}

fn start_node(dir: &Path, port: u16) -> Child {
    let node_dir = dir.join(port.to_string());
    std::fs::create_dir_all(&node_dir).expect("a node folder");
    Command::new("redis-server")
        .args(["--port", &port.to_string()])
        .args(["--bind", "127.0.0.1"])
        .args(["--cluster-enabled", "yes"])
        .args(["--cluster-config-file", "nodes.conf"])
        .args(["--cluster-node-timeout", "2000"])
        .args(["--cluster-replica-validity-factor", "0"])
        .args(["--save", ""])
        .args(["--appendonly", "no"])
        .arg("--dir")
        .arg(&node_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts")
}

fn wait_for(mut ready: impl FnMut() -> bool, what: &str) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.kill();
            let _ = node.wait();
        }
    }
}
