"""The connection to Ray: the one place bgfast calls ``ray.init``.

:func:`connect` takes the address of the cluster in one of three forms,

- ``HOST:PORT``: the GCS of a running cluster (``ray start --head`` prints
  it; port 6379 by default), this process joins it as a driver;
- ``ray://HOST:PORT``: the Ray Client server of the head node (port 10001
  by default), for a driver outside the cluster (needs ``ray[client]``);
- ``auto``: the cluster started on this machine with ``ray start``;

or None: the ``RAY_ADDRESS`` environment variable, and without it a
private Ray started on this machine (bound to 127.0.0.1), which is said on
stderr.  A ``HOST:PORT`` is first checked with a TCP connection of
:data:`CONNECT_TIMEOUT` seconds, so that a wrong address or a stopped
cluster fails at once with one line (:class:`ClusterError`) instead of
Ray's endless retries.

Ray prints the errors of the cluster (a task retried, a node dead) as
lines of the driver's stdout; bgfast sends them to stderr, so that
stdout carries the data alone.  The workers' own output is not forwarded
(``log_to_driver=False``): it stays in the nodes' Ray logs.
"""
from __future__ import annotations

import logging
import os
import socket
import sys

from ._workers import WorkerError
from .errors import BgfastError

__all__ = ["connect", "ClusterError", "CONNECT_TIMEOUT", "resolve_address", "ADDRESS_HELP"]

#: The help of the commands' ``--address``.
ADDRESS_HELP = ("With --backend ray: the cluster, HOST:PORT (the head's GCS), ray://HOST:PORT "
                "(Ray Client) or auto (a cluster started on this machine); default: "
                "$RAY_ADDRESS, else a private Ray on this machine.")

#: Seconds to wait for the TCP connection to a cluster's address.
CONNECT_TIMEOUT = 5.0


class ClusterError(WorkerError):
    """The Ray cluster cannot be reached or cannot run bgfast's tasks."""


def resolve_address(address: str | None) -> str | None:
    """The address to connect to: ``address``, else ``RAY_ADDRESS``, else
    None (a private local Ray)."""
    address = (address or os.environ.get("RAY_ADDRESS") or "").strip()
    return None if address in ("", "local") else address


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``HOST:PORT`` or ``ray://HOST:PORT`` address
    (None for ``auto``); a :class:`BgfastError` for another form."""
    if address == "auto":
        return None
    rest = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise BgfastError(f"bad Ray address {address!r}: give HOST:PORT, ray://HOST:PORT or auto")
    return host, int(port)


def _check_reachable(address: str) -> None:
    hp = _host_port(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise ClusterError(f"cannot reach Ray at {address} ({reason})") from None


def _errors_to_stderr() -> None:
    """Ray's driver prints the cluster's error messages (``(raylet) Task
    ... failed``, a node dead) to stdout: print them to stderr instead."""
    worker = sys.modules.get("ray._private.worker")
    show = getattr(worker, "print_to_stdstream", None)
    if show is None or getattr(show, "bgfast_stderr", False):
        return

    def to_stderr(data, *args, **kwargs):
        return show(dict(data, is_err=True), *args, **kwargs)

    to_stderr.bgfast_stderr = True
    worker.print_to_stdstream = to_stderr


def connect(address: str | None = None):
    """The ``ray`` module, connected to the cluster at ``address`` (see the
    module; an initialised Ray is used as it is)."""
    try:
        import ray
    except ImportError:
        raise BgfastError("the ray backend needs Ray: pip install 'bgfast[ray]'") from None
    _errors_to_stderr()
    if ray.is_initialized():
        return ray
    address = resolve_address(address)
    options = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    if address is None:
        print("bgfast: no Ray address (--address or RAY_ADDRESS): starting a private Ray "
              "on this machine", file=sys.stderr, flush=True)
        options["_node_ip_address"] = "127.0.0.1"
    else:
        if address.startswith("ray://"):
            try:
                import grpc  # noqa: F401  (what ray[client] adds to Ray)
            except ImportError:
                raise ClusterError(f"a ray:// address needs Ray's client: "
                                   f"pip install 'ray[client]' (or 'bgfast[ray]')") from None
            options = dict(logging_level=logging.WARNING, log_to_driver=False)
        _check_reachable(address)
    try:
        ray.init(address=address, **options)
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
        raise ClusterError(f"cannot connect to Ray at {address}: {_first_line(exc)}") from None
    return ray


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
