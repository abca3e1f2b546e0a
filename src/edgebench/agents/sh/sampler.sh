# edgebench device-side runner: runs a workload and samples /proc and /sys around it, in POSIX sh.
# Runs under mksh (Android, with toybox), busybox ash and dash: no bash, no Python, no arrays.  Every external
# command is a fork, so the sampling loop uses builtins only (read, printf/print, arithmetic) plus one `sleep`
# per tick.  The caller sets, before this text:
#   EB_ROOT     prefix of every device path ("" on a device; a fixture tree in tests)
#   EB_PERIOD_MS sampling period in milliseconds (integer)
#   EB_WORK     scratch directory on the device (created, removed at exit)
#   EB_CWD      the workload's working directory (where pushed files are)
#   EB_CMD      the workload, run with `sh -c` in EB_CWD ("" samples until stdin closes: sensors only)
#   EB_SOURCES  space-separated "PATH:MAX_BYTES:EVERY_NTH_TICK" (a /proc/self/ path means the workload's pid;
#               PATH may hold colons, intel-rapl:0, so the numbers are split off from the right; a PATH with a `*`
#               is every file it matches, listed at each tick, their whole lines kept while under MAX_BYTES)
#   EB_CLOCK    "auto" (EPOCHREALTIME where the shell has it, else /proc/uptime) or "uptime"
#   EB_SAMPLE   1 to sample, 0 to only run and stamp the workload
#   EB_NATIVE   the native sampler on the device (edgebench/agents/native/sampler.c), which samples in place of
#               this script's loop with the same records; "" (or one that ends before its first record): the loop
# Output on stdout, one line each: "C <clock>", "A <uptime> <wall>" (a clock anchor, at the start and the end
# where the clock is EPOCHREALTIME), "S <sampler>" (native or sh: which one samples), "G <t>" (workload
# released), "P <pid>", "O <t> <line>" (a line
# of its stdout or stderr), "X <t> <status>" (it exited), then "@samples" and the sample records:
# "T <t>" starts a record, "<i>|<line>" is a line of source i, "<i>!" a failed read; a source not due is absent.
# Closing this script's stdin (the workstation went away) kills the workload and the sampler: nothing is left but
# EB_WORK.samples (the records so far), which the workstation fetches and deletes.

if [ -n "${KSH_VERSION:-}" ]; then
  out() { print -r -- "$*"; }
else
  out() { printf '%s\n' "$*"; }
fi

if [ "$EB_CLOCK" = auto ] && [ -n "${EPOCHREALTIME:-}" ]; then
  EB_CLOCK=epochrealtime
  now() { T=$EPOCHREALTIME; }
else
  EB_CLOCK=uptime
  now() { read -r T _ < /proc/uptime; }
fi

