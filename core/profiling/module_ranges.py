"""NVTX ranges named after a PyTorch program's modules, pushed from outside the program (`profile
--modules`).

Every `nn.Module` call pushes its qualified name (`encoder.layers.3.attn`, relative to the outermost
module called) as an NVTX push/pop range around its forward. Backward runs on autograd's threads,
inside its own push/pop ranges, so a module's backward is a start/end range `<name> [backward]`,
opened when the gradient of its output arrives and closed when the gradient of its input is done
(hooks on those tensors: a module's full backward hooks would wrap its output, and autograd then
refuses the in-place write of a following `ReLU(inplace=True)`). Each `optimizer.step()` closes a
start/end range `step N` and opens the next, so a step's time runs from one step's end to the next's
(data loading and host work included); the first opens at the first module call. ncu records both
kinds of range per launch; core/table/module_tree.py reads them back as a tree.

This file runs inside the profiled program, on the GPU host: standard library only, torch when the
program imports it. `profile --modules` ships its source as that program's `sitecustomize` (see
`sitecustomize_source`); `flopscope.torch.annotate(model)` does the same from inside a program."""

from __future__ import annotations

import atexit
import json
import os
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

BACKWARD = " [backward]"  # suffix of a module's backward start/end range
STEP = "step "  # prefix of a step's start/end range: `step 1`, `step 2`, ...
# a path: write each step's wall time there (the timing run, no ncu)
TIMES_ENV = "FLOPSCOPE_STEP_TIMES"
_NO_TORCH = (
    "flopscope: --modules: the program never imported torch, so no module ranges were recorded"
)


