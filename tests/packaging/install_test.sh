#!/usr/bin/env bash
# Installs tracehealth's .debs on this machine, runs what they installed, and
# purges them again:
#
#   tests/packaging/install_test.sh OUT      (OUT of deploy/package.sh)
#
# 1. dpkg -i the three packages (apt-get -f install for what they depend on);
#    checks the metadata (Depends from dpkg-shlibdeps, conffiles, stripped
#    binaries whose debug info is in the -dbgsym packages), the server's
#    system user, the units enabled the Debian way (deb-systemd-helper's
#    symlinks and state; PID 1 is not systemd here, so nothing is started)
#    and verified by systemd-analyze;
# 2. /usr/bin/tracehealth-agent --once on the fixture host
#    preempt-none-6.16-240k and on this host;
# 3. the server from the unit's ExecStart, as the unit's User, on a temporary
#    data directory (127.0.0.1 port 0), the agent from its unit's ExecStart
#    sending one report of the fixture, read back with tracehealthctl;
# 4. apt-get purge, then nothing the packages installed or their maintainer
#    scripts made is left: the file lists of /etc, /usr, /opt, /srv and /var
#    (less dpkg's and apt's own state, caches and logs) are those of before
#    the install. The system user tracehealth stays, as Debian does for
#    system users: files it owned may remain (the database in its data
#    directory) and must not pass to a later user given the same uid.
# Rerunnable: packages left by an aborted run are purged first. Needs root.
# Prints PASS/FAIL per check; exits non-zero on any failure.
set -uo pipefail
test_name=install_test
. "$(dirname "$0")/common.sh" "$@"
pkgs=(tracehealth-agent tracehealth-server tracehealth-tools)

