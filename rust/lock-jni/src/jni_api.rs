//! The JNI entry points of `org.eslm.bridge.LockNative`.
//!
//! Every function body runs inside `run_jni`, which catches panics, forwards queued Rust log
//! lines to Java, and turns failures into exactly one Java exception:
//!
//! | failure | Java exception |
//! |---|---|
//! | invalid input (`ErrorCode::InvalidArgument`), bad payload | `IllegalArgumentException` (message names the field) |
//! | closed, unknown or 0 handle | `IllegalStateException` |
//! | lock outcome (conflict, not held, ...) | `org.eslm.bridge.NativeLockException(code, message, detailsJson)` |
//! | panic | `NativeLockException` with `LM_STATUS_CORE_PANIC`, details naming the partition (see [`ops::call`]) |
//! | broken invariant (an answer could not be written) | `NativeLockException` with `LM_STATUS_INTERNAL` |
//!
//! Never a `java.lang.Error`: Elasticsearch halts the JVM when an `Error` reaches one of its
//! threads (docs/RELIABILITY.md, "A panic in the core").

use std::panic::{catch_unwind, AssertUnwindSafe};

use jni::objects::{JClass, JString, JThrowable, JValue};
use jni::sys::{jboolean, jint, jlong, jstring, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;
use lock_core::LockError;

use crate::handle::CORES;
use crate::logging;
use crate::node::{NodeConfig, NodeCore};
use crate::ops::{self, BridgeError};

const NATIVE_CLASS: &str = "org/eslm/bridge/LockNative";
const LOCK_EXCEPTION: &str = "org/eslm/bridge/NativeLockException";

impl From<jni::errors::Error> for BridgeError {
    fn from(e: jni::errors::Error) -> Self {
        BridgeError::Internal(format!("JNI call failed: {e}"))
    }
}

/// Runs one entry point: catches panics, forwards logs, throws on failure and then returns
/// `default` (the value Java never sees, because an exception is pending).
fn run_jni<'local, R>(
    env: &mut JNIEnv<'local>,
    default: R,
    body: impl FnOnce(&mut JNIEnv<'local>) -> Result<R, BridgeError>,
) -> R {
    let result = match catch_unwind(AssertUnwindSafe(|| body(env))) {
        Ok(result) => result,
        Err(payload) => Err(BridgeError::panicked(&*payload)),
    };
    // A JNI failure may have left a Java exception pending; then Java must see that one, and
    // no other Java call is allowed until it is handled.
    if env.exception_check().unwrap_or(true) {
        return default;
    }
    forward_logs(env);
    match result {
        Ok(value) => value,
        Err(error) => {
            throw(env, &error);
            default
        }
    }
}

fn forward_logs(env: &mut JNIEnv<'_>) {
    for line in logging::drain() {
        let delivered = (|| -> jni::errors::Result<()> {
            let target = env.new_string(&line.target)?;
            let message = env.new_string(&line.message)?;
            env.call_static_method(
                NATIVE_CLASS,
                "log",
                "(ILjava/lang/String;Ljava/lang/String;)V",
                &[JValue::Int(line.level), JValue::Object(&target), JValue::Object(&message)],
            )?;
            env.delete_local_ref(target)?;
            env.delete_local_ref(message)?;
            Ok(())
        })();
        if delivered.is_err() {
            // Logging must never turn a good answer into a failure.
            let _ = env.exception_clear();
            return;
        }
    }
}

fn throw(env: &mut JNIEnv<'_>, error: &BridgeError) {
    let thrown = match error {
        BridgeError::Lock(LockError::InvalidArgument { .. }) | BridgeError::BadPayload(_) => {
            env.throw_new("java/lang/IllegalArgumentException", error.message())
        }
        BridgeError::Handle(_) => env.throw_new("java/lang/IllegalStateException", error.message()),
        BridgeError::Lock(_)
        | BridgeError::Internal(_)
        | BridgeError::CorePanic { .. }
        | BridgeError::NoLease { .. } => throw_lock_exception(env, error),
    };
    if thrown.is_err() && !env.exception_check().unwrap_or(true) {
        // Could not even build the exception (out of memory?): fall back to the simplest one.
        let _ = env.throw_new("java/lang/RuntimeException", error.message());
    }
}

fn throw_lock_exception(env: &mut JNIEnv<'_>, error: &BridgeError) -> jni::errors::Result<()> {
    let message = env.new_string(error.message())?;
    let details = env.new_string(error.details_json())?;
    let exception = env.new_object(
        LOCK_EXCEPTION,
        "(ILjava/lang/String;Ljava/lang/String;)V",
        &[JValue::Int(error.code()), JValue::Object(&message), JValue::Object(&details)],
    )?;
    env.throw(JThrowable::from(exception))
}

fn java_string(
    env: &mut JNIEnv<'_>,
    s: &JString<'_>,
    field: &'static str,
) -> Result<String, BridgeError> {
    if s.is_null() {
        return Err(BridgeError::Lock(LockError::invalid(field, "must not be null")));
    }
    // SAFETY: every `JString` handed to this function is a parameter that the native method
    // declares as `java.lang.String`, so the JVM guarantees its class. The checked
    // `get_string` looks the class up by name (`FindClass` + `IsInstanceOf`) on every call,
    // which was a measurable share of a bridge round trip (bench/RESULTS.md, JMH).
    Ok(unsafe { env.get_string_unchecked(s) }?.into())
}

fn new_java_string(env: &mut JNIEnv<'_>, s: &str) -> Result<jstring, BridgeError> {
    Ok(env.new_string(s)?.into_raw())
}

fn core(handle: jlong) -> Result<std::sync::Arc<NodeCore>, BridgeError> {
    let handle = u64::try_from(handle)
        .map_err(|_| BridgeError::Handle(crate::handle::HandleError::Unknown(handle as u64)))?;
    Ok(CORES.get(handle)?)
}

/// `static native String version()`: the bridge and core versions, ending in
/// [`FAULT_INJECTION_MARK`] in the test-only fault-injection build (which is how the plugin's Java
/// side knows it may switch its own test faults on: `org.eslm.replication.StateLogFaults`).
#[no_mangle]
pub extern "system" fn Java_org_eslm_bridge_LockNative_version<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
) -> jstring {
    run_jni(&mut env, std::ptr::null_mut(), |env| {
        logging::install_in_jvm();
        let mark = if cfg!(feature = "fault-injection") { FAULT_INJECTION_MARK } else { "" };
        let v = format!(
            "eslm-bridge {} (lock-core {}){mark}",
            crate::BRIDGE_VERSION,
            lock_core::VERSION
        );
        new_java_string(env, &v)
    })
}

