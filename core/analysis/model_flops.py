# mypy: allow-subclassing-any
# torch is not followed (pyproject.toml), so the torch classes subclassed here are Any to mypy.
"""Analytic FLOPs of a PyTorch model, per module, forward and backward (`flopscope model`).

Counting is torch's own `torch.utils.flop_counter.FlopCounterMode`: it counts matrix products,
convolutions and attention from tensor shapes (FMA = 2 FLOPs: a multiply-add of an m x k by k x n
product is 2*m*n*k) and counts nothing for elementwise work, normalization, pooling or a linear
layer's bias add. Models run on the meta device (shapes only, no arithmetic) so ResNet-50 at batch
32 takes a fraction of a second; a model that cannot run on meta runs on CPU at batch 1 and its
FLOPs and activation bytes are multiplied by the batch size.

torch is imported inside functions only: `ModelFlops` (the result) is plain data that `reconcile`
and the CLI use without torch, e.g. when reading the JSON of an earlier `flopscope model --json`.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import io
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..common.errors import FlopscopeError

CONVENTION = (
    "FMA = 2 FLOPs (torch.utils.flop_counter): matmul, convolution and attention only; elementwise,"
    " normalization, pooling and bias adds count 0; causal attention counts in full (a causal"
    " kernel skips about half)"
)
INTENSITY = "arithmetic intensity = forward FLOPs / (parameter bytes + activation bytes)"
ACTIVATIONS = (
    "activation bytes = sum of the output tensors of every leaf module in one forward pass"
)
BYTES = (
    "predicted DRAM bytes = parameter bytes + activation bytes per forward pass (each parameter"
    " read once, each leaf's output written once; the input, re-reads and caches are not modelled),"
    " x3 for a training step (backward reads both again and writes a gradient of each)"
)
# Storage bytes per element of floating-point tensors at each --dtype (tf32 is stored as fp32).
DTYPE_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
# --input-dtype names (torch's, and their usual aliases) -> torch dtype name. Integer inputs are
# token ids.
INPUT_DTYPES = {
    "float32": "float32",
    "float": "float32",
    "float16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "float64": "float64",
    "double": "float64",
    "int64": "int64",
    "long": "int64",
    "int32": "int32",
    "int": "int32",
}
# aten operator -> family, for shares such as "convolution 99.4 %".
FAMILIES = {
    "convolution": "convolution",
    "convolution_backward": "convolution",
    "mm": "matmul",
    "addmm": "matmul",
    "bmm": "matmul",
    "baddbmm": "matmul",
    "_scaled_mm": "matmul",
}


def require_torch(command: str = "model") -> Any:
    """torch, or the one-line error the CLI prints (exit 2) when it is not installed."""
    try:
        import torch
    except (ImportError, OSError) as err:  # OSError: a torch whose shared libraries do not load
        raise FlopscopeError(
            f"flopscope {command} needs PyTorch", "pip install 'flopscope[torch]'"
        ) from err
    return torch


@dataclass
class ModuleFlops:
    name: str  # fully-qualified name as in model.named_modules(); "" is the model itself
    type: str
    forward_flop: int
    backward_flop: int | None  # None unless counted with train=True
    params: int  # this module's parameters, its children's included
    activation_bytes: int  # its leaf modules' outputs
    param_bytes: int = 0

    @property
    def intensity(self) -> float:
        moved = self.param_bytes + self.activation_bytes
        return self.forward_flop / moved if moved else math.nan

    @property
    def depth(self) -> int:
        return 0 if not self.name else self.name.count(".") + 1


@dataclass
class ModelFlops:
    model: str
    model_type: str
    input_shape: tuple[int, ...]
    dtype: str
    train: bool
    forward_flop: int
    backward_flop: int | None
    params: int
    param_bytes: int
    activation_bytes: int
    modules: list[ModuleFlops]
    forward_ops: dict[str, int]  # aten operator -> FLOPs
    backward_ops: dict[str, int]
    method: str  # how it was counted: meta device, or CPU at batch 1 scaled
    notes: list[str] = field(default_factory=list)
    # the input tensor's torch dtype (float32, int64, ...); "" in JSON made before it
    input_dtype: str = ""

    @property
    def batch(self) -> int:
        return self.input_shape[0] if self.input_shape else 1

    @property
    def step_flop(self) -> int:
        """FLOPs of what runs: forward, plus backward for a training step."""
        return self.forward_flop + (self.backward_flop or 0)

    @property
    def backward_ratio(self) -> float | None:
        if self.backward_flop is None or not self.forward_flop:
            return None
        return self.backward_flop / self.forward_flop

    @property
    def intensity(self) -> float:
        moved = self.param_bytes + self.activation_bytes
        return self.forward_flop / moved if moved else math.nan

    @property
    def step_bytes(self) -> int:
        """DRAM bytes of what runs, as BYTES models them."""
        return (self.param_bytes + self.activation_bytes) * (3 if self.train else 1)

    def op_share(self) -> dict[str, float]:
        """Share of the step's FLOPs per aten operator (forward + backward when trained), largest
        first."""
        return _shares(_merge(self.forward_ops, self.backward_ops))

    def family_flops(self) -> dict[str, int]:
        """The step's FLOPs per operator family: convolution (forward and backward), matmul,
        attention, other."""
        families: dict[str, int] = {}
        for op, flop in _merge(self.forward_ops, self.backward_ops).items():
            family = FAMILIES.get(op, "attention" if "attention" in op else "other")
            families[family] = families.get(family, 0) + flop
        return families

    def family_share(self) -> dict[str, float]:
        """Share of the step's FLOPs per operator family (`family_flops`), largest first."""
        return _shares(self.family_flops())

    def module(self, name: str) -> ModuleFlops | None:
        return next((m for m in self.modules if m.name == name), None)

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["input_shape"] = list(self.input_shape)
        doc["modules"] = [{**asdict(m), "intensity": _finite(m.intensity)} for m in self.modules]
        doc.update(
            step_flop=self.step_flop,
            step_bytes=self.step_bytes,
            backward_ratio=self.backward_ratio,
            intensity=_finite(self.intensity),
            op_share=self.op_share(),
            family_share=self.family_share(),
            convention=CONVENTION,
            definitions=[INTENSITY, ACTIVATIONS, BYTES],
        )
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ModelFlops:
        fields = {k: doc[k] for k in cls.__dataclass_fields__ if k in doc}
        fields["input_shape"] = tuple(doc["input_shape"])
        fields["modules"] = [
            ModuleFlops(**{k: m[k] for k in ModuleFlops.__dataclass_fields__ if k in m})
            for m in doc["modules"]
        ]
        return cls(**fields)


