"""PennyLane devices ``qhybrid.cpu`` and ``qhybrid.gpu``: thin shells over :mod:`qhybrid.sim`.

Example::

    import pennylane as qml
    dev = qml.device("qhybrid.cpu", wires=4, seed=7, c_dtype="complex64", threads=2)

    @qml.qnode(dev, diff_method="adjoint")
    def f(x):
        qml.RX(x, 0)
        return qml.expval(qml.Z(0))

Options (keyword-only besides ``wires`` / ``shots``): ``c_dtype``
(``np.complex128`` default, ``np.complex64`` or their names), ``seed`` (drives sampling; the
default ``"global"`` draws the seed from numpy's global generator when the device is created, as
lightning.qubit's does; ``None``, an int, a ``numpy.random.Generator`` or a ``torch.Generator``:
:mod:`.seeding`),
``threads`` (torch's and numba's threads while the engine executes, restored after; circuits on
the numpy path run on one thread and leave both unloaded),
``fuse`` and ``fast`` (engine switches, on by default; ``fast=False`` runs the torch
reference kernels instead of the device's kernel set, which ``devices.resolve`` chooses:
numba on ``qhybrid.cpu``, Triton or the torch reference on ``qhybrid.gpu``), ``small_wires``
(``qhybrid.cpu`` runs circuits of at most this many wires with numpy alone, without loading
torch or numba, :mod:`.paths`; default 14, 0: always the engine). Derivatives:
``diff_method="adjoint"`` or ``"device"`` (one forward + one backward sweep,
broadcast batches included), also as vector-Jacobian products
(``device_vjp=True``).

lightning.qubit's options are accepted, so that swapping the device string never
breaks a script: ``batch_obs`` is a no-op (every observable of a tape shares one
forward and one backward sweep already); ``mcmc``, ``kernel_name``, ``num_burnin``
are checked as lightning checks them, and samples are then drawn exactly from the
state's probabilities (the distribution MCMC approximates), so ``mcmc=True`` is a
documented no-op. A tape's conversion is planned once per structure and reused with each
call's parameters (:mod:`.plan`); ``ApproxTimeEvolution`` (QAOA's cost and mixer layers) runs
without PennyLane's decomposition. Capabilities are declared in ``qhybrid.toml`` beside this module
(PennyLane reads it through ``config_filepath``). ``qhybrid.gpu`` raises
:class:`~qhybrid.errors.DeviceError` when CUDA is missing; it never falls
back to the CPU.
Importing this module and creating a device import neither torch nor numba; neither does running
circuits of up to ``small_wires`` wires (the engine loads at the first larger execution,
:mod:`.engine`); under ``qml.capture`` see :mod:`.capture`.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pennylane as qml
from pennylane.devices import Device, ExecutionConfig
from pennylane.devices.modifiers import simulator_tracking, single_tape_support
from pennylane.measurements import ExpectationMP
from pennylane.transforms.core import CompilePipeline

from ..errors import DeviceError
from . import engine
from .observable_params import observable_columns
from ..sim import small
from .paths import SWITCH_WIRES, EnginePath, EngineThreads, NumpyPath, check_small_wires, state_numpy
from .seeding import numpy_rng
from .shots import sampled_results

_DTYPES = ("complex128", "complex64")


def _dtype_name(c_dtype) -> str:
    """``'complex128'`` or ``'complex64'`` for a numpy dtype, its name or a torch dtype."""
    if type(c_dtype).__module__.startswith("torch"):  # a torch.dtype, without importing torch
        name = str(c_dtype).removeprefix("torch.")
    else:
        try:
            name = np.dtype(c_dtype).name
        except TypeError:
            name = str(c_dtype)
    if name not in _DTYPES:
        raise DeviceError(f"c_dtype={c_dtype!r} is not supported; valid: np.complex128, np.complex64, "
                          f"'complex128', 'complex64'")
    return name


MCMC_KERNELS = ("Local", "NonZeroRandom")


def _check_mcmc(mcmc, kernel_name, num_burnin, shots) -> None:
    """lightning.qubit's checks of its MCMC options (they change nothing here: samples are exact)."""
    if not isinstance(num_burnin, (int, np.integer)) or isinstance(num_burnin, bool) or num_burnin < 0:
        raise DeviceError(f"num_burnin={num_burnin!r} must be a non-negative integer")
    if not mcmc:
        return
    if kernel_name not in MCMC_KERNELS:
        raise DeviceError(f"kernel_name={kernel_name!r} is not an MCMC kernel; valid: {', '.join(MCMC_KERNELS)}")
    if num_burnin <= 0:
        raise DeviceError(f"num_burnin={num_burnin} must be positive with mcmc=True")
    fewest = min((s.shots for s in shots.shot_vector), default=None) if shots else None
    if fewest is not None and num_burnin >= fewest:
        raise DeviceError(f"num_burnin={num_burnin} must be less than the number of shots ({fewest})")


