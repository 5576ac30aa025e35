# Shared by the scale-*.sh scripts (sourced, not run): their common options, the time estimate printed before
# a run starts, the jar run under a time limit, and the report made from its JSON.
#
# Common options of every scale script:
#   -j JAR        the benchmark jar (default rpc-benchmarks/target/benchmarks.jar)
#   -o OUTDIR     where the JSON, the run's log, about.md (machine, date, commit, commands) and the report go
#                 (default a new directory under /tmp); the table is OUTDIR/table.md
#   -f LIST       frameworks, comma-separated (default PETREL,PETREL_DIRECT,GRPC,NETTY; also GRPC_DIRECT)
#   -W N -w S     warm-up: N iterations of S seconds (default 5 x 5 s: gRPC-java's JIT needs about 20 s)
#   -i N -r S     measurement: N iterations of S seconds (default 3 x 5 s)
#   -q            a smoke run (1 x 1 s warm-up, 1 x 1 s measured): proves the script, measures nothing
#   -x ARG        one more argument for the jar (JMH's), repeatable: -x -p -x "serverArgs=--business-queue 8192"
#   -l SECONDS    the longest the whole script may run; past it every process it started is stopped
#                 (default twice the estimate plus 120 s)
# Environment: JAVA (the java of the jar's main JVM and of the report, default java on the PATH; scale-java.sh
#              runs the trials on each JDK it is given and the report on JAVA),
# JAVA_OPTS (options of that JVM, e.g. -Djmh.ignoreLock=true).

JAR=rpc-benchmarks/target/benchmarks.jar
OUT=
FRAMEWORKS=PETREL,PETREL_DIRECT,GRPC,NETTY
WI=5
W=5
I=3
R=5
SMOKE=0
LIMIT=
EXTRA=()
# Seconds a trial takes beyond its warm-up and measurement: the server's JVM starting, connecting, the check
# call, the teardown (about 4-6 s on 2 cores; 8 leaves room).
STARTUP=8
RUNS=0
# Set to 1 when a run of the jar failed or was stopped: the script reports what finished, then exits 1.
FAILED=0
JAVA=${JAVA:-java}
# shellcheck disable=SC2206
JAVA_OPTS_ARR=(${JAVA_OPTS:-})
COMMANDS=()

# scale_parse OWN_OPTSTRING "$@": the common options, and the script's own through its scale_opt function.
scale_parse() {
  local own=$1
  shift
  local opt
  OPTIND=1
  while getopts "j:o:f:W:w:i:r:qx:l:h${own}" opt; do
    case "$opt" in
      j) JAR=$OPTARG ;;
      o) OUT=$OPTARG ;;
      f) FRAMEWORKS=$OPTARG ;;
      W) WI=$OPTARG ;;
      w) W=$OPTARG ;;
      i) I=$OPTARG ;;
      r) R=$OPTARG ;;
      q) SMOKE=1 ;;
      x) EXTRA+=("$OPTARG") ;;
      l) LIMIT=$OPTARG ;;
      h|\?) scale_usage; exit 2 ;;
      *) scale_opt "$opt" "$OPTARG" ;;
    esac
  done
  if (( SMOKE )); then WI=1; W=1; I=1; R=1; fi
  local n
  for n in "$WI" "$W" "$I" "$R"; do
    [[ "$n" =~ ^[0-9]+$ ]] || { echo "iterations and seconds are whole numbers: $n" >&2; exit 2; }
  done
  (( I > 0 && R > 0 )) || { echo "-i and -r must be > 0" >&2; exit 2; }
  [[ -f "$JAR" ]] || { echo "no benchmark jar at $JAR: give its path with -j, or build it from the repository root:" \
    "./mvnw -B -q package -pl rpc-benchmarks -am -DskipTests" >&2; exit 2; }
  JAR=$(readlink -f "$JAR")
  OUT=${OUT:-$(mktemp -d /tmp/petrel-scale-XXXXXX)}
  mkdir -p "$OUT"
  OUT=$(readlink -f "$OUT")
}

