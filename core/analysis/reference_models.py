# mypy: allow-subclassing-any
# torch is not followed (pyproject.toml), so the torch classes subclassed here are Any to mypy.
"""Reference models in plain PyTorch (torchvision is not a dependency), for `flopscope model NAME`.

VGG and ResNet follow torchvision's definitions layer for layer and use its module names, so
parameter counts match torchvision's published `num_params` and NVTX ranges named after torchvision
modules line up. GoogLeNet follows the paper (Szegedy et al. 2014, Table 1: true 5x5 branches, LRN,
no batch norm, no auxiliary heads), not torchvision's variant (3x3 in the "5x5" branch, batch norm).
Importing this module needs torch."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Literal

import torch
from torch import nn

# VGG configurations D (16 layers) and E (19 layers) from Simonyan & Zisserman 2014; "M" is a 2x2
# max pool.
# fmt: off
_VGG: dict[str, list[int | Literal["M"]]] = {
    "vgg16": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M",
              512, 512, 512, "M", 512, 512, 512, "M"],
    "vgg19": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M",
              512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}
# fmt: on


class VGG(nn.Module):
    def __init__(self, config: list[int | Literal["M"]], num_classes: int = 1000) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        channels = 3
        for item in config:
            if item == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            else:
                layers += [
                    nn.Conv2d(channels, item, kernel_size=3, padding=1),
                    nn.ReLU(inplace=True),
                ]
                channels = item
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(True),
            nn.Dropout(),
            nn.Linear(4096, 4096),
            nn.ReLU(True),
            nn.Dropout(),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


def _conv3x3(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False)


def _conv1x1(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(
        self, cin: int, planes: int, stride: int = 1, downsample: nn.Module | None = None
    ) -> None:
        super().__init__()
        self.conv1 = _conv3x3(cin, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = _conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    """ResNet v1.5 (torchvision): the stride sits on the 3x3 conv, not the first 1x1."""

    expansion = 4

    def __init__(
        self, cin: int, planes: int, stride: int = 1, downsample: nn.Module | None = None
    ) -> None:
        super().__init__()
        self.conv1 = _conv1x1(cin, planes)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = _conv3x3(planes, planes, stride)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = _conv1x1(planes, planes * 4)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    def __init__(
        self, block: type[BasicBlock | Bottleneck], layers: list[int], num_classes: int = 1000
    ) -> None:
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._layer(block, 64, layers[0])
        self.layer2 = self._layer(block, 128, layers[1], stride=2)
        self.layer3 = self._layer(block, 256, layers[2], stride=2)
        self.layer4 = self._layer(block, 512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _layer(
        self, block: type[BasicBlock | Bottleneck], planes: int, blocks: int, stride: int = 1
    ) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                _conv1x1(self.inplanes, planes * block.expansion, stride),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class ConvReLU(nn.Sequential):
    def __init__(self, cin: int, cout: int, kernel: int, stride: int = 1) -> None:
        super().__init__(
            nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2), nn.ReLU(inplace=True)
        )


class Inception(nn.Module):
    """Paper Inception module: 1x1 | 1x1 -> 3x3 | 1x1 -> 5x5 | 3x3 max pool -> 1x1, concatenated."""

    def __init__(self, cin: int, c1: int, c3r: int, c3: int, c5r: int, c5: int, pool: int) -> None:
        super().__init__()
        self.branch1 = ConvReLU(cin, c1, 1)
        self.branch2 = nn.Sequential(ConvReLU(cin, c3r, 1), ConvReLU(c3r, c3, 3))
        self.branch3 = nn.Sequential(ConvReLU(cin, c5r, 1), ConvReLU(c5r, c5, 5))
        self.branch4 = nn.Sequential(
            nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True), ConvReLU(cin, pool, 1)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)], 1)


class GoogLeNet(nn.Module):
    """GoogLeNet as in the paper's Table 1 (inference graph: the auxiliary classifiers are
    dropped)."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = ConvReLU(3, 64, 7, stride=2)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.lrn1 = nn.LocalResponseNorm(5)
        self.conv2 = ConvReLU(64, 64, 1)
        self.conv3 = ConvReLU(64, 192, 3)
        self.lrn2 = nn.LocalResponseNorm(5)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception3a = Inception(192, 64, 96, 128, 16, 32, 32)
        self.inception3b = Inception(256, 128, 128, 192, 32, 96, 64)
        self.maxpool3 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception4a = Inception(480, 192, 96, 208, 16, 48, 64)
        self.inception4b = Inception(512, 160, 112, 224, 24, 64, 64)
        self.inception4c = Inception(512, 128, 128, 256, 24, 64, 64)
        self.inception4d = Inception(512, 112, 144, 288, 32, 64, 64)
        self.inception4e = Inception(528, 256, 160, 320, 32, 128, 128)
        self.maxpool4 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception5a = Inception(832, 256, 160, 320, 32, 128, 128)
        self.inception5b = Inception(832, 384, 192, 384, 48, 128, 128)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(0.4)
        self.fc = nn.Linear(1024, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.lrn1(self.maxpool1(self.conv1(x)))
        x = self.maxpool2(self.lrn2(self.conv3(self.conv2(x))))
        x = self.maxpool3(self.inception3b(self.inception3a(x)))
        for name in ("inception4a", "inception4b", "inception4c", "inception4d", "inception4e"):
            x = getattr(self, name)(x)
        x = self.inception5b(self.inception5a(self.maxpool4(x)))
        return self.fc(self.dropout(torch.flatten(self.avgpool(x), 1)))


class MLP(nn.Module):
    """A small MNIST-sized MLP: 784 -> 1024 -> 1024 -> 10 with ReLU."""

    def __init__(self, sizes: tuple[int, ...] = (784, 1024, 1024, 10)) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for k, (cin, cout) in enumerate(itertools.pairwise(sizes)):
            layers.append(nn.Linear(cin, cout))
            if k < len(sizes) - 2:
                layers.append(nn.ReLU())
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class SelfAttention(nn.Module):
    """Multi-head self-attention written with plain matmuls, so every product is visible to the
    counter."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5
        out = scores.softmax(dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


class TransformerBlock(nn.Module):
    """A pre-norm transformer encoder block: x + attn(ln(x)), then x + mlp(ln(x)); GELU, 4x
    hidden."""

    def __init__(self, dim: int = 512, heads: int = 8, hidden: int = 2048) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


# name -> (factory, default input shape, one-line description)
MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...], str]] = {
    "vgg16": (
        lambda: VGG(_VGG["vgg16"]),
        (1, 3, 224, 224),
        "VGG-16 (configuration D), torchvision layout",
    ),
    "vgg19": (
        lambda: VGG(_VGG["vgg19"]),
        (1, 3, 224, 224),
        "VGG-19 (configuration E), torchvision layout",
    ),
    "resnet18": (
        lambda: ResNet(BasicBlock, [2, 2, 2, 2]),
        (1, 3, 224, 224),
        "ResNet-18, torchvision layout",
    ),
    "resnet34": (
        lambda: ResNet(BasicBlock, [3, 4, 6, 3]),
        (1, 3, 224, 224),
        "ResNet-34, torchvision layout",
    ),
    "resnet50": (
        lambda: ResNet(Bottleneck, [3, 4, 6, 3]),
        (1, 3, 224, 224),
        "ResNet-50 v1.5, torchvision layout",
    ),
    "googlenet": (
        GoogLeNet,
        (1, 3, 224, 224),
        "GoogLeNet as in the paper (5x5 branches, LRN, no aux heads)",
    ),
    "mlp": (MLP, (1, 784), "MLP 784-1024-1024-10, ReLU"),
    "transformer": (
        TransformerBlock,
        (1, 128, 512),
        "pre-norm transformer block, d=512, 8 heads, 2048 hidden",
    ),
}
