"""A Llama/Qwen2-family decoder in PyTorch that trains on gpstream's layouts.

It needs only PyTorch. Weights come from a Hugging Face directory (config.json and model.safetensors).
Positions are real numbers: φ = 0.5 puts the target at 0.5, 1.5, .... Each row sees what the layout's
n_src and n_tgt say (gpe.md §4), as a 4-D boolean mask.

The batches come from gpstream.layout, the function the C++ trainer uses. This trainer and the C++ one
therefore see the same ids, positions, visibility and labels. tests/python/test_pytorch_recipe.py checks
that they compute the same loss and gradients.
"""

import json
import math
import os
import struct

import torch
import torch.nn.functional as F

_STORED = {"F32": (torch.float32, 4), "BF16": (torch.bfloat16, 2), "F16": (torch.float16, 2)}
_MAX_HEADER = 100 << 20  # bytes of a safetensors header, at most


def read_safetensors(path):
    """{name: float32 tensor} of a .safetensors file (F32, BF16 or F16 tensors)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (header_len,) = struct.unpack("<Q", blob[:8])
    if header_len > min(_MAX_HEADER, len(blob) - 8):
        raise ValueError(f"{path}: header of {header_len} bytes")
    header = json.loads(blob[8 : 8 + header_len])
    data = memoryview(blob)[8 + header_len :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in _STORED:
            raise ValueError(f"{path}: tensor {name} has dtype {info['dtype']} (F32, BF16 or F16 are read)")
        dtype, size = _STORED[info["dtype"]]
        start, end = info["data_offsets"]
        count = math.prod(info["shape"])
        if not 0 <= start <= end <= len(data) or end - start != count * size:
            raise ValueError(f"{path}: tensor {name} has offsets {start}..{end} for {count} elements")
        raw = torch.frombuffer(bytearray(data[start:end]), dtype=torch.uint8) if count else torch.empty(0)
        tensors[name] = raw.view(dtype).reshape(info["shape"]).float() if count else torch.zeros(info["shape"])
    return tensors


def write_safetensors(path, tensors, dtype=torch.bfloat16):
    """Writes {name: tensor} as a .safetensors file of `dtype` (BF16 by default, as gpstream ships)."""
    names = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16"}
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().to(dtype).contiguous().cpu()
        raw = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": names[dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in chunks:
            f.write(raw)
    os.replace(tmp, path)


LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")  # the projections LoRA can adapt, as gpstream's


def _module_name(layer, target):
    """The Hugging Face name of a projection: model.layers.3.self_attn.q_proj, model.layers.3.mlp.up_proj."""
    part = "self_attn" if target in ("q", "k", "v", "o") else "mlp"
    return f"model.layers.{layer}.{part}.{target}_proj"


def _lora_key(layer, target, which):
    return (_module_name(layer, target) + f".lora_{which}.weight").replace(".", "/")


def write_peft_adapter(folder, decoder, base_model=""):
    """A PEFT LoRA folder (adapter_config.json, adapter_model.safetensors in F32), as PEFT and gpstream read."""
    os.makedirs(folder, exist_ok=True)
    config = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "base_model_name_or_path": base_model,
              "r": decoder.lora_rank, "lora_alpha": decoder.lora_alpha, "lora_dropout": 0.0, "bias": "none",
              "fan_in_fan_out": False, "inference_mode": True,
              "target_modules": [t + "_proj" for t in decoder.lora_targets]}
    with open(os.path.join(folder, "adapter_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
    write_safetensors(os.path.join(folder, "adapter_model.safetensors"), decoder.adapter_tensors(), torch.float32)


class Config:
    """The fields of a Llama or Qwen2 config.json the model needs."""

    def __init__(self, d):
        if d.get("model_type") not in ("llama", "qwen2"):
            raise ValueError(f"model_type {d.get('model_type')!r}: this recipe trains llama and qwen2 models")
        self.model_type = d["model_type"]
        self.n_embd = d["hidden_size"]
        self.n_head = d["num_attention_heads"]
        self.n_kv = d.get("num_key_value_heads", self.n_head)
        self.head_dim = d.get("head_dim") or self.n_embd // self.n_head
        self.n_ff = d["intermediate_size"]
        self.n_layer = d["num_hidden_layers"]
        self.n_vocab = d["vocab_size"]
        self.eps = d.get("rms_norm_eps", 1e-6)
        self.theta = d.get("rope_theta", 10000.0)
        self.tied = d.get("tie_word_embeddings", False)
        self.qkv_bias = d.get("attention_bias", self.model_type == "qwen2")
        if d.get("rope_scaling"):
            raise ValueError("rope_scaling is not supported by this recipe")

    @staticmethod
    def load(model_dir):
        with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
            return Config(json.load(f))


class Decoder(torch.nn.Module):
    """The decoder, its parameters named as in the Hugging Face checkpoint."""

    def __init__(self, config):
        super().__init__()
        c = self.config = config
        self.params = torch.nn.ParameterDict()

        def add(name, *shape):
            self.params[name.replace(".", "/")] = torch.nn.Parameter(torch.zeros(*shape))

        add("model.embed_tokens.weight", c.n_vocab, c.n_embd)
        for i in range(c.n_layer):
            p = f"model.layers.{i}."
            add(p + "input_layernorm.weight", c.n_embd)
            add(p + "self_attn.q_proj.weight", c.n_head * c.head_dim, c.n_embd)
            add(p + "self_attn.k_proj.weight", c.n_kv * c.head_dim, c.n_embd)
            add(p + "self_attn.v_proj.weight", c.n_kv * c.head_dim, c.n_embd)
            if c.qkv_bias:
                add(p + "self_attn.q_proj.bias", c.n_head * c.head_dim)
                add(p + "self_attn.k_proj.bias", c.n_kv * c.head_dim)
                add(p + "self_attn.v_proj.bias", c.n_kv * c.head_dim)
            add(p + "self_attn.o_proj.weight", c.n_embd, c.n_head * c.head_dim)
            add(p + "post_attention_layernorm.weight", c.n_embd)
            add(p + "mlp.gate_proj.weight", c.n_ff, c.n_embd)
            add(p + "mlp.up_proj.weight", c.n_ff, c.n_embd)
            add(p + "mlp.down_proj.weight", c.n_embd, c.n_ff)
        add("model.norm.weight", c.n_embd)
        if not c.tied:
            add("lm_head.weight", c.n_vocab, c.n_embd)
        inv_freq = 1.0 / (c.theta ** (torch.arange(0, c.head_dim, 2, dtype=torch.float64) / c.head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def p(self, name):
        return self.params[name.replace(".", "/")]

    def add_lora(self, rank, alpha, targets=LORA_TARGETS, seed=0):
        """LoRA on the listed projections (PEFT's: y += (alpha / rank) · B · A · x, A Kaiming-uniform, B zero);
        the base is frozen. Adapter tensors are named as PEFT names them."""
        if rank < 1 or not targets or any(t not in LORA_TARGETS for t in targets):
            raise ValueError(f"LoRA: rank >= 1 and targets among {', '.join(LORA_TARGETS)}")
        for param in self.params.values():
            param.requires_grad_(False)
        self.lora_scale = alpha / rank
        self.lora_rank, self.lora_alpha, self.lora_targets = rank, alpha, list(targets)
        self.lora = torch.nn.ParameterDict()
        generator = torch.Generator().manual_seed(seed)
        for i in range(self.config.n_layer):
            for target in targets:
                weight = self.p(_module_name(i, target) + ".weight")
                out_features, in_features = weight.shape
                bound = 1.0 / math.sqrt(in_features)
                a = (torch.rand(rank, in_features, generator=generator) * 2 - 1) * bound
                self.lora[_lora_key(i, target, "A")] = torch.nn.Parameter(a)
                self.lora[_lora_key(i, target, "B")] = torch.nn.Parameter(torch.zeros(out_features, rank))

    def adapter_tensors(self):
        """{PEFT name: tensor} of the adapters."""
        return {"base_model.model." + k.replace("/", "."): v for k, v in self.lora.items()}

    def load_adapter(self, tensors):
        """Sets the adapters from PEFT-named tensors (an adapter_model.safetensors)."""
        with torch.no_grad():
            for name, param in self.adapter_tensors().items():
                if name not in tensors or tuple(tensors[name].shape) != tuple(param.shape):
                    raise ValueError(f"adapter: no tensor {name} of shape {tuple(param.shape)}")
                param.copy_(tensors[name])

    def merged_tensors(self):
        """{Hugging Face name: weight} with every adapter merged in (W + (alpha / rank) · B · A)."""
        merged = {name: p.detach().clone() for name, p in self.named_tensors().items()}
        if getattr(self, "lora", None) is not None:
            for i in range(self.config.n_layer):
                for target in self.lora_targets:
                    a = self.lora[_lora_key(i, target, "A")].detach()
                    b = self.lora[_lora_key(i, target, "B")].detach()
                    merged[_module_name(i, target) + ".weight"] += self.lora_scale * (b @ a)
        return merged

    def _linear(self, x, layer, target, bias=None):
        name = _module_name(layer, target)
        y = F.linear(x, self.p(name + ".weight"), bias)
        if getattr(self, "lora", None) is not None and target in self.lora_targets:
            a = self.lora[_lora_key(layer, target, "A")]
            b = self.lora[_lora_key(layer, target, "B")]
            y = y + self.lora_scale * F.linear(F.linear(x, a), b)
        return y

    def named_tensors(self):
        """{Hugging Face name: parameter}."""
        return {k.replace("/", "."): v for k, v in self.params.items()}

    @staticmethod
    def from_pretrained(model_dir):
        model = Decoder(Config.load(model_dir))
        weights = read_safetensors(os.path.join(model_dir, "model.safetensors"))
        with torch.no_grad():
            for name, param in model.named_tensors().items():
                if name not in weights:
                    raise ValueError(f"{model_dir}: no tensor {name}")
                if tuple(weights[name].shape) != tuple(param.shape):
                    raise ValueError(f"{name}: shape {tuple(weights[name].shape)}, expected {tuple(param.shape)}")
                param.copy_(weights[name])
        return model

    def _norm(self, x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.config.eps) * weight

    def _rope(self, x, cos, sin):
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def forward(self, ids, positions, mask):
        """Logits [B, T, vocab] of ids [B, T] at positions [B, T] (float), mask [B, T, T] (row sees column)."""
        c = self.config
        B, T = ids.shape
        angles = positions.double()[..., None] * self.inv_freq  # [B, T, half], in double as gpstream
        cos = angles.cos().float()[:, None]
        sin = angles.sin().float()[:, None]
        x = F.embedding(ids, self.p("model.embed_tokens.weight"))
        allowed = mask[:, None]  # [B, 1, T, T]
        group = c.n_head // c.n_kv
        for i in range(c.n_layer):
            p = f"model.layers.{i}."
            h = self._norm(x, self.p(p + "input_layernorm.weight"))

            def proj(target, heads):
                bias = self.p(p + f"self_attn.{target}_proj.bias") if c.qkv_bias else None
                return self._linear(h, i, target, bias).view(B, T, heads, c.head_dim)

            q = self._rope(proj("q", c.n_head).transpose(1, 2), cos, sin)
            k = self._rope(proj("k", c.n_kv).transpose(1, 2), cos, sin)
            v = proj("v", c.n_kv).transpose(1, 2)
            k = k.repeat_interleave(group, dim=1)
            v = v.repeat_interleave(group, dim=1)
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(c.head_dim)
            scores = scores.masked_fill(~allowed, float("-inf"))
            attn = torch.softmax(scores, dim=-1) @ v
            x = x + self._linear(attn.transpose(1, 2).reshape(B, T, -1), i, "o")
            h = self._norm(x, self.p(p + "post_attention_layernorm.weight"))
            gate = F.silu(self._linear(h, i, "gate"))
            x = x + self._linear(gate * self._linear(h, i, "up"), i, "down")
        x = self._norm(x, self.p("model.norm.weight"))
        head = self.p("model.embed_tokens.weight") if c.tied else self.p("lm_head.weight")
        return F.linear(x, head)


def collate(layouts):
    """A padded batch of gpstream.layout dicts: ids, positions, mask [B, T, T], labels (-1: no loss).

    Row i sees row j when j is among the first n_src[i] source rows or the first n_tgt[i] target rows, each
    group counted in arrival order (gpe.md §4). A padding row sees only itself and has no label.
    """
    T = max(len(l["ids"]) for l in layouts)
    B = len(layouts)
    ids = torch.zeros(B, T, dtype=torch.long)
    positions = torch.zeros(B, T)
    labels = torch.full((B, T), -1, dtype=torch.long)
    mask = torch.eye(T, dtype=torch.bool).repeat(B, 1, 1)
    for b, l in enumerate(layouts):
        n = len(l["ids"])
        ids[b, :n] = torch.as_tensor(l["ids"], dtype=torch.long)
        positions[b, :n] = torch.as_tensor(l["positions"])
        labels[b, :n] = torch.as_tensor(l["labels"], dtype=torch.long)
        target = torch.as_tensor(l["groups"]).bool()
        rank = torch.where(target, target.long().cumsum(0) - 1, (~target).long().cumsum(0) - 1)
        n_src = torch.as_tensor(l["n_src"]).long()
        n_tgt = torch.as_tensor(l["n_tgt"]).long()
        limit = torch.where(target[None, :], n_tgt[:, None], n_src[:, None])
        mask[b, :n, :n] = rank[None, :] < limit
    return ids, positions, mask, labels


def loss_sum(model, batch):
    """The cross-entropy summed over the labelled rows, and their count (a row's label is the token its
    logits predict: no shift).

    The labelled rows' logits are taken to double for the log-softmax. In float, the sum of exp() over a
    vocabulary of thousands loses each term below half an ulp of the largest, and a confident row's loss
    comes out ~1e-5 low. gpstream's C++ trainer sums in double too.
    """
    ids, positions, mask, labels = batch
    logits = model(ids, positions, mask)
    labelled = labels >= 0
    rows = logits[labelled].double()
    loss = F.cross_entropy(rows, labels[labelled], reduction="sum")
    return loss, int(labelled.sum())
