//! Rust log lines for the node's logger.
//!
//! The native side must not write to stdout or stderr (Elasticsearch owns those). A `tracing`
//! layer puts each event into a bounded queue; the JNI wrapper drains the queue at the end of
//! every call, on the calling Java thread, and hands each line to the plugin's Log4j logger.
//! If nobody drains for a long time the oldest lines are dropped and counted, never blocking.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use once_cell::sync::{Lazy, OnceCell};
use parking_lot::Mutex;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// Most lines kept between two drains.
const CAPACITY: usize = 10_000;

/// The level of a log line as the bridge hands it to Java (`LockNative.log`): defined once here
/// and emitted into the C header as `ESLM_LOG_LEVEL_<NAME>`, which the plugin's
/// `BridgeVocabularyTest` holds Java's `NativeLogLevel` to.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Error = 0,
    Warn = 1,
    Info = 2,
    Debug = 3,
    Trace = 4,
}

/// One log line: its [`LogLevel`] number, target and formatted message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub level: i32,
    pub target: String,
    pub message: String,
}

static QUEUE: Lazy<Mutex<VecDeque<LogLine>>> = Lazy::new(|| Mutex::new(VecDeque::new()));
/// Cheap "anything to drain?" check so calls without logs never touch the queue's mutex.
static PENDING: AtomicBool = AtomicBool::new(false);
static DROPPED: AtomicU64 = AtomicU64::new(0);
static INSTALLED: OnceCell<()> = OnceCell::new();

/// Installs the queueing layer as the process-wide subscriber. Idempotent; a host that already
/// set a subscriber keeps its own.
pub fn install() {
    INSTALLED.get_or_init(|| {
        let subscriber = tracing_subscriber::registry().with(QueueLayer);
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

/// Inside a JVM: routes panic messages, with the backtrace of the panicking thread, into the
/// log queue instead of the node's stderr (the bridge then answers the call with its
/// `CorePanic` code, docs/RELIABILITY.md). Not used by Rust tests, whose harness reports
/// failures through the default hook.
pub fn install_in_jvm() {
    static HOOKED: OnceCell<()> = OnceCell::new();
    install();
    HOOKED.get_or_init(|| {
        std::panic::set_hook(Box::new(|info| {
            let backtrace = std::backtrace::Backtrace::force_capture();
            tracing::error!(target: "eslm::panic", "{}", panic_line(info, &backtrace));
        }));
    });
}

/// The log line of a panic: `lock core panic: <where and what>`, then `backtrace:` and the
/// frames.
pub fn panic_line(info: &dyn std::fmt::Display, backtrace: &dyn std::fmt::Display) -> String {
    format!("lock core panic: {info}\nbacktrace:\n{backtrace}")
}

/// Takes every queued line, oldest first.
pub fn drain() -> Vec<LogLine> {
    if !PENDING.swap(false, Ordering::AcqRel) {
        return Vec::new();
    }
    let mut lines: Vec<LogLine> = QUEUE.lock().drain(..).collect();
    let dropped = DROPPED.swap(0, Ordering::Relaxed);
    if dropped > 0 {
        lines.push(LogLine {
            level: LogLevel::Warn as i32,
            target: "eslm::logging".into(),
            message: format!("{dropped} native log lines dropped (queue full)"),
        });
    }
    lines
}

fn level_number(level: &Level) -> i32 {
    let level = match *level {
        Level::ERROR => LogLevel::Error,
        Level::WARN => LogLevel::Warn,
        Level::INFO => LogLevel::Info,
        Level::DEBUG => LogLevel::Debug,
        Level::TRACE => LogLevel::Trace,
    };
    level as i32
}

struct QueueLayer;

impl<S: Subscriber> Layer<S> for QueueLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut visitor = MessageVisitor::default();
        event.record(&mut visitor);
        let meta = event.metadata();
        let line = LogLine {
            level: level_number(meta.level()),
            target: meta.target().to_owned(),
            message: visitor.finish(),
        };
        let mut queue = QUEUE.lock();
        if queue.len() >= CAPACITY {
            queue.pop_front();
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
        queue.push_back(line);
        PENDING.store(true, Ordering::Release);
    }
}

/// Formats `message` first, then `key=value` for every other field.
#[derive(Default)]
struct MessageVisitor {
    message: String,
    fields: String,
}

impl MessageVisitor {
    fn finish(self) -> String {
        if self.fields.is_empty() {
            self.message
        } else {
            format!("{} {}", self.message, self.fields.trim_start())
        }
    }
}

impl Visit for MessageVisitor {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_queued_with_fields_and_drained_once() {
        install();
        tracing::warn!(epoch = 7, "hello from rust");
        let lines = drain();
        let line =
            lines.iter().find(|l| l.message.starts_with("hello from rust")).expect("queued line");
        assert_eq!(line.level, LogLevel::Warn as i32);
        assert!(line.message.contains("epoch=7"), "{}", line.message);
        assert!(drain().iter().all(|l| !l.message.starts_with("hello from rust")));
    }
}
