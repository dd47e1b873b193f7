"""The QML job's checkpoint values as plain JSON: tensors as exact lists, so resuming never unpickles."""
from __future__ import annotations


def plain(value):
    """A checkpoint value as JSON: tensors as exact lists with shape and dtype, dicts as key/value
    pairs (optimizer state is keyed by integers). ``unplain`` inverts it."""
    import torch

    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        parts = [t.real.reshape(-1).tolist(), t.imag.reshape(-1).tolist()] if t.is_complex() else [t.reshape(-1).tolist()]
        return {"tensor": parts, "shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch.")}
    if isinstance(value, dict):
        return {"pairs": [[plain(k), plain(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"list": [plain(v) for v in value], "tuple": isinstance(value, tuple)}
    return value


def unplain(value):
    """The checkpoint value ``plain`` made."""
    import torch

    if not isinstance(value, dict):
        return value
    if "tensor" in value:
        dtype = getattr(torch, value["dtype"])
        parts = [torch.tensor(p, dtype=torch.float64) for p in value["tensor"]]
        flat = torch.complex(*parts) if len(parts) == 2 else torch.tensor(value["tensor"][0], dtype=dtype)
        return flat.to(dtype).reshape(value["shape"])
    if "pairs" in value:
        return {unplain(k): unplain(v) for k, v in value["pairs"]}
    items = [unplain(v) for v in value["list"]]
    return tuple(items) if value["tuple"] else items
