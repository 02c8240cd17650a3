"""Independent Python reference of the Llama / Qwen2 / Gemma 2 / Phi-3 causal-LM forward (and loss + gradients)
used to make the model and training fixtures of gpstream (tests/model/data/, tests/train/data/).

Written from the Hugging Face transformers modeling code (modeling_llama.py, modeling_qwen2.py,
modeling_gemma2.py, modeling_phi3.py, modeling_rope_utils.py), not from gpstream's C++ sources.
Gemma 2 and Phi-3 are in forward_gemma2_phi3 (see its docstring for what each family changes). Everything is computed in float64 with torch:

  RMSNorm       y = w * (x * rsqrt(mean(x^2) + eps))
  RoPE          rotate-half (NEOX) layout: dims i and i + d/2 form a pair; angle = position * inv_freq[i],
                inv_freq[i] = 1 / theta^(2i/d); "llama3" rope_scaling as _compute_llama3_parameters does;
                positions are real numbers (0.5, 512.25, restarting groups, ...)
  attention     grouped-query (head h uses kv head h // (n_heads / n_kv_heads), i.e. repeat_kv),
                scores = q.k / sqrt(head_dim), softmax over the visible keys only
  MLP           down(silu(gate(x)) * up(x))
  biases        q/k/v biases for qwen2 (and for llama when attention_bias is true)
  lm_head       lm_head.weight, or model.embed_tokens.weight when tie_word_embeddings

Visibility is gpstream's structured mask (docs gpe.md §6): token i has group "s" or "t" and counts
(n_src[i], n_tgt[i]); source tokens are numbered in order of appearance (source index), target tokens likewise;
token i sees token j iff (g_j == "s" and srcidx(j) < n_src[i]) or (g_j == "t" and tgtidx(j) < n_tgt[i]).
Plain causal: all "s", n_src[i] = i + 1, n_tgt[i] = 0.

Weights stored as BF16 / F16 are upcast exactly to float64; activations are float64.
Needs Debian's python3-torch and python3-numpy (run with /usr/bin/python3).
"""
import json
import math
import os
import struct

import numpy as np
import torch

DT = torch.float64

# ----------------------------------------------------------------------------------------------- safetensors


def f32_to_bf16_bits(a):
    """Round float32 values to bfloat16 (round to nearest, ties to even); returns the uint16 bit patterns."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_bits_to_f32(b):
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, tensors, dtypes):
    """tensors: name -> float numpy array; dtypes: name -> "F32" | "F16" | "BF16".
    Layout: u64 little-endian header length, JSON header (padded with spaces to a multiple of 8), raw data."""
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    off = 0
    for name in sorted(tensors):
        a = np.asarray(tensors[name])
        dt = dtypes[name]
        if dt == "F32":
            raw = np.ascontiguousarray(a, dtype="<f4").tobytes()
        elif dt == "F16":
            raw = np.ascontiguousarray(a, dtype="<f2").tobytes()
        elif dt == "BF16":
            raw = f32_to_bf16_bits(a).astype("<u2").tobytes()
        else:
            raise ValueError(dt)
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """Returns name -> (float64 numpy array, dtype string)."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        raw = data[base + a:base + b]
        dt = info["dtype"]
        if dt == "F32":
            arr = np.frombuffer(raw, dtype="<f4")
        elif dt == "F16":
            arr = np.frombuffer(raw, dtype="<f2")
        elif dt == "BF16":
            arr = bf16_bits_to_f32(np.frombuffer(raw, dtype="<u2"))
        else:
            raise ValueError(f"{name}: dtype {dt}")
        out[name] = (arr.astype(np.float64).reshape(info["shape"]), dt)
    return out


def load_hf_dir(d):
    """config dict and name -> float64 torch tensor (values exactly as stored, upcast)."""
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    st = read_safetensors(os.path.join(d, "model.safetensors"))
    return cfg, {k: torch.tensor(v, dtype=DT) for k, (v, _) in st.items()}


# ----------------------------------------------------------------------------------------------- model


