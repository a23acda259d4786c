# Sourced (not run) by the benchmark scripts (timing-table, latency-table, peers-table): the process
# groups they start, ended on exit, and headless compositors for one command each.
#
#   . "$root/Benchmarks/Scripts/compositors.sh"
#
# Sets the EXIT, INT and TERM traps. with_compositor waits at most $compositor_start seconds
# (60 unless the sourcing script set it) for a compositor's socket.

# Process groups (compositors, stress-ng, a namespace's holder) still running; ended on exit, so
# that an interrupted table leaves nothing behind.
live=()
end_group() {  # end_group PGID: SIGTERM, then SIGKILL to whatever is left half a second later
  kill -TERM -- -"$1" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 -- -"$1" 2>/dev/null || return 0; sleep 0.01; done
  kill -KILL -- -"$1" 2>/dev/null || true
}
forget_group() { local g keep=(); for g in "${live[@]}"; do [ "$g" = "$1" ] || keep+=("$g"); done; live=("${keep[@]}"); }
trap 'for g in "${live[@]}"; do end_group "$g"; done' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# with_compositor KIND ROOT|"" LOG -- COMMAND...: runs COMMAND against a headless KIND (weston,
# mutter or kwin, or weston-vnc: weston's VNC backend, whose pointer a VNC client moves, on
# 127.0.0.1:$VNC_PORT, with kiosk-shell, a self-signed TLS certificate made for the run and a PAM
# file that lets any VNC user in; ROOT only) with XDG_RUNTIME_DIR and WAYLAND_DISPLAY set; with ROOT, the compositor runs
# chrooted in it with /proc, /dev, /sys and the runtime directory mounted from outside (a
# client built on Debian 12 connects through the shared runtime directory). The compositor's
# output goes to LOG; its environment gets the NAME=VALUE words of the array compositor_env, when
# set (e.g. KWIN_LOG_PERFORMANCE_DATA=1). Returns COMMAND's status, 125 when the compositor makes no socket.
with_compositor() {
  local kind=$1 r=$2 log=$3; shift 4
  local cmd
  case $kind in
    weston) cmd=(weston --backend=headless --socket=wl --idle-time=0 --width=640 --height=480) ;;
    mutter) cmd=(dbus-run-session -- mutter --headless --wayland --no-x11 --virtual-monitor 640x480 --wayland-display=wl) ;;
    kwin) cmd=(dbus-run-session -- kwin_wayland --virtual --no-lockscreen --socket wl --width 640 --height 480) ;;
  esac
  local d; d=$(mktemp -d /tmp/displaylink-bench-"$kind"-XXXXXX); chmod 700 "$d"
  if [ "$kind" = weston-vnc ]; then
    [ -n "$r" ] || { echo "${0##*/}: weston-vnc runs only in a root (its PAM file is mounted there)" >&2; rm -rf "$d"; return 125; }
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/key.pem" -out "$d/cert.pem" -days 1 -subj /CN=localhost 2>/dev/null
    cp -a "$r/etc/pam.d" "$d/pam.d"
    printf 'auth sufficient pam_permit.so\naccount sufficient pam_permit.so\n' >"$d/pam.d/weston-remote-access"
    cmd=(weston --backend=vnc --shell=kiosk-shell.so --socket=wl --idle-time=0 --width=640 --height=480
         --address=127.0.0.1 --port="${VNC_PORT:?}" --vnc-tls-cert="$d/cert.pem" --vnc-tls-key="$d/key.pem")
  fi
  local env=(env -i XDG_RUNTIME_DIR="$d" HOME="$d" PATH=/usr/bin:/bin GSETTINGS_BACKEND=memory
             ${compositor_env[@]+"${compositor_env[@]}"} "${cmd[@]}")
  # setsid: the compositor and all it starts (dbus, Xwayland helpers) in one new process group.
  if [ -z "$r" ]; then
    setsid "${env[@]}" </dev/null >"$log" 2>&1 &
  else
    setsid unshare --mount --propagation private -- /bin/sh -c 'set -e; r=$1; d=$2; shift 2
      mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev"; mount --rbind /sys "$r/sys"
      mkdir -p "$r$d"; mount --bind "$d" "$r$d"
      if [ -d "$d/pam.d" ]; then mount --bind "$d/pam.d" "$r/etc/pam.d"; fi
      exec chroot "$r" "$@"' sh "$r" "$d" "${env[@]}" </dev/null >"$log" 2>&1 &
  fi
  local group=$!; live+=("$group")
  local status=0
  for _ in $(seq $((${compositor_start:-60} * 10))); do
    [ -S "$d/wl" ] && break
    kill -0 "$group" 2>/dev/null || break
    sleep 0.1
  done
  if [ -S "$d/wl" ]; then
    sleep 0.3  # the socket exists a moment before the compositor serves it
    WAYLAND_DISPLAY=$d/wl XDG_RUNTIME_DIR=$d "$@" || status=$?
  else
    echo "${0##*/}: $kind made no socket (log: $log)" >&2; status=125
  fi
  end_group "$group"; forget_group "$group"
  rm -rf "$d"; [ -n "$r" ] && rmdir "$r$d" 2>/dev/null
  return $status
}
