"""Fine-tune a Llama/Qwen2-family model for streaming with PyTorch, on gpstream's exact layouts.

One process:
    PYTHONPATH=build/python python3 recipes/pytorch/train.py --model models/gpstream-en-fr \
        --train data/corpus/en-fr.train.tsv --output runs/torch-en-fr --steps 370
N processes (one per GPU, or CPU processes with gloo), on one machine or several:
    PYTHONPATH=build/python python3 -m torch.distributed.run --nproc_per_node 2 recipes/pytorch/train.py ...

Each step takes a global batch of pairs, up to --batch-tokens tokens. The pairs come in a seeded order that
does not depend on how many processes there are. Each pair is laid out by gpstream.layout, the C++ trainer's
own function, with its own wait-k lag drawn from [--k-min, --k-max].

Rank r takes every N-th layout of the batch, starting at r. The loss is the cross-entropy summed over the
labelled rows, divided by the labelled rows of the whole global batch (all-reduced). N processes therefore
take the same steps as one. DDP averages the gradients over the ranks, so each rank's loss is multiplied by
N first.

At the end, --output/model is a Hugging Face directory: model.safetensors, config.json, the tokenizer, and
gpstream.json with the paradigm, φ and k trained. With --lora-rank, only PEFT-style adapters are trained;
--output/adapter holds them as a PEFT folder, and --output/model has them merged in. `gpstream translate -m` runs it unchanged. Checkpoints go
to --output/checkpoint.pt every --checkpoint-every steps, and a rerun resumes from the last one.
docs/training.md has the commands and what was tested.
"""

import argparse
import datetime
import json
import math
import os
import random
import shutil
import sys
import time

import torch
import torch.distributed as dist

import gpstream

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpstream_torch import Decoder, collate, loss_sum, write_peft_adapter, write_safetensors  # noqa: E402

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "generation_config.json")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="the Hugging Face directory to start from")
    p.add_argument("--train", required=True, help="training pairs: source<TAB>target lines")
    p.add_argument("--output", required=True, help="run folder: checkpoint.pt, log.jsonl, model/")
    p.add_argument("--steps", type=int, required=True, help="optimizer steps")
    p.add_argument("--batch-tokens", type=int, default=4096, help="tokens per global batch (default 4096)")
    p.add_argument("--max-seq", type=int, default=512, help="pairs laid out longer than this are skipped")
    p.add_argument("--paradigm", default="group", help="the layout's paradigm (default group)")
    p.add_argument("--phi", default="0", help="the target group's first position (default 0)")
    p.add_argument("--k-min", type=int, default=1, help="smallest wait-k lag drawn per pair (default 1)")
    p.add_argument("--k-max", type=int, default=9, help="largest wait-k lag drawn per pair (default 9)")
    p.add_argument("--lr", type=float, default=5e-4, help="peak learning rate (default 5e-4)")
    p.add_argument("--warmup", type=int, default=50, help="linear warm-up steps (default 50)")
    p.add_argument("--min-lr-ratio", type=float, default=0.1, help="cosine decay floor (default 0.1)")
    p.add_argument("--weight-decay", type=float, default=0.1, help="AdamW weight decay of the matrices (default 0.1)")
    p.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw",
                   help="adamw (default; betas 0.9, 0.95) or sgd (plain, for exact comparisons across runs)")
    p.add_argument("--clip", type=float, default=1.0, help="gradient norm clip (default 1.0; 0: none)")
    p.add_argument("--seed", type=int, default=1, help="data order and k draws (default 1)")
    p.add_argument("--backend", default=None, help="gloo or nccl (default: nccl with CUDA, else gloo)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda where available)")
    p.add_argument("--bf16", action="store_true", help="autocast the forward to bfloat16 (GPUs)")
    p.add_argument("--checkpoint-every", type=int, default=100, help="steps between checkpoints (default 100)")
    p.add_argument("--export-dtype", choices=["bf16", "f32"], default="bf16",
                   help="weights of the exported model (default bf16)")
    p.add_argument("--lora-rank", type=int, default=0, help="LoRA rank (default 0: every parameter is trained)")
    p.add_argument("--lora-alpha", type=float, default=16, help="LoRA alpha (default 16)")
    p.add_argument("--lora-targets", default="q,k,v,o,gate,up,down",
                   help="the projections LoRA adapts (default q,k,v,o,gate,up,down)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads per process (default: torch's)")
    p.add_argument("--timeout-minutes", type=float, default=30,
                   help="how long a process waits for the others in a collective (default 30, torch's)")
    args = p.parse_args(argv)
    if args.steps < 1 or args.batch_tokens < args.max_seq or not 1 <= args.k_min <= args.k_max:
        p.error("need --steps >= 1, --batch-tokens >= --max-seq and 1 <= --k-min <= --k-max")
    return args