def head_dim(cfg):
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def rope_inv_freq(cfg, dtype=DT):
    """inv_freq of modeling_rope_utils: default, or "llama3" scaling (computed in dtype; HF uses float32)."""
    d = head_dim(cfg)
    theta = float(cfg.get("rope_theta", 10000.0))
    inv = 1.0 / theta ** (torch.arange(0, d, 2, dtype=dtype) / d)
    rs = cfg.get("rope_scaling") or {}
    rt = rs.get("rope_type", rs.get("type", "default"))
    if rt == "default":
        return inv
    if rt != "llama3":
        raise ValueError(f"rope_type {rt} not supported by the reference")
    factor = float(rs["factor"])
    lo, hi = float(rs["low_freq_factor"]), float(rs["high_freq_factor"])
    old = float(rs["original_max_position_embeddings"])
    lo_wl, hi_wl = old / lo, old / hi
    wl = 2 * math.pi / inv
    out = torch.where(wl > lo_wl, inv / factor, inv)
    smooth = (old / wl - lo) / (hi - lo)
    smoothed = (1 - smooth) * out / factor + smooth * out
    medium = (wl >= hi_wl) & (wl <= lo_wl)
    return torch.where(medium, smoothed, out)


def visibility(groups, n_src, n_tgt):
    """Boolean [T, T] matrix: vis[i, j] = token i attends to token j (structured mask, gpe.md §6)."""
    T = len(groups)
    idx = []
    ns = nt = 0
    for g in groups:
        if g == "s":
            idx.append(ns)
            ns += 1
        elif g == "t":
            idx.append(nt)
            nt += 1
        else:
            raise ValueError(f"group {g!r}")
    vis = torch.zeros((T, T), dtype=torch.bool)
    for i in range(T):
        for j in range(T):
            lim = n_src[i] if groups[j] == "s" else n_tgt[i]
            vis[i, j] = idx[j] < lim
    return vis


def causal_spec(T):
    return "s" * T, list(range(1, T + 1)), [0] * T


def rms_norm(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def lm_head_weight(cfg, W):
    if cfg.get("tie_word_embeddings", False) or "lm_head.weight" not in W:
        return W["model.embed_tokens.weight"]
    return W["lm_head.weight"]


def window_visibility(groups, n_src, n_tgt, window):
    """The structured mask with a sliding window counted per group (gpstream's rule, docs/models.md, sliding windows): token i
    sees source token j iff n_src[i] - window <= srcidx(j) < n_src[i], target likewise. For one group with
    n[i] = i + 1 this is transformers' kv_idx > q_idx - sliding_window."""
    vis = visibility(groups, n_src, n_tgt)
    idx, cnt = [], {"s": 0, "t": 0}
    for g in groups:
        idx.append(cnt[g])
        cnt[g] += 1
    for i in range(len(groups)):
        for j in range(len(groups)):
            lim = n_src[i] if groups[j] == "s" else n_tgt[i]
            if idx[j] < lim - window:
                vis[i, j] = False
    return vis


def round_to_dtype(x, name):
    """x rounded to the torch dtype named in config.json (float32 / bfloat16 / float16), back as a float."""
    dt = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]
    return float(torch.tensor(x, dtype=dt).double())


def longrope_inv_freq(cfg, positions, dtype):
    """Phi-3 longrope (modeling_rope_utils _compute_longrope_parameters + dynamic_rope_update): inverse frequencies
    1 / (ext_factor_i * theta^(2i/dim)) with the long factors iff max(position) + 1 > original_max_position_embeddings
    (transformers decides once per forward call), and the attention factor multiplying cos and sin."""
    rs = cfg["rope_scaling"]
    dim = int(head_dim(cfg) * cfg.get("partial_rotary_factor", 1.0))
    theta = float(cfg.get("rope_theta", 10000.0))
    if "original_max_position_embeddings" in cfg:
        orig = cfg["original_max_position_embeddings"]
        factor = cfg["max_position_embeddings"] / orig
    else:
        orig = rs.get("original_max_position_embeddings", cfg["max_position_embeddings"])
        factor = rs.get("factor", 1.0)
    af = rs.get("attention_factor")
    if af is None:
        af = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(orig))
    long_ = max(positions) + 1 > orig
    ext = torch.tensor(rs["long_factor"] if long_ else rs["short_factor"], dtype=torch.float32).to(dtype)
    shape = torch.arange(0, dim, 2, dtype=torch.float32).to(dtype) / dim
    return 1.0 / (ext * theta ** shape), af


