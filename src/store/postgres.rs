//! The PostgreSQL policy store (issue 12 item 2, spec 006): many nodes, one policy.
//!
//! A `Backend` over the synchronous client of the rust-postgres family, one connection kept for
//! management transactions (made again when it was lost) and one more per `listen` for the
//! notices committed batches send. TLS goes through rustls (no OpenSSL), verified against the
//! roots compiled in. Only in the `extension` build: the unit-test and fuzz builds have none of it.
//!
//! No credential leaves this file: `describe` shows host, port, database and schema, and every
//! message of the client or the server is stripped of the password, the user and the connection
//! string before it becomes a `StoreError`.
use super::{Backend, Changes, Dialect, Row, Txn};
use crate::error::{store_why, AclError, Result, StoreError};
use parking_lot::Mutex;
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, Config, SimpleQueryMessage};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// A connection string that names no `connect_timeout` gets this one: management fails within it
/// when the store is unreachable rather than hang.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What a message must never show.
#[derive(Clone)]
struct Secrets(Vec<String>);

impl Secrets {
    fn of(text: &str, config: &Config) -> Secrets {
        let mut s = vec![text.to_string()];
        if let Some(p) = config.get_password() {
            s.push(String::from_utf8_lossy(p).into_owned());
        }
        // A one-letter user would blank out every such letter; longer ones are cut out.
        if let Some(u) = config.get_user().filter(|u| u.chars().count() > 1) {
            s.push(u.to_string());
        }
        s.retain(|x| !x.is_empty());
        // The longest first, so a password inside the connection string goes with it.
        s.sort_by_key(|x| std::cmp::Reverse(x.len()));
        Secrets(s)
    }

    /// A client or server message, on one line, cut, and with every secret replaced.
    fn clean(&self, message: &str) -> String {
        let mut m = message.to_string();
        for s in &self.0 {
            m = m.replace(s.as_str(), "***");
        }
        store_why(&m)
    }
}

