"""The ``openai/`` provider: OpenAI-compatible chat completions, over the SDK or plain HTTP."""