def read_pairs(path):
    pairs = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 2:
                raise ValueError(f"{path}:{number}: expected source<TAB>target")
            if fields[0].strip() and fields[1].strip():
                pairs.append((fields[0], fields[1]))
    if not pairs:
        raise ValueError(f"{path}: no pairs")
    return pairs


class Batches:
    """Global batches of layouts in a seeded order, the same for any number of processes: epoch e visits
    the pairs in the order of random.Random(seed * 1000003 + e), each with its k drawn from the same
    generator."""

    def __init__(self, model, pairs, args):
        self.model, self.pairs, self.args = model, pairs, args
        self.epoch, self.cursor, self.order = -1, 0, []

    def state(self):
        return {"epoch": self.epoch, "cursor": self.cursor}

    def restore(self, state):
        self._start_epoch(state["epoch"])
        self.cursor = state["cursor"]

    def _start_epoch(self, epoch):
        self.epoch = epoch
        rng = random.Random(self.args.seed * 1000003 + epoch)
        order = list(range(len(self.pairs)))
        rng.shuffle(order)
        self.order = [(i, rng.randint(self.args.k_min, self.args.k_max)) for i in order]
        self.cursor = 0

    def next(self):
        batch, tokens = [], 0
        while True:
            if self.cursor >= len(self.order):
                self._start_epoch(self.epoch + 1)
            index, k = self.order[self.cursor]
            source, target = self.pairs[index]
            layout = gpstream.layout(self.model, source, target, paradigm=self.args.paradigm, k=k,
                                     phi=self.args.phi)
            n = len(layout["ids"])
            if n > self.args.max_seq:
                self.cursor += 1
                continue
            if batch and tokens + n > self.args.batch_tokens:
                return batch
            batch.append(layout)
            tokens += n
            self.cursor += 1


