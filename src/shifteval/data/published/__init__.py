"""Per-model accuracy tables transcribed from the papers (CSV), each with a provenance note (YAML)."""
