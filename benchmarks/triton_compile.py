"""Compile the Triton kernels for a CUDA target ahead of time, on a machine without a GPU.

Triton's front and back ends (TTIR -> TTGIR -> LLVM IR -> PTX -> cubin with the bundled
``ptxas``) need no GPU: this compiles each kernel variant that ``gpu_check.py`` launches, for
compute capability 8.0 (A100) and 9.0 (H100/H200) by default, and prints the compile time, the
shared memory, and the registers, stack frame and local bytes per thread (``cuobjdump`` on the
cubin; a large stack is a tile spilled to local memory) each variant uses. A variant that fails here fails on the GPU too; one that
compiles here may still fail to launch there (registers, occupancy).

    python benchmarks/triton_compile.py                 # every variant, sm_90
    python benchmarks/triton_compile.py --quick --cc 80 # one variant per kernel
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)  # compiled kernels, not interpreted ones
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

FP = {"complex128": "*fp64", "complex64": "*fp32"}
#: the kernels launched with ``ops.Tiles.warps`` (a tile of up to 4096 amplitudes a program)
TILE_KERNELS = {"pass_kernel", "pair_kernel", "gates_kernel", "factor_kernel"}


def variants(dtype: str, quick: bool):
    """``(label, kernel name, signature, constexprs)`` of the variants a GPU run launches."""
    fp = FP[dtype]
    base = {"x_ptr": fp, "N": "i32", "PS": "i32", "pos_ptr": "*i32", "sorted_ptr": "*i32", "mat_ptr": fp,
            "mat_bstride": "i32", "index_ptr": "*i16", "shift": "i32", "lut_ptr": fp, "lut_len": "i32",
            "lut_bstride": "i32", "scal_ptr": "*fp64"}
    passes = [("qaoa low pass (W, phase, W)", dict(G=10, BLOCK_R=4, PRE=1, DIAG=1, POST=1, INIT=False, ZS=2)),
              ("1-qubit layer, 10 gates", dict(G=10, BLOCK_R=4, PRE=2, DIAG=0, POST=0, INIT=False, ZS=2)),
              ("qaoa first layer (init, phase, W)", dict(G=10, BLOCK_R=4, PRE=0, DIAG=1, POST=1, INIT=True, ZS=2)),
              ("direct cost phase", dict(G=0, BLOCK_R=4096, PRE=0, DIAG=2, POST=0, INIT=False, ZS=2)),
              ("single gate", dict(G=1, BLOCK_R=2048, PRE=2, DIAG=0, POST=0, INIT=False, ZS=2))]
    out = [(label, "pass_kernel", base, c) for label, c in passes[: 1 if quick else None]]
    dense = {"x_ptr": fp, "N": "i32", "PS": "i32", "tpos_ptr": "*i32", "sorted_ptr": "*i32", "cmask": "i64",
             "mat_ptr": fp, "mat_bstride": "i32"}
    for k, nf in ((2, 2), (1, 2), (3, 3))[: 1 if quick else None]:
        out.append((f"dense K={k}, {nf - k} controls", "dense_kernel", dense, dict(K=k, NF=nf, BLOCK_R=128, ZS=2)))
    red = {"a_ptr": fp, "b_ptr": fp, "N": "i32", "PS": "i32", "w_ptr": "*fp64", "w_index_ptr": "*i64",
           "w_shift": "i32", "out_ptr": "*fp64", "P": "i32"}
    for w, inner in ((3, False), (1, True), (2, True))[: 1 if quick else None]:
        out.append((f"reduce W={w} inner={inner}", "reduce_kernel", red, dict(W=w, INNER=inner, BLOCK=2048, ZS=2)))
    gates = {"x_ptr": fp, "y_ptr": fp, "N": "i32", "PS": "i32", "pos_ptr": "*i32", "sorted_ptr": "*i32",
             "ctrl_ptr": "*i32", "mat_ptr": fp, "mat_bstride": "i32", "part_ptr": "*fp64", "tiles_n": "i32"}
    for adjoint in (False, True)[: 1 if quick else None]:
        out.append((f"QML gate run, 10 gates, adjoint={adjoint}", "gates_kernel", gates,
                    dict(G=10, BLOCK_R=4, ADJOINT=adjoint, ZS=2)))
    factor = {"x_ptr": fp, "N": "i32", "PS": "i32", "f_ptr": "*fp64", "nw": "i32", "s_ptr": "*fp64",
              "t_ptr": "*fp64", "rows": "i32", "steps": "i32"}
    for product in (False, True)[: 1 if quick else None]:
        out.append((f"QML factor pass, product={product}", "factor_kernel", factor,
                    dict(L=10, BLOCK_R=4, PRODUCT=product, ZS=2)))
    pair = {"x_ptr": fp, "y_ptr": fp, "N": "i32", "PS": "i32", "pos_ptr": "*i32", "sorted_ptr": "*i32",
            "index_ptr": "*i16", "shift": "i32", "lut_ptr": fp, "lut_len": "i32", "scal_ptr": "*fp64",
            "w_ptr": "*fp64", "w_index_ptr": "*i8", "w_shift": "i32", "part_ptr": "*fp64", "tiles_n": "i32"}
    pairs = [("QAOA adjoint high pass (W, <l|Z|p>, D'*, W)", dict(G=10, BLOCK_R=4, PRE=1, DIAG=1, POST=1, Y=1, RED=1,
                                                                  W=2, STORE=True, ZS=2)),
             ("QAOA energy pass (W, <C>, lambda = C psi, W)", dict(G=10, BLOCK_R=4, PRE=1, DIAG=0, POST=1, Y=2, RED=2,
                                                                   W=2, STORE=True, ZS=2)),
             ("QAOA last adjoint pass (read only)", dict(G=10, BLOCK_R=4, PRE=1, DIAG=0, POST=0, Y=1, RED=1, W=1,
                                                        STORE=False, ZS=2)),
             ("QAOA adjoint low pass, direct cost", dict(G=12, BLOCK_R=2, PRE=1, DIAG=2, POST=1, Y=1, RED=1, W=1,
                                                         STORE=True, ZS=2))]
    out += [(label, "pair_kernel", pair, c) for label, c in pairs[: 1 if quick else None]]
    out += _index_variants(fp, quick)
    if not quick:
        diag = {"x_ptr": fp, "N": "i32", "PS": "i32", "pos_ptr": "*i32", "d_ptr": fp, "d_bstride": "i32"}
        out.append(("diagonal K=2", "diag_kernel", diag, dict(K=2, BLOCK=2048, ZS=2)))
        scale = {"a_ptr": fp, "out_ptr": fp, "N": "i32", "PS": "i32", "w_ptr": "*fp64", "w_index_ptr": "*i8",
                 "w_shift": "i32"}
        out.append(("scale W=2", "scale_kernel", scale, dict(W=2, BLOCK=2048, ZS=2)))
    return out


def _index_variants(fp: str, quick: bool):
    """The index-map kernels (:mod:`qhybrid.sim.triton.index_kernels`): CNOT / SWAP, the ladder
    gather, a Pauli word's expectation with bit flips, a sum of words."""
    swap = {"x_ptr": fp, "N": "i32", "PS": "i32", "lo_mask": "i64", "hi_mask": "i64", "p_bits": "i64",
            "q_bits": "i64"}
    gather = {"src_ptr": fp, "out_ptr": fp, "N": "i32", "PS": "i32", "t_ptr": "*i64"}
    reduce = {"a_ptr": fp, "N": "i32", "PS": "i32", "x_bits": "i64", "z_bits": "i64", "out_ptr": "*fp64", "P": "i32"}
    psum = {"a_ptr": fp, "out_ptr": fp, "N": "i32", "PS": "i32", "coef_ptr": fp, "x_ptr": "*i64", "z_ptr": "*i64",
            "terms": "i32"}
    out = [("CNOT / SWAP exchange", "swap_kernel", swap, dict(BLOCK=2048, ZS=2)),
           ("ladder gather, 3 digits", "gather_kernel", gather, dict(DIGITS=3, BLOCK=2048, ZS=2)),
           ("Pauli word expectation, bit flips", "pauli_reduce_kernel", reduce, dict(BLOCK=2048, ZS=2)),
           ("sum of Pauli words into out", "pauli_sum_kernel", psum, dict(BLOCK=2048, ZS=2))]
    return out[:1] if quick else out


