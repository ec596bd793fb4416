"""Vision transformer front: 16x16 patch embedding, class token, position embedding, one pre-norm encoder layer, fp32.

64 images of 3x224x224 become 197 tokens of width 768 (12 heads, MLP 3072). The patch embedding is a
strided cuDNN convolution, attention uses SDPA, the GEMMs cuBLAS; the flatten/concat/position add,
LayerNorms, bias+GELU and residuals are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IMAGE, PATCH, DIM, HEADS = 64, 224, 16, 768, 12
SMALL = dict(BATCH=2, IMAGE=32, PATCH=8, DIM=32, HEADS=4)


class Model(nn.Module):
    def __init__(self, image, patch, dim, heads):
        super().__init__()
        torch.manual_seed(0)
        self.heads = heads
        self.embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.02)
        self.ln1 = nn.LayerNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.ln_out = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, images):
        x = self.embed(images).flatten(2).transpose(1, 2)  # (batch, patches, dim)
        x = torch.cat((self.cls.expand(x.shape[0], -1, -1), x), dim=1) + self.pos
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return self.ln_out(x)


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE)]


def get_init_inputs():
    return [IMAGE, PATCH, DIM, HEADS]
