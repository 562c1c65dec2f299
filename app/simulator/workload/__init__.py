"""What the containers do: the simulated clock and the usage model (CPU, memory, OOM kills)."""
