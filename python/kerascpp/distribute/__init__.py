"""Data-parallel training across processes and machines, as tf.distribute.MultiWorkerMirroredStrategy:

    strategy = keras.distribute.MultiWorkerMirroredStrategy()  # the cluster from TF_CONFIG or the launcher
    with strategy.scope():
        model = keras.models.load_model("model.keras")         # or built here
    model.fit(x, y, batch_size=64 * strategy.num_replicas_in_sync)

Every worker runs the same script on the same data; fit and evaluate split each global batch between the
workers (worker r of N takes rows [n*r/N, n*(r+1)/N)), sum the gradients of their shares on Gloo, and
apply the same update everywhere. Worker 0, the chief, alone runs the callbacks that write files
(ModelCheckpoint, CSVLogger, TensorBoard, BackupAndRestore) and prints the progress bar. Start workers
with `python -m kerascpp.distribute.launch --nproc N script.py`, or set TF_CONFIG as for TensorFlow.
Without either, the strategy is one worker and fit runs as without it.
"""
import contextlib
import json
import os
import threading

from .. import _kerascpp

__all__ = ["MultiWorkerMirroredStrategy", "ClusterResolver", "get_strategy", "has_strategy"]

_scopes = threading.local()


class ClusterResolver:
    """The cluster this worker belongs to (TensorFlow's TFConfigClusterResolver: task_type, task_id)."""

    def __init__(self, spec):
        self._spec = spec
        self.rank, self.world_size, self.master = spec.rank, spec.world_size, spec.master
        self.task_type, self.task_id = "worker", spec.rank
        self._cluster = {"worker": [spec.master] * spec.world_size}
        config = os.environ.get("TF_CONFIG")
        if config:  # TF_CONFIG's own names (ClusterSpec.from_environment has checked it)
            config = json.loads(config)
            self.task_type, self.task_id = config["task"]["type"], int(config["task"]["index"])
            self._cluster = config["cluster"]

    def cluster_spec(self):
        return self._cluster

    def __repr__(self):
        return f"ClusterResolver(task_type={self.task_type!r}, task_id={self.task_id}, world_size={self.world_size})"


class MultiWorkerMirroredStrategy:
    """Synchronous data-parallel training over the workers TF_CONFIG (or the launcher) names. Creating
    it connects to the other workers (they must all create one; it waits for them up to the timeout,
    KERASCPP_DISTRIBUTED_TIMEOUT seconds, 300 by default)."""

    def __init__(self, cluster_resolver=None, communication_options=None):
        """communication_options (TensorFlow's collective implementation and timeout) has no effect:
        Gloo over TCP carries the data, and KERASCPP_DISTRIBUTED_TIMEOUT sets the timeout."""
        if cluster_resolver is not None and not isinstance(cluster_resolver, ClusterResolver):
            raise TypeError("kerascpp reads the cluster from TF_CONFIG or the launcher's environment; "
                            f"received cluster_resolver={type(cluster_resolver).__name__}")
        spec = cluster_resolver._spec if cluster_resolver is not None else _kerascpp.ClusterSpec.from_environment()
        self.cluster_resolver = ClusterResolver(spec)
        self._context = _kerascpp.distributed_connect(spec) if spec.world_size > 1 else None

    @property
    def num_replicas_in_sync(self):
        return self.cluster_resolver.world_size

    @property
    def is_chief(self):
        return self.cluster_resolver.rank == 0

    @contextlib.contextmanager
    def scope(self):
        """Models created or loaded inside train with this strategy."""
        stack = getattr(_scopes, "stack", None)
        if stack is None:
            stack = _scopes.stack = []
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    def barrier(self):
        """Waits until every worker reaches it."""
        if self._context is not None:
            self._context.barrier()

    def __repr__(self):
        return f"MultiWorkerMirroredStrategy(num_replicas_in_sync={self.num_replicas_in_sync})"


def get_strategy():
    """The strategy whose scope is open on this thread, or None."""
    stack = getattr(_scopes, "stack", None)
    return stack[-1] if stack else None


def has_strategy():
    return get_strategy() is not None


def _context_of(model):
    """The DistributedContext fit and evaluate take: the strategy the model was made under, or the one in
    scope now; None for one worker."""
    strategy = getattr(model, "_distribute_strategy", None) or get_strategy()
    return strategy._context if strategy is not None else None