/// The client's error with its cause (its `Display` is the kind alone: "db error").
fn message(e: &postgres::Error) -> String {
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

/// Host, port, database and schema: what `acl_status()` and every message show of the store.
fn describe(config: &Config, schema: &str) -> String {
    let mut hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    if hosts.is_empty() {
        hosts = config.get_hostaddrs().iter().map(|a| a.to_string()).collect();
    }
    let hosts = if hosts.is_empty() { "localhost".to_string() } else { hosts.join(",") };
    let ports: Vec<String> = config.get_ports().iter().map(u16::to_string).collect();
    let port = if ports.is_empty() { "5432".to_string() } else { ports.join(",") };
    // libpq's default database is the user's name, which is not shown.
    let db = config.get_dbname().unwrap_or("(the user's)");
    format!("host={hosts} port={port} dbname={db} schema={}", crate::policy::norm(schema))
}

/// The TLS connector: rustls with ring and the Mozilla roots (webpki-roots).
fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|_| AclError::internal("TLS could not be set up"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// A policy store in a schema of a PostgreSQL database.
pub struct PgBackend {
    config: Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    shown: String,
    secrets: Secrets,
    /// The connection management uses, kept between batches; `None` until the first (or after
    /// one was lost).
    client: Mutex<Option<Client>>,
}

impl PgBackend {
    /// Reads a libpq connection string (`key=value …` or a `postgresql://` URL). Connects to
    /// nothing yet. A string that cannot be read is refused without repeating any of it.
    pub fn new(connection: &str, schema: &str) -> Result<PgBackend> {
        let mut config = Config::from_str(connection).map_err(|e| {
            // The parser's cause names an option (never a value); anything else says nothing.
            let cause = std::error::Error::source(&e).map(|c| c.to_string()).unwrap_or_default();
            let why = if cause.contains("option `") && !cause.contains('=') { cause } else { "it is not a libpq connection string".into() };
            let why = Secrets(vec![connection.to_string()]).clean(&why);
            AclError::from(StoreError::BadConnection { why })
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("duckdb-acl");
        let secrets = Secrets::of(connection, &config);
        Ok(PgBackend { shown: describe(&config, schema), tls: tls()?, config, secrets, client: Mutex::new(None) })
    }

    fn unavailable(&self, e: &postgres::Error) -> AclError {
        StoreError::Unavailable { location: self.shown.clone(), why: self.secrets.clean(&message(e)) }.into()
    }

    fn failed(&self, e: &postgres::Error) -> AclError {
        StoreError::Failed { location: self.shown.clone(), why: self.secrets.clean(&message(e)) }.into()
    }

    fn connect(&self) -> Result<Client> {
        self.config.connect(self.tls.clone()).map_err(|e| self.unavailable(&e))
    }
}

impl Backend for PgBackend {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }

    fn transaction(&self, work: &mut dyn FnMut(&mut dyn Txn) -> Result<()>) -> Result<()> {
        let mut slot = self.client.lock();
        if slot.as_ref().is_some_and(Client::is_closed) {
            *slot = None;
        }
        // A kept connection the server has closed since (a restart) fails at BEGIN: one more
        // try on a new connection, before anything of the batch was sent.
        let fresh = slot.is_none();
        let mut client = match slot.take() {
            Some(c) => c,
            None => self.connect()?,
        };
        if let Err(e) = client.batch_execute("BEGIN") {
            if fresh {
                return Err(self.unavailable(&e));
            }
            client = self.connect()?;
            client.batch_execute("BEGIN").map_err(|e| self.unavailable(&e))?;
        }
        // BEGIN is sent by hand (the client's `Transaction` would borrow the connection before
        // the retry above could replace it); the statements run on it, then COMMIT or ROLLBACK.
        let result = work(&mut ClientTxn { client: &mut client, backend: self });
        let end = match &result {
            Ok(()) => client.batch_execute("COMMIT").map_err(|e| self.failed(&e)),
            Err(_) => client.batch_execute("ROLLBACK").map_err(|e| self.failed(&e)),
        };
        if !client.is_closed() {
            *slot = Some(client);
        }
        result.and(end)
    }

    fn listen(&self, channel: &str) -> Option<Result<Box<dyn Changes>>> {
        Some(self.connect().and_then(|mut client| {
            client.batch_execute(&format!("LISTEN {}", crate::sqltext::ident(channel))).map_err(|e| self.unavailable(&e))?;
            Ok(Box::new(Listener { client, shown: self.shown.clone(), secrets: self.secrets.clone() }) as Box<dyn Changes>)
        }))
    }
}

/// Statements on the management connection inside the transaction `transaction` began.
struct ClientTxn<'a> {
    client: &'a mut Client,
    backend: &'a PgBackend,
}

impl ClientTxn<'_> {
    fn run(&mut self, sql: &str) -> Result<Vec<SimpleQueryMessage>> {
        self.client.simple_query(sql).map_err(|e| self.backend.failed(&e))
    }
}

impl Txn for ClientTxn<'_> {
    fn query(&mut self, sql: &str) -> Result<Vec<Row>> {
        Ok(self
            .run(sql)?
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(row) => Some((0..row.len()).map(|i| row.get(i).map(str::to_string)).collect()),
                _ => None,
            })
            .collect())
    }

    fn execute(&mut self, sql: &str) -> Result<u64> {
        Ok(self
            .run(sql)?
            .iter()
            .map(|m| match m {
                SimpleQueryMessage::CommandComplete(n) => *n,
                _ => 0,
            })
            .sum())
    }
}

/// A connection that `LISTEN`s on the store's channel.
struct Listener {
    client: Client,
    shown: String,
    secrets: Secrets,
}

impl Changes for Listener {
    fn wait(&mut self, timeout: Duration) -> Result<bool> {
        let lost = |why: String| AclError::from(StoreError::Unavailable { location: self.shown.clone(), why });
        let mut notices = self.client.notifications();
        let came = match notices.timeout_iter(timeout).next() {
            Ok(first) => first.is_some(),
            Err(e) => return Err(lost(self.secrets.clean(&message(&e)))),
        };
        // Several batches may have come at once: one check of the version covers them all.
        while let Ok(Some(_)) = notices.iter().next() {}
        drop(notices);
        if self.client.is_closed() {
            return Err(lost("the connection that listens for changes was closed".into()));
        }
        Ok(came)
    }
}
