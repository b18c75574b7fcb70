"""Run a command in the network namespace this process is in, with its
loopback interface up: ``unshare -n python tests/loopback_ns.py CMD ...``.

A fresh network namespace has only ``lo``, and it is down.  Ray's servers
listen on every address and Ray rewrites 127.0.0.1 to the machine's
interface address; in a namespace whose only interface is loopback,
nothing they open can be reached from outside it.
"""
import fcntl
import os
import socket
import struct
import sys

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH", b"lo", 0)))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


if __name__ == "__main__":
    loopback_up()
    os.execvp(sys.argv[1], sys.argv[1:])