/// What the version of the fault-injection build ends with.
const FAULT_INJECTION_MARK: &str = " [fault-injection]";

/// `static native long coreNew(String nodeConfigJson)`: a new node core; never returns 0.
#[no_mangle]
pub extern "system" fn Java_org_eslm_bridge_LockNative_coreNew<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    config: JString<'local>,
) -> jlong {
    run_jni(&mut env, 0, |env| {
        logging::install_in_jvm();
        let config = java_string(env, &config, "config")?;
        let config: NodeConfig =
            serde_json::from_str(&config).map_err(|e| BridgeError::BadPayload(e.to_string()))?;
        let handle = CORES.insert(NodeCore::new(config)?);
        Ok(handle as jlong)
    })
}

/// `static native boolean coreDestroy(long handle)`: idempotent; true if it was live.
#[no_mangle]
pub extern "system" fn Java_org_eslm_bridge_LockNative_coreDestroy<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jboolean {
    run_jni(&mut env, JNI_FALSE, |_env| {
        let removed = u64::try_from(handle).map(|h| CORES.remove(h)).unwrap_or(false);
        Ok(if removed { JNI_TRUE } else { JNI_FALSE })
    })
}

/// `static native String call(long handle, int op, int partition, String argsJson)`: one
/// operation of [`ops::call`]; answers its JSON envelope (result, events, next tick).
#[no_mangle]
pub extern "system" fn Java_org_eslm_bridge_LockNative_call<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    op: jint,
    partition: jint,
    args: JString<'local>,
) -> jstring {
    run_jni(&mut env, std::ptr::null_mut(), |env| {
        let args = java_string(env, &args, "args")?;
        let answer = ops::call(&*core(handle)?, op, partition, &args)?;
        new_java_string(env, &answer)
    })
}

/// `static native void testOnlyPanic(String message)`: panics on purpose (outside any partition),
/// so tests can prove a panic reaches Java as a `NativeLockException` with the core-panic code
/// and the JVM lives on. Not reachable over REST.
#[no_mangle]
pub extern "system" fn Java_org_eslm_bridge_LockNative_testOnlyPanic<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    message: JString<'local>,
) {
    run_jni(&mut env, (), |env| {
        let message = java_string(env, &message, "message")?;
        panic!("{message}");
    })
}
