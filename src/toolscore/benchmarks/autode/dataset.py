"""AutoDE's released data: the files of hlmu/AutoDE at a pinned commit.

A file is found in the source archive by its last two path parts and accepted only if
its sha256 matches, so the archive's own folder layout does not matter and a changed file is
refused (relative path in the dataset folder -> sha256, generated from the released files)."""

from __future__ import annotations

from toolscore.data import DatasetSource

AUTODE: dict[str, str] = {
    "API_list.xlsx":
        "11c01419c362e3b6d0789f7be83acacb7411b1f5b2d8be31a70deade092f221c",
    "data_v1_2.jsonl":
        "52bc8e29c7c0a2c9ed46001c0ca5e14ba045e3508e72b9227aaa673347dc5fcf",
    "results/a_claude_instant_1_2_human.jsonl":
        "1038b414f334a0cccc3e2f7d35f769bd9b99a48bef3554d3eafcd2e2bb1b7bac",
    "results/a_claude_instant_1_2_static.jsonl":
        "8a381c31a439286258d53fe685dbf7f7d26a9cb7f006cb81f126ab401aab347a",
    "results/a_codellama13b_oasst_human_good_complementary.jsonl":
        "6f7dd51271a71637fa426da653764aaf5e11f91de74d83b3c707cbf9b2619c5f",
    "results/a_codellama13b_oasst_static_force_5rounds.jsonl":
        "fa636b0df0ef064340f4c8b9bb14e7e398f82aa1872d3e6d819a306d2736e6bf",
    "results/a_gpt35_static_v2.jsonl":
        "daeb10afee0ea9c3b3a7307c5a13f01c52ac5dbff5e9df13387aea1d0f88e013",
    "results/a_llama70b_human.jsonl":
        "c50a0771659281c8d8492ebf4460933eb01c921cefca25299a227ae0d5eb414a",
    "results/a_llama70b_static_force_5rounds.jsonl":
        "201db2cef0cd9c45ba5c59ad72fe95b4451d516215a6fada31baf1a642515d95",
    "results/a_zephyr_7b_alpha_human_1round_complementary.jsonl":
        "5b72716f9e341b1e60f8e7d9a732682885100dc31a5437967784ffbfd747a3fa",
    "results/a_zephyr_7b_alpha_substitute_static_5rounds.jsonl":
        "b135fc1c6b894f903a8381cb823abef15606c596827ed8a77f5d9a2205dd7d88",
    "results/u_human_a_gpt35_complementary.jsonl":
        "d297f97f9650a02a3a3859f511a4a8e56898a0162278dba48149d117bc4ed818",
    "results/u_llama7b_a_claude_instant_1_2_complementary.jsonl":
        "a27153648da06797ac75362a1fe7a11f8a58590447612c0d7f5967a51638b9c4",
    "results/u_llama7b_a_codellama13b_oasst_5rounds.jsonl":
        "4e3ec34cd044597a2fd08c8cc166e5015d8e876bdc8f3509a9fbee0e4b4b6c3b",
    "results/u_llama7b_a_gpt35_complementary.jsonl":
        "82f4019e6c53e6ec6df3a6bb196479c4dd779a8415f9faa4ee6c2a38ceef886e",
    "results/u_llama7b_a_zephyr_7b_alpha_5rounds.jsonl":
        "fc55b49fb9d7a9fe6b4d8c80715eabde0be22908a562ec5d214459ea83ad7fb8",
}

# AutoDE's own files that its default mode reads at run time (the runner's prompts, its opening
# cue for the user agent, its spreadsheet reader's constants: toolscore.benchmarks.autode.release),
# kept beside the data.
AUTODE_SOURCE: dict[str, str] = {
    "evaluators/eval.py":
        "d587fdf6894e5f42ba1dd178921eefac7ffb47c018736f6138452339f0aab04c",
    "prompts/prompt_eng_system_v1.txt":
        "b3053a69ead3c9dda7a055bfe5d75cf1abfc3b7be559dfbb677f8339e378210a",
    "prompts/prompt_eng_user_v3.txt":
        "72e16d05161c8631447924cb5ae8ccecff2196138f95463a075239699afdf5f7",
    "utils/utils.py":
        "6f7d6aa0608f9aedc1432f195a17161dfc85be9549ed4d527fff1da3f8735fa5",
}

SOURCE = DatasetSource(
    name="autode", url="https://github.com/hlmu/AutoDE/archive/952086b.zip",
    marker="data_v1_2.jsonl", pins=AUTODE, sources=AUTODE_SOURCE)
