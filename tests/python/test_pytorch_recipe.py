"""The PyTorch recipe's model (recipes/pytorch) against gpstream's C++ trainer on the same layouts: the same
loss and the same gradients, for the group, interleaved and batch-stream paradigms and φ = 0.5."""

import pathlib
import sys

import numpy as np
import pytest

import gpstream

torch = pytest.importorskip("torch", reason="PyTorch (Debian's python3-torch) is not installed")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "recipes" / "pytorch"))
from gpstream_torch import Decoder, collate, loss_sum  # noqa: E402

PAIRS = [
    ("Save the file in your home folder.", "Enregistrez le fichier dans votre dossier personnel."),
    ("Click the button.", "Cliquez sur le bouton."),
]
UNIT_ROUNDOFF = 2.0**-24  # float32


@pytest.fixture(scope="module")
def decoder(model_dir):
    torch.set_num_threads(1)
    return Decoder.from_pretrained(model_dir)


@pytest.mark.parametrize("paradigm, phi", [("group", "0"), ("interleaved", "0"), ("batch-stream", "0"), ("group", "0.5")])
def test_loss_and_gradients_equal_the_cpp_trainers(model, model_dir, decoder, paradigm, phi):
    layouts = [gpstream.layout(model, s, t, paradigm=paradigm, k=2, phi=phi) for s, t in PAIRS]
    reference = gpstream.trainer_gradients(model_dir, layouts)
    decoder.zero_grad()
    loss, n_labels = loss_sum(decoder, collate(layouts))
    loss.backward()
    assert n_labels == reference["n_labels"]
    # Both sum the cross-entropy in double over float32 logits; the bound is 1e-5 relative.
    assert float(loss) == pytest.approx(reference["loss_sum"], rel=1e-5)
    # A gradient entry is a chain of float32 sums through the layers (n_layer blocks plus the embedding and the
    # head), each of at most K = max(n_embd, n_ff, n_vocab, rows) products: relative to the tensor's largest
    # entry, the two orders of summation differ by at most (n_layer + 2) · K · u.
    c = decoder.config
    rows = max(len(l["ids"]) for l in layouts)
    bound = (c.n_layer + 2) * max(c.n_embd, c.n_ff, c.n_vocab, rows) * UNIT_ROUNDOFF
    gradients = reference["gradients"]
    assert set(gradients) == set(decoder.named_tensors())
    for name, param in decoder.named_tensors().items():
        expected = gradients[name]
        scale = float(np.abs(expected).max())
        assert scale > 0, name
        np.testing.assert_allclose(param.grad.numpy(), expected, rtol=0, atol=bound * scale, err_msg=name)


def test_a_change_in_visibility_changes_the_loss(model, decoder):
    # The masks reach the model: the same pair at k = 1 and at k = 9 gives different losses.
    losses = []
    for k in (1, 9):
        layouts = [gpstream.layout(model, PAIRS[0][0], PAIRS[0][1], k=k)]
        with torch.no_grad():
            losses.append(float(loss_sum(decoder, collate(layouts))[0]))
    assert abs(losses[0] - losses[1]) > 1e-3


