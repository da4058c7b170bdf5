#!/usr/bin/env bash
# The base of both Thermocline images (data plane and operator), made from Debian's packages alone: a bookworm root
# file system with OpenJDK 17's headless JRE, installed by mmdebstrap at the exact versions of packages.lock, packed
# as a `docker save` tar that Jib reads as its base (<from><image>tar://...). No Docker, no registry.
#
#   images/base/build.sh            # the locked versions -> images/target/thermocline-base.tar
#   images/base/build.sh --relock   # today's versions from the mirror: rewrites packages.lock, then builds
#
# Needs: mmdebstrap (apt-get install mmdebstrap), python3, root (or a user namespace for mmdebstrap's unshare mode).
# The same packages.lock gives the same tar, byte for byte (mmdebstrap honours SOURCE_DATE_EPOCH, the pack is
# deterministic). Debian's mirrors serve only the newest version of each package: when a security update replaces
# a locked version, the build stops naming it; rerun with --relock and commit the new lock (docs/images.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out_dir="${THERMOCLINE_IMAGES_OUT:-$here/../target}"
lock="$here/packages.lock"
suite=bookworm
# what the JRE is; its dependencies come along (recorded in the lock)
roots=(openjdk-17-jre-headless)
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
sources=("deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security_mirror $suite-security main")

command -v mmdebstrap >/dev/null || { echo "needs mmdebstrap: apt-get install mmdebstrap" >&2; exit 2; }
mkdir -p "$out_dir"
out_dir="$(cd "$out_dir" && pwd)"

# Not in the image: documentation, manuals and translations (the copyright files stay).
trim=(--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
      --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias'
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
      # update-alternatives links the manuals of java and bash: their folders must exist, even empty
      --setup-hook='mkdir -p "$1/usr/share/man/man1" "$1/usr/share/man/man7"')

if [ "${1:-}" = "--relock" ]; then
  # Resolve the roots plus Debian's essential set against today's mirror and record every installed package.
  epoch="$(date -u +%s)"
  tmp="$(mktemp)"
  mmdebstrap --quiet --variant=essential --include="$(IFS=,; echo "${roots[*]}")" "${trim[@]}" --format=null \
    --customize-hook="chroot \"\$1\" dpkg-query -W -f='\${Package}=\${Version}\n' > '$tmp'" \
    "$suite" /dev/null "${sources[@]}"
  {
    echo "# Packages of the Thermocline base image (images/base/build.sh), Debian $suite amd64, resolved $(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)"
    echo "# from Debian's essential set plus ${roots[*]}. Regenerate with images/base/build.sh --relock."
    echo "SOURCE_DATE_EPOCH=$epoch"
    LC_ALL=C sort "$tmp"
  } > "$lock"
  rm -f "$tmp"
  echo "wrote $lock ($(grep -c '=' "$lock") lines)"
fi

epoch="$(sed -n 's/^SOURCE_DATE_EPOCH=//p' "$lock")"
mapfile -t pinned < <(grep -v '^#' "$lock" | grep -v '^SOURCE_DATE_EPOCH=')
rootfs="$out_dir/thermocline-base-rootfs.tar"

# Exactly the locked packages (variant custom installs nothing else), then two users, one per image:
# thermocline (65532, the data plane's pods) and operator (185, the operator's pod). The Java trust store is the one
# file that holds the install time (in each entry): its dates are set to SOURCE_DATE_EPOCH.
SOURCE_DATE_EPOCH="$epoch" mmdebstrap --quiet --variant=custom --include="$(IFS=,; echo "${pinned[*]}")" "${trim[@]}" \
  --customize-hook='printf "thermocline:x:65532:65532:Thermocline data plane:/home/thermocline:/usr/sbin/nologin\noperator:x:185:185:Thermocline operator:/home/operator:/usr/sbin/nologin\n" >> "$1/etc/passwd"' \
  --customize-hook='printf "thermocline:x:65532:\noperator:x:185:\n" >> "$1/etc/group"' \
  --customize-hook='printf "thermocline:*:0:0:99999:7:::\noperator:*:0:0:99999:7:::\n" >> "$1/etc/shadow"' \
  --customize-hook='install -d -m 0750 -o 65532 -g 65532 "$1/home/thermocline"; install -d -m 0750 -o 185 -g 185 "$1/home/operator"' \
  --customize-hook="python3 '$here/jks_epoch.py' \"\$1/etc/ssl/certs/java/cacerts\" $epoch" \
  --customize-hook='chroot "$1" dpkg-query -W -f="\${Package}=\${Version}\n" | LC_ALL=C sort > "$1/etc/thermocline-base.packages"' \
  --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"; : > "$1/etc/resolv.conf"; echo localhost > "$1/etc/hostname"' \
  --format=tar "$suite" "$rootfs" "${sources[@]}"

# what was installed is what the lock says, nothing more
if ! diff <(tar -xOf "$rootfs" ./etc/thermocline-base.packages) <(printf '%s\n' "${pinned[@]}" | LC_ALL=C sort) >&2; then
  echo "the installed packages differ from $lock (above): rerun with --relock" >&2; exit 1
fi

python3 "$here/docker_archive.py" --rootfs "$rootfs" --out "$out_dir/thermocline-base.tar" --epoch "$epoch" \
  --name "thermocline-base:$suite" --lock "$lock"
rm -f "$rootfs"
