#!/usr/bin/env python3
"""Writes the hand-made hostile inputs kept in fuzz/regressions/ (replayed by `ctest -L fuzz`), each named
like a libFuzzer finding (crash-/oom-/accepted- plus the SHA-1 of its bytes):

  tokenizer_json  a normalizer, pre_tokenizer, decoder and post_processor of type Sequence nested 10,000 deep
                  (stack overflow, or 1.3 GB for the normalizer), and one vocabulary id of 2^24 - 1 (a 616 MB
                  id table for 4 tokens)
  gguf            the nested decoder as an embedded tokenizer.huggingface.json (stack overflow), and a
                  block_count of 10^8 (std::bad_alloc while sizing the layer table)
  model_config    an eos_token_id of 2^40 and a llama3 original_max_position_embeddings of 0 (both accepted),
                  and a hidden_act of 100,000 nested arrays (dumped into the error message: stack overflow)

Usage: fuzz/hostile_inputs.py [OUT_DIR]   (default: fuzz/regressions beside this script)
"""
import hashlib
import json
import os
import struct
import sys

DEPTH = 10000
MODEL = '"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}'
SECTIONS = {  # section: (list key, innermost step)
    "normalizer": ("normalizers", '{"type":"NFC"}'),
    "pre_tokenizer": ("pretokenizers", '{"type":"Whitespace"}'),
    "decoder": ("decoders", '{"type":"Fuse"}'),
    "post_processor": ("processors", '{"type":"ByteLevel"}'),
}


def nested_tokenizer(section, depth=DEPTH):
    """A valid tokenizer.json whose `section` is `depth` Sequences around one step (built as text)."""
    key, leaf = SECTIONS[section]
    body = ('{"type":"Sequence","%s":[' % key) * depth + leaf + "]}" * depth
    return '{"version":"1.0",%s,"%s":%s}' % (MODEL, section, body)


def gguf(kvs, tensors=()):
    """A GGUF v3 file: kvs are (key, type code, packed value); tensors (name, dims) are F32 and zero."""
    def s(x):
        b = x.encode()
        return struct.pack("<Q", len(b)) + b
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, code, value in kvs:
        out += s(key) + struct.pack("<I", code) + value
    offset = 0
    for name, dims in tensors:
        out += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", 0, offset)
        n = 4
        for d in dims:
            n *= d
        offset += n + (-n % 32)
    out += b"\0" * (-len(out) % 32)
    return out + b"\0" * offset


def u32(v):
    return 4, struct.pack("<I", v)


def f32(v):
    return 6, struct.pack("<f", v)


def string(v):
    b = v.encode()
    return 8, struct.pack("<Q", len(b)) + b


def write(folder, kind, data):
    if isinstance(data, str):
        data = data.encode()
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, kind + "-" + hashlib.sha1(data).hexdigest())
    with open(path, "wb") as f:
        f.write(data)
    print(path, len(data), "bytes")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "regressions")
    tok = os.path.join(out, "tokenizer_json")
    for section in SECTIONS:
        write(tok, "oom" if section == "normalizer" else "crash", nested_tokenizer(section))
    write(tok, "oom", '{"version":"1.0","model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2,"z":%d},'
                      '"merges":["a b"]}}' % ((1 << 24) - 1))

    g = os.path.join(out, "gguf")
    write(g, "crash", gguf([("tokenizer.huggingface.json",) + string(nested_tokenizer("decoder"))]))
    llama = [("general.architecture",) + string("llama"), ("llama.embedding_length",) + u32(8),
             ("llama.feed_forward_length",) + u32(8), ("llama.block_count",) + u32(10**8),
             ("llama.attention.head_count",) + u32(2),
             ("llama.attention.layer_norm_rms_epsilon",) + f32(1e-5)]
    write(g, "crash", gguf(llama, [("token_embd.weight", [8, 4]), ("output_norm.weight", [8])]))

    cfg = os.path.join(out, "model_config")
    base = {"architectures": ["LlamaForCausalLM"], "vocab_size": 200, "hidden_size": 32,
            "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2, "max_position_embeddings": 512}
    write(cfg, "accepted", json.dumps(dict(base, eos_token_id=1 << 40)))
    write(cfg, "accepted", json.dumps(dict(base, rope_scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 0})))
    deep = 100000
    write(cfg, "crash", json.dumps(base)[:-1] + ', "hidden_act": ' + "[" * deep + "]" * deep + "}")


if __name__ == "__main__":
    main()
