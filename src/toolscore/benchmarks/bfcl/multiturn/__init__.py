"""BFCL's multi-turn categories: stateful backends, the executor that runs a model's calls on
them, and the checker that compares the model's world with the ground truth's turn by turn."""
