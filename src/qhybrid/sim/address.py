"""Calling compiled code by address from numba kernels: two intrinsics (numba, CPU).

``pointer(a)`` is the address of an array's first element, typed (``float64*`` for a float64
array); ``call_at(address, p, start, size, h0, hmax)`` calls the C function at ``address`` (an
int64 argument, e.g. :func:`qhybrid.sim.walsh.butterflies`' address) with those arguments. A
kernel that calls a compiled entry this way does not link (and compile) it again, and stays
cacheable: the address is data. Without numba both are None.
"""
from __future__ import annotations

from .jit import HAVE_NUMBA


def _intrinsics():
    """``(pointer, call_at)``, built when numba is installed (see the module's docstring)."""
    from llvmlite import ir
    from numba.core import types
    from numba.extending import intrinsic

    @intrinsic
    def pointer(typingctx, arr):
        sig = types.CPointer(arr.dtype)(arr)

        def codegen(context, builder, signature, args):
            return context.make_array(signature.args[0])(context, builder, args[0]).data

        return sig, codegen

    @intrinsic
    def call_at(typingctx, address, p, start, size, h0, hmax):
        sig = types.void(address, p, start, size, h0, hmax)

        def codegen(context, builder, signature, args):
            fnty = ir.FunctionType(ir.VoidType(), [context.get_value_type(t) for t in signature.args[1:]])
            builder.call(builder.inttoptr(args[0], fnty.as_pointer()), args[1:])
            return context.get_dummy_value()

        return sig, codegen

    return pointer, call_at


pointer, call_at = _intrinsics() if HAVE_NUMBA else (None, None)
