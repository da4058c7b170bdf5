#!/usr/bin/env bash
# Runs an image archive built by -Pimage as a container, without Docker: skopeo unpacks the OCI archive, umoci makes
# an OCI runtime bundle of it (the image's user, entrypoint, environment and working folder), runc runs it with the
# root file system read-only and /tmp a tmpfs, as the pods run (examples/install, the operator's RestrictedPods).
#
#   images/run.sh proxy-image/app/target/thermocline-image.tar [ARGS...]   # ARGS replace the image's arguments
#   images/run.sh operator/target/thermocline-operator-image.tar
#
# Needs root and Debian's skopeo, umoci and runc. The container shares the host's network (to reach servers on
# 127.0.0.1). THERMOCLINE_RUN_TIMEOUT (seconds, default 60) stops it with SIGTERM.
set -euo pipefail
archive="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
for tool in skopeo umoci runc jq; do
  command -v "$tool" >/dev/null || { echo "needs $tool: apt-get install $tool" >&2; exit 2; }
done
work="$(mktemp -d)"
id="thermocline-run-$$"
trap 'runc delete --force "$id" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

skopeo copy --quiet "oci-archive:$archive" "oci:$work/layout:image"
umoci unpack --image "$work/layout:image" "$work/bundle" >/dev/null
config="$work/bundle/config.json"
entrypoint="$(skopeo inspect --config "oci-archive:$archive" | jq -c '.config.Entrypoint // []')"
jq --argjson entrypoint "$entrypoint" --argjson args "$(printf '%s\n' "$@" | jq -R . | jq -s 'map(select(. != ""))')" '
  .process.terminal = false
  | .root.readonly = true
  | .mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]}]
  | .linux.namespaces |= map(select(.type != "network"))
  | if ($args | length) > 0 then .process.args = ($entrypoint + $args) else . end
' "$config" > "$config.new"
mv "$config.new" "$config"
jq -c '{user: .process.user, args: .process.args, cwd: .process.cwd}' "$config" >&2
timeout --signal=TERM "${THERMOCLINE_RUN_TIMEOUT:-60}" runc run --bundle "$work/bundle" "$id"
