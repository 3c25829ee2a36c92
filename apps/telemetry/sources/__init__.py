"""Where telemetry comes from: one interface, several sources (simulated, Prometheus)."""
