#!/usr/bin/python3
"""The training step of bench/bench_train.cpp in PyTorch on the CPU, for the ratio in docs/performance.md.

Same model (llama-style: RMSNorm, RoPE, grouped-query attention, SiLU-gated MLP, tied embeddings), same
shapes (batch 16 x sequence 128, causal, every row labelled), AdamW, global-norm clipping; reports the best
tokens/s over the timed steps. Uses Debian's python3-torch (apt-get install python3-torch), no pip.

  scripts/bench-train-torch.py [--threads N] [--steps N] [--embd 256 --layers 8 --heads 8 --kv-heads 4
                               --ff 768 --vocab 8000 --seq 128 --batch 16]

Run it in its fastest setting (gpstream is compared against PyTorch's best): try 1 and 2 threads, the OpenMP
build of OpenBLAS (LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp) and OMP_WAIT_POLICY=passive;
scripts/bench-train-compare runs every combination beside bench_train.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, e, h, hkv, ff):
        super().__init__()
        self.h, self.hkv, self.d = h, hkv, e // h
        self.n1 = nn.Parameter(torch.ones(e))
        self.n2 = nn.Parameter(torch.ones(e))
        self.q = nn.Linear(e, h * self.d, bias=False)
        self.k = nn.Linear(e, hkv * self.d, bias=False)
        self.v = nn.Linear(e, hkv * self.d, bias=False)
        self.o = nn.Linear(h * self.d, e, bias=False)
        self.gate = nn.Linear(e, ff, bias=False)
        self.up = nn.Linear(e, ff, bias=False)
        self.down = nn.Linear(ff, e, bias=False)

    @staticmethod
    def rms(x, w, eps=1e-5):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    @staticmethod
    def rope(x, cos, sin):
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def forward(self, x, cos, sin, mask):
        B, T, E = x.shape
        h = self.rms(x, self.n1)
        q = self.q(h).view(B, T, self.h, self.d).transpose(1, 2)
        k = self.k(h).view(B, T, self.hkv, self.d).transpose(1, 2)
        v = self.v(h).view(B, T, self.hkv, self.d).transpose(1, 2)
        q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
        rep = self.h // self.hkv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.d) + mask
        y = att.softmax(-1) @ v
        x = x + self.o(y.transpose(1, 2).reshape(B, T, -1))
        h = self.rms(x, self.n2)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.embd)
        self.blocks = nn.ModuleList([Block(a.embd, a.heads, a.kv_heads, a.ff) for _ in range(a.layers)])
        self.nf = nn.Parameter(torch.ones(a.embd))
        d = a.embd // a.heads
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        ang = torch.arange(a.seq).float()[:, None] * inv[None, :]
        self.register_buffer("cos", ang.cos())
        self.register_buffer("sin", ang.sin())
        self.register_buffer("mask", torch.full((a.seq, a.seq), float("-inf")).triu(1))

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x, self.cos, self.sin, self.mask)
        return Block.rms(x, self.nf) @ self.emb.weight.t()


def main():
    p = argparse.ArgumentParser()
    for name, v in [("threads", 2), ("steps", 10), ("embd", 256), ("layers", 8), ("heads", 8), ("kv_heads", 4),
                    ("ff", 768), ("vocab", 8000), ("seq", 128), ("batch", 16)]:
        p.add_argument("--" + name.replace("_", "-"), type=int, default=v)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    m = Model(a)
    n_params = sum(t.numel() for t in m.parameters())
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    ids = torch.randint(0, a.vocab, (a.batch, a.seq))
    labels = torch.randint(0, a.vocab, (a.batch, a.seq))
    best = 0.0
    for step in range(a.steps + 1):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(m(ids).view(-1, a.vocab), labels.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        if step > 0:
            best = max(best, a.batch * a.seq / dt)
    print(f"torch {torch.__version__}: {n_params} parameters, {a.threads} threads, best {best:.0f} tokens/s")


if __name__ == "__main__":
    main()
