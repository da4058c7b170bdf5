#!/usr/bin/env python3
"""Packs a root file system tar as a one-layer image in `docker save` form (manifest.json, a config, the layer),
which Jib reads as a base image (tar://). Deterministic: fixed times, owners and order, so the same rootfs gives
the same bytes. Standard library only."""
import argparse
import hashlib
import io
import json
import tarfile
import time


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rootfs", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--epoch", required=True, type=int)
    p.add_argument("--name", required=True)
    p.add_argument("--lock", required=True)
    a = p.parse_args()

    diff_id = sha256_file(a.rootfs)
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(a.epoch))
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": {
            "Env": [
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64",
                "LANG=C.UTF-8",
            ],
            "Labels": {
                # which packages went in: the lock's digest (the list itself is /etc/thermocline-base.packages)
                "io.thermocline.base.packages-lock-sha256": sha256_file(a.lock),
                "org.opencontainers.image.description": "Debian bookworm + OpenJDK 17 JRE from Debian's packages (images/base/build.sh)",
            },
        },
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff_id]},
        "history": [{"created": created, "created_by": "images/base/build.sh (mmdebstrap, images/base/packages.lock)"}],
    }
    config_bytes = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    layer_name = diff_id + "/layer.tar"
    manifest = [{"Config": config_name, "RepoTags": [a.name], "Layers": [layer_name]}]
    manifest_bytes = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()

    def info(name, size, kind=tarfile.REGTYPE):
        ti = tarfile.TarInfo(name)
        ti.size, ti.type, ti.mtime, ti.uid, ti.gid, ti.uname, ti.gname = size, kind, a.epoch, 0, 0, "", ""
        ti.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
        return ti

    with tarfile.open(a.out, "w", format=tarfile.PAX_FORMAT) as out:
        out.addfile(info(diff_id, 0, tarfile.DIRTYPE))
        with open(a.rootfs, "rb") as layer:
            out.addfile(info(layer_name, _size(a.rootfs)), layer)
        out.addfile(info(config_name, len(config_bytes)), io.BytesIO(config_bytes))
        out.addfile(info("manifest.json", len(manifest_bytes)), io.BytesIO(manifest_bytes))
    print(f"base image {a.name}: {a.out} (layer sha256:{diff_id}, config sha256:{config_name[:-5]})")


def _size(path):
    with open(path, "rb") as f:
        return f.seek(0, 2)


if __name__ == "__main__":
    main()
