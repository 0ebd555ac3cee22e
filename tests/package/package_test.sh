#!/usr/bin/env bash
# The Debian package, end to end (ctest package_test, label package):
#   1. cpack builds the .deb from the release build;
#   2. its control data: Depends computed (libc6, libssl3), the conffile;
#   3. lintian: no error and no warning (its informational tags are
#      printed; packaging/CMakeLists.txt says why those stay);
#   4. as root, in a throwaway root (an overlay of this machine's / in a
#      private mount and network namespace; no download, nothing written to
#      the real system): install, the unit checked by systemd-analyze
#      verify, upgrade to a higher version with the config edited (kept),
#      upgrade to one whose shipped config changed too (kept, the new one
#      beside it as .dpkg-dist), remove (data and config kept), purge
#      (data and config gone). systemd is not running in that root, as in
#      an image being built: the maintainer scripts must cope.
# Without root the first three run and the test reports itself skipped
# (exit 77) with the reason.
#
# Usage: package_test.sh BUILD_DIR
set -euo pipefail

fail() { echo "package test: FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

if [ "${1:-}" = --inside ]; then
  # Re-executed by unshare below: mount the throwaway root and run the
  # scenario in it (tests/package/scenario.sh).
  work=$2
  root=$work/root
  mount -t tmpfs tmpfs "$work/layer"
  mkdir -p "$work/layer/upper" "$work/layer/work" "$root"
  mount -t overlay overlay -o "lowerdir=/,upperdir=$work/layer/upper,workdir=$work/layer/work" "$root"
  mount --rbind /dev "$root/dev"
  mount -t proc proc "$root/proc"
  mount -t tmpfs tmpfs "$root/run"   # no /run/systemd/system: systemd is not running
  mount -t tmpfs tmpfs "$root/tmp"
  cp "$work"/debs/*.deb "$(dirname "$0")/scenario.sh" "$root/tmp/"
  ip link set lo up
  exec chroot "$root" /bin/bash /tmp/scenario.sh
fi

build=$(cd "${1:?usage: package_test.sh BUILD_DIR}" && pwd)
for tool in cpack dpkg-deb lintian; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/install-deps.sh installs it)"
done
work=$(mktemp -d "$build/package-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debs" "$work/layer"

step "cpack"
cpack --config "$build/CPackConfig.cmake" -B "$work/cpack" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
debs=("$work"/cpack/*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack made no single .deb: ${debs[*]}"
deb=${debs[0]}
version=$(dpkg-deb -f "$deb" Version)
echo "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, version $version"

step "control data"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
# dpkg-shlibdeps's libc6 shows that Depends was computed; libssl3 must be
# there because meshnode loads libssl.so.3 (dlopen, node/api/tls_library.h),
# which dpkg-shlibdeps cannot see: meshctl links it today.
for dep in 'libc6 (>= ' 'libssl3 (>= ' adduser init-system-helpers; do
  [[ $depends == *"$dep"* ]] || fail "Depends lacks '$dep'"
done
[[ $depends != *-dev* ]] || fail "Depends names a -dev package"
mkdir "$work/control"
dpkg-deb -e "$deb" "$work/control"
[ "$(cat "$work/control/conffiles")" = /etc/meshnode/meshnode.toml ] ||
  fail "conffiles is not exactly /etc/meshnode/meshnode.toml: $(cat "$work/control/conffiles")"
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for path in ./usr/sbin/meshnode ./usr/bin/meshctl ./lib/systemd/system/meshnode.service \
            ./etc/meshnode/meshnode.toml ./usr/share/doc/meshnode/OPERATING.md \
            ./usr/share/doc/meshnode/copyright ./usr/share/man/man8/meshnode.8.gz; do
  grep -qxF "$path" <<<"$contents" || fail "the package lacks $path"
done

step "lintian"
# --fail-on error,warning: a warning is a failure too (none is overridden).
if ! lintian --fail-on error,warning --display-info "$deb" >"$work/lintian.log" 2>&1; then
  cat "$work/lintian.log"
  fail "lintian found errors or warnings"
fi
cat "$work/lintian.log"

# Two later versions of the same build: the second as it is, the third with
# a changed shipped config (a release that added a key).
later() {  # later SUFFIX CHANGE_CONFIG
  local dir=$work/later-$1
  dpkg-deb -R "$deb" "$dir"
  sed -i "s/^Version: .*/Version: $version+$1/" "$dir/DEBIAN/control"
  if [ "$2" = yes ]; then
    echo '# a line a later release added' >>"$dir/etc/meshnode/meshnode.toml"
    (cd "$dir" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
       xargs -0 md5sum >DEBIAN/md5sums)
  fi
  dpkg-deb --root-owner-group -Zgzip -z1 -b "$dir" "$work/debs/meshnode-$1.deb" >/dev/null
}
cp "$deb" "$work/debs/meshnode-1.deb"
later up2 no
later up3 yes

if [ "$(id -u)" -ne 0 ]; then
  echo "package test: skipped the install, upgrade and purge: they need root (a mount namespace and chroot)"
  exit 77
fi
if ! unshare --mount --propagation private true 2>/dev/null; then
  echo "package test: skipped the install, upgrade and purge: this machine refuses a mount namespace (unshare)"
  exit 77
fi
step "install, upgrade, remove, purge in a throwaway root"
unshare --mount --net --propagation private -- "$0" --inside "$work"
echo "package test: ok"
