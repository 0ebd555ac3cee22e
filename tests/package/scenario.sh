#!/bin/bash
# Runs as root inside package_test.sh's throwaway root (a copy-on-write view
# of this machine, with /tmp holding meshnode-1.deb and its later versions
# meshnode-up2.deb and meshnode-up3.deb). Exits non-zero at the first
# broken promise.
set -euo pipefail
cd /tmp

fail() { echo "package test: FAIL: $*" >&2; exit 1; }
step() { echo "-- $*"; }
owner_mode() { stat -c '%U:%G %a' "$1"; }
conf=/etc/meshnode/meshnode.toml

# Start from a machine without meshnode: this view of it may hold one.
if dpkg-query -W meshnode >/dev/null 2>&1; then dpkg --purge meshnode >/dev/null; fi
if getent passwd meshnode >/dev/null; then userdel meshnode; fi
if getent group meshnode >/dev/null; then groupdel meshnode; fi
rm -rf /etc/meshnode /var/lib/meshnode
# man-db's trigger rebuilds the whole manual's index after each dpkg run
# (4 s each here): not ours to test.
rm -f /var/lib/man-db/auto-update

step "install"
dpkg -i meshnode-1.deb
version=$(dpkg-query -W -f '${Version}' meshnode)
getent passwd meshnode | grep -q ':/var/lib/meshnode:/usr/sbin/nologin$' ||
  fail "no meshnode user with home /var/lib/meshnode and no shell: $(getent passwd meshnode || true)"
uid=$(id -u meshnode)
[ "$uid" -lt 1000 ] || fail "meshnode is not a system user (uid $uid)"
[ "$(owner_mode /var/lib/meshnode)" = "meshnode:meshnode 700" ] ||
  fail "/var/lib/meshnode is $(owner_mode /var/lib/meshnode)"
[ "$(owner_mode /etc/meshnode)" = "root:meshnode 750" ] || fail "/etc/meshnode is $(owner_mode /etc/meshnode)"
[ "$(owner_mode $conf)" = "root:root 644" ] || fail "$conf is $(owner_mode $conf)"
dpkg-query -W -f '${Conffiles}\n' meshnode | grep -q "^ $conf [0-9a-f]\{32\}$" ||
  fail "$conf is not a registered conffile"
[ -L /etc/systemd/system/multi-user.target.wants/meshnode.service ] ||
  fail "the unit is not enabled (deb-systemd-helper)"
[ "$(meshnode --version)" = "meshnode $(cut -d+ -f1 <<<"$version")" ] ||
  fail "meshnode --version says '$(meshnode --version)', the package $version"

step "systemd-analyze verify"
# Offline: it loads the unit and checks its directives, the program it
# runs and the man page its Documentation= names; it needs no running
# systemd (this root has none).
systemd-analyze verify /lib/systemd/system/meshnode.service

step "the shipped config: refused until the operator fills it in"
if out=$(meshnode --check-config $conf 2>&1); then fail "the unedited config passed: $out"; fi
grep -q "node_id" <<<"$out" || fail "the unedited config's error does not name node_id: $out"
# The operator's steps (docs/OPERATING.md, "Per-server checklist").
operator_key=$(meshctl keygen --out /root/operator.key | grep -oE '[0-9a-f]{64}')
node_key=$(meshctl keygen --out /etc/meshnode/node.key | grep -oE '[0-9a-f]{64}')
chown meshnode:meshnode /etc/meshnode/node.key
cat >/root/roster.toml <<ROSTER
version = 1
[[routes]]
id = "eu"
name = "Europe"
[[servers]]
id = "de-fra-1"
country = "DE"
probe = "127.0.0.1"
sni = "www.example.com"
gossip = "127.0.0.1"
key = "$node_key"
routes = ["eu"]
ROSTER
meshctl roster sign --key /root/operator.key --out /etc/meshnode/roster.signed /root/roster.toml
meshctl token new --role read | tail -n 1 >>/etc/meshnode/api-tokens
chown root:meshnode /etc/meshnode/api-tokens
chmod 0640 /etc/meshnode/api-tokens
sed -i -e 's/^# node_id = .*/node_id = "de-fra-1"/' \
       -e "s/^# operator_key = .*/operator_key = \"$operator_key\"/" $conf
# Every check passes, as the service's user (docs/OPERATING.md, step 7).
out=$(setpriv --reuid meshnode --regid meshnode --init-groups meshnode --check-config $conf 2>&1) ||
  fail "the filled-in config does not pass --check-config: $out"
edited=$(md5sum <$conf)
echo "store" >/var/lib/meshnode/data.mdb   # stands for the node's store
chown meshnode:meshnode /var/lib/meshnode/data.mdb

step "upgrade (the shipped config unchanged)"
dpkg -i meshnode-up2.deb
[ "$(dpkg-query -W -f '${Version}' meshnode)" = "$version+up2" ] || fail "not upgraded"
[ "$(md5sum <$conf)" = "$edited" ] || fail "the upgrade changed the edited config"
[ ! -e $conf.dpkg-dist ] || fail "a .dpkg-dist although the shipped config did not change"
[ -f /var/lib/meshnode/data.mdb ] || fail "the upgrade lost the store"
[ "$(id -u meshnode)" = "$uid" ] || fail "the upgrade changed the user"

step "upgrade (the shipped config changed too; the operator keeps theirs)"
dpkg -i --force-confold meshnode-up3.deb
[ "$(md5sum <$conf)" = "$edited" ] || fail "the upgrade replaced the edited config"
grep -q '^# a line a later release added$' $conf.dpkg-dist || fail "no new config beside it as .dpkg-dist"
rm $conf.dpkg-dist

step "remove"
dpkg -r meshnode
[ "$(dpkg-query -W -f '${db:Status-Abbrev}' meshnode)" = "rc " ] || fail "not in state rc after remove"
for gone in /usr/sbin/meshnode /usr/bin/meshctl /lib/systemd/system/meshnode.service; do
  [ ! -e $gone ] || fail "$gone left after remove"
done
for kept in $conf /etc/meshnode/node.key /var/lib/meshnode/data.mdb; do
  [ -f $kept ] || fail "remove deleted $kept"
done
[ "$(md5sum <$conf)" = "$edited" ] || fail "remove changed the config"

step "purge"
dpkg -P meshnode
! dpkg-query -W meshnode >/dev/null 2>&1 || fail "dpkg still knows meshnode after purge"
[ ! -e /etc/meshnode ] || fail "purge left /etc/meshnode: $(ls -A /etc/meshnode)"
[ ! -e /var/lib/meshnode ] || fail "purge left /var/lib/meshnode"
[ ! -e /etc/systemd/system/multi-user.target.wants/meshnode.service ] || fail "purge left the unit enabled"
getent passwd meshnode >/dev/null || fail "purge deleted the system user (Debian keeps them)"
echo "-- install, upgrades, remove and purge: ok"
