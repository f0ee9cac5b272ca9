# The lab's private apt configuration, sourced by fetch_kernel.sh and
# fetch_guest_arm64.sh: every suite kernels.txt names, its own sources list,
# lists and package cache under the lab cache, one set per architecture (the
# system's apt sources are never read or changed).
#   lab_apt CACHE ARCH   sets LAB_APT (the directory) and LAB_APT_OPTS (the
#                        -o options for apt-get and apt-cache)
#   lab_apt_update       fetches the lists; its log in $LAB_APT/update.log
lab_apt() {
  local cache=$1 arch=$2 key=/usr/share/keyrings/debian-archive-keyring.gpg s
  # amd64's lists where they always were; other architectures beside them.
  if [[ $arch == amd64 ]]; then LAB_APT=$cache/apt; else LAB_APT=$cache/apt-$arch; fi
  mkdir -p "$LAB_APT/etc" "$LAB_APT/lists/partial" "$LAB_APT/cache/archives/partial"
  {
    for s in bookworm bookworm-updates trixie trixie-backports unstable experimental; do
      echo "deb [signed-by=$key] http://deb.debian.org/debian $s main"
    done
    echo "deb [signed-by=$key] http://deb.debian.org/debian-security bookworm-security main"
  } > "$LAB_APT/etc/sources.list.new"
  cmp -s "$LAB_APT/etc/sources.list.new" "$LAB_APT/etc/sources.list" \
    || mv "$LAB_APT/etc/sources.list.new" "$LAB_APT/etc/sources.list"
  rm -f "$LAB_APT/etc/sources.list.new"
  LAB_APT_OPTS=(-o Dir::Etc::SourceList="$LAB_APT/etc/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists="$LAB_APT/lists" -o Dir::Cache="$LAB_APT/cache"
    -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root
    -o APT::Architecture="$arch" -o APT::Architectures="$arch")
}

lab_apt_update() {
  apt-get "${LAB_APT_OPTS[@]}" -q update >"$LAB_APT/update.log" 2>&1
}