def _merge(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def _shares(flops: dict[str, int]) -> dict[str, float]:
    total = sum(flops.values())
    if not total:
        return {}
    return {k: v / total for k, v in sorted(flops.items(), key=lambda kv: -kv[1])}


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value


def parse_shape(text: str) -> tuple[int, ...]:
    """'32,3,224,224' (or 32x3x224x224) -> (32, 3, 224, 224)."""
    if not re.fullmatch(r"\d+([,x]\d+)*", text.replace(" ", "")):
        raise FlopscopeError(
            f"--input-shape {text or repr(text)}",
            "not a list of positive integers",
            "e.g. 32,3,224,224",
        )
    shape = tuple(int(p) for p in re.split(r"[,x]", text.replace(" ", "")))
    if any(n <= 0 for n in shape):
        raise FlopscopeError(f"--input-shape {text}", "sizes must be positive", "e.g. 32,3,224,224")
    return shape


def resolve_model(spec: str) -> tuple[Callable[[], Any], tuple[int, ...] | None]:
    """(factory, default input shape) for a built-in name, `module.path:factory` or
    `path/to/file.py:factory`."""
    require_torch()
    from .reference_models import MODELS

    if spec in MODELS:
        factory, shape, _ = MODELS[spec]
        return factory, shape
    if spec.endswith(".json"):
        if Path(spec).is_file():
            raise FlopscopeError(
                f"model {spec}",
                "a model JSON (what `model --json` writes) is read by `reconcile --model`",
                "give `model` a built-in name or module.path:factory",
            )
        raise FlopscopeError(spec, "no such file", "give the JSON `flopscope model --json` wrote")
    if ":" not in spec:
        fix = (
            f"name the factory after a colon: {spec}:NAME"
            if spec.endswith(".py")
            else f"built-ins: {', '.join(MODELS)}"
        )
        raise FlopscopeError(
            f"model {spec}", "neither a built-in model nor module.path:factory", fix
        )
    return _import_factory(spec), None


def _import_factory(spec: str) -> Callable[[], Any]:
    target, _, attr = spec.rpartition(":")
    # a file path, not a module name
    if target.endswith(".py") or "/" in target or os.sep in target:
        obj: Any = _import_file(spec, target)
    else:
        obj = _import_module(spec, target)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise FlopscopeError(
                f"model {spec}",
                f"{target} has no attribute {attr}",
                f"name a function or nn.Module defined in {target}, as {target}:NAME",
            )
        obj = getattr(obj, part)
    # module.path:attr may name a factory or an nn.Module instance (callable too, but not a
    # factory).
    torch = require_torch()
    if isinstance(obj, torch.nn.Module):
        return lambda: obj
    if not callable(obj):
        raise FlopscopeError(
            f"model {spec}",
            f"{attr} is {type(obj).__name__}, not an nn.Module or a function that returns one",
            f"name an nn.Module or a function returning one, as {target}:NAME",
        )
    # a callable: a factory, as far as can be told before calling it
    factory: Callable[[], Any] = obj
    return factory


def _import_module(spec: str, module_name: str) -> Any:
    # The console script does not put the working directory on sys.path; `python -m` does. Users
    # expect both.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        with _user_code(spec, f"importing {module_name}"):
            return importlib.import_module(module_name)
    except FlopscopeError:
        raise
    except Exception as err:  # the user's module may raise anything on import
        raise FlopscopeError(
            f"model {spec}",
            f"cannot import {module_name}: {type(err).__name__}: {err}",
            _import_fix(module_name, err),
        ) from err


def _import_file(spec: str, target: str) -> Any:
    """The module in file TARGET (`.py` may be left out), its folder on sys.path for the files
    beside it."""
    import importlib.util

    path = Path(target if target.endswith(".py") else target + ".py").expanduser()
    if not path.is_file():
        raise FlopscopeError(
            f"model {spec}",
            f"no file {path}",
            "give an existing Python file, as path/to/file.py:NAME, or a module on the path, as"
            " module.path:NAME",
        )
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    # a name of its own: a file called torch.py shadows nothing
    name = f"_flopscope_model_{path.stem}"
    found = importlib.util.spec_from_file_location(name, path)
    assert found is not None and found.loader is not None  # a .py file's: a source file loader
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module  # dataclasses and pickling look classes up by module name
    try:
        with _user_code(spec, f"importing {path}"):
            found.loader.exec_module(module)  # module.__spec__'s
    except FlopscopeError:
        raise
    except Exception as err:  # the user's file may raise anything on import
        missing = getattr(err, "name", None) if isinstance(err, ModuleNotFoundError) else None
        fix = (
            f"{path} needs {missing}: install it in this Python environment"
            if missing
            else f"fix the error {path} raises when run (`python {path}` shows it)"
        )
        raise FlopscopeError(
            f"model {spec}", f"cannot import {path}: {type(err).__name__}: {err}", fix
        ) from err
    return module


def _import_fix(module_name: str, err: Exception) -> str:
    missing = getattr(err, "name", None) if isinstance(err, ModuleNotFoundError) else None
    # the module itself is not on the path
    if missing and module_name.split(".")[0] == missing.split(".")[0]:
        return (
            f"run flopscope from the folder holding {module_name.replace('.', '/')}.py, or add that"
            " folder to PYTHONPATH"
        )
    if missing:  # the module imports something not installed
        return f"{module_name} needs {missing}: install it in this Python environment"
    return (
        f"fix the error {module_name} raises when imported (`python -c 'import {module_name}'`"
        " shows it)"
    )


def count_model(
    spec: str,
    input_shape: tuple[int, ...] | None = None,
    train: bool = False,
    dtype: str | None = None,
    input_requires_grad: bool = False,
    input_dtype: str | None = None,
) -> ModelFlops:
    """Analytic FLOPs of SPEC (built-in, module.path:NAME or path/to/file.py:NAME) on one input of
    INPUT_SHAPE. DTYPE (DTYPE_BYTES): the precision for byte sizes and peaks; default: that of the
    model's parameters."""
    if dtype is not None and dtype not in DTYPE_BYTES:
        raise FlopscopeError(
            f"--dtype {dtype}", "unknown precision", f"use one of {', '.join(DTYPE_BYTES)}"
        )
    factory, default_shape = resolve_model(spec)
    shape = input_shape or default_shape
    if shape is None:
        # the real problem first: a function that returns no nn.Module
        model = _build_to_check(factory, spec)
        raise FlopscopeError(
            f"model {spec}", "needs --input-shape", f"e.g. {_shape_example(model)}"
        )
    return count_factory(
        factory,
        shape,
        train=train,
        dtype=dtype,
        name=spec,
        input_requires_grad=input_requires_grad,
        input_dtype=input_dtype,
    )


def _build_to_check(factory: Callable[[], Any], name: str) -> Any:
    """Build the model on meta only to raise `_build`'s one-line error where it would fail once a
    shape is given (its factory returns no nn.Module, raises or exits); the model, or None where
    only meta fails."""
    try:
        return _build(factory, require_torch(), name, meta=True)
    except FlopscopeError:
        raise
    # a meta-only failure (.item() in the factory): the CPU retry handles it later
    except Exception:
        return None


def _shape_example(model: Any) -> str:
    """An --input-shape that fits the model's first layer: an image batch for a 2-D convolution,
    `32,in_features` for a Linear, token ids for an Embedding (an image shape offered for a Linear
    model would not even run)."""
    torch = require_torch()
    nn = torch.nn
    first = (
        next((m for m in model.modules() if not list(m.children())), None)
        if model is not None
        else None
    )
    if isinstance(first, nn.Linear):
        return f"--input-shape 32,{first.in_features}"
    if isinstance(first, nn.Embedding):
        return "--input-shape 32,128 --input-dtype int64"
    if isinstance(first, nn.Conv1d):
        return f"--input-shape 32,{first.in_channels},1024"
    if isinstance(first, nn.Conv3d):
        return f"--input-shape 8,{first.in_channels},16,112,112"
    channels = first.in_channels if isinstance(first, nn.Conv2d) else 3
    return f"--input-shape 32,{channels},224,224"


def count_factory(
    factory: Callable[[], Any],
    shape: tuple[int, ...],
    train: bool = False,
    dtype: str | None = None,
    name: str = "model",
    input_requires_grad: bool = False,
    input_dtype: str | None = None,
) -> ModelFlops:
    """Count on the meta device; fall back to CPU at batch 1 x batch size when the model cannot run
    on meta. `input_dtype` (INPUT_DTYPES): the input's dtype; default: the model's floating-point
    parameters' dtype."""
    torch = require_torch()
    if input_dtype is not None and input_dtype not in INPUT_DTYPES:
        raise FlopscopeError(
            f"--input-dtype {input_dtype}", "unknown dtype", f"use one of {', '.join(INPUT_DTYPES)}"
        )
    count = _Counting(
        name,
        train,
        dtype,
        input_requires_grad,
        getattr(torch, INPUT_DTYPES[input_dtype]) if input_dtype else None,
    )
    try:
        model = _build(factory, torch, name, meta=True)
        with _user_code(name, "its forward/backward"):
            counted = count(model, shape, torch)
        return ModelFlops(
            model=name,
            input_shape=tuple(shape),
            train=train,
            method="meta device (shapes only, full batch)",
            **counted,
        )
    except FlopscopeError:
        raise
    except Exception as meta_error:
        reason = _one_line(meta_error)
        # a wrong shape or dtype fails on CPU too: say so now, build nothing real
        if not _meta_only(meta_error):
            raise FlopscopeError(
                f"model {name}",
                f"forward/backward failed: {reason}",
                _input_fix(meta_error, count.input_dtype, torch),
            ) from meta_error
    # .item(), an operator without a meta kernel, a tensor made on CPU in forward: retry with real
    # tensors
    model = _build(factory, torch, name, meta=False)
    one = (1, *shape[1:])
    try:
        with _user_code(name, "its forward/backward"):
            counted = count(model, one, torch)
    except FlopscopeError:
        raise
    except Exception as err:
        raise FlopscopeError(
            f"model {name}",
            f"forward/backward failed on the meta device ({reason}) and then on CPU at batch 1"
            f" ({_one_line(err)})",
            _cpu_fix(err, count, torch),
        ) from err
    scaled = _scale(counted, shape[0])
    scaled["notes"].append(
        f"could not run on the meta device ({reason}); counted on CPU at batch 1 and "
        f"multiplied FLOPs and activation bytes by {shape[0]} (assumes both are linear in batch)"
    )
    return ModelFlops(
        model=name,
        input_shape=tuple(shape),
        train=train,
        method=f"CPU at batch 1, x{shape[0]}",
        **scaled,
    )


def _one_line(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}".strip().splitlines()
    return text[0][:200] if text else type(err).__name__


def _meta_only(err: Exception) -> bool:
    """Whether ERR is one that real tensors would not raise: .item() or .tolist() on a meta tensor,
    an operator with no meta kernel (NotImplementedError), a CPU tensor made in forward meeting a
    meta one. Torch names the meta device in each of these; a shape or dtype mismatch names no
    device."""
    return (
        isinstance(err, NotImplementedError)
        or re.search(r"\bmeta\b", str(err), re.IGNORECASE) is not None
    )


def _cpu_fix(err: Exception, count: _Counting, torch: Any) -> str:
    # BatchNorm training on 1 sample
    if count.train and "Expected more than 1 value per channel" in str(err):
        return (
            "the CPU retry runs one sample, which BatchNorm cannot train on: make forward run on"
            " the meta device (no .item() or Python branching on tensor values), or leave out"
            " --train"
        )
    return _input_fix(err, count.input_dtype, torch)


def _build(factory: Callable[[], Any], torch: Any, name: str, meta: bool) -> Any:
    try:
        with (
            _user_code(name, "building it"),
            torch.device("meta") if meta else contextlib.nullcontext(),
        ):
            model = factory()
    except FlopscopeError:
        raise
    except Exception as err:  # the user's factory may raise anything
        if meta and _meta_only(err):  # e.g. it calls .item() on a tensor it made: retried on CPU
            raise
        raise FlopscopeError(f"model {name}", f"building it failed: {_one_line(err)}") from err
    if not isinstance(model, torch.nn.Module):
        attr = name.rpartition(":")[2] or name
        raise FlopscopeError(
            f"model {name}",
            f"{attr}() returned {type(model).__name__}, not a torch.nn.Module",
            "NAME is an nn.Module or a function that returns one (the model)",
        )
    return _on_meta(model, torch) if meta else model


@contextlib.contextmanager
def _user_code(spec: str, doing: str) -> Iterator[None]:
    """Run the user's code (import, factory, forward) on an empty command line, holding back what it
    prints on stderr until it returns: a sys.exit there (a script's argparse or exit at import)
    becomes one error line that quotes its last words, instead of flopscope exiting silently or
    under argparse's usage text."""
    argv, sys.argv = sys.argv, [spec.partition(":")[0]]
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            yield
    except SystemExit as stop:
        last = next(
            (line.strip() for line in reversed(said.getvalue().splitlines()) if line.strip()), ""
        )
        said = io.StringIO()  # quoted below, not printed
        raise FlopscopeError(
            f"model {spec}",
            f"{doing} called sys.exit({stop.code!r})"
            + (f" after printing {last!r}" if last else ""),
            "a model's module must not exit or parse the command line when imported or built: "
            "guard script code with `if __name__ == '__main__':`",
        ) from None
    finally:
        sys.argv = argv
        sys.stderr.write(said.getvalue())


def _on_meta(model: Any, torch: Any) -> Any:
    """MODEL with its tensors on meta. A module built under torch.device("meta") moves in place; one
    with real tensors (an instance given as module.path:obj, or created with device="cpu") is copied
    with meta tensors instead, so that the CPU retry finds it as it was and no weights are
    copied."""
    tensors = [*model.parameters(), *model.buffers()]
    if all(t.device.type == "meta" for t in tensors):
        return model.to("meta")
    memo: dict[int, Any] = {}
    for t in tensors:
        empty = torch.empty_like(t, device="meta")
        memo[id(t)] = (
            torch.nn.Parameter(empty, t.requires_grad)
            if isinstance(t, torch.nn.Parameter)
            else empty
        )
    # deepcopy takes these from the memo; the .to moves what is no parameter or buffer
    return copy.deepcopy(model, memo).to("meta")


def _input_fix(err: Exception, input_dtype: Any, torch: Any) -> str:
    """What to change when the model would not run on the input flopscope made."""
    text = str(err)
    if "indices" in text or "Long, Int" in text or "expected scalar type Long" in text:
        return "the model takes integer ids (an nn.Embedding first?): pass --input-dtype int64"
    # "should be the same": the words of torch's own convolution check, which meta runs for integer
    # inputs
    if input_dtype is not None and ("dtype" in text.lower() or "should be the same" in text):
        if not input_dtype.is_floating_point:
            return (
                "the model takes floating-point input: leave out --input-dtype (it defaults to the"
                " parameters')"
            )
        return (
            "the input must have the parameters' dtype: leave out --input-dtype (it defaults to"
            " theirs)"
        )
    return (
        "check --input-shape (and --input-dtype: int64 for token ids, default the parameters'"
        " dtype) against what the model expects"
    )


@dataclass
class _Counting:
    """One way of counting a model: its name for errors, train or not, and the input's dtype."""

    name: str
    train: bool
    dtype: str | None  # a --dtype, or None for the parameters' own
    input_requires_grad: bool
    input_dtype: Any  # a torch dtype, or None for the parameters' own

    def __call__(self, model: Any, shape: tuple[int, ...], torch: Any) -> dict[str, Any]:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.utils.flop_counter import FlopCounterMode

        model.train(self.train)
        x = self._input(model, shape, torch)
        dtype = self.dtype or _param_precision(model, torch)
        leaves, handles = _activation_hooks(model, DTYPE_BYTES[dtype], torch)
        try:
            # The math attention backend, as on meta: on CPU, scaled_dot_product_attention would
            # otherwise run _scaled_dot_product_flash_attention_for_cpu, which FlopCounterMode has
            # no formula for (counts 0).
            with (
                sdpa_kernel(SDPBackend.MATH),
                _attention_meter(torch) as attention,
                FlopCounterMode(
                    display=False, custom_mapping=_corrected_formulas(torch)
                ) as counter,
                _same_dtype_check(torch),
            ):
                out = model(x)
                # snapshot: what backward adds is the difference
                forward = counter.get_flop_counts()
                if self.train:
                    _backward(out, torch, self.name, model)
                total = counter.get_flop_counts()
        finally:
            for h in handles:
                h.remove()
        counted = _tabulate(model, forward, total if self.train else None, leaves, dtype)
        # the math backend's products are bmm: name attention's share as such (module totals are
        # unchanged)
        _relabel(counted["forward_ops"], "bmm", "scaled_dot_product_attention", attention.forward)
        _relabel(
            counted["backward_ops"],
            "bmm",
            "scaled_dot_product_attention_backward",
            attention.backward,
        )
        counted["input_dtype"] = str(x.dtype).removeprefix("torch.")
        counted["dtype"] = dtype
        if not self.dtype and dtype != "fp32":
            counted["notes"].append(
                f"precision {dtype}, that of the model's {_TORCH_NAMES[dtype]} parameters (--dtype"
                " overrides)"
            )
        return counted

    def _input(self, model: Any, shape: tuple[int, ...], torch: Any) -> Any:
        """Random floats, or token id 0 (valid for any embedding table) for an integer dtype."""
        device = next((p.device for p in model.parameters()), torch.device("meta"))
        dtype = self.input_dtype or next(
            (p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32
        )
        if device.type == "meta":
            x = torch.empty(shape, device=device, dtype=dtype)
        elif dtype.is_floating_point:
            x = torch.empty(shape, device=device, dtype=dtype).normal_()
        else:
            x = torch.zeros(shape, device=device, dtype=dtype)
        if dtype.is_floating_point:  # integer tensors cannot require grad
            x.requires_grad_(self.train and self.input_requires_grad)
        return x


def _attention_meter(torch: Any) -> Any:
    """A TorchFunctionMode adding up the products of each scaled_dot_product_attention call: the
    math backend (meta, and CPU here) computes them as bmm, so FlopCounterMode reports attention as
    matmul. It sees the calls the model's own code makes; calls inside torch's Python functions
    (nn.MultiheadAttention's forward) run with the mode off and stay matmul."""
    from torch.overrides import TorchFunctionMode

    sdpa = torch.nn.functional.scaled_dot_product_attention

    class AttentionMeter(TorchFunctionMode):
        forward = backward = 0

        def __torch_function__(
            self,
            func: Any,
            types: Any,
            args: tuple[Any, ...] = (),
            kwargs: dict[str, Any] | None = None,
        ) -> Any:
            kwargs = kwargs or {}
            if func is sdpa:
                q, k, v = (
                    args[i] if len(args) > i else kwargs[n]
                    for i, n in enumerate(("query", "key", "value"))
                )
                self._add(q, k, v)
            return func(*args, **kwargs)

        def _add(self, q: Any, k: Any, v: Any) -> None:
            # Q K^T and P V over every leading (batch, head) index; causal or not, both products in
            # full
            batch, (sq, d), sk, dv = math.prod(q.shape[:-2]), q.shape[-2:], k.shape[-2], v.shape[-1]
            qk, pv = 2 * batch * sq * sk * d, 2 * batch * sq * sk * dv
            self.forward += qk + pv
            # dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q, as far as needed
            if torch.is_grad_enabled():
                self.backward += pv * (
                    v.requires_grad + (q.requires_grad or k.requires_grad)
                ) + qk * (q.requires_grad + k.requires_grad)

    return AttentionMeter()


# aten operators whose CPU and CUDA kernels refuse operands of different dtypes (an int64 input
# meeting a float32 weight: "mat1 and mat2 must have the same dtype"), which their meta kernels let
# through. `_scaled_mm` is left out: FP8 operands with float32 scales are its normal use.
_SAME_DTYPE_OPS = ("mm", "addmm", "bmm", "baddbmm", "convolution", "convolution_backward")


def _same_dtype_check(torch: Any) -> Any:
    """A TorchDispatchMode raising, as a real device would, where a matrix product or convolution
    meets operands of different dtypes: the meta device checks shapes only, so `model mlp
    --input-dtype int64` counted FLOPs a GPU would refuse to run."""
    from torch.utils._python_dispatch import TorchDispatchMode

    checked = {getattr(torch.ops.aten, op) for op in _SAME_DTYPE_OPS}

    class SameDtype(TorchDispatchMode):
        def __torch_dispatch__(
            self,
            func: Any,
            types: Any,
            args: tuple[Any, ...] = (),
            kwargs: dict[str, Any] | None = None,
        ) -> Any:
            kwargs = kwargs or {}
            if func.overloadpacket in checked:
                dtypes = sorted(
                    {
                        str(t.dtype).removeprefix("torch.")
                        for t in (*args, *kwargs.values())
                        if isinstance(t, torch.Tensor)
                    }
                )
                if len(dtypes) > 1:
                    raise RuntimeError(
                        f"{func.overloadpacket.__name__}: operands must have one dtype, but got "
                        f"{' and '.join(dtypes)} (as CPU and CUDA kernels require)"
                    )
            return func(*args, **kwargs)

    return SameDtype()


def _relabel(ops: dict[str, int], source: str, target: str, flop: int) -> None:
    """Move FLOP (at most what SOURCE has) from operator SOURCE to TARGET in OPS."""
    moved = min(int(flop), ops.get(source, 0))
    if moved:
        ops[source] -= moved
        ops[target] = ops.get(target, 0) + moved
        if not ops[source]:
            del ops[source]


# aten operator -> its formula
def _corrected_formulas(torch: Any) -> dict[Any, Callable[..., int]]:
    """FlopCounterMode formulas that replace torch's own where torch's are wrong
    (custom_mapping)."""
    return {torch.ops.aten.convolution_backward: _conv_backward_flop}


def _conv_backward_flop(
    grad_out_shape: list[int],
    x_shape: list[int],
    w_shape: list[int],
    _bias: Any,
    _stride: Any,
    _padding: Any,
    _dilation: Any,
    transposed: bool,
    _output_padding: Any,
    _groups: int,
    output_mask: list[bool],
    out_shape: Any = None,
    **_kwargs: Any,
) -> int:
    """Convolution backward: grad input and grad weight each cost what the forward convolution
    costs. torch 2.13's formula counts grad weight as a convolution over all Cin input channels,
    `groups` times too much for a grouped convolution (32x for a 32-channel depthwise one); every
    weight element (Cout x Cin/groups x k) sums over N x output positions, which is the forward
    product count, whatever the grouping."""
    from torch.utils.flop_counter import conv_flop_count

    forward: int = conv_flop_count(x_shape, w_shape, grad_out_shape, transposed=transposed)
    return forward * (int(bool(output_mask[0])) + int(bool(output_mask[1])))


# torch dtype name -> the --dtype its parameters default to (tf32 is fp32 storage: only --dtype
# picks it)
_PRECISIONS = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}
_TORCH_NAMES = {v: k for k, v in _PRECISIONS.items()}


def _param_precision(model: Any, torch: Any) -> str:
    """The --dtype of most of MODEL's floating-point parameter elements (fp32 without any)."""
    sizes: dict[str, int] = {}
    for p in model.parameters():
        if p.is_floating_point():
            name = str(p.dtype).removeprefix("torch.")
            sizes[name] = sizes.get(name, 0) + p.numel()
    top = max(sizes, key=sizes.__getitem__) if sizes else "float32"
    return _PRECISIONS.get(top, "fp32")


def _activation_hooks(model: Any, nbytes: int, torch: Any) -> tuple[dict[str, int], list[Any]]:
    """Forward hooks on leaf modules adding their output bytes (every call) to a dict by name."""
    leaves: dict[str, int] = {}
    handles: list[Any] = []  # torch's hook handles

    def hook_for(name: str) -> Callable[[Any, Any, Any], None]:
        def hook(_module: Any, _inputs: Any, output: Any) -> None:
            tensors = [
                t for t in torch.utils._pytree.tree_leaves(output) if isinstance(t, torch.Tensor)
            ]
            leaves[name] = leaves.get(name, 0) + sum(
                t.numel() * (nbytes if t.is_floating_point() else t.element_size()) for t in tensors
            )

        return hook

    for name, module in model.named_modules():
        if not any(True for _ in module.children()):
            handles.append(module.register_forward_hook(hook_for(name)))
    return leaves, handles


def _backward(out: Any, torch: Any, name: str, model: Any) -> None:
    tensors = [
        t
        for t in torch.utils._pytree.tree_leaves(out)
        if isinstance(t, torch.Tensor) and t.requires_grad
    ]
    if not tensors:
        why, fix = _why_no_grad(out, torch, model)
        raise FlopscopeError(f"model {name}", f"--train: no output requires grad: {why}", fix)
    # loss = sum of the outputs (the sum and its backward count 0 FLOPs). Not out.backward(ones):
    # autograd runs no hooks on the tensor backward starts from, so ModuleTracker would attribute no
    # backward to the last modules.
    torch.autograd.backward([t.sum() for t in tensors])


def _why_no_grad(out: Any, torch: Any, model: Any) -> tuple[str, str]:
    """(why, fix) when a training step has nothing to differentiate: no parameters, all of them
    frozen, or an output cut off from them."""
    forward_only = "leave out --train to count the forward pass"
    params = list(model.parameters())
    if not params:
        return "the model has no parameters", forward_only
    if not any(p.requires_grad for p in params):
        return (
            "every parameter is frozen (requires_grad=False)",
            f"{forward_only}, or unfreeze the parameters to be trained in the factory",
        )
    tensors = [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
    if tensors and not any(t.is_floating_point() or t.is_complex() for t in tensors):
        dtypes = ", ".join(sorted({str(t.dtype).removeprefix("torch.") for t in tensors}))
        return (
            f"the output is {dtypes}, which has no gradient (argmax or a comparison in forward?)",
            f"return the floating-point scores, or {forward_only}",
        )
    return (
        (
            "the output does not depend on the trainable parameters through differentiable"
            " operations (torch.no_grad or .detach() in forward?)"
        ),
        forward_only,
    )


def _tabulate(
    model: Any,
    forward: dict[str, dict[Any, int]],
    total: dict[str, dict[Any, int]] | None,
    leaves: dict[str, int],
    dtype: str,
) -> dict[str, Any]:
    root = type(model).__name__
    nbytes = DTYPE_BYTES[dtype]
    modules = []
    for name, module in model.named_modules():
        # torch's ModuleTracker names: root type + dotted path
        key = root if not name else f"{root}.{name}"
        fwd = sum(forward.get(key, {}).values())
        bwd = None if total is None else sum(total.get(key, {}).values()) - fwd
        params = sum(p.numel() for p in module.parameters())
        act = sum(v for leaf, v in leaves.items() if _inside(leaf, name))
        modules.append(
            ModuleFlops(
                name=name,
                type=type(module).__name__,
                forward_flop=int(fwd),
                backward_flop=None if bwd is None else int(bwd),
                params=int(params),
                activation_bytes=int(act),
                param_bytes=int(params * nbytes),
            )
        )
    forward_ops = _ops(forward.get("Global", {}))
    backward_ops = (
        {}
        if total is None
        else {
            k: v - forward_ops.get(k, 0)
            for k, v in _ops(total.get("Global", {})).items()
            if v - forward_ops.get(k, 0)
        }
    )
    params = modules[0].params
    return dict(
        model_type=root,
        forward_flop=sum(forward_ops.values()),
        backward_flop=None if total is None else sum(backward_ops.values()),
        params=params,
        param_bytes=params * nbytes,
        activation_bytes=sum(leaves.values()),
        modules=modules,
        forward_ops=forward_ops,
        backward_ops=backward_ops,
        notes=[],
    )


def _inside(leaf: str, name: str) -> bool:
    return not name or leaf == name or leaf.startswith(name + ".")


def _ops(counts: dict[Any, int]) -> dict[str, int]:
    # Keys are aten overload packets (aten.convolution); keep the operator's name.
    return {str(op).removeprefix("aten."): int(v) for op, v in counts.items() if v}


def _scale(counted: dict[str, Any], batch: int) -> dict[str, Any]:
    out = dict(counted)
    out["forward_flop"] *= batch
    if out["backward_flop"] is not None:
        out["backward_flop"] *= batch
    out["activation_bytes"] *= batch
    out["forward_ops"] = {k: v * batch for k, v in counted["forward_ops"].items()}
    out["backward_ops"] = {k: v * batch for k, v in counted["backward_ops"].items()}
    out["modules"] = [
        ModuleFlops(
            name=m.name,
            type=m.type,
            forward_flop=m.forward_flop * batch,
            backward_flop=None if m.backward_flop is None else m.backward_flop * batch,
            params=m.params,
            activation_bytes=m.activation_bytes * batch,
            param_bytes=m.param_bytes,
        )
        for m in counted["modules"]
    ]
    out["notes"] = list(counted["notes"])
    return out


def load_model_json(path: str | Path) -> ModelFlops:
    """The result of an earlier `flopscope model --json` (lets reconcile run without torch)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        _check_model_doc(doc)
        return ModelFlops.from_json(doc)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise FlopscopeError(
            path,
            f"not the JSON of `flopscope model --json`: {err}",
            "write it again with `flopscope model ... --json > FILE`",
        ) from err


# Numbers a model JSON must hold (None allowed where marked), at the top and in each module.
_NUMBERS = {
    "forward_flop": False,
    "backward_flop": True,
    "params": False,
    "param_bytes": False,
    "activation_bytes": False,
}


def _check_model_doc(doc: Any) -> None:
    """ValueError naming the first field a hand-edited or truncated model JSON gets wrong."""
    if not isinstance(doc, dict):
        raise ValueError(f"a {type(doc).__name__}, not an object")
    _check_numbers(doc, "")
    shape = doc.get("input_shape")
    if (
        not isinstance(shape, list)
        or not shape
        or not all(_is_number(n) and n > 0 and n == int(n) for n in shape)
    ):
        raise ValueError(f"input_shape is {shape!r}, not a list of positive integers")
    if doc.get("dtype") not in DTYPE_BYTES:
        raise ValueError(f"dtype is {doc.get('dtype')!r}, not one of {', '.join(DTYPE_BYTES)}")
    modules = doc.get("modules")
    if not isinstance(modules, list) or not modules:
        raise ValueError("modules is not a list of modules")
    for i, m in enumerate(modules):
        if (
            not isinstance(m, dict)
            or not isinstance(m.get("name"), str)
            or not isinstance(m.get("type"), str)
        ):
            raise ValueError(f"modules[{i}] has no name and type")
        _check_numbers(m, f"modules[{i}] ({m['name'] or 'the model'}): ")
    for key in ("forward_ops", "backward_ops"):
        ops = doc.get(key, {})
        if not isinstance(ops, dict) or not all(_is_number(v) for v in ops.values()):
            raise ValueError(f"{key} is not an object of operator: FLOPs")


def _check_numbers(doc: dict[str, Any], where: str) -> None:
    for key, nullable in _NUMBERS.items():
        if key not in doc:
            raise ValueError(f"{where}no {key}")
        value = doc[key]
        if not (_is_number(value) and value >= 0) and not (nullable and value is None):
            raise ValueError(f"{where}{key} is {value!r}, not a number of 0 or more")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
