#!/usr/bin/env bash
# JMH: JNI round trip vs a ConcurrentHashMap lock table. Needs `make build` (plugin jar and
# target/release/libeslm.so). Usage: bench/jmh/run.sh [JMH options, e.g. -f 1 -wi 2 -i 3]
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
export JAVA_HOME=${JAVA_HOME:-$("$ROOT/scripts/find-jdk")}
mvn -B -q package -DskipTests
CP="target/classes:$(cat target/classpath.txt):$(ls "$ROOT"/java/target/elasticsearch-lock-manager-*.jar | head -1)"
exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -Deslm.lib="$ROOT/target/release/libeslm.so" \
  -cp "$CP" org.openjdk.jmh.Main -rf json -rff target/jmh.json "$@" 'org.eslm.bench.*'
