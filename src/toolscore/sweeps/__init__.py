"""Many runs at once: a sweep plan expanded into run units, run by a local pool or on Ray."""