def run_recipe(output, train_tsv, model_dir, processes, extra=()):
    import os
    import subprocess

    recipe = pathlib.Path(__file__).resolve().parents[2] / "recipes" / "pytorch" / "train.py"
    args = [str(recipe), "--model", model_dir, "--train", str(train_tsv), "--output", str(output), "--steps", "3",
            "--batch-tokens", "600", "--warmup", "1", "--threads", "1", "--export-dtype", "f32", *extra]
    if processes > 1:
        # Debian's torch 1.13 on Python 3.11 cannot parse torchrun's default --redirects/--tee ("0"): give 1.
        # A port of its own (--standalone always takes 29400, which another torchrun may hold).
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        launcher = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(processes),
                    "--redirects", "1", "--tee", "1", "--nnodes", "1", "--master_addr", "127.0.0.1",
                    "--master_port", str(port)]
    else:
        launcher = [sys.executable]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    result = subprocess.run(launcher + args, capture_output=True, text=True, env=env, timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    from gpstream_torch import read_safetensors

    return read_safetensors(str(output / "model" / "model.safetensors"))


@pytest.fixture(scope="module")
def train_tsv(tmp_path_factory, dev_pairs):
    path = tmp_path_factory.mktemp("data") / "train.tsv"
    path.write_text("".join(f"{s}\t{r}\n" for s, r in dev_pairs[:8]), encoding="utf-8")
    return path


def test_two_gloo_processes_train_as_one(tmp_path, train_tsv, model_dir):
    # Plain SGD: each run's weights move by lr times its summed gradients, which differ only by rounding, at most
    # (n_layer + 2) · K · u of the largest entry (see the gradient test above); per tensor, that is relative to
    # how far the tensor moved. (AdamW would divide near-zero gradients by their own size and magnify it.)
    lr = 0.5
    one = run_recipe(tmp_path / "one", train_tsv, model_dir, 1, ["--optimizer", "sgd", "--lr", str(lr)])
    two = run_recipe(tmp_path / "two", train_tsv, model_dir, 2, ["--optimizer", "sgd", "--lr", str(lr)])
    base = Decoder.from_pretrained(model_dir)
    c = base.config
    relative = (c.n_layer + 2) * max(c.n_embd, c.n_ff, c.n_vocab, 600) * UNIT_ROUNDOFF
    for name, initial in base.named_tensors().items():
        step_one = (one[name] - initial.detach()).numpy()
        step_two = (two[name] - initial.detach()).numpy()
        moved = float(np.abs(step_one).max())
        assert moved > 0, name  # every tensor trained
        np.testing.assert_allclose(step_two, step_one, rtol=0, atol=relative * moved, err_msg=name)


def test_an_exported_model_runs_in_gpstream_with_the_pytorch_logits(tmp_path, train_tsv, model_dir, gpstream_bin):
    import json
    import subprocess

    weights = run_recipe(tmp_path / "run", train_tsv, model_dir, 1)
    exported = tmp_path / "run" / "model"
    decoder = Decoder.from_pretrained(str(exported))
    for name, value in weights.items():
        assert torch.equal(decoder.named_tensors()[name].detach(), value)
    ids = gpstream.Model(str(exported)).tokenize("Click the button to save the document.")
    out = subprocess.run([gpstream_bin, "logits", "-m", str(exported), "--ids", ",".join(map(str, ids)), "--all",
                          "-t", "1"], check=True, capture_output=True, text=True).stdout
    logits = np.array(json.loads(out), dtype=np.float64)
    T = len(ids)
    with torch.no_grad():
        expected = decoder(torch.tensor([ids]), torch.arange(T, dtype=torch.float32)[None],
                           torch.ones(T, T, dtype=torch.bool).tril()[None])[0].double().numpy()
    np.testing.assert_allclose(logits, expected, rtol=0, atol=1e-4 * np.abs(expected).max())
    translation = subprocess.run([gpstream_bin, "translate", "-m", str(exported), "-k", "3", "-t", "1"],
                                 input="Click the button to save the document.\n", check=True,
                                 capture_output=True, text=True).stdout
    assert translation.strip()


def test_lora_gradients_equal_the_cpp_trainers(model, model_dir, tmp_path):
    from gpstream_torch import write_peft_adapter

    torch.set_num_threads(1)
    decoder = Decoder.from_pretrained(model_dir)
    decoder.add_lora(rank=4, alpha=8, seed=3)
    with torch.no_grad():  # B is zero after PEFT's init, which would leave A without gradient: give it values
        generator = torch.Generator().manual_seed(4)
        for name, param in decoder.adapter_tensors().items():
            if "lora_B" in name:
                param.copy_(torch.randn(param.shape, generator=generator) * 0.02)
    adapter = tmp_path / "adapter"
    write_peft_adapter(str(adapter), decoder)
    layouts = [gpstream.layout(model, s, t, k=2) for s, t in PAIRS]
    reference = gpstream.trainer_gradients(model_dir, layouts, lora_adapter=str(adapter))
    loss, _ = loss_sum(decoder, collate(layouts))
    loss.backward()
    assert float(loss) == pytest.approx(reference["loss_sum"], rel=1e-5)
    c = decoder.config
    bound = (c.n_layer + 2) * max(c.n_embd, c.n_ff, c.n_vocab) * UNIT_ROUNDOFF  # as for the full gradients
    assert set(reference["gradients"]) == set(decoder.adapter_tensors())
    for name, param in decoder.adapter_tensors().items():
        expected = reference["gradients"][name]
        scale = float(np.abs(expected).max())
        assert scale > 0, name
        np.testing.assert_allclose(param.grad.numpy(), expected, rtol=0, atol=bound * scale, err_msg=name)
    assert all(p.grad is None for p in decoder.named_tensors().values())  # the base stays frozen


def test_a_lora_run_writes_a_peft_adapter_and_a_merged_model(tmp_path, train_tsv, model_dir, model):
    weights = run_recipe(tmp_path / "run", train_tsv, model_dir, 1, ["--lora-rank", "4", "--lr", "1e-2"])
    adapter = tmp_path / "run" / "adapter"
    # gpstream's trainer reads the adapter, and the merged model equals the base plus (alpha / rank) · B · A.
    layouts = [gpstream.layout(model, s, t, k=2) for s, t in PAIRS]
    assert gpstream.trainer_gradients(model_dir, layouts, lora_adapter=str(adapter))["loss_sum"] > 0
    from gpstream_torch import read_safetensors

    tensors = read_safetensors(str(adapter / "adapter_model.safetensors"))
    base = Decoder.from_pretrained(model_dir).named_tensors()
    name = "model.layers.0.self_attn.q_proj"
    a = tensors[f"base_model.model.{name}.lora_A.weight"]
    b = tensors[f"base_model.model.{name}.lora_B.weight"]
    expected = base[name + ".weight"].detach() + (16 / 4) * (b @ a)
    assert float((b @ a).abs().max()) > 0  # the adapters trained
    # Both sides compute W + (alpha / rank) · B · A in float32 from the same values: a few ulps of |W| < 1 apart.
    np.testing.assert_allclose(weights[name + ".weight"].numpy(), expected.numpy(), rtol=0, atol=1e-6)
    assert torch.equal(weights["model.norm.weight"], base["model.norm.weight"].detach())  # the base is frozen