# Milliseconds since the first call (integers only: mksh's arithmetic is 32-bit).
ms() {
  now
  _s=${T%.*}
  _f=${T#*.}000
  _f=${_f%"${_f#???}"}
  while :; do case $_f in 0?*) _f=${_f#0} ;; *) break ;; esac; done
  [ -z "${_s0:-}" ] && _s0=$_s
  M=$(((_s - _s0) * 1000 + _f))
}

# Kill a process and every descendant (children first), found through /proc/*/stat with builtins only: the
# workload's `sh -c` may fork its commands instead of exec'ing them, and they must not outlive the trial.
killtree() {
  local _self _d _st
  _self=$1
  kill -STOP "$_self" 2>/dev/null  # no new children while its tree is walked
  for _d in /proc/[0-9]*; do
    { read -r _st < "$_d/stat"; } 2>/dev/null || continue
    _st=${_st##*) }
    set -- $_st
    [ "$2" = "$_self" ] && killtree "${_d#/proc/}"
  done
  kill -KILL "$_self" 2>/dev/null
}

cleanup() {
  # Ignored, not reset: on a drop the hang-up and the watchdog's TERM arrive together, and a second signal must
  # not end this cleanup midway (a run folder would be left on the device).
  trap '' HUP INT TERM PIPE
  trap - EXIT
  [ -n "${EB_DOG:-}" ] && kill -TERM "$EB_DOG" 2>/dev/null
  [ -n "${EB_RPID:-}" ] && { kill -TERM -- "-$EB_RPID" 2>/dev/null || kill -TERM "$EB_RPID" 2>/dev/null; }
  [ -z "${EB_WPID:-}" ] && [ -s wpid ] && read -r EB_WPID < wpid
  [ -n "${EB_WPID:-}" ] && killtree "$EB_WPID"
  [ -n "${EB_SPID:-}" ] && kill -TERM "$EB_SPID" 2>/dev/null
  [ -n "${EB_DOG:-}" ] && kill -TERM "$EB_DOG" 2>/dev/null
  [ -n "${EB_RPID:-}" ] && kill -KILL -- "-$EB_RPID" 2>/dev/null
  # Ended early (a drop, a timeout): the samples so far are kept beside the run folder for the workstation to
  # fetch over a new connection (it deletes them); the run folder itself goes.
  [ -z "${EB_DONE:-}" ] && [ -s "$EB_WORK/samples" ] && mv "$EB_WORK/samples" "$EB_WORK.samples" 2>/dev/null
  rm -rf "$EB_WORK"
}
trap cleanup EXIT
trap 'exit 129' HUP PIPE
trap 'exit 130' INT
trap 'exit 143' TERM

poll() {
  now
  out "T $T"
  _i=0
  for _src in $EB_SOURCES; do
    _every=${_src##*:}
    _rest=${_src%:*}
    _max=${_rest##*:}
    _path=${_rest%:*}
    if [ $((_tick % _every)) -eq 0 ] || [ "$_final" = 1 ]; then
      case $_path in
      /proc/self/*)
        [ -z "$_wpid" ] && [ -s wpid ] && read -r _wpid < wpid
        _path=/proc/${_wpid:-0}/${_path#/proc/self/}
        ;;
      esac
      case $_path in
      *'*'*)
        # a pattern (a process's threads: task/*/schedstat): each file it matches, whole lines while under _max
        _n=0
        _got=0
        for _f in $EB_ROOT$_path; do
          { while IFS= read -r _l || [ -n "$_l" ]; do
            _n=$((_n + ${#_l} + 1))
            [ "$_n" -ge "$_max" ] && break
            out "$_i|$_l"
            _got=1
          done; } 2>/dev/null < "$_f" || continue
          [ "$_n" -ge "$_max" ] && break
        done
        [ "$_got" = 1 ] || out "$_i!"
        _i=$((_i + 1))
        continue
        ;;
      esac
      if [ "$_whole" = 1 ]; then
        # mksh: the file in one read(2) of up to _max bytes and one print, every line prefixed by substitution
        if { command exec 5< "$EB_ROOT$_path"; } 2>/dev/null; then
          IFS= read -N "$_max" -r _c <&5
          exec 5<&-
          [ "${#_c}" -ge "$_max" ] && _c=${_c%"$_nl"*}  # cut at _max: keep whole lines only
          _c=${_c%"$_nl"}
          [ -n "$_c" ] && out "$_i|${_c//"$_nl"/"$_nl$_i|"}"
        else
          out "$_i!"
        fi
      else
        # other shells' read(1) takes a line a byte at a time: one system call per byte of the file
        _n=0
        if { while IFS= read -r _l || [ -n "$_l" ]; do
          out "$_i|$_l"
          _n=$((_n + ${#_l} + 1))
          if [ "$_n" -ge "$_max" ]; then break; fi
        done; } 2>/dev/null < "$EB_ROOT$_path"; then :; else out "$_i!"; fi
      fi
    fi
    _i=$((_i + 1))
  done
  _tick=$((_tick + 1))
}

nap() { read -t "$1" _ <&4; }

_nl='
'
# mksh's `read -N` fills a variable with a whole file in a few read(2) calls, without a fork.
_whole=0
if [ -n "${KSH_VERSION:-}" ] && ( IFS= read -N 1 -r _x < /proc/uptime ) 2>/dev/null; then
  _whole=1
fi

sample_loop() {
  trap - EXIT HUP INT PIPE
  _wpid=
  _tick=0
  # Waiting costs a fork and an exec per tick with `sleep`; mksh and busybox ash can wait without either: a
  # `read -t` on a FIFO this process holds open at both ends, which never has data.  dash has no `read -t`.
  _nap=sleep
  if mkfifo nap 2>/dev/null && exec 4<>nap && { read -t 0.001 _ <&4; [ $? -ne 2 ]; } 2>/dev/null; then
    _nap=nap
  fi
  _last=0
  trap '_last=1' TERM
  ms
  _next=$M
  _start=$T
  while :; do
    # the record reads every source when the stop came before it; a TERM that arrives while a record is being read
    # (the trap runs between two commands) gets one more record after it, so the last record always reads every one
    _final=$_last
    poll
    # The script that started this loop was killed outright (SIGKILL: no trap ran): stop, with its workload.
    if ! kill -0 $$ 2>/dev/null; then
      [ -n "$_wpid" ] && killtree "$_wpid"
      rm -rf "$EB_WORK"
      exit 0
    fi
    [ "$_last" = 1 ] && [ "$_final" = 0 ] && continue
    if [ "$_last" = 1 ]; then
      # the loop's own cost: its CPU ticks with those of the sleeps it reaped (fields 14-17 of proc(5))
      read -r _stat < /proc/self/stat
      set -- ${_stat##*) }
      shift 11
      out "L $(($1 + $2 + $3 + $4)) $_start $T"
      exit 0
    fi
    _next=$((_next + EB_PERIOD_MS))
    ms
    _left=$((_next - M))
    if [ "$_left" -le 0 ]; then
      _next=$M
      continue
    fi
    _frac=00$((_left % 1000))
    $_nap "$((_left / 1000)).${_frac#"${_frac%???}"}"
  done
}

# A wall-clock stamp beside the monotonic clock (/proc/uptime, 10 ms steps), read at the start and the end: the
# workstation moves every wall-clock stamp onto the device's monotonic clock, and tells a step of the wall clock
# during the trial (an NTP correction) from the difference between the two pairs.
anchor() {
  [ "$EB_CLOCK" = epochrealtime ] || return 0
  read -r _up _ < /proc/uptime
  out "A $_up $EPOCHREALTIME"
}

mkdir -p "$EB_WORK" || exit 2
cd "$EB_WORK" || exit 2
out "C $EB_CLOCK"
anchor
exec 3<&0
# The watchdog: stdin reaches end of file when the workstation closes it or the connection drops.
# If the script itself is already gone (killed outright), the watchdog stops the workload in its place.
( trap - EXIT; while read -r _ <&3; do :; done
  kill -TERM $$ 2>/dev/null || { [ -s wpid ] && read -r _w < wpid && killtree "$_w"; } ) &
EB_DOG=$!
rm -f go wpid status
mkfifo go || exit 2
[ -n "$EB_CMD" ] || EB_CMD='exec sleep 2147483647'
export EB_CWD EB_CMD EB_WORK
# The workload runs under a small wrapper that waits for "go", starts it in the background (so its pid is known
# and `sh -c` execs a simple command in place) and records its exit status; its output reaches the reader
# through a pipe the shell made, so no FIFO open can block or be interrupted on the reading side.
(set -m) 2>/dev/null && set -m
( exec sh -c 'read -r _ < go; cd "$EB_CWD" || exit 127; sh -c "$EB_CMD" 2>&1 < /dev/null & echo $! > "$EB_WORK/wpid"; wait $!; echo $? > "$EB_WORK/status"' 2>&1 ) | {
  trap - EXIT HUP INT PIPE
  while IFS= read -r _line || [ -n "$_line" ]; do
    now
    out "O $T $_line"
  done
} &
EB_RPID=$!
set +m 2>/dev/null
if [ "$EB_SAMPLE" = 1 ]; then
  if [ -n "${EB_NATIVE:-}" ]; then
    "$EB_NATIVE" "$EB_CLOCK" "$EB_PERIOD_MS" "$EB_ROOT" $$ $EB_SOURCES > samples &
    EB_SPID=$!
    _n=0
    while [ ! -s samples ] && [ "$_n" -lt 1000 ] && kill -0 "$EB_SPID" 2>/dev/null; do sleep 0.01; _n=$((_n + 1)); done
    if [ -s samples ]; then out "S native"; else kill -KILL "$EB_SPID" 2>/dev/null; EB_SPID=; fi
  fi
  if [ -z "${EB_SPID:-}" ]; then
    sample_loop > samples &
    EB_SPID=$!
    while [ ! -s samples ]; do sleep 0.01; done
    out "S sh"
  fi
fi
now
out "G $T"
# Opening a FIFO blocks, and a child's exit (SIGCHLD) can interrupt the open (mksh reports EINTR): retry it.
until { out go > go; } 2>/dev/null; do :; done
while [ ! -s wpid ]; do sleep 0.01; done
read -r EB_WPID < wpid
out "P $EB_WPID"
wait "$EB_RPID"
EB_RPID=
_rc=
[ -s status ] && read -r _rc < status
now
out "X $T ${_rc:-255}"
anchor
rm -f wpid
EB_WPID=
if [ -n "$EB_STAMP" ] && [ -f "$EB_STAMP" ]; then
  out "@stamp"
  cat "$EB_STAMP"
  out ""
  out "@endstamp"
fi
if [ -n "${EB_SPID:-}" ]; then
  kill -TERM "$EB_SPID"
  wait "$EB_SPID"
  EB_SPID=
  out "@samples"
  cat samples
fi
EB_DONE=1