# The usage: the script's header comment and this file's.
scale_usage() {
  sed -n '2,/^set -/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  sed -n '4,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# count LIST: how many comma-separated items.
count() {
  local IFS=,
  # shellcheck disable=SC2206
  local items=($1)
  echo ${#items[@]}
}

# scale_plan RUNS: prints how long the runs will take, before anything starts, and sets the time limit.
scale_plan() {
  RUNS=$1
  local per=$(( WI * W + I * R + STARTUP ))
  local total=$(( RUNS * per ))
  LIMIT=${LIMIT:-$(( 2 * total + 120 ))}
  [[ "$LIMIT" =~ ^[0-9]+$ ]] && (( LIMIT > 0 )) || { echo "-l: seconds > 0: $LIMIT" >&2; exit 2; }
  printf '%s: %d runs x %d s (%d x %d s warm-up, %d x %d s measured, about %d s to start and stop) = %d s (about %d min); stopped after %d s at most\n' \
    "$(basename "$0")" "$RUNS" "$per" "$WI" "$W" "$I" "$R" "$STARTUP" "$total" $(( (total + 59) / 60 )) "$LIMIT"
  DEADLINE=$(( $(date +%s) + LIMIT ))
}

# jmh_timing: the JMH options of the chosen warm-up and measurement. -to 60s: an iteration whose callers are
# still in their calls 60 s after its time is up is interrupted (its interrupted calls count as failed), so
# that a stalled trial ends instead of holding the run.
jmh_timing() {
  echo -f 1 -wi "$WI" -w "$W" -i "$I" -r "$R" -to 60s -bm thrpt -rf json
}

# run_jar JAVA_BIN ARGS...: the jar under the time that is left (all its processes: JMH's forks and the
# servers they start are in its process group, which timeout stops); the output goes to the run's log too.
run_jar() {
  local java=$1
  shift
  local left=$(( DEADLINE - $(date +%s) ))
  (( left > 0 )) || { echo "time limit reached before: $*" >&2; return 124; }
  local cmd=("$java" "${JAVA_OPTS_ARR[@]}" -jar "$JAR" "$@")
  COMMANDS+=("${cmd[*]}")
  echo "+ ${cmd[*]}" | tee -a "$OUT/run.log"
  local rc
  set +e
  timeout -k 10 "$left" "${cmd[@]}" 2>&1 | tee -a "$OUT/run.log"
  rc=${PIPESTATUS[0]}
  set -e
  if (( rc == 124 || rc == 137 )); then
    echo "$(basename "$0"): stopped at the time limit (-l $LIMIT s); the JSON keeps what finished" >&2
  fi
  return "$rc"
}

# scale_report TITLE JSON...: about.md (machine, date, commit, commands), the Report tool's tables and charts,
# and table.md, the two together.
scale_report() {
  local title=$1
  shift
  local files=() f
  for f in "$@"; do
    if [[ -s $f ]]; then files+=("$f"); else echo "$(basename "$0"): no results in $f (see $OUT/run.log)" >&2; fi
  done
  (( ${#files[@]} > 0 )) || return 1
  if grep -q '<failure>' "$OUT/run.log" 2>/dev/null; then
    echo "$(basename "$0"): a trial ended in an error (JMH's <failure> in $OUT/run.log): its rows are missing" >&2
    FAILED=1
  fi
  local commit dirty=""
  commit=$(git -C "$(dirname "$JAR")" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [[ $commit != unknown ]] && ! git -C "$(dirname "$JAR")" diff --quiet HEAD -- 2>/dev/null; then
    dirty=" (with uncommitted changes)"
  fi
  {
    echo "#### $title"
    echo
    if (( SMOKE )); then
      echo "**Smoke run (-q), not a measurement**: 1 x 1 s of warm-up and 1 x 1 s measured per trial."
      echo
    fi
    echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC') (finished); commit ${commit}${dirty}"
    echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')),"\
      "$(awk '/MemTotal/ {printf "%.0f GiB RAM", $2 / 1048576}' /proc/meminfo 2>/dev/null), $(uname -sr),"\
      "$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || echo unknown OS); load average at the end:"\
      "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
    echo "- Java: ${JAVA_DESC:-$("$JAVA" -version 2>&1 | head -n 1) (the jar's JVM; JMH's fork and the server it starts run on the same)}"
    echo "- Per trial: $WI x $W s warm-up, $I x $R s measured, one fork; server and client on this machine, loopback"
    echo "- Commands:"
    echo
    echo '```'
    printf '%s\n' "${COMMANDS[@]}"
    echo '```'
    echo
  } > "$OUT/about.md"
  "$JAVA" -cp "$JAR" io.petrel.rpc.benchmarks.Report "${files[@]}" --out "$OUT/report" > "$OUT/report.log" 2>&1 \
    || { echo "the report failed:" >&2; cat "$OUT/report.log" >&2; return 1; }
  cat "$OUT/about.md" "$OUT/report/results.md" > "$OUT/table.md"
  cat "$OUT/table.md"
  echo "$(basename "$0"): table in $OUT/table.md, charts in $OUT/report" >&2
}