class ModuleRanges:
    """The hooks of one program. Names are qualified within the largest module tree seen calling a
    module."""

    def __init__(self, torch: Any, timed: bool = False) -> None:
        self.torch = torch
        # the timing run: each step's wall time, the GPU synchronised at its ends
        self.timed = timed
        self.names: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.tree_size: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self.calls: dict[int, list[_Call]] = {}  # id(module) -> its calls whose forward runs
        # calls whose backward range is open, in the order opened
        self.backward: dict[_Call, None] = {}
        self.step = 0
        self.step_range: int | None = None
        self.step_started = 0.0
        self.step_times: list[dict[str, float]] = []
        self.handles: list[Any] = []

    # -- the NVTX calls, looked up at each call so a test can stand in for torch.cuda.nvtx
    # ----------------------
    def _nvtx(self) -> Any:
        return self.torch.cuda.nvtx

    def install(self) -> None:
        """Global forward hooks for every module, and the optimizer's step hook."""
        import torch.nn.modules.module as modules  # the public global-hook functions live here
        import torch.optim.optimizer as optimizers

        self.handles += [
            modules.register_module_forward_pre_hook(self._forward_pre),
            modules.register_module_forward_hook(self._forward_post, always_call=True),
            optimizers.register_optimizer_step_post_hook(self._stepped),
        ]

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
        self._close_step(whole=False)

    def name_of(self, module: Any) -> str:
        """Its qualified name: within the largest tree seen (a block called alone first is renamed
        when its model runs); the outermost module of a tree is named after its class."""
        name = self.names.get(module)
        if name is None:
            subs = list(module.named_modules())
            for sub_name, sub in subs:
                if self.tree_size.get(sub, 0) < len(subs):
                    self.names[sub] = sub_name or type(module).__name__
                    self.tree_size[sub] = len(subs)
            name = self.names[module]
        return name

    def _forward_pre(self, module: Any, args: object) -> None:
        if self.step_range is None:
            self._open_step()
        call = _Call(self, self.name_of(module) + BACKWARD)
        self.calls.setdefault(id(module), []).append(call)
        for tensor in _tensors(args):
            if tensor.requires_grad:
                tensor.register_hook(call.end)
        self._nvtx().range_push(self.name_of(module))

    def _forward_post(self, module: Any, args: object, output: object) -> None:
        self._nvtx().range_pop()
        calls = self.calls.get(id(module))
        call = calls.pop() if calls else None
        if call is not None:
            for tensor in _tensors(output):
                if tensor.requires_grad:
                    tensor.register_hook(call.start)

    def _stepped(self, optimizer: object, args: object, kwargs: object) -> None:
        self._close_step(whole=True)
        self._open_step()

    def _open_step(self) -> None:
        self.step += 1
        self.step_started = self._now() if self.timed else 0.0
        self.step_range = self._nvtx().range_start(f"{STEP}{self.step}")

    def _close_step(self, whole: bool) -> None:
        """A step ends at optimizer.step(): so do backward ranges a module never closed (no gradient
        reached its inputs), which would otherwise claim every later launch. `whole`: a whole step,
        whose wall time counts (not the one the program's end cut short)."""
        for call in reversed(list(self.backward)):  # innermost first
            call.end(None)
        if self.step_range is not None:
            self._nvtx().range_end(self.step_range)
            if whole and self.timed:
                self.step_times.append(
                    {"step": self.step, "wall_s": self._now() - self.step_started}
                )
            self.step_range = None

    def _now(self) -> float:
        """Host time after the GPU finished what the step queued (the timing run's wall time per
        step)."""
        if self.torch.cuda.is_available():
            self.torch.cuda.synchronize()
        return time.perf_counter()

    def write_times(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as out:
            json.dump({"steps": self.step_times}, out)


class _Call:
    """One call of a module: its backward range opens at the first gradient of an output (start) and
    closes at the first of an input (end); a call whose inputs need no gradient closes with its
    step."""

    def __init__(self, ranges: ModuleRanges, name: str) -> None:
        self.ranges, self.name = ranges, name
        self.range: int | None = None
        self.done = False

    def start(self, grad: object) -> None:
        if self.range is None and not self.done:
            self.range = self.ranges._nvtx().range_start(self.name)
            self.ranges.backward[self] = None

    def end(self, grad: object) -> None:
        if self.range is not None:
            self.ranges._nvtx().range_end(self.range)
            self.ranges.backward.pop(self, None)
            self.range = None
        self.done = True


def _tensors(value: object) -> Iterator[Any]:
    """The tensors in a module's arguments or output (a tensor, or tuples, lists and dicts of
    them)."""
    if hasattr(value, "requires_grad") and hasattr(value, "register_hook"):
        yield value
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


@contextmanager
def annotate(torch: Any, model: Any = None) -> Iterator[ModuleRanges]:
    """Module ranges for the modules called inside the block (`flopscope.torch.annotate`); MODEL's
    modules are named (and their backward hooked) from the start, which modules built before the
    block need."""
    ranges = ModuleRanges(torch)
    ranges.install()
    if model is not None:
        # its qualified names from the start, whichever of its modules runs first
        ranges.name_of(model)
    try:
        yield ranges
    finally:
        ranges.remove()


def install_when_torch_imported() -> None:
    """The program's own `import torch` installs the hooks (a program that never imports torch pays
    nothing and is told so at exit)."""
    if "torch" in sys.modules:
        _install(sys.modules["torch"])
        return
    sys.meta_path.insert(0, _TorchWatcher(_install))
    atexit.register(lambda: "torch" in sys.modules or print(_NO_TORCH, file=sys.stderr))


def _install(torch: Any) -> None:
    path = os.environ.get(TIMES_ENV)
    ranges = ModuleRanges(torch, timed=bool(path))
    ranges.install()
    atexit.register(ranges.remove)
    if path:
        # atexit runs last in, first out: the times, then remove
        atexit.register(ranges.write_times, path)


class _TorchWatcher:
    """A meta path finder that lets the real one import torch, then calls `then(torch)` once."""

    def __init__(self, then: Callable[[Any], None]) -> None:
        self.then = then

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            load(module)
            self.then(module)

        # this one spec's loader only
        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def chain_sitecustomize(own_dir: str) -> None:
    """Run the `sitecustomize` this one shadows (a site's or a virtual environment's), as Python
    would have."""
    sys.modules.pop("sitecustomize", None)
    rest = [p for p in sys.path if os.path.abspath(p or ".") != os.path.abspath(own_dir)]
    saved, sys.path[:] = sys.path[:], rest
    try:
        import importlib

        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    finally:
        sys.path[:] = saved


_FOOTER = """

chain_sitecustomize(os.path.dirname(os.path.abspath(__file__)))
install_when_torch_imported()
"""


def sitecustomize_source() -> str:
    """This file as a `sitecustomize.py`: a folder holding it, put first on the program's
    PYTHONPATH, installs the hooks in any Python program started there, and then runs the site's own
    sitecustomize."""
    with open(__file__, encoding="utf-8") as source:
        return source.read() + _FOOTER
