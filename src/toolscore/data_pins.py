"""Checksums of the released files a pinned download must deliver, per dataset.

A file is found in the source archive by its last two path parts and accepted only if its sha256
matches, so the archive's own folder layout does not matter and a changed file is refused.
Generated from the released files (relative path in the dataset folder -> sha256).
"""

from __future__ import annotations

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

TOOLEVAL: dict[str, str] = {
    "converted/gpt-3.5-turbo_CoT/G1_category.json":
        "e9f966adc81ee6d8256ef3fd969d871834d0ddd9c3cd4f23f2b272da07430df5",
    "converted/gpt-3.5-turbo_CoT/G1_instruction.json":
        "8f3e84216563aae7373f665204c3ac4f4e7aab5ea86d89188a1f66100c5e50c4",
    "converted/gpt-3.5-turbo_CoT/G1_tool.json":
        "3cdd20243a44bcc42c7dbbed0e525cc3c7fd61deb53ef4eb99ce3b4cbd9d7b8d",
    "converted/gpt-3.5-turbo_CoT/G2_category.json":
        "1fb56a371ed025b82fbc5d757abf94ca0d9db03038754690b45dc76902e8fdc2",
    "converted/gpt-3.5-turbo_CoT/G2_instruction.json":
        "41802c1802296c889b111dddc357f870ac1fd0384bca337fab6182fabe33ba65",
    "converted/gpt-3.5-turbo_CoT/G3_instruction.json":
        "a949674634a5b6d3df2a309dd0ac542d8225edb0235975adc1acbfb2ae3361bc",
    "raw/answer/G1_answer/10_ChatGPT_DFS_woFilter_w2.json":
        "76a77721640045e07142c669008611e6b82b25007c73427aec771adbf9dd9841",
    "raw/answer/G1_answer/11_ChatGPT_DFS_woFilter_w2.json":
        "3f935fe99b99beccb727763e8407ab9fdb5f2cf45d85d998327b669ab2ea52ab",
    "raw/answer/G1_answer/57_ChatGPT_DFS_woFilter_w2.json":
        "8279c9999dad881db8bc9e112feeb51ca2861e89d835111408f218af297af531",
    "raw/answer/G1_answer/59_ChatGPT_DFS_woFilter_w2.json":
        "8fea509e1be896331fdfd587ab4668281ee820f89cdb9a1760c218ed7804c2be",
    "raw/answer/G1_answer/69_ChatGPT_DFS_woFilter_w2.json":
        "4c3baf49df02b567b7fbc09f4e1b8238dfc7a0cc3ba3ed6110eb38ea0ed9ccd0",
    "raw/answer/G2_answer/102_ChatGPT_DFS_woFilter_w2.json":
        "f052aca93c7ce866db75cfc83d7e63d459efc77f691d0de20139849fa39f67f7",
    "raw/answer/G2_answer/10_ChatGPT_DFS_woFilter_w2.json":
        "1a56543d944c17175c247232d67d7abafcba9f2493a292fc98fc74868e1c195d",
    "raw/answer/G2_answer/119_ChatGPT_DFS_woFilter_w2.json":
        "30f100afccded9e838bf84a060cc55a82a21d262691d630797bce1df0ff75248",
    "raw/answer/G2_answer/127_ChatGPT_DFS_woFilter_w2.json":
        "a32cc5c8947b2db443fd0c6c9a3b12905624c15a460ec7e9d4fa18df345675e8",
    "raw/answer/G2_answer/52_ChatGPT_DFS_woFilter_w2.json":
        "c6c2da0b425e0122838b1e15be199492686b2b10b1d60605d6a52523c214bdcb",
    "raw/answer/G3_answer/13_ChatGPT_DFS_woFilter_w2.json":
        "b7ed3411bb9dc4549cf2b48099f8d1119078188d283a835b85fa66d604922f32",
    "raw/answer/G3_answer/15_ChatGPT_DFS_woFilter_w2.json":
        "578e07c8f0e8cae423c0ac483cb0d8f48546859bbe7bb8e6c7f8fcdff7b9e209",
    "raw/answer/G3_answer/21_ChatGPT_DFS_woFilter_w2.json":
        "5f99a71cae2979600262f7b6b9b475399530496b56f475b03727b27b0cdfb176",
    "raw/answer/G3_answer/3_ChatGPT_DFS_woFilter_w2.json":
        "fdf868ff795bc0c9a153f4d492f40eb889caa2f60cad931bca6209c2e11dc263",
    "raw/answer/G3_answer/8_ChatGPT_DFS_woFilter_w2.json":
        "e379c1196c98aeb79a8077fc200b6f23fdeec41cf09833f6ba0ce6a0eeeb66f2",
    "raw/instruction/G1_query.json":
        "844bbec415dae93a40df3649bd8b46d7dc1417895e403ec74d189078da7a5c4e",
    "raw/instruction/G2_query.json":
        "7e86b39db6eb6c9e669628f73804ff1271fcf6d5e2b8d3ba670aec9c377fc279",
    "raw/instruction/G3_query.json":
        "96cf4edf2422301164c9f1ebce0db164850eb19f44d1d9e61c7b8a5388b67198",
    "raw/instruction/inference_query_demo.json":
        "40afe058981bc630c2b61832234749cbdb7e9a41cdace194bae67d07bf002483",
    "raw/instruction/inference_query_demo_open_domain.json":
        "7b05ee92ed368c9bc1b6cd114af84cc810cc5e7edb4658430d7c0ec3771fd0c6",
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


# ToolTalk's own source files that its default mode reads at run time (the runner's system
# prompt, the tools' documents: toolscore.benchmarks.tooltalk.release), kept beside the data.
TOOLTALK_SOURCE: dict[str, str] = {
    "src/tooltalk/apis/__init__.py":
        "43ae601525f9f871ec4c0abbded3f033e19bfb37c9ba3bc7e45ff24a4b87459a",
    "src/tooltalk/apis/account.py":
        "a5046c283c05825794e7a072cd73e670bf1292336689adfb3fbbf4d6997ab537",
    "src/tooltalk/apis/alarm.py":
        "1d210979f13843794658982db2c2590a8b44b2c5c000f5d52bdf7110a407d503",
    "src/tooltalk/apis/calendar.py":
        "9e94031ceaa401ba949476b4517078a12e5930f8aba5ee1db574682d2296556d",
    "src/tooltalk/apis/email.py":
        "a5872b60408fe2f8d95284415c0ffcaba4aac477bf6b12c7d78c3bc00b4ba414",
    "src/tooltalk/apis/message.py":
        "8cad12aec95c6befd7aefe0f938918d42a3b2d642eaedd8e142a3993db8118b8",
    "src/tooltalk/apis/reminder.py":
        "0b60d01b00e69ed90777bb343b2742a19d4fa582fb4705a5833e3730c84e05d0",
    "src/tooltalk/apis/weather.py":
        "329c94ad88ced915649918adc2632fa5e716ab8e440e9439684979bb28f354d5",
    "src/tooltalk/evaluation/evaluate_openai.py":
        "c53ddeeb09a39aea062c1f46d609e50388f2020fc0785aee5ea46891c52590ce",
}


# ToolBench's evaluator files that ToolEval's reference mode reads at run time (its questions,
# function schemas and sampling fields: toolscore.benchmarks.tooleval.release), kept beside
# the data.
TOOLEVAL_SOURCE: dict[str, str] = {
    "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/config.yaml":
        "cd80ce6484def599155944b66626aea7d8ed41af0032c5637ef428473eadc6e3",
    "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/template.txt":
        "6290be607cd67682457296508edc1404ac4ee0b153225bb6cb0cdeba36c97d7e",
}
