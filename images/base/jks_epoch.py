#!/usr/bin/env python3
"""Sets every entry date of a JKS keystore to SOURCE_DATE_EPOCH and re-signs it, so that Debian's Java trust store
(/etc/ssl/certs/java/cacerts, written by ca-certificates-java at install time with the current time in each entry)
is the same bytes on every build. Format: sun.security.provider.JavaKeyStore (version 2)."""
import hashlib
import struct
import sys

MAGIC, TRUSTED_CERT, PRIVATE_KEY = 0xFEEDFEED, 2, 1


def main(path, epoch_seconds, password="changeit"):
    data = bytearray(open(path, "rb").read())
    body = data[:-20]
    magic, version, count = struct.unpack_from(">III", body, 0)
    if magic != MAGIC or version != 2:
        sys.exit(f"{path}: not a JKS version 2 keystore")
    pos = 12

    def utf():
        nonlocal pos
        (n,) = struct.unpack_from(">H", body, pos)
        pos += 2 + n

    def cert():
        nonlocal pos
        utf()  # certificate type
        (n,) = struct.unpack_from(">I", body, pos)
        pos += 4 + n

    for _ in range(count):
        (tag,) = struct.unpack_from(">I", body, pos)
        pos += 4
        utf()  # alias
        struct.pack_into(">q", body, pos, epoch_seconds * 1000)
        pos += 8
        if tag == TRUSTED_CERT:
            cert()
        elif tag == PRIVATE_KEY:
            (n,) = struct.unpack_from(">I", body, pos)
            pos += 4 + n
            (chain,) = struct.unpack_from(">I", body, pos)
            pos += 4
            for _ in range(chain):
                cert()
        else:
            sys.exit(f"{path}: unknown entry tag {tag}")
    if pos != len(body):
        sys.exit(f"{path}: {len(body) - pos} bytes after the last entry")
    # the keystore's integrity check: SHA-1 over the password (UTF-16BE), "Mighty Aphrodite" and the body
    digest = hashlib.sha1(password.encode("utf-16-be") + b"Mighty Aphrodite" + bytes(body)).digest()
    open(path, "wb").write(bytes(body) + digest)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
