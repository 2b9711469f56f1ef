"""Sentence embedders without torch, and the text similarity built on them."""
