"""The connection to Ray: the one place bgfast calls ``ray.init``.

:func:`connect` takes the address of the cluster in one of three forms,

- ``HOST:PORT``: the GCS of a running cluster (``ray start --head`` prints
  it; port 6379 by default), this process joins it as a driver;
- ``ray://HOST:PORT``: the Ray Client server of the head node (port 10001
  by default), for a driver outside the cluster (needs ``ray[client]``);
- ``auto``: the cluster started on this machine with ``ray start``;

or None: the ``RAY_ADDRESS`` environment variable, and without it a
private Ray started on this machine for this process, which is said on
stderr.  A ``HOST:PORT`` is first checked with a TCP connection of
:data:`CONNECT_TIMEOUT` seconds, so that a wrong address or a stopped
cluster fails at once with one line (:class:`ClusterError`) instead of
Ray's endless retries.

Ray prints the errors of the cluster (a task retried, a node dead) as
lines of the driver's stdout; bgfast sends them to stderr, so that
stdout carries the data alone.  The workers' own output is not forwarded
(``log_to_driver=False``): it stays in the nodes' Ray logs.

Every node needs bgfast, the same version as the driver's: :func:`connect`
checks that with one probe task on each node, and refuses a node that
cannot import it with one line that names the node.  bgfast's tasks
return the ID of the node they ran on with their result (:func:`tagged`),
and :class:`NodeTally` says on stderr how many tasks ran on each node.
"""
from __future__ import annotations

import logging
import os
import socket
import sys

from .errors import BgfastError, WorkerError

__all__ = ["connect", "ClusterError", "CONNECT_TIMEOUT", "resolve_address", "ADDRESS_HELP",
           "JOBS_HELP", "cluster_cpus", "tasks_in_flight", "NodeTally", "tagged",
           "task_error"]

#: The help of the commands' ``--jobs``.
JOBS_HELP = ("Worker processes, at most 256 (default: every core); with --backend ray, the "
             "tasks in flight at once (default: twice the cluster's CPUs).")
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
    else:
        if address.startswith("ray://"):
            try:
                import grpc  # noqa: F401  (what ray[client] adds to Ray)
            except ImportError:
                raise ClusterError(f"a ray:// address needs Ray's client: "
                                   f"pip install 'ray[client]' (or 'bgfast[ray]')") from None
            options = dict(logging_level=logging.WARNING, log_to_driver=False)
        _check_reachable(address)
    # Ray puts the driver's current directory on its workers' sys.path: the
    # directory of this process's own bgfast goes there instead, so that the
    # workers never import another bgfast/ that happens to be in the current
    # directory (a checkout, say).
    here = os.getcwd()
    os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        ray.init(address=address, **options)
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
        raise ClusterError(f"cannot connect to Ray at {address}: {_first_line(exc)}") from None
    finally:
        os.chdir(here)
    try:
        _check_nodes(ray)
    except BaseException:
        ray.shutdown()
        raise
    return ray


def _check_nodes(ray) -> None:
    """Every alive node imports bgfast, the version of this process's: one
    probe task pinned to each node; a :class:`ClusterError` naming the
    first node that cannot, and the fix."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from . import __version__

    def probe():            # a local function: sent by value, runs without bgfast
        try:
            import bgfast
        except BaseException as exc:         # noqa: BLE001 (reported to the driver)
            return None, f"{type(exc).__name__}: {exc}"
        return bgfast.__version__, ""

    nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU")]
    remote = ray.remote(num_cpus=0.01, max_retries=0)(probe)
    tasks = [(n, remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
        n["NodeID"], soft=False)).remote()) for n in nodes]
    for node, task in tasks:
        where = f"{node.get('NodeManagerAddress', '?')} (node {node['NodeID'][:8]})"
        try:
            version, error = ray.get(task, timeout=120)
        except ray.exceptions.RayError as exc:
            raise ClusterError(f"the Ray node at {where} cannot run a task: "
                               f"{_first_line(exc)}") from None
        if version is None:
            raise ClusterError(f"the Ray node at {where} cannot import bgfast ({error}); "
                               f"install bgfast {__version__} with its dependencies on every "
                               f"node (pip install 'bgfast[ray]=={__version__}')")
        if version != __version__:
            raise ClusterError(f"the Ray node at {where} has bgfast {version}, this machine "
                               f"{__version__}; install the same version on every node")


class NodeTally:
    """The Ray tasks run on each node: :meth:`take` unwraps the ``(node,
    result)`` of :func:`tagged`; :meth:`report` says on stderr how many
    tasks ran on how many nodes."""

    def __init__(self):
        self.counts: dict[str, int] = {}

    def take(self, tagged_result):
        node, result = tagged_result
        self.counts[node] = self.counts.get(node, 0) + 1
        return result

    def report(self) -> None:
        if self.counts:
            per = ", ".join(f"{node[:8]} {n}" for node, n in sorted(self.counts.items()))
            print(f"bgfast: {sum(self.counts.values())} Ray tasks on {len(self.counts)} "
                  f"node(s) ({per})", file=sys.stderr, flush=True)


def task_error(exc: BaseException) -> ClusterError:
    """One line for a Ray task that failed for good: the error where it was
    raised, and for a missing module the fix."""
    cause = getattr(exc, "cause", None)
    text = f"{type(cause).__name__}: {cause}" if cause is not None else _first_line(exc)
    if isinstance(cause, ImportError) or "No module named" in text:
        from . import __version__

        return ClusterError(f"a Ray task failed on a node: {text}; install bgfast {__version__} "
                            f"with its dependencies on every node")
    return ClusterError(f"a Ray task failed: {text.splitlines()[0] if text else exc}")


def tagged(fn, *args):
    """``(the node's ID, fn(*args))``: the body of bgfast's Ray tasks."""
    import ray

    return ray.get_runtime_context().get_node_id(), fn(*args)


def cluster_cpus(ray) -> int:
    """The CPUs of the connected cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def tasks_in_flight(ray, jobs: int | None) -> int:
    """What ``jobs`` means on Ray: the tasks in flight at once (None: twice
    the cluster's CPUs, so that every CPU has its next task waiting)."""
    return jobs or 2 * cluster_cpus(ray)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
