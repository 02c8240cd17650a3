# The training recipes' shared definitions, sourced by scripts/train-default-model and scripts/reproduce-paper
# so that the shipped model and every fine-tune of the reproduction are trained by the same configuration.

# finetune_config BASE TRAIN DEV SRC TGT MODE PHI SEED TOKENS OUTPUT [K [REMOVED]]: the shipped model's
# fine-tune (multi-k, k ∈ [1, 9]) from the pretrained model BASE, as a `gpstream train` config on standard
# output. MODE is the training layout (group, interleaved, interleaved-blocked, batch-stream, batch), PHI the
# target group's first position, SEED the data order and initialisation seed, TOKENS the token budget, K the
# wait-k of training (default [1, 9]: drawn per example; a single number trains one k), REMOVED the groups
# whose positions are removed (none, source, target, all; default none).
finetune_config() {
  local base=$1 train=$2 dev=$3 src=$4 tgt=$5 mode=$6 phi=$7 seed=$8 tokens=$9 output=${10} k=${11:-"[1, 9]"}
  local removed=${12:-none}
  local positions=""
  [ "$removed" = none ] || positions=", \"positions_removed\": \"$removed\""
  cat <<JSON
{
  "model": {"init": "$base", "tokenizer": "$base"},
  "template": "gpstream", "source_lang": "$src", "target_lang": "$tgt",
  "data": {"train": "$train", "dev": "$dev", "max_dev_pairs": 300, "mode": "$mode", "k": $k, "phi": $phi,
           "batch_tokens": 4096$positions},
  "optimizer": {"lr": 0.0005, "weight_decay": 0.1, "clip": 1.0},
  "schedule": {"kind": "cosine", "warmup_steps": 50, "min_lr_ratio": 0.1},
  "token_budget": $tokens,
  "seed": $seed, "log_every": 20, "dev_every": 200,
  "checkpoint": {"every_minutes": 8, "keep": 2},
  "output": "$output",
  "export": {"dtype": "bf16"}
}
JSON
}

# train_resumable CONFIG OUTPUT [gpstream train options]: trains CONFIG unless OUTPUT/model exists, resuming
# from OUTPUT's last checkpoint when an earlier run was interrupted.
train_resumable() {
  local config=$1 output=$2; shift 2
  [ -f "$output/model/config.json" ] && return 0
  if compgen -G "$output/checkpoints/*" > /dev/null; then
    "$GPS" train "$config" --resume "$output" "$@"
  else
    "$GPS" train "$config" "$@"
  fi
}

# The speech recipe's data (scripts/make-speech-data; docs/speech.md, "A wider training voice set"): the 73
# espeak-ng voice variants heard in training (make-speech-data's default dev variants stay unheard), the
# folder, and the dev set: every eligible dev sentence. scripts/train-speech-model trains on it and
# scripts/reproduce-paper evaluates the shipped speech model on its dev split.
SPEECH_DATA=runs/speech-data-v2
SPEECH_DEV_UTTERANCES=766
SPEECH_TRAIN_VARIANTS="m1 m2 m4 m5 m6 m8 f1 f2 f4 f5 klatt klatt2 klatt4 klatt5 Alex Alicia Andrea Andy Annie AnxiousAndy
Denis Diogo Gene Gene2 Henrique Hugo Jacky Lee Marco Mario Michael Nguyen Storm adam anika announcer
antonio aunty belinda benjamin boris david ed edward edward2 grandma grandpa gustave iven iven2
iven3 iven4 john kaukovalta marcelo max michel miguel norbert pablo paul pedro quincy rob robert
sandro shelby steph steph2 steph3 travis victor zac"
