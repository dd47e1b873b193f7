"""Ray backend: each instance a placement-group bundle, each rank a ``RankRunner`` actor in it.

The supervisor (the detached process, or the caller in tests) is the Ray
driver for its job. It ships the job's ``source/``, ``input/``,
``checkpoints/`` and ``hyperparameters.json`` to every rank as one tarball in
the object store, polls the actors for output lines (handing them to the
supervisor as the local backend's readers do), copies ``results/`` and
``checkpoints/`` home every few seconds and at the end. No shared filesystem.

``prepare`` places the job (placement group, actors) while it is still QUEUED,
so a sweep larger than the cluster waits unbilled and can be cancelled;
``launch`` starts the ranks. Placement and polling run on background threads
(Ray's driver must not take over the supervisor's signal handlers). A rank
whose actor, worker or node dies ends with code -9 and the reason
``worker died: ...`` (``failure_reason``); a request the cluster can never fit
is refused by ``check_submission`` before anything is written, or, where that
cannot tell (Ray Client), fails the job with ``ClusterError: ...``.
"""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from qhybrid.errors import ClusterError, SpecError
from qhybrid.jobs import store
from qhybrid.jobs import contract
from qhybrid.jobs.backends.base import Backend as BaseBackend
from qhybrid.jobs.backends.ray import cluster as ray_cluster
from qhybrid.jobs.backends.ray import placement as ray_placement
from qhybrid.jobs.backends.ray.transfer import SHIPPED, merge_outputs, remote_argv, remote_cwd, remote_env
from qhybrid.jobs.backends.ray.worker import RankRunner, pack
from qhybrid.jobs.spec import JobSpec

POLL_S = 0.1
SYNC_S = 2.0  # how often checkpoints/results written so far are brought home
CALL_TIMEOUT_S = 60.0
START_TIMEOUT_S = 300.0  # a fresh node may take a while to start its first worker process
DIED_CODE = -9


def placement_for(spec: JobSpec, nodes: list, address: str) -> ray_placement.Placement:
    """Return the placement of ``spec`` on a cluster with ``nodes``. Raises ClusterError."""
    inst = spec.frozen_instance()
    return ray_placement.plan(
        instance_type=spec.instance_type, vcpus=inst.vcpus, gpus=inst.gpus,
        instance_count=spec.instance_count if spec.distribution else 1,
        processes_per_instance=spec.processes_per_instance if spec.distribution else 1,
        needs_gpu=getattr(spec.target(), "needs_gpu", False), nodes=nodes, address=address,
    )


def check_submission(spec: JobSpec) -> str:
    """Find the job's cluster (starting the local one if needed) and refuse a request it can never fit.

    Called before anything is written for the job. Uses the GCS directly (no
    driver connection, ~1 s); skipped for Ray Client (``ray://``) and ``auto``
    addresses, whose fit the supervisor checks when it connects.

    Returns:
        The cluster address.

    Raises:
        SpecError: when ray is not installed.
        ClusterError: when the cluster cannot be reached or can never fit the job.
    """
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise SpecError("backend 'ray' needs the ray package, which is not installed: pip install 'qhybrid[ray]'")
    address = ray_cluster.resolve_address(spec.extra.get("ray_address"))
    nodes = ray_cluster.gcs_nodes(address)
    if nodes is not None:
        placement_for(spec, nodes, address)
    return address


