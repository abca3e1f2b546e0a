"""Pure functions from step events and sensor samples to the figures a trial reports."""
