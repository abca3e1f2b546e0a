"""Training steps by domain: each task turns a workload into a session that can step, infer and report loss."""
