"""ToolEval's released data: the files of OpenBMB/ToolBench at a pinned commit, with the
evaluator's source files.

A file is found in the source archive by its last two path parts and accepted only if
its sha256 matches, so the archive's own folder layout does not matter and a changed file is
refused (relative path in the dataset folder -> sha256, generated from the released files)."""

from __future__ import annotations

from toolscore.data import DatasetSource

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

# ToolBench's evaluator files that ToolEval's reference mode reads at run time (its questions,
# function schemas and sampling fields: toolscore.benchmarks.tooleval.release), kept beside
# the data.
TOOLEVAL_SOURCE: dict[str, str] = {
    "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/config.yaml":
        "cd80ce6484def599155944b66626aea7d8ed41af0032c5637ef428473eadc6e3",
    "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/template.txt":
        "6290be607cd67682457296508edc1404ac4ee0b153225bb6cb0cdeba36c97d7e",
}

SOURCE = DatasetSource(
    name="tooleval", url="https://github.com/OpenBMB/ToolBench/archive/d56fdd8.zip",
    marker="converted", pins=TOOLEVAL, sources=TOOLEVAL_SOURCE)
