"""ViT-B/16 as torchvision's vision_transformer.py builds it: a 16x16 patch convolution, a class token,
learned position embeddings, 12 encoder blocks (LayerNorm, nn.MultiheadAttention, MLP with GELU), a head."""

import torch
from torch import nn


class EncoderBlock(nn.Module):
    def __init__(self, dim: int = 768, heads: int = 12, mlp: int = 3072) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.ln_1(x)
        y, _ = self.self_attention(y, y, y, need_weights=False)
        x = x + y
        return x + self.mlp(self.ln_2(x))


class ViT(nn.Module):
    def __init__(self, dim: int = 768, layers: int = 12) -> None:
        super().__init__()
        self.conv_proj = nn.Conv2d(3, dim, 16, 16)
        self.class_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embedding = nn.Parameter(torch.zeros(1, 197, dim))
        self.layers = nn.Sequential(*(EncoderBlock(dim) for _ in range(layers)))
        self.ln = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embedding
        x = self.ln(self.layers(x))
        return self.head(x[:, 0])


def build_model() -> nn.Module:
    return ViT()


def example_inputs(batch_size: int) -> tuple[torch.Tensor]:
    return (torch.randn(batch_size, 3, 224, 224),)