def _capabilities(path: Path):
    """PennyLane's ``DeviceCapabilities`` from our TOML file, read with the standard library's
    ``tomllib`` where there is one: PennyLane reads it with tomlkit, ~20 ms a read of a fresh
    process's start (and once more for each subclass naming the file)."""
    from pennylane.devices import capabilities as caps

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        return caps.DeviceCapabilities.from_toml_file(str(path))
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    out = caps.parse_toml_document(document)
    caps.update_device_capabilities(out, document, "pennylane")
    return out


def _kernel_set(name: str, fast: bool):
    """The device's kernel set, chosen once: ``devices.resolve``'s for ``local:qhybrid/<name>``,
    or the torch reference with ``fast=False``."""
    from ..devices import resolve
    from ..sim.kernels import get_kernel_set

    return resolve(f"local:qhybrid/{name}").kernel_set() if fast else get_kernel_set("torch")


@simulator_tracking
@single_tape_support
class QhybridCPU(Device):
    """State-vector simulator on CPU: numpy for small circuits, else torch tensors and numba kernels."""

    name = "qhybrid.cpu"
    _torch_device = "cpu"
    # config_filepath and capabilities: set below the classes (the file is read once, by tomllib)

    def __init__(self, wires=None, shots=None, *, seed="global", c_dtype=np.complex128, threads=None,
                 fuse: bool = True, fast: bool = True, batch_obs: bool = False, mcmc: bool = False,
                 kernel_name: str | None = None, num_burnin: int = 0, small_wires: int | None = None):
        super().__init__(wires=wires, shots=shots)
        self._check_backend()
        _check_mcmc(mcmc, kernel_name, num_burnin, self.shots)
        self.batch_obs, self.mcmc, self.kernel_name, self.num_burnin = bool(batch_obs), bool(mcmc), kernel_name, num_burnin
        self._dtype_name = _dtype_name(c_dtype)
        if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
            raise DeviceError(f"threads={threads!r} must be a positive integer")
        self.threads = threads
        self._rng = numpy_rng(seed)
        self._fuse, self._fast = fuse, fast
        self.small_wires = check_small_wires(small_wires) if self._torch_device == "cpu" and fast else 0
        self._numpy_path, self._engine_path = NumpyPath(self._dtype_name), EnginePath(self)
        self._large_on_engine = False  # set between batches once numpy has run long enough (:mod:`.paths`)
        self._engine_cache = self._plan_cache = None  # made on first execution (they import the engine)
        self._kernels = None  # the device's kernel set, chosen on first execution (it imports numba or torch)
        self._saved = None  # {tape.hash: final state} between an execute and its device VJPs
        self._batch_threads = EngineThreads(None)  # the threads option of the batch running

    def _check_backend(self):
        pass

    @property
    def c_dtype(self):
        return np.complex64 if self._dtype_name == "complex64" else np.complex128

    @property
    def dtype(self):
        """The engine's torch dtype (imports torch)."""
        return engine.torch_dtype(self._dtype_name)

    @property
    def kernels(self):
        """The kernel set this device runs (``devices.resolve``'s; the torch reference with
        ``fast=False``), loaded on first use."""
        if self._kernels is None:
            self._kernels = _kernel_set(self.name, self._fast)
        return self._kernels

    @property
    def _cache(self):
        """The engine's cache of this device (structure-derived tensors, spare buffers)."""
        if self._engine_cache is None:
            engine.notice()
            self._engine_cache = engine.Cache()
        return self._engine_cache

    @property
    def _plans(self):
        """Tape structure -> conversion plan (parameters change, structure does not)."""
        if self._plan_cache is None:
            self._plan_cache = engine.PlanCache()
        return self._plan_cache

    # ---------------------------------------------------------------- config
    def preprocess_transforms(self, execution_config: ExecutionConfig | None = None) -> CompilePipeline:
        if qml.capture.enabled():  # a captured program: lightning.qubit's capture preprocessing
            from .capture import capture_pipeline

            return capture_pipeline(self)
        return engine.device_pipeline(self, execution_config or ExecutionConfig())

    def eval_jaxpr(self, jaxpr, consts, *args, execution_config=None, shots=None) -> list:
        """A captured program's results (:mod:`.capture`: concrete arguments, run as a tape)."""
        from .capture import eval_captured

        return eval_captured(self, jaxpr, consts, args, shots=shots)

    def setup_execution_config(self, config: ExecutionConfig | None = None, circuit=None) -> ExecutionConfig:
        config = config or ExecutionConfig()
        updated = {}
        if config.device_options:
            raise DeviceError(f"{self.name} takes no device options, got {sorted(config.device_options)}; "
                              f"pass c_dtype, seed, threads when creating the device")
        method = config.gradient_method
        if method == "best":
            method = "adjoint"
            updated["gradient_method"] = method
        derivative = method in ("adjoint", "device")
        if config.use_device_gradient is None:
            updated["use_device_gradient"] = derivative
        if config.use_device_jacobian_product is None:
            updated["use_device_jacobian_product"] = False
        elif config.use_device_jacobian_product and not derivative:
            raise DeviceError(f"device_vjp=True on {self.name} needs diff_method='adjoint' or 'device', "
                              f"got {method!r}")
        if config.grad_on_execution is None:
            updated["grad_on_execution"] = derivative
        if config.mcm_config.mcm_method not in (None, "deferred"):
            raise DeviceError(f"mcm_method={config.mcm_config.mcm_method!r} is not supported on {self.name}; "
                              f"valid: 'deferred'")
        updated["mcm_config"] = replace(config.mcm_config, mcm_method="deferred")
        return replace(config, **updated)

    def supports_derivatives(self, execution_config: ExecutionConfig | None = None, circuit=None) -> bool:
        if execution_config is None:
            return True
        if execution_config.gradient_method not in ("adjoint", "device", "best"):
            return False
        if circuit is None:
            return True
        # cheap structural check (this runs on every QNode call); the pipeline validates fully
        if circuit.shots or not all(isinstance(m, ExpectationMP) and m.obs is not None
                                    for m in circuit.measurements):
            return False
        return all(o.obs.pauli_rep is not None or o.obs.has_matrix for o in circuit.measurements)

    def supports_vjp(self, execution_config: ExecutionConfig | None = None, circuit=None) -> bool:
        return self.supports_derivatives(execution_config, circuit)

    # ---------------------------------------------------------------- execution
    def _wire_order(self, tape):
        return self.wires if self.wires is not None else tape.wires

    def _circuit(self, tape):
        """``(plan, engine circuit, batched, engine plan)`` for ``tape``: the plan of its structure
        (made once), filled with its parameters, and the engine's plan of it (kept beside it; None
        on the numpy path);
        ``batched`` when results keep a batch axis (``tape.batch_size`` walks every parameter
        through PennyLane's dispatch, ms per call; a state preparation's batch is only known to
        the tape: the converted state is always 2-d)."""
        plan = self._plans.plan(tape, self._wire_order(tape))
        circ, broadcast = plan.circuit(tape, self._plans.measurements(tape, plan))
        batched = broadcast if circ.initial_state is None else tape.batch_size is not None
        if self._path(circ.n_wires) is self._numpy_path:
            return plan, circ, batched, None
        return plan, circ, batched, plan.engine_plan(circ, broadcast, fuse=self._fuse)

    def _path(self, n: int):
        """How a circuit of ``n`` wires runs: numpy alone up to ``small_wires`` (no torch, no
        numba to load), else the engine; from ``SWITCH_WIRES`` wires, the engine once numpy has
        run long enough (:mod:`.paths`; decided between batches, so that a VJP's saved state
        comes from the path its sweep runs on)."""
        if n > self.small_wires or (n >= SWITCH_WIRES and self._large_on_engine):
            return self._engine_path
        return self._numpy_path

    def _next_batch(self, *, switch: bool = True):
        """Called as each batch starts: the switch of :meth:`_path` (unless ``switch`` is False),
        and the threads option, set when the engine first runs in the batch (:mod:`.paths`)."""
        if switch and not self._large_on_engine and self._numpy_path.engine_due():
            self._large_on_engine = True
        self._batch_threads = EngineThreads(self.threads)
        return self._batch_threads

    def _run(self, tape):
        wire_order = self._wire_order(tape)
        _, circ, batched, engine_plan = self._circuit(tape)
        n = circ.n_wires
        path = self._path(n)
        state = path.final_state(circ, engine_plan)
        if self._saved is not None and not tape.shots:  # the VJP's sweep starts from it
            self._saved[tape.hash] = path.copy(state)  # (the VJP gets equal tapes, not the same objects)
        if tape.shots:
            return sampled_results(self, tape, state, wire_order)
        out = []
        for mp, m in zip(tape.measurements, circ.measurements):
            if m is not None:
                r = path.measure(state, m, n)
            else:
                diag = mp.diagonalizing_gates() if mp.obs is not None else []
                st = state_numpy(self._rotated(state, diag, wire_order))
                r = np.asarray(mp.process_state(st if batched else st[0], wire_order))
                out.append(r)
                continue
            out.append(r if batched else r[0])
        return out[0] if len(out) == 1 else tuple(out)

    def _rotated(self, state, gates, wire_order):
        """``state`` after the diagonalizing ``gates`` (the state itself when there are none). On a
        CPU by numpy on numpy's view of the state, whichever path ran the circuit (a few one-qubit
        gates, one pass each: at 16 wires ~0.3 ms against ~7 ms through the engine's torch steps);
        on a GPU by the engine, on the device."""
        if not gates:
            return state
        wire_map = {w: i for i, w in enumerate(wire_order)}
        n = state.shape[1].bit_length() - 1
        ops = tuple(engine.convert_op(g, wire_map) for g in gates)
        if self._torch_device == "cpu":
            st = state_numpy(state)
            return small.final_state(engine.Circuit(n, ops, (), st), dtype=st.dtype)
        self._batch_threads.engage()
        return engine.final_state(engine.Circuit(n, ops, (), state), dtype=self.dtype, device=self._torch_device,
                                  kernels=self.kernels, fuse=False)

    def execute(self, circuits, execution_config: ExecutionConfig | None = None):
        # device VJPs: keep each tape's final state for the backward sweep (as lightning does)
        vjp = execution_config is not None and execution_config.use_device_jacobian_product
        self._saved = {} if vjp else None
        with self._next_batch():
            return tuple(self._run(t) for t in circuits)

    # ---------------------------------------------------------------- derivatives
    def _jac(self, tape, values=False, saved=None):
        plan, circ, batched, engine_plan = self._circuit(tape)
        state = saved.pop(tape.hash, None) if saved else None
        path = self._path(circ.n_wires)
        if state is not None and isinstance(state, np.ndarray) != (path is self._numpy_path):
            state = None  # saved by the other path (the switch of _path came between)
        vals, jac = path.adjoint(circ, state, engine_plan)
        jac = plan.tape_jacobian(jac)
        extra = observable_columns(self, tape, circ, plan.n_params)
        if extra is not None:
            jac = np.concatenate([jac, extra], axis=1)
        M, T = jac.shape[0], jac.shape[1]

        def entry(a):
            return np.array(a) if batched else np.array(a[0])

        rows = jac if batched else jac[:, :, 0]  # (M, T, B) or (M, T)
        per_m = [np.array(rows[m, 0]) if T == 1 else tuple(map(np.array, rows[m])) for m in range(M)]
        j = per_m[0] if M == 1 else tuple(per_m)
        if not values:
            return j
        v = [entry(vals[m]) for m in range(M)]
        return (v[0] if M == 1 else tuple(v)), j

    def compute_derivatives(self, circuits, execution_config: ExecutionConfig | None = None):
        with self._next_batch():
            return tuple(self._jac(t) for t in circuits)

    def execute_and_compute_derivatives(self, circuits, execution_config: ExecutionConfig | None = None):
        with self._next_batch():
            both = [self._jac(t, values=True) for t in circuits]
        return tuple(b[0] for b in both), tuple(b[1] for b in both)

    def compute_vjp(self, circuits, cotangents, execution_config: ExecutionConfig | None = None):
        """``cotangent . Jacobian`` per tape, from the same adjoint sweep as the derivatives."""
        saved, self._saved = self._saved or {}, None
        with self._next_batch(switch=False):
            return tuple(_vjp(t, dy, self._jac(t, saved=saved)) for t, dy in zip(circuits, cotangents))

    def execute_and_compute_vjp(self, circuits, cotangents, execution_config: ExecutionConfig | None = None):
        with self._next_batch():
            both = [self._jac(t, values=True) for t in circuits]
        return (tuple(v for v, _ in both),
                tuple(_vjp(t, dy, j) for t, dy, (_, j) in zip(circuits, cotangents, both)))


def _vjp(tape, dy, jac):
    """One tape's vector-Jacobian product, shaped as PennyLane's interfaces expect."""
    if len(tape.measurements) == 1:
        return qml.gradients.compute_vjp_single(dy, jac)
    return qml.gradients.compute_vjp_multi(dy, jac)


class QhybridGPU(QhybridCPU):
    """The same engine on a CUDA device (Triton kernels where they run, else the torch reference).
    Raises DeviceError without CUDA."""

    name = "qhybrid.gpu"
    _torch_device = "cuda"

    def _check_backend(self):
        from ..devices import require_cuda

        require_cuda("qhybrid.gpu", "qhybrid.cpu, or install a CUDA build of torch on a machine with a GPU")


QhybridCPU.config_filepath = Path(__file__).parent / "qhybrid.toml"
QhybridCPU.capabilities = _capabilities(QhybridCPU.config_filepath)  # QhybridGPU's too
