#!/usr/bin/env bash
# Java versions side by side: the same run on each given JDK (the jar's JVM, JMH's fork and the server it
# starts all run on that JDK). The jar is built for Java 17 and runs on any later one.
#
#   rpc-benchmarks/scripts/scale-java.sh [common options] -J "JAVA_HOME ..." [-c CALLERS] [-p PAYLOAD]
#
#   -J HOMES    the JDKs, space-separated JAVA_HOME directories (default: $JAVA_HOMES, else every JDK under
#               /usr/lib/jvm, each once), e.g. -J "/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64"
#   -c CALLERS  blocking callers (default 16), on one connection
#   -p PAYLOAD  the payload (default MESSAGE)
#
# One trial per framework and JDK; with two JDKs and the defaults 4 x 2 = 8 runs of 48 s.
set -euo pipefail
. "$(dirname "$0")/scale-common.sh"
HOMES=${JAVA_HOMES:-}
CALLERS=16
PAYLOAD=MESSAGE
scale_opt() {
  case "$1" in
    J) HOMES=$2 ;;
    c) CALLERS=$2 ;;
    p) PAYLOAD=$2 ;;
  esac
}
scale_parse "J:c:p:" "$@"
if [[ -z $HOMES ]]; then
  declare -A seen=()
  for java in /usr/lib/jvm/*/bin/java; do
    [[ -x $java ]] || continue
    real=$(readlink -f "$java")
    [[ -n ${seen[$real]:-} ]] && continue
    seen[$real]=1
    HOMES+="${HOMES:+ }$(dirname "$(dirname "$real")")"
  done
fi
read -r -a HOME_LIST <<< "$HOMES"
(( ${#HOME_LIST[@]} > 0 )) || { echo "no JDK given (-J or JAVA_HOMES) and none found under /usr/lib/jvm" >&2; exit 2; }
for h in "${HOME_LIST[@]}"; do
  [[ -x $h/bin/java ]] || { echo "-J: no bin/java in $h" >&2; exit 2; }
done
JAVA_DESC=$(for h in "${HOME_LIST[@]}"; do printf '%s: %s; ' "$h" "$("$h/bin/java" -version 2>&1 | head -n 1)"; done)
scale_plan $(( $(count "$FRAMEWORKS") * ${#HOME_LIST[@]} ))
FILES=()
n=0
for h in "${HOME_LIST[@]}"; do
  n=$((n + 1))
  # shellcheck disable=SC2046
  run_jar "$h/bin/java" SyncCallBenchmark -p "framework=$FRAMEWORKS" -p "payload=$PAYLOAD" -t "$CALLERS" \
    $(jmh_timing) -rff "$OUT/java-$n.json" "${EXTRA[@]}" || FAILED=1
  [[ -f $OUT/java-$n.json ]] && FILES+=("$OUT/java-$n.json")
done
(( ${#FILES[@]} > 0 )) || { echo "no JDK's run wrote results: see $OUT/run.log" >&2; exit 1; }
scale_report "Java versions ($CALLERS blocking callers, one connection)" "${FILES[@]}"
exit "$FAILED"