def forward_gemma2_phi3(cfg, W, ids, positions, groups, n_src, n_tgt):
    """Gemma2ForCausalLM / Phi3ForCausalLM.
    Gemma 2: embeddings * normalizer (sqrt(hidden) rounded to the config's torch_dtype), RMSNorm x * (1 + w),
    h = x + post_attention_layernorm(attn(input_layernorm(x))), x = h + post_feedforward_layernorm(mlp(
    pre_feedforward_layernorm(h))), MLP down(gelu_tanh(gate) * up), scores * query_pre_attn_scalar^-0.5 then
    tanh(s / cap) * cap (attn_logit_softcapping), sliding_window on layers with an even index (Gemma2Attention:
    `sliding_window if not bool(layer_idx % 2)`), logits tanh(z / cap) * cap (final_logit_softcapping), tied.
    Phi-3: qkv_proj rows [q; k; v], gate_up_proj rows [gate; up] (chunk(2)), rotary on the first
    int(head_dim * partial_rotary_factor) dims only, longrope (longrope_inv_freq), sliding_window on every layer."""
    T = len(ids)
    gemma = cfg["model_type"] == "gemma2"
    nh = cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    hd = head_dim(cfg)
    eps = float(cfg["rms_norm_eps"])
    dt = W["model.embed_tokens.weight"].dtype
    vis_full = visibility(groups, n_src, n_tgt)
    sw = cfg.get("sliding_window")
    vis_sw = window_visibility(groups, n_src, n_tgt, sw) if sw else vis_full
    if not bool(vis_sw.any(dim=1).all()):
        raise ValueError("a row sees no token")

    def norm(x, w):
        return rms_norm(x, (1.0 + w) if gemma else w, eps)

    pos = torch.tensor([float(p) for p in positions], dtype=dt)
    scale_cs = 1.0
    if gemma:
        inv = 1.0 / float(cfg.get("rope_theta", 10000.0)) ** (torch.arange(0, hd, 2, dtype=dt) / hd)
        rot = hd
    else:
        rot = int(hd * cfg.get("partial_rotary_factor", 1.0))
        rs = cfg.get("rope_scaling") or {}
        if rs.get("type", rs.get("rope_type")) == "longrope":
            inv, scale_cs = longrope_inv_freq(cfg, positions, dt)
        else:
            inv = 1.0 / float(cfg.get("rope_theta", 10000.0)) ** (torch.arange(0, rot, 2, dtype=dt) / rot)
    ang = pos[:, None] * inv[None, :]
    emb = torch.cat((ang, ang), dim=-1)  # [T, rot]
    cos, sin = emb.cos() * scale_cs, emb.sin() * scale_cs

    def rope(t):  # [heads, T, hd]: rotate-half on the first rot dims, the rest passes
        r, rest = t[..., :rot], t[..., rot:]
        return torch.cat((r * cos + rotate_half(r) * sin, rest), dim=-1)

    x = W["model.embed_tokens.weight"][torch.tensor(ids, dtype=torch.long)]
    if gemma:
        x = x * round_to_dtype(cfg["hidden_size"] ** 0.5, cfg.get("torch_dtype", "float32"))
    scaling = (cfg["query_pre_attn_scalar"] if gemma else hd) ** -0.5
    cap = cfg.get("attn_logit_softcapping") if gemma else None
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = norm(x, W[p + "input_layernorm.weight"])
        if gemma:
            q = h @ W[p + "self_attn.q_proj.weight"].T
            k = h @ W[p + "self_attn.k_proj.weight"].T
            v = h @ W[p + "self_attn.v_proj.weight"].T
        else:
            qkv = h @ W[p + "self_attn.qkv_proj.weight"].T
            q, k, v = qkv[:, :nh * hd], qkv[:, nh * hd:(nh + nkv) * hd], qkv[:, (nh + nkv) * hd:]
        q = rope(q.reshape(T, nh, hd).transpose(0, 1))
        k = rope(k.reshape(T, nkv, hd).transpose(0, 1)).repeat_interleave(nh // nkv, dim=0)
        v = v.reshape(T, nkv, hd).transpose(0, 1).repeat_interleave(nh // nkv, dim=0)
        s = (q @ k.transpose(1, 2)) * scaling
        if cap:
            s = torch.tanh(s / cap) * cap
        sliding = sw and (l % 2 == 0 if gemma else True)
        s = s.masked_fill(~(vis_sw if sliding else vis_full)[None], float("-inf"))
        a = (torch.softmax(s, dim=-1) @ v).transpose(0, 1).reshape(T, nh * hd)
        o = a @ W[p + "self_attn.o_proj.weight"].T
        if gemma:
            x = x + norm(o, W[p + "post_attention_layernorm.weight"])
            h = norm(x, W[p + "pre_feedforward_layernorm.weight"])
            g = torch.nn.functional.gelu(h @ W[p + "mlp.gate_proj.weight"].T, approximate="tanh")
            u = h @ W[p + "mlp.up_proj.weight"].T
            x = x + norm((g * u) @ W[p + "mlp.down_proj.weight"].T, W[p + "post_feedforward_layernorm.weight"])
        else:
            x = x + o
            h = norm(x, W[p + "post_attention_layernorm.weight"])
            gu = h @ W[p + "mlp.gate_up_proj.weight"].T
            g, u = gu.chunk(2, dim=-1)
            x = x + (u * torch.nn.functional.silu(g)) @ W[p + "mlp.down_proj.weight"].T
    x = norm(x, W["model.norm.weight"])
    z = x @ lm_head_weight(cfg, W).T
    fcap = cfg.get("final_logit_softcapping") if gemma else None
    if fcap:
        z = torch.tanh(z / fcap) * fcap
    return z


def forward(cfg, W, ids, positions, groups, n_src, n_tgt):
    """Logits [T, vocab] (torch tensor in the dtype of W: float64 for the fixtures, float32 only to measure how
    far a float32 computation lands; differentiable w.r.t. the tensors of W)."""
    if cfg["model_type"] in ("gemma2", "phi3"):
        return forward_gemma2_phi3(cfg, W, ids, positions, groups, n_src, n_tgt)
    T = len(ids)
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    hd = head_dim(cfg)
    eps = float(cfg["rms_norm_eps"])
    bias = cfg["model_type"] == "qwen2" or cfg.get("attention_bias", False)
    vis = visibility(groups, n_src, n_tgt)
    if not bool(vis.any(dim=1).all()):
        raise ValueError("a row sees no token")

    dt = W["model.embed_tokens.weight"].dtype
    pos = torch.tensor([float(p) for p in positions], dtype=dt)
    ang = pos[:, None] * rope_inv_freq(cfg, dt)[None, :]
    emb = torch.cat((ang, ang), dim=-1)  # [T, hd]
    cos, sin = emb.cos(), emb.sin()

    x = W["model.embed_tokens.weight"][torch.tensor(ids, dtype=torch.long)]
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = h @ W[p + "self_attn.q_proj.weight"].T
        k = h @ W[p + "self_attn.k_proj.weight"].T
        v = h @ W[p + "self_attn.v_proj.weight"].T
        if bias:
            q = q + W[p + "self_attn.q_proj.bias"]
            k = k + W[p + "self_attn.k_proj.bias"]
            v = v + W[p + "self_attn.v_proj.bias"]
        q = q.view(T, nh, hd).transpose(0, 1)  # [nh, T, hd]
        k = k.view(T, nkv, hd).transpose(0, 1)
        v = v.view(T, nkv, hd).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(nh // nkv, dim=0)  # repeat_kv
        v = v.repeat_interleave(nh // nkv, dim=0)
        s = (q @ k.transpose(1, 2)) / math.sqrt(hd)
        s = s.masked_fill(~vis[None], float("-inf"))
        a = torch.softmax(s, dim=-1) @ v  # [nh, T, hd]
        a = a.transpose(0, 1).reshape(T, nh * hd)
        x = x + a @ W[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        g = torch.nn.functional.silu(h @ W[p + "mlp.gate_proj.weight"].T)
        u = h @ W[p + "mlp.up_proj.weight"].T
        x = x + (g * u) @ W[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, W["model.norm.weight"], eps)
    return x @ lm_head_weight(cfg, W).T


def loss_sum(logits, labels):
    """Sum of cross-entropy over rows whose label is not -100 (labels aligned with rows: row r predicts
    labels[r]) and the number of such rows."""
    lab = torch.tensor(labels, dtype=torch.long)
    keep = lab != -100
    lp = torch.log_softmax(logits[keep], dim=-1)
    return -lp[torch.arange(int(keep.sum())), lab[keep]].sum(), int(keep.sum())


def batch_loss_and_grads(cfg, W, sequences):
    """Token-mean cross-entropy over all labelled rows of all sequences, and d loss / d W for every tensor of W
    (for tied models the embedding's gradient includes the lm_head use)."""
    Wg = {k: v.clone().requires_grad_(True) for k, v in W.items()}
    total, count = 0.0, 0
    for s in sequences:
        lg = forward(cfg, Wg, s["ids"], s["positions"], s["groups"], s["n_src"], s["n_tgt"])
        ls, n = loss_sum(lg, s["labels"])
        total = total + ls
        count += n
    loss = total / count
    loss.backward()
    return loss.detach(), {k: v.grad.detach() for k, v in Wg.items()}


# ------------------------------------------------------------------------------ independent self-check model


def numpy_visible_lists(groups, n_src, n_tgt):
    """The structured mask again, written differently: per row, the list of visible rows, from cumulative
    counts of each group."""
    g = np.array([c == "s" for c in groups])
    src_before = np.cumsum(g) - g  # source index of each source row
    tgt_before = np.cumsum(~g) - (~g)
    out = []
    for i in range(len(groups)):
        ok = np.where(g, src_before < n_src[i], tgt_before < n_tgt[i])
        out.append(list(np.nonzero(ok)[0]))
    return out


def numpy_causal_forward(cfg, Wt, ids, positions, visible=None):
    """A second, differently written forward: numpy, one query token at a time, RoPE as multiplication of
    complex numbers (x_i + i*x_{i+d/2}) * e^{i*angle}, the llama3 scaling recomputed per frequency with scalar
    math. visible[t] lists the rows token t attends to (default: plain causal, rows 0..t). Used by self_check()."""
    W = {k: v.numpy() for k, v in Wt.items()}
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    hd = head_dim(cfg)
    eps = float(cfg["rms_norm_eps"])
    bias = cfg["model_type"] == "qwen2" or cfg.get("attention_bias", False)
    theta = float(cfg.get("rope_theta", 10000.0))
    rs = cfg.get("rope_scaling") or {}
    freqs = []
    for i in range(hd // 2):
        f = theta ** (-2.0 * i / hd)
        if rs.get("rope_type") == "llama3":
            wl = 2 * math.pi / f
            old = rs["original_max_position_embeddings"]
            if wl < old / rs["high_freq_factor"]:
                pass
            elif wl > old / rs["low_freq_factor"]:
                f = f / rs["factor"]
            else:
                sm = (old / wl - rs["low_freq_factor"]) / (rs["high_freq_factor"] - rs["low_freq_factor"])
                f = (1 - sm) * f / rs["factor"] + sm * f
        freqs.append(f)
    freqs = np.array(freqs)

    def norm(x, w):
        return x / np.sqrt(np.mean(x * x) + eps) * w

    def rope(vec, p):  # vec [n, hd]
        c = (vec[:, :hd // 2] + 1j * vec[:, hd // 2:]) * np.exp(1j * p * freqs)[None, :]
        return np.concatenate([c.real, c.imag], axis=1)

    T = len(ids)
    xs = [W["model.embed_tokens.weight"][t].copy() for t in ids]
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        K, V, Q = [], [], []
        for t in range(T):
            h = norm(xs[t], W[p + "input_layernorm.weight"])
            q = W[p + "self_attn.q_proj.weight"] @ h
            k = W[p + "self_attn.k_proj.weight"] @ h
            v = W[p + "self_attn.v_proj.weight"] @ h
            if bias:
                q = q + W[p + "self_attn.q_proj.bias"]
                k = k + W[p + "self_attn.k_proj.bias"]
                v = v + W[p + "self_attn.v_proj.bias"]
            Q.append(rope(q.reshape(nh, hd), positions[t]))
            K.append(rope(k.reshape(nkv, hd), positions[t]))
            V.append(v.reshape(nkv, hd))
        new = []
        for t in range(T):
            out = np.zeros((nh, hd))
            for hh in range(nh):
                g = hh * nkv // nh
                js = list(range(t + 1)) if visible is None else visible[t]
                sc = np.array([Q[t][hh] @ K[j][g] for j in js]) / math.sqrt(hd)
                e = np.exp(sc - sc.max())
                e /= e.sum()
                out[hh] = sum(e[a] * V[j][g] for a, j in enumerate(js))
            x = xs[t] + W[p + "self_attn.o_proj.weight"] @ out.reshape(-1)
            h = norm(x, W[p + "post_attention_layernorm.weight"])
            gt = W[p + "mlp.gate_proj.weight"] @ h
            x = x + W[p + "mlp.down_proj.weight"] @ (gt / (1 + np.exp(-gt)) * (W[p + "mlp.up_proj.weight"] @ h))
            new.append(x)
        xs = new
    head = W["lm_head.weight"] if ("lm_head.weight" in W and not cfg.get("tie_word_embeddings")) \
        else W["model.embed_tokens.weight"]
    return np.stack([head @ norm(x, W["model.norm.weight"]) for x in xs])


def self_check(cfg, W, ids, structured_cases=()):
    """Raises AssertionError unless
    1. the structured-mask forward with the plain causal spec equals numpy_causal_forward (consecutive and
       real-valued positions);
    2. for each structured case, the forward equals numpy_causal_forward with the visibility lists of
       numpy_visible_lists (a second implementation of the mask and of the forward);
    3. for each row whose view is closed (every row it sees sees exactly the rows before it in that view), its
       logits equal a plain causal forward over just the rows it sees, at their own positions.
    Returns the largest differences."""
    T = len(ids)
    g, ns, nt = causal_spec(T)
    worst = {"causal_vs_numpy": 0.0, "structured_vs_numpy": 0.0, "structured_vs_subsequence": 0.0}
    for pos in (list(range(T)), [0.5 + 1.75 * i for i in range(T)]):
        a = forward(cfg, W, ids, pos, g, ns, nt).numpy()
        b = numpy_causal_forward(cfg, W, ids, pos)
        worst["causal_vs_numpy"] = max(worst["causal_vs_numpy"], float(np.abs(a - b).max()))
    assert worst["causal_vs_numpy"] < 1e-10, worst
    for c in structured_cases:
        full = forward(cfg, W, c["ids"], c["positions"], c["groups"], c["n_src"], c["n_tgt"]).numpy()
        vl = numpy_visible_lists(c["groups"], c["n_src"], c["n_tgt"])
        b = numpy_causal_forward(cfg, W, c["ids"], c["positions"], vl)
        worst["structured_vs_numpy"] = max(worst["structured_vs_numpy"], float(np.abs(full - b).max()))
        sets = [set(int(j) for j in v) for v in vl]
        for i in range(len(c["ids"])):
            seen = sorted(sets[i] - {i}) + [i]
            if any(sets[j] != set(seen[:a + 1]) for a, j in enumerate(seen)):
                continue
            sub = numpy_causal_forward(cfg, W, [c["ids"][j] for j in seen], [c["positions"][j] for j in seen])
            d = float(np.abs(sub[-1] - full[i]).max())
            worst["structured_vs_subsequence"] = max(worst["structured_vs_subsequence"], d)
    assert worst["structured_vs_numpy"] < 1e-10 and worst["structured_vs_subsequence"] < 1e-10, worst
    return worst


def grad_check(cfg, W, sequences, seed=0, h=1e-5):
    """Directional derivative of the batch loss by central differences vs the autograd gradient."""
    _, grads = batch_loss_and_grads(cfg, W, sequences)
    gen = torch.Generator().manual_seed(seed)
    dirs = {k: torch.randn(v.shape, generator=gen, dtype=DT) for k, v in W.items()}
    scale = float(sum((v * v).sum() for v in dirs.values())) ** -0.5  # unit direction
    dirs = {k: v * scale for k, v in dirs.items()}

    def loss_at(t):
        Wt = {k: W[k] + t * dirs[k] for k in W}
        tot, cnt = 0.0, 0
        for s in sequences:
            ls, n = loss_sum(forward(cfg, Wt, s["ids"], s["positions"], s["groups"], s["n_src"], s["n_tgt"]),
                             s["labels"])
            tot, cnt = tot + float(ls), cnt + n
        return tot / cnt

    fd = (loss_at(h) - loss_at(-h)) / (2 * h)
    an = float(sum((grads[k] * dirs[k]).sum() for k in W))
    return fd, an