def _resources(compiled) -> str:
    """``registers / stack bytes / local bytes`` per thread of a compiled kernel, from ``cuobjdump
    --dump-resource-usage`` on its cubin (Triton's bundled copy), or ``""`` when that is not at hand.
    A large stack frame is a tile kept in local memory (spilled), not in registers."""
    import re
    import subprocess
    import tempfile

    import triton.backends.nvidia as nvidia

    tool = Path(nvidia.__file__).parent / "bin" / "cuobjdump"
    cubin = compiled.asm.get("cubin") if hasattr(compiled, "asm") else None
    if not tool.exists() or not cubin:
        return ""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        text = subprocess.run([str(tool), "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    found = [re.search(rf"{key}:(\d+)", text) for key in ("REG", "STACK", "LOCAL")]
    return " / ".join(m.group(1) if m else "?" for m in found)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", type=int, nargs="+", default=[90], help="compute capabilities (80, 90, ...)")
    parser.add_argument("--dtype", choices=[*FP, "both"], default="complex128")
    parser.add_argument("--quick", action="store_true", help="one variant per kernel")
    parser.add_argument("--only", default="", help="only variants whose kernel name contains this")
    parser.add_argument("--warps", type=int, default=0,
                        help="num_warps of every variant (default: the launchers' own, ops.Tiles.warps for the "
                             "tile kernels, Triton's 4 for the others)")
    args = parser.parse_args(argv)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from qhybrid.sim.triton import index_kernels, kernels, pair_kernels, qml_kernels
    from qhybrid.sim.triton.ops import DEFAULT

    modules = {"gates_kernel": qml_kernels, "factor_kernel": qml_kernels, "pair_kernel": pair_kernels,
               **{k: index_kernels for k in ("swap_kernel", "gather_kernel", "pauli_reduce_kernel",
                                             "pauli_sum_kernel")}}

    failed = False
    print("| cc | dtype | variant | compile s | shared bytes | warps | registers / stack / local bytes | result |\n"
          "|---|---|---|---|---|---|---|---|")
    for cc in args.cc:
        for dtype in (FP if args.dtype == "both" else [args.dtype]):
            for label, name, sig, const in variants(dtype, args.quick):
                if args.only not in name:
                    continue
                signature = {**sig, **{k: "constexpr" for k in const}}
                keys = list(signature)
                src = ASTSource(fn=getattr(modules.get(name, kernels), name), signature=signature,
                                constexprs={(keys.index(k),): v for k, v in const.items()})
                t0 = time.perf_counter()
                try:
                    warps = args.warps or (DEFAULT.warps if name in TILE_KERNELS else 4)
                    c = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": warps})
                    row = (f"{time.perf_counter() - t0:.1f}", c.metadata.shared, c.metadata.num_warps,
                           _resources(c), "ok")
                except Exception as exc:
                    failed = True
                    row = (f"{time.perf_counter() - t0:.1f}", "", "", "", f"{type(exc).__name__}: {str(exc)[:120]}")
                print(f"| {cc} | {dtype} | {label} | " + " | ".join(map(str, row)) + " |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