def learning_rate(step, args):
    """Linear warm-up to --lr, then cosine decay to --lr · --min-lr-ratio at the last step (step counts from 0)."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    span = max(args.steps - args.warmup, 1)
    progress = min((step - args.warmup) / span, 1.0)
    return args.lr * (args.min_lr_ratio + (1 - args.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def export(decoder, args, steps, dev_loss=None):
    """--output/model: the weights, the base model's config and tokenizer, and gpstream.json."""
    folder = os.path.join(args.output, "model")
    os.makedirs(folder, exist_ok=True)
    dtype = torch.bfloat16 if args.export_dtype == "bf16" else torch.float32
    weights = decoder.merged_tensors()  # LoRA adapters merged in
    if args.lora_rank > 0:
        write_peft_adapter(os.path.join(args.output, "adapter"), decoder, args.model)
    write_safetensors(os.path.join(folder, "model.safetensors"), weights, dtype)
    with open(os.path.join(args.model, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    config["torch_dtype"] = "bfloat16" if dtype == torch.bfloat16 else "float32"
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
    for name in TOKENIZER_FILES:
        if os.path.exists(os.path.join(args.model, name)):
            shutil.copy(os.path.join(args.model, name), os.path.join(folder, name))
    meta_path = os.path.join(args.model, "gpstream.json")
    meta = json.load(open(meta_path, encoding="utf-8")) if os.path.exists(meta_path) else {}
    phi = args.phi if args.phi == "S" else float(args.phi)
    meta.update({"paradigm": args.paradigm, "phi": phi, "k_min": args.k_min, "k_max": args.k_max,
                 "k": (args.k_min + args.k_max) // 2})
    meta["trained"] = {"mode": args.paradigm, "steps": steps, "seed": args.seed, "trainer": "pytorch",
                       "parameters": sum(p.numel() for p in decoder.parameters()), "lora_rank": args.lora_rank}
    with open(os.path.join(folder, "gpstream.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
    return folder


def main(argv=None):
    args = parse_args(argv)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if world > 1:
        dist.init_process_group(args.backend or ("nccl" if device.type == "cuda" else "gloo"),
                                timeout=datetime.timedelta(minutes=args.timeout_minutes))
    torch.manual_seed(args.seed)

    layout_model = gpstream.Model(args.model, threads=1)
    batches = Batches(layout_model, read_pairs(args.train), args)
    decoder = Decoder.from_pretrained(args.model)
    if args.lora_rank > 0:
        decoder.add_lora(args.lora_rank, args.lora_alpha, args.lora_targets.split(","), seed=args.seed)
    decoder = decoder.to(device)
    trainable = [p for p in decoder.parameters() if p.requires_grad]
    trained = torch.nn.parallel.DistributedDataParallel(decoder) if world > 1 else decoder
    if args.optimizer == "adamw":  # decay on the matrices only, as gpstream's trainer does
        groups = [{"params": [p for p in trainable if p.dim() >= 2], "weight_decay": args.weight_decay},
                  {"params": [p for p in trainable if p.dim() < 2], "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    else:
        optimizer = torch.optim.SGD(trainable, lr=args.lr)
    os.makedirs(args.output, exist_ok=True)
    checkpoint = os.path.join(args.output, "checkpoint.pt")
    step = 0
    if os.path.exists(checkpoint):
        state = torch.load(checkpoint, map_location=device)
        decoder.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        batches.restore(state["data"])
        step = state["step"]
        if rank == 0:
            print(f"resumed from {checkpoint} at step {step}", flush=True)

    log = open(os.path.join(args.output, "log.jsonl"), "a", encoding="utf-8") if rank == 0 else None
    started = time.time()
    while step < args.steps:
        batch = batches.next()
        mine = batch[rank::world]
        if not mine:
            raise SystemExit(f"a batch of {len(batch)} pairs for {world} processes: raise --batch-tokens")
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, args)
        optimizer.zero_grad(set_to_none=True)
        ids, positions, mask, labels = (t.to(device) for t in collate(mine))
        count = torch.tensor([float((labels >= 0).sum())], device=device)
        if world > 1:
            dist.all_reduce(count)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16):
            loss, _ = loss_sum(trained, (ids, positions, mask, labels))
        (loss * world / count.clamp(min=1.0)).backward()
        norm = torch.nn.utils.clip_grad_norm_(trainable, args.clip if args.clip > 0 else float("inf"))
        optimizer.step()
        step += 1
        total = loss.detach().clone()
        if world > 1:
            dist.all_reduce(total)
        if rank == 0:
            tokens = sum(len(l["ids"]) for l in batch)
            record = {"step": step, "loss": float(total) / max(float(count), 1.0), "lr": learning_rate(step - 1, args),
                      "grad_norm": float(norm), "tokens": tokens, "elapsed_s": round(time.time() - started, 3)}
            log.write(json.dumps(record) + "\n")
            log.flush()
            print(f"step {step}/{args.steps}  loss {record['loss']:.4f}  |g| {record['grad_norm']:.2f}  "
                  f"lr {record['lr']:.2e}  {record['elapsed_s']:.0f}s", flush=True)
        if rank == 0 and (step % args.checkpoint_every == 0 or step == args.steps):
            torch.save({"model": decoder.state_dict(), "optimizer": optimizer.state_dict(),
                        "data": batches.state(), "step": step}, checkpoint + ".tmp")
            os.replace(checkpoint + ".tmp", checkpoint)
    if rank == 0:
        print(f"model: {export(decoder, args, step)}", flush=True)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