class Backend(BaseBackend):
    """Places a job's ranks as Ray actors; see the module docstring."""

    def __init__(self):
        self._ray = None
        self._connected_here = False
        self._pg = None
        self._actors: dict[int, object] = {}
        self._codes: dict[int, int | None] = {}
        self._outputs: dict[int, bytes] = {}
        self._on_line = None
        self._folder: Path | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._spec: JobSpec | None = None
        self._placement: ray_placement.Placement | None = None
        self._place_error: Exception | None = None
        self._nodes_of: dict[int, dict] = {}
        self._reasons: dict[int, str] = {}
        self.address: str | None = None

    # -- the backend interface ---------------------------------------------------
    def prepare(self, processes, on_line, cancelled=None) -> None:
        """Place the job (placement group and actors) before it starts to count as RUNNING.

        Optional step a supervisor may take while the job is still QUEUED; blocks
        until the cluster has room or ``cancelled()`` turns true. Never raises: a
        failure is reported by ``launch``/``poll`` like any other.
        """
        self._on_line = on_line
        placer = threading.Thread(target=self._place_safely, args=(list(processes),), daemon=True,
                                  name="qhybrid-ray-place")
        placer.start()
        while placer.is_alive():
            placer.join(0.2)
            if cancelled is not None and cancelled():
                self._stop.set()
        placer.join()

    def launch(self, processes, on_line) -> None:
        self._on_line = on_line
        self._codes = {p.rank: None for p in processes}
        self._thread = threading.Thread(target=self._run, args=(list(processes),), daemon=True,
                                        name="qhybrid-ray")
        self._thread.start()

    def failure_reason(self, rank: int) -> str | None:
        """Why ``rank`` failed when the backend, not the script, knows better (e.g. ``worker died: ...``)."""
        return self._reasons.get(rank)

    def poll(self) -> dict[int, int | None]:
        with self._lock:
            return dict(self._codes)

    def groups(self) -> list[list]:
        return []  # actors die with this driver; nothing on this machine to record

    def drain(self, timeout: float = 5.0) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def kill(self, grace: float = 3.0) -> None:
        """Stop every rank (SIGTERM, then SIGKILL), keep their outputs, then end the actors."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(CALL_TIMEOUT_S)
        ray = self._ray
        if ray is None or not self._actors:
            self._release()
            return
        live = {r: a for r, a in self._actors.items() if self._codes.get(r) != DIED_CODE}
        refs = {r: a.kill.remote(grace) for r, a in live.items()}
        ray.wait(list(refs.values()), num_returns=len(refs), timeout=grace + 10.0)
        self._drain_lines(live)
        self._collect(live, timeout=10.0)  # a cancel should answer within seconds
        self._release()

    def finish(self) -> None:
        """Bring results/ and checkpoints/ home; release the actors and placement group."""
        try:
            if self._ray is not None and self._actors and not self._outputs:
                live = {r: a for r, a in self._actors.items() if self._codes.get(r) != DIED_CODE}
                self._collect(live, strict=all(c == 0 for c in self._codes.values()))
            if self._outputs and self._folder is not None:
                merge_outputs(self._outputs, self._folder)
        finally:
            self._release()
            if self._connected_here and self._ray is not None:
                self._ray.shutdown()
                self._connected_here = False

    # -- placement and output ----------------------------------------------------
    def _say(self, rank: int, text: str) -> None:
        self._on_line(rank, f"qhybrid: {text}")

    def _set_code(self, rank: int, code: int) -> None:
        with self._lock:
            if self._codes.get(rank) is None:
                self._codes[rank] = code

    def _report(self, rank: int, err: Exception) -> None:
        from ray.exceptions import RayActorError

        if isinstance(err, ClusterError):
            self._reasons.setdefault(rank, f"ClusterError: {err}")
            self._say(rank, f"ClusterError: {err}")
            self._set_code(rank, 1)
        elif isinstance(err, RayActorError):
            self._fail_died(rank, err)
        else:
            first = (str(err).strip().splitlines() or [""])[0][:300]
            self._reasons.setdefault(rank, f"Ray backend error: {type(err).__name__}: {first}")
            self._say(rank, self._reasons[rank])
            self._set_code(rank, 1)

    def _place_safely(self, processes) -> None:
        try:
            self._place(processes)
        except Exception as err:  # noqa: BLE001 - reported by launch
            self._place_error = err

    def _run(self, processes) -> None:
        try:
            if self._stop.is_set():  # stopped while placing: the supervisor's kill() follows
                return
            if self._place_error is not None:
                raise self._place_error
            if self._placement is None:
                self._place(processes)
            if not self._stop.is_set():
                self._start_ranks(processes)
                self._pump()
        except Exception as err:  # noqa: BLE001 - reported as the job's failure
            self._report(processes[0].rank, err)

    def _place(self, processes) -> None:
        """Connect, size the bundles, wait for the placement group, create one actor per rank."""
        first = processes[0]
        name = first.env[contract.JOB_NAME_ENV]
        self._folder = store.job_dir(name)
        spec = self._spec = store.load_spec(name)
        self.address = ray_cluster.resolve_address(spec.extra.get("ray_address"))
        self._connected_here = not _ray_initialized()
        ray = self._ray = ray_cluster.connect(self.address)
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        nodes = [{"CPU": n["Resources"].get("CPU", 0.0), "GPU": n["Resources"].get("GPU", 0.0)}
                 for n in ray.nodes() if n.get("Alive")]
        ppi = spec.processes_per_instance if spec.distribution else 1
        place = placement_for(spec, nodes, self.address)
        self._pg = placement_group(place.bundles, strategy="PACK", name=f"qhybrid-{name}")
        waited = False
        t0 = time.monotonic()
        while not self._stop.is_set():
            ready, _ = ray.wait([self._pg.ready()], timeout=1.0)
            if ready:
                break
            if not waited and time.monotonic() - t0 > 2.0:
                waited = True
                self._say(first.rank, f"waiting for {len(place.bundles)} x {place.bundles[0]} on the Ray cluster")
        if self._stop.is_set():
            return
        runner = ray.remote(RankRunner)
        for p in processes:
            self._actors[p.rank] = runner.options(
                num_cpus=place.cpus_per_rank, num_gpus=place.gpus_per_rank, max_restarts=0,
                name=f"qhybrid-{name}-rank{p.rank}",
                scheduling_strategy=PlacementGroupSchedulingStrategy(
                    placement_group=self._pg,
                    placement_group_bundle_index=place.bundle_of(p.rank, ppi)),
            ).remote()
        self._nodes_of = dict(zip(self._actors, ray.get([a.node.remote() for a in self._actors.values()],
                                                         timeout=START_TIMEOUT_S)))
        self._placement = place

    def _start_ranks(self, processes) -> None:
        """Ship the job to every rank's actor and start its process there."""
        ray, spec, folder, place, nodes_of = self._ray, self._spec, self._folder, self._placement, self._nodes_of
        ppi = spec.processes_per_instance if spec.distribution else 1
        bundle_ref = ray.put(pack(folder, SHIPPED))
        root = nodes_of[min(nodes_of)]
        threads = str(place.threads)
        rendezvous = {}
        if spec.distribution:
            rendezvous = {"MASTER_ADDR": root["ip"], "MASTER_PORT": str(root["port"])}
            try:  # the store on rank 0's node, bound to the interface Ray chose there only
                port = ray.get(self._actors[min(nodes_of)].host_store.remote(root["ip"]), timeout=CALL_TIMEOUT_S)
                rendezvous.update(MASTER_PORT=str(port), TORCHELASTIC_USE_AGENT_STORE="True",
                                  TORCHELASTIC_RESTART_COUNT="0")
            except Exception:  # noqa: BLE001 - no torch on the node: rank 0 hosts it, as torch does
                pass
        starts = []
        for p in processes:
            env = remote_env(p.env, folder)
            env.update({"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, contract.TORCH_THREADS_ENV: threads})
            env.update(rendezvous)
            same_instance = [r for r in sorted(nodes_of) if place.bundle_of(r, ppi) == place.bundle_of(p.rank, ppi)]
            visible = [g for r in same_instance for g in nodes_of[r]["gpu_ids"]]
            env["CUDA_VISIBLE_DEVICES"] = ",".join(dict.fromkeys(visible))
            starts.append(self._actors[p.rank].start.remote(
                bundle_ref, env=env, argv=remote_argv(p.argv, folder), cwd=remote_cwd(p.cwd, folder)))
        ray.get(starts, timeout=START_TIMEOUT_S)
        where = ", ".join(f"rank {r} on {nodes_of[r]['ip']}" for r in sorted(nodes_of))
        self._say(processes[0].rank, f"placed on the Ray cluster at {self.address}: {where}")

    def _pump(self) -> None:
        """Deliver output lines and exit codes until every rank ended or kill() was called.

        Every SYNC_S seconds the files the ranks wrote to results/ and checkpoints/
        since the last look are copied into the job folder, as a local job's would be.
        """
        last_sync = time.monotonic()
        while not self._stop.is_set():
            live = {r: a for r, a in self._actors.items() if self._codes.get(r) is None}
            if not live:
                return
            self._poll_once(live)
            if time.monotonic() - last_sync > SYNC_S:
                self._sync(live)
                last_sync = time.monotonic()
            time.sleep(POLL_S)

    def _sync(self, actors: dict) -> None:
        from ray.exceptions import RayError

        refs = {r: a.new_outputs.remote() for r, a in actors.items()}
        blobs = {}
        for rank, ref in refs.items():
            try:
                blob = self._ray.get(ref, timeout=CALL_TIMEOUT_S)
            except RayError:
                continue  # a dead rank is reported by the next poll
            if blob:
                blobs[rank] = blob
        if blobs:
            merge_outputs(blobs, self._folder)

    def _poll_once(self, live: dict) -> None:
        import ray.exceptions as rex

        transient = (rex.GetTimeoutError, getattr(rex, "ActorUnavailableError", rex.GetTimeoutError))
        refs = {r: a.poll.remote() for r, a in live.items()}
        for rank, ref in refs.items():
            try:
                lines, code = self._ray.get(ref, timeout=CALL_TIMEOUT_S)
            except transient:
                continue  # transient: a busy worker or a node reconnecting; a dead one says so
            except rex.RayError as err:  # the actor, its worker process or its node died
                self._fail_died(rank, err)
                continue
            for _stream, line in lines:
                self._on_line(rank, line)
            if code is not None:
                self._set_code(rank, code)

    def _drain_lines(self, actors: dict) -> None:
        from ray.exceptions import RayError

        for rank, actor in actors.items():
            try:
                lines, _ = self._ray.get(actor.poll.remote(), timeout=10.0)
            except RayError:
                continue
            for _stream, line in lines:
                self._on_line(rank, line)

    def _fail_died(self, rank: int, err: Exception) -> None:
        self._reasons.setdefault(rank, f"worker died: {died_summary(err)}")
        self._say(rank, self._reasons[rank])
        self._set_code(rank, DIED_CODE)

    def _collect(self, actors: dict, strict: bool = False, timeout: float = CALL_TIMEOUT_S) -> None:
        from ray.exceptions import RayError

        refs = {r: a.outputs.remote() for r, a in actors.items()}
        for rank, ref in refs.items():
            try:
                self._outputs[rank] = self._ray.get(ref, timeout=timeout)
            except RayError as err:
                if strict:
                    raise ClusterError(f"could not fetch the outputs of rank {rank}: {err}") from None

    def _release(self) -> None:
        ray, actors, self._actors = self._ray, self._actors, {}
        if ray is None:
            return
        if actors:  # remove the workspaces, then end the actors
            refs = [a.cleanup.remote() for a in actors.values()]
            ray.wait(refs, num_returns=len(refs), timeout=10.0)
        for actor in actors.values():
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        if self._pg is not None:
            from ray.util.placement_group import remove_placement_group

            try:
                remove_placement_group(self._pg)
            except Exception:  # noqa: BLE001
                pass
            self._pg = None


def died_summary(err: Exception) -> str:
    """One line from a RayActorError: where the actor ran and why Ray says it died."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    fields = dict(line.split(": ", 1) for line in lines if ": " in line and line.split(": ", 1)[0] in ("pid", "ip"))
    why = next((line for line in lines if "dead because" in line), lines[0] if lines else type(err).__name__)
    why = why.split(" Some common causes")[0].replace("The actor is dead because ", "")
    where = f" (actor pid {fields['pid']} on {fields['ip']})" if {"pid", "ip"} <= fields.keys() else ""
    return (why[:300] + where).strip()


def _ray_initialized() -> bool:
    if "ray" not in sys.modules:
        return False
    return sys.modules["ray"].is_initialized()