tmp=$(mktemp -d -t tracehealth-install-test.XXXXXX)
chmod 0755 "$tmp"
server_pid=""
status() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true; }
installed() { [[ $(status "$1") == "install ok installed" ]]; }
known() { local s; s=$(status "$1"); [[ -n $s && $s != *not-installed ]]; }
purge_all() {
  local p left=()
  for p in "${pkgs[@]}"; do
    if known "$p"; then left+=("$p"); fi
  done
  if ((${#left[@]})); then
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 purge -y -q "${left[@]}" \
      >"$tmp/purge.log" 2>&1
  fi
}
cleanup() {
  if [[ -n $server_pid ]]; then kill -KILL "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  purge_all  # after a failure too: the test leaves the machine as it found it
  rm -rf "$tmp"
}
trap cleanup EXIT

# The files outside dpkg's and apt's own state, caches, logs and temp dirs.
snapshot() {
  find /etc /usr /opt /srv /var -xdev \( -path /var/lib/dpkg -o -path /var/lib/apt \
    -o -path /var/cache -o -path /var/log -o -path /var/tmp -o -path /var/backups \) -prune \
    -o -print | sort
}
# exec_start UNIT STATE_DIR: the unit's ExecStart with ${STATE_DIRECTORY} and
# its EnvironmentFile's flags variable expanded as systemd would.
exec_start() {
  local unit=/lib/systemd/system/$1 line var
  line=$(sed -n 's/^ExecStart=//p' "$unit")
  var=$(grep -o '\$[A-Z_]*FLAGS' <<<"$line" | tr -d '$')
  local flags
  flags=$(set -a; . "/etc/default/${1%.service}"; eval "echo \"\${$var:-}\"")
  line=${line//'${STATE_DIRECTORY}'/$2}
  echo "${line//\$$var/$flags}"
}

if known tracehealth-agent || known tracehealth-server || known tracehealth-tools; then
  echo "install_test: purging tracehealth packages left by an earlier run"
fi
purge_all
snapshot >"$tmp/before.files"
# The packages' paths that are not on the machine yet: none may stay.
for p in "${pkgs[@]}"; do
  dpkg-deb -c "$out/debs/${p}_${version}_amd64.deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||'
done | sort -u | while read -r f; do [[ -z $f || -e $f || -L $f ]] || echo "$f"; done >"$tmp/new.paths"
dpkg-query -W -f='${Package}\n' | sort >"$tmp/before.pkgs"
user_before=$(getent passwd tracehealth || true)

# --- 1. install ----------------------------------------------------------------
debs=()
for p in "${pkgs[@]}"; do debs+=("$out/debs/${p}_${version}_amd64.deb"); done
dpkg -i "${debs[@]}" >"$tmp/install.log" 2>&1 ||
  DEBIAN_FRONTEND=noninteractive apt-get -f install -y -q >>"$tmp/install.log" 2>&1
for p in "${pkgs[@]}"; do
  if installed "$p" && [[ $(dpkg-query -W -f='${Version}' "$p") == "$version" ]]; then
    pass "$p $version installed"
  else
    flunk "$p $version installed" "$(tail -n 20 "$tmp/install.log")"
  fi
done
installed tracehealth-server && installed tracehealth-agent && installed tracehealth-tools || finish
dpkg-query -W -f='${Package}\n' | sort >"$tmp/installed.pkgs"
for p in "${pkgs[@]}"; do dpkg -L "$p"; done | sort -u >"$tmp/package.files"

# Depends computed from each binary's libraries: only the server links SQLite,
# tcmalloc and libcurl; all link gRPC.
depends() { dpkg-query -W -f='${Depends}' "$1" | tr ',' '\n' | sed 's/^ *//; s/ .*//'; }
want_deps() {  # want_deps PKG "present..." "absent..."
  local d missing=() extra=() x
  d=$(depends "$1")
  for x in $2; do grep -qx "$x" <<<"$d" || missing+=("$x"); done
  for x in $3; do grep -qx "$x" <<<"$d" && extra+=("$x"); done
  if ((${#missing[@]} + ${#extra[@]} == 0)); then
    pass "$1 Depends has $2, not ${3:-anything else}"
  else
    flunk "$1 Depends" "missing: ${missing[*]:-}; unexpected: ${extra[*]:-}; Depends: $(tr '\n' ' ' <<<"$d")"
  fi
}
want_deps tracehealth-server "libgrpc++1.51 libsqlite3-0 libtcmalloc-minimal4 libcurl4 libc6" ""
want_deps tracehealth-agent "libgrpc++1.51 libyaml-cpp0.7 zlib1g libc6" "libsqlite3-0 libtcmalloc-minimal4 libcurl4"
want_deps tracehealth-tools "libgrpc++1.51 libtcmalloc-minimal4 libc6" "libsqlite3-0 libcurl4"

# Stripped binaries; their debug info is in the -dbgsym package under the
# binary's build id.
for b in tracehealth-agent:tracehealth-agent tracehealth-server:tracehealth-server \
         tracehealthctl:tracehealth-tools tracehealth-loadgen:tracehealth-tools; do
  bin=/usr/bin/${b%%:*}
  check_stripped "$bin" "$out/debs/${b#*:}-dbgsym_${version}_amd64.deb" "$bin"
done

conffiles=$(for p in "${pkgs[@]}"; do dpkg-query -W -f='${Conffiles}\n' "$p"; done | awk 'NF { print $1 }' | sort | tr '\n' ' ')
want_conf="/etc/default/tracehealth-agent /etc/default/tracehealth-server /etc/tracehealth/alert-rules.yaml /etc/tracehealth/feature-table.yaml "
if [[ $conffiles == "$want_conf" ]]; then
  pass "conffiles: $conffiles"
else
  flunk "conffiles" "got $conffiles; want $want_conf"
fi
if cmp -s /etc/tracehealth/alert-rules.yaml "$repo/deploy/alerts/rules.yaml" &&
   cmp -s /lib/systemd/system/tracehealth-server.service "$repo/deploy/systemd/tracehealth-server.service" &&
   cmp -s /lib/systemd/system/tracehealth-agent.service "$repo/deploy/systemd/tracehealth-agent.service" &&
   cmp -s /usr/lib/sysusers.d/tracehealth.conf "$repo/deploy/systemd/tracehealth.sysusers.conf"; then
  pass "installed alert rules, units and sysusers file are deploy/'s"
else
  flunk "installed alert rules, units and sysusers file are deploy/'s"
fi

# The server's user, made by systemd-sysusers from the sysusers file in the
# postinst. It stays after a purge, so on a rerun it is there already: the
# postinst must call systemd-sysusers, and the installed file must make the
# user in an empty root too.
sysroot="$tmp/sysroot"
mkdir -p "$sysroot/etc" "$sysroot/usr/lib/sysusers.d"
cp /usr/lib/sysusers.d/tracehealth.conf "$sysroot/usr/lib/sysusers.d/" 2>/dev/null
if grep -q '^ *systemd-sysusers .*tracehealth\.conf' /var/lib/dpkg/info/tracehealth-server.postinst &&
   systemd-sysusers --root="$sysroot" tracehealth.conf >/dev/null 2>&1 &&
   grep -q '^tracehealth:x:[0-9]*:[0-9]*:tracehealth server:/var/lib/tracehealth-server:/usr/sbin/nologin$' \
     "$sysroot/etc/passwd"; then
  pass "postinst runs systemd-sysusers tracehealth.conf, which makes the user in an empty root"
else
  flunk "postinst makes the user with systemd-sysusers" "$(cat "$sysroot/etc/passwd" 2>&1)"
fi
IFS=: read -r _ _ uid gid _ home shell <<<"$(getent passwd tracehealth)"
if [[ -n $uid && $uid -lt 1000 && $home == /var/lib/tracehealth-server && $shell == /usr/sbin/nologin ]] &&
   [[ $(getent group tracehealth | cut -d: -f3) == "$gid" ]]; then
  pass "system user tracehealth: uid $uid, group $gid, home $home, shell $shell"
else
  flunk "system user tracehealth" "$(getent passwd tracehealth)"
fi

for unit in tracehealth-agent.service tracehealth-server.service; do
  link=/etc/systemd/system/multi-user.target.wants/$unit
  state=/var/lib/systemd/deb-systemd-helper-enabled
  if [[ $(readlink "$link") == "/lib/systemd/system/$unit" ]] &&
     [[ $(systemctl --root=/ is-enabled "$unit" 2>&1) == enabled ]] &&
     grep -qxF "$link" "$state/$unit.dsh-also" && [[ -e $state/multi-user.target.wants/$unit ]] &&
     grep -q "deb-systemd-invoke stop '$unit'" "/var/lib/dpkg/info/${unit%.service}.prerm"; then
    pass "$unit enabled by deb-systemd-helper ($link, $state/$unit.dsh-also), stopped by prerm"
  else
    flunk "$unit enabled by deb-systemd-helper" "$(ls -l "$link" "$state/$unit.dsh-also" 2>&1; systemctl --root=/ is-enabled "$unit" 2>&1)"
  fi
  msg=$(systemd-analyze verify "/lib/systemd/system/$unit" 2>&1 | grep -v 'Failed to connect to bus' || true)
  if [[ -z $msg ]]; then pass "systemd-analyze verify $unit"; else flunk "systemd-analyze verify $unit" "$msg"; fi
done

# --- 2. the agent from /usr/bin -----------------------------------------------
once=$(/usr/bin/tracehealth-agent --once --root="$fixture" 2>&1)
if grep -q "^tracehealth $version " <<<"$once" &&
   grep -q '^Kernel      6.16.12-cloud-amd64 x86_64' <<<"$once" &&
   grep -q 'walks 240000 threads (240000 without a shadow stack) in 7500 passes of 32' <<<"$once" &&
   grep -q 'predicts a soft lockup (PREEMPT_NONE' <<<"$once"; then
  pass "tracehealth-agent --once --root=preempt-none-6.16-240k: $version, 7500 passes of 32, soft lockup"
else
  flunk "tracehealth-agent --once --root=preempt-none-6.16-240k" "$(head -n 30 <<<"$once")"
fi
once=$(/usr/bin/tracehealth-agent --once 2>&1)
if grep -q "^Kernel      $(uname -r) " <<<"$once" && grep -q '^Worst risk ' <<<"$once"; then
  pass "tracehealth-agent --once on this host ($(uname -r)): $(grep '^Worst risk' <<<"$once" | tr -s ' ')"
else
  flunk "tracehealth-agent --once on this host" "$(head -n 30 <<<"$once")"
fi

# --- 3. server and agent as their units run them ---------------------------------
data="$tmp/server-data"
mkdir -p "$data" && chown tracehealth:tracehealth "$data" && chmod 0750 "$data"
server_user=$(sed -n 's/^User=//p' /lib/systemd/system/tracehealth-server.service)
read -ra server_cmd <<<"$(exec_start tracehealth-server.service "$data")"
setpriv --reuid="$server_user" --regid="$server_user" --init-groups -- \
  "${server_cmd[@]}" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 \
  --port_file="$data/ports" >"$tmp/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
  [[ -s $data/ports ]] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
grpc=$(sed -n 's/^grpc=//p' "$data/ports" 2>/dev/null)
if [[ -n $grpc && ${server_cmd[0]} == /usr/bin/tracehealth-server ]]; then
  pass "${server_cmd[*]} as $server_user: gRPC on $grpc"
else
  flunk "server from the unit's ExecStart" "$(tail -n 20 "$tmp/server.log")"
  finish
fi
if [[ $(stat -c %U "/proc/$server_pid") == tracehealth ]] &&
   grep -q "^tracehealth-server: $(grep -c '^  - name:' "$repo/deploy/alerts/rules.yaml") alert rules" "$tmp/server.log"; then
  pass "server runs as tracehealth with the $(grep -c '^  - name:' "$repo/deploy/alerts/rules.yaml") rules of /etc/tracehealth/alert-rules.yaml"
else
  flunk "server user and rules" "$(ps -o user=,args= -p "$server_pid"); $(cat "$tmp/server.log")"
fi

mkdir -p "$tmp/agent-state" && chmod 0700 "$tmp/agent-state"
read -ra agent_cmd <<<"$(exec_start tracehealth-agent.service "$tmp/agent-state")"
if timeout 60 "${agent_cmd[@]}" --root="$fixture" --server="$grpc" --host_id=pkg-fixture-host \
     --labels=suite=packaging --max_reports=1 >"$tmp/agent.log" 2>&1 &&
   [[ ${agent_cmd[0]} == /usr/bin/tracehealth-agent ]]; then
  pass "${agent_cmd[*]} --root=preempt-none-6.16-240k --server=$grpc --max_reports=1"
else
  flunk "agent from the unit's ExecStart" "${agent_cmd[*]}: $(tail -n 20 "$tmp/agent.log")"
fi
hosts=$(/usr/bin/tracehealthctl --server="$grpc" hosts 2>&1)
if grep -q '^pkg-fixture-host .* 240000 .*6\.16\.12-cloud-amd64' <<<"$hosts"; then
  pass "tracehealthctl hosts: pkg-fixture-host, 240000 threads, 6.16.12-cloud-amd64"
else
  flunk "tracehealthctl hosts" "$hosts"
fi
/usr/bin/tracehealthctl --server="$grpc" --json host pkg-fixture-host >"$tmp/host.json" 2>&1
if msg=$(python3 "$here/check_host.py" "$tmp/host.json" pkg-fixture-host suite=packaging "$version" 2>&1); then
  pass "tracehealthctl host pkg-fixture-host: suite=packaging, agent $version, 240000 threads, 7500 passes, RISK_STALL"
else
  flunk "tracehealthctl host pkg-fixture-host" "$msg"
fi
kill -TERM "$server_pid"
wait "$server_pid"
rc=$?
server_pid=""
if [[ $rc -eq 0 && -s $data/tracehealth.db && $(stat -c %U "$data/tracehealth.db") == tracehealth ]]; then
  pass "server stopped on SIGTERM; $data/tracehealth.db owned by tracehealth"
else
  flunk "server stop and database" "status $rc; $(ls -l "$data"); $(tail -n 5 "$tmp/server.log")"
fi

# --- 4. purge -------------------------------------------------------------------
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${pkgs[@]}" >"$tmp/purge.log" 2>&1
for p in "${pkgs[@]}"; do
  if known "$p"; then
    flunk "$p purged" "$(status "$p"); $(tail -n 10 "$tmp/purge.log")"
  fi
done
# Files of packages apt-get -f install added stay with those packages.
comm -13 "$tmp/before.pkgs" "$tmp/installed.pkgs" | grep -vxF -f <(printf '%s\n' "${pkgs[@]}") \
  >"$tmp/added.pkgs" || true
: >"$tmp/added.files"
while read -r p; do dpkg -L "$p" >>"$tmp/added.files" 2>/dev/null; done <"$tmp/added.pkgs"
snapshot | grep -vxF -f "$tmp/added.files" >"$tmp/after.files"
grep -vxF -f "$tmp/added.files" "$tmp/before.files" >"$tmp/before.kept"
left=$(comm -13 "$tmp/before.kept" "$tmp/after.files")
gone=$(comm -23 "$tmp/before.kept" "$tmp/after.files")
if [[ -z $left && -z $gone ]]; then
  pass "purged: $(wc -l <"$tmp/package.files") packaged paths, nothing left outside the data directory (dependencies added: $(wc -l <"$tmp/added.pkgs"))"
else
  flunk "purge leaves the file lists as before the install" "left: $(head -n 20 <<<"$left"); gone: $(head -n 20 <<<"$gone")"
fi
still=$(while read -r f; do [[ -e $f || -L $f ]] && echo "$f"; done <"$tmp/new.paths")
if [[ -z $still ]]; then
  pass "none of the $(wc -l <"$tmp/new.paths") paths the packages added is left"
else
  flunk "paths of dpkg -L left" "$still"
fi
if [[ -n $(getent passwd tracehealth) && ( -z $user_before || $(getent passwd tracehealth) == "$user_before" ) ]]; then
  pass "system user tracehealth kept (Debian policy for system users)"
else
  flunk "system user tracehealth" "before: $user_before; now: $(getent passwd tracehealth)"
fi
if [[ -s $data/tracehealth.db ]]; then
  pass "the data directory is left as it was ($(du -sk "$data" | cut -f1) KiB)"
else
  flunk "the data directory is left" "$(ls -l "$data")"
fi
finish
