"""Creates the local tokenizer and text dataset TorchTitan's Llama 3 configurations read, so that a
run needs no network (Phantora's machines reach no Hugging Face hub, and the torchtitan wheel does
not ship the repository's tests/assets).

    python examples/torchtitan/make_assets.py DIR

writes
    DIR/tokenizer/tokenizer.json, tokenizer_config.json   a byte-level BPE tokenizer trained here on
        the text below (1,024 tokens: below every Llama 3 vocabulary, the debug model's 2,048 too),
        with Llama 3's <|begin_of_text|> / <|end_of_text|> as BOS / EOS
    DIR/c4_test/c4-train.jsonl   2,000 documents {"text": ...} of pseudo-words, the layout of the
        repository's tests/assets/c4_test (TorchTitan's "c4_test" dataset: load_dataset(DIR/c4_test))

Pass them as --hf_assets_path DIR/tokenizer --dataloader.dataset_path DIR/c4_test. The contents
are deterministic (fixed seed); what the text says does not matter to the simulation, only that
every step gets seq_len tokens. It is run once; an existing DIR is reused (delete it to rebuild).
"""
import json
import os
import random
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

BOS, EOS = "<|begin_of_text|>", "<|end_of_text|>"


def documents(n, seed=1234):
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "si", "po", "de", "va", "gu", "he", "zo", "fi"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    for _ in range(n):
        sentences = []
        for _ in range(rng.randint(8, 40)):
            s = " ".join(rng.choice(words) for _ in range(rng.randint(5, 18)))
            sentences.append(s.capitalize() + ".")
        yield " ".join(sentences)


def main(out):
    tok_dir, data_dir = os.path.join(out, "tokenizer"), os.path.join(out, "c4_test")
    if os.path.exists(os.path.join(tok_dir, "tokenizer_config.json")) and os.path.isdir(data_dir):
        print(f"make_assets: using {out}")
        return
    os.makedirs(tok_dir, exist_ok=True)
    os.makedirs(data_dir, exist_ok=True)
    docs = list(documents(2000))
    with open(os.path.join(data_dir, "c4-train.jsonl"), "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"text": d}) + "\n")

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1024, special_tokens=[BOS, EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(docs, trainer=trainer)
    tok.save(os.path.join(tok_dir, "tokenizer.json"))
    with open(os.path.join(tok_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"bos_token": BOS, "eos_token": EOS, "add_bos_token": True,
                   "add_eos_token": False, "model_max_length": 131072,
                   "tokenizer_class": "PreTrainedTokenizerFast"}, f, indent=1)
    print(f"make_assets: wrote {tok_dir} ({tok.get_vocab_size()} tokens) and {data_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
